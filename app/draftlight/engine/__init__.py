"""Speculative decoding on llama.cpp. No Qt here: the UI adapts these iterators to signals."""

from draftlight.engine.errors import (ChatTemplateError, ContextOverflowError, EngineError,
                               IncompatibleDraftError, ModelLoadError)
from draftlight.engine.events import Done, Event, Notice, Progress, Stats, TextPiece
from draftlight.engine.sampling import SamplingParams

__all__ = [
    "ChatTemplateError", "ContextOverflowError", "Done", "EngineError", "Event",
    "IncompatibleDraftError", "ModelLoadError", "Notice", "Progress", "SamplingParams", "Stats", "TextPiece",
]
