"""Draftlight: a local chat app that makes speculative decoding visible."""

__version__ = "0.1.0"
