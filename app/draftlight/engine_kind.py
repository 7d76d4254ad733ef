"""Which engine answers: the one word for it, parsed once where it comes in (settings.toml, the
command line) and a value everywhere after (Settings.engine, EngineSpec.engine)."""

from __future__ import annotations

from enum import StrEnum


class EngineKind(StrEnum):
    """A StrEnum: written as its text (settings.toml, JSON), and equal to it."""

    LOCAL = "local"  # llama.cpp with Draftlight's drafters, in a process of the app's own
    LLAMA_SERVER = "llama-server"  # llama.cpp's server, started here as a child process
    REMOTE = "remote"  # a running OpenAI-compatible server, by its address

    @classmethod
    def parse(cls, text: object) -> "EngineKind":
        """ValueError, in plain words, for anything but one of the kinds' texts."""
        try:
            return cls(text)
        except ValueError:
            raise ValueError(f"engine must be one of {', '.join(cls)}, not {text!r}") from None
