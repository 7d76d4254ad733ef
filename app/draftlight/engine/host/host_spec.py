"""What the engine's host loads (HostSpec), and what a host's end means: the app's side of
engine/host/hosted.py that is data, not the pipe."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

from draftlight.engine.core.errors import EngineCrashed
from draftlight.engine.core.load_options import LoadOptions


@dataclass(frozen=True)
class HostSpec:
    """What the host loads (Engine.load's arguments)."""

    target: str
    draft: str | None = None
    options: LoadOptions = field(default_factory=LoadOptions)
    draft_options: LoadOptions = field(default_factory=LoadOptions)
    measure_later: bool = False
    time_auto: bool = False  # time auto's passes at load (when not measuring later)
    # a host before this one died while it tried llama.cpp's extra buffer types on trust
    # (host_child.ExtraOnTrust): this CPU runs without them
    extra_buffers_crashed: bool = False

    def record(self) -> dict:
        return {"target": self.target, "draft": self.draft, "options": asdict(self.options),
                "draft_options": asdict(self.draft_options),
                "measure_later": self.measure_later, "time_auto": self.time_auto,
                "extra_buffers_crashed": self.extra_buffers_crashed}


class ExtraBuffersCrashed(EngineCrashed):
    """The host died of a signal while it tried llama.cpp's extra buffer types on trust
    (host_child.ExtraOnTrust): the request is made again of a host without them, unless it had
    given something already."""


# requests that run batched passes: the first to end well shows the extra buffers run here
BATCHED = ("generate", "measure_next", "explain_divergence")

# what each way of ending means here, for the line the user reads
MEANINGS = {"SIGSEGV": "SIGSEGV: a crash in llama.cpp", "SIGABRT": "SIGABRT: llama.cpp gave up",
            "SIGKILL": "SIGKILL: killed, perhaps for its memory",
            "SIGILL": "SIGILL: an instruction this CPU lacks"}
