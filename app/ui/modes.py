"""Names of speculation modes as the toolbar shows them. The list itself comes from the engine
(app.engine.generator.MODES, reported by the worker), so a new mode shows up without a change here."""

from __future__ import annotations

LABELS = {"off": "Off", "draft": "Draft model", "ngram": "N-gram", "auto": "Auto"}
NEEDS_DRAFT_MODEL = {"draft"}


def mode_label(mode: str) -> str:
    return LABELS.get(mode, mode.replace("_", " ").capitalize() if mode else "")
