"""What the engine thread tells the window about models, as typed values (no Qt): what the
engine can do, and what a load brought in."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Capabilities:
    """The in-process engine's, sent once before the first load."""

    modes: tuple[str, ...]  # the modes it runs (draftlight.modes.IN_PROCESS)
    gpu_offload: bool = False  # this llama.cpp build can put layers on a GPU


@dataclass(frozen=True)
class Loaded:
    """A finished load: the window can send messages."""

    target: str  # the target's name (its file, or "the server at URL")
    draft: str | None = None  # the draft model really loaded
    draft_error: str | None = None  # why the draft asked for was not (the target still runs)
    notices: tuple[str, ...] = ()  # what the user should know (engine.load_notices, …)
    modes: tuple[str, ...] | None = None  # a server engine's own; None: the in-process ones
    placement: str = ""  # a model split over machines: what went where (rpc.placement)
    mtp_layers: int = 0  # the target's multi-token-prediction blocks (llama-server draft-mtp)
    n_ctx: int = 0  # the context loaded, in tokens (0: a remote server's own)
    target_path: str = ""  # the target's file (the default model's too, once prepared)
    draft_path: str | None = None
    context_note: str = ""  # why, when it was chosen automatically (launch.resolve_context)
