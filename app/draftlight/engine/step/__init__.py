"""One speculative step and its drafters: n-gram lookup (over an NgramIndex), a draft model of
the same vocabulary or another one, a Predicted Output, and where each drafted token came from.
May import `text` and `core`."""
