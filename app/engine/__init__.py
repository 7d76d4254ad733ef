"""Speculative decoding on llama.cpp. No Qt here: the UI adapts these iterators to signals."""

from app.engine.errors import (ChatTemplateError, ContextOverflowError, EngineError,
                               IncompatibleDraftError, ModelLoadError)
from app.engine.events import Done, Event, Notice, Progress, Stats, TextPiece
from app.engine.sampling import SamplingParams

__all__ = [
    "ChatTemplateError", "ContextOverflowError", "Done", "EngineError", "Event",
    "IncompatibleDraftError", "ModelLoadError", "Notice", "Progress", "SamplingParams", "Stats", "TextPiece",
]
