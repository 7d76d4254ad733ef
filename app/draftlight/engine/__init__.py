"""Speculative decoding on llama.cpp. No Qt here: the UI adapts these iterators to signals.

Its rooms, each `__init__` saying what it holds, from the bottom: `core`, `text`, `llama`,
`step`, `auto`, `reply`, `host`, and `server` (the server engines); a room imports only rooms
below it (docs/architecture.md; tests/test_import_graph.py checks it).

Nothing is imported here, so that a helper process can load one small module of the package
(text/template_child.py) without numpy and llama.cpp."""
