"""What the engine thread tells the window, as typed values (no Qt): about models (what the
engine can do, each step of a load and what it brought in: the worker's `load_event`), and how
a request ended when it did not end with its result (`reply`'s Stopped, Failed, Crashed)."""

from __future__ import annotations

from dataclasses import dataclass

from draftlight.modes import Mode


@dataclass(frozen=True)
class Capabilities:
    """The in-process engine's, sent once before the first load."""

    modes: tuple[Mode, ...]  # the modes it runs (draftlight.modes.IN_PROCESS)
    gpu_offload: bool = False  # this llama.cpp build can put layers on a GPU


@dataclass(frozen=True)
class Loaded:
    """A finished load: the window can send messages."""

    target: str  # the target's name (its file, or "the server at URL")
    draft: str | None = None  # the draft model really loaded
    draft_error: str | None = None  # why the draft asked for was not (the target still runs)
    notices: tuple[str, ...] = ()  # what the user should know (engine.load_notices, …)
    modes: tuple[Mode, ...] | None = None  # a server engine's own; None: the in-process ones
    placement: str = ""  # a model split over machines: what went where (rpc.placement)
    mtp_layers: int = 0  # the target's multi-token-prediction blocks (llama-server draft-mtp)
    n_ctx: int = 0  # the context loaded, in tokens (0: a remote server's own)
    target_path: str = ""  # the target's file (the default model's too, once prepared)
    draft_path: str | None = None
    context_note: str = ""  # why, when it was chosen automatically (launch.resolve_context)


@dataclass(frozen=True)
class Loading:
    """A load (or a draft's) began: what is being loaded, in words."""

    words: str


@dataclass(frozen=True)
class Preparing:
    """A step before the model answers, with its progress: converting the default model,
    llama.cpp reading the weights, llama-server being built."""

    words: str
    percent: int  # -1: busy, no figure


@dataclass(frozen=True)
class LoadFailed:
    message: str  # one line


@dataclass(frozen=True)
class DraftChanged:
    name: str | None  # the draft model's file now, None: none


@dataclass(frozen=True)
class DraftFailed:
    message: str  # one line; the target still runs


@dataclass(frozen=True)
class Measuring:
    """What the worker measures about its models in the background (engine/auto/measuring.py), in
    words; "" once nothing is left, or a request came first."""

    words: str


@dataclass(frozen=True)
class Stopped:
    """The request stopped on request (Stop, or the window closing) before its end."""


@dataclass(frozen=True)
class Failed:
    message: str  # one line


@dataclass(frozen=True)
class Crashed:
    """The engine's process ended mid-request (engine/host/hosted.py): one line; the next request
    starts it again."""

    message: str
