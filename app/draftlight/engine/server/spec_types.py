"""Which of llama.cpp's speculation types (--spec-type) llama-server can run on given models
(draft-model types need a draft model, draft-mtp a target that carries MTP layers), why one
cannot, and the spec type a mode names."""

from __future__ import annotations

from draftlight.engine.core.errors import EngineError
from draftlight.engine.server.process import ServerOptions
from draftlight.modes import NEEDS_DRAFT_MODEL, SPEC_TYPES, Mode, ModeError


def spec_type_of(mode: Mode) -> str:
    """llama:ngram-mod -> "ngram-mod"; off -> "none"; a chain llama:a+b -> "a,b";
    EngineError for modes llama-server does not run."""
    try:
        return mode.spec_type_argument
    except ModeError as exc:
        raise EngineError(str(exc)) from None


def runnable_spec_types(options: ServerOptions) -> tuple[str, ...]:
    """The --spec-type values llama-server can run on these models."""
    from draftlight.store.gguf_info import has_mtp
    try:
        mtp = has_mtp(options.target) > 0
    except (OSError, EngineError, ValueError):
        mtp = False  # an unreadable header: the server will say what is wrong with the file
    return tuple(t for t in SPEC_TYPES
                 if (t not in NEEDS_DRAFT_MODEL or options.draft is not None)
                 and (t != "draft-mtp" or mtp))


def why_not_runnable(options: ServerOptions, spec_type: str) -> str:
    if spec_type == "draft-mtp":
        return (f"{options.target.name} has no multi-token-prediction layers "
                f"(nextn_predict_layers): llama:draft-mtp needs a model that carries them")
    if spec_type in NEEDS_DRAFT_MODEL:
        return f"llama.cpp's {spec_type} needs a draft model"
    return f"unknown llama.cpp speculation type {spec_type!r}"
