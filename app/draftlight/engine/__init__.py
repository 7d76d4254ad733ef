"""Speculative decoding on llama.cpp. No Qt here: the UI adapts these iterators to signals.

Nothing is imported here, so that a helper process can load one small module of the package
(template_child.py) without numpy and llama.cpp."""
