"""Errors the engine raises. Each message is one plain sentence a user can act on."""


class EngineError(Exception):
    """Base class: anything the app shows as one clear line instead of a traceback."""


class ModelLoadError(EngineError):
    """A model file is missing, is not a GGUF, or llama.cpp cannot load it."""


class IncompatibleDraftError(EngineError):
    """The draft's vocabulary does not match the target's."""


class ContextOverflowError(EngineError):
    """The conversation does not fit in the context window even after dropping old turns."""


class ChatTemplateError(EngineError):
    """The model's chat template is unsafe or broken."""


class UnsafeTemplateError(ChatTemplateError):
    """The model's chat template tried to leave the sandbox (or to exhaust memory or time)."""



class ServerBuildError(EngineError):
    """llama-server cannot be found or built (no compiler, no sources, a failed build)."""


class ReadStopped(EngineError):
    """A prompt's read was stopped when asked, between two of llama.cpp's graph nodes; the
    cache holds the batches read before it (llama_backend.LlamaBackend.stop_reading): `read`
    tokens of that read, kept for the next message."""

    def __init__(self, message: str = "the prompt's read was stopped", read: int = 0) -> None:
        super().__init__(message)
        self.read = read


class EngineCrashed(EngineError):
    """The engine's process ended mid-way (a crash in llama.cpp, an abort, killed for its
    memory) or stopped answering; the conversation is kept, and the next request starts it
    again (hosted.py)."""
