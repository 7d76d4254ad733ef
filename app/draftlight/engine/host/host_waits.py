"""How the parent (hosted.py's HostedEngine) waits for its host's next message: through a
long silence that is work (a prompt of minutes of batches) but not one that is a hang, through
the user's Stop (the host is asked, then ended if it does not stop), and what the host's end
means when it crashed (llama.cpp's extra buffers on a CPU they crash, a load that failed, the
engine gone mid-reply)."""

from __future__ import annotations

import queue
import signal
from dataclasses import replace
from typing import Callable

import psutil

from draftlight.bounded_process import ending
from draftlight.engine.core.errors import EngineCrashed, ModelLoadError
from draftlight.engine.host.host_lines import HostBroken
from draftlight.engine.host.host_spec import MEANINGS, ExtraBuffersCrashed

BUSY_SHARE = 0.05  # a host silent that long but using this share of a core is working
STOP_SECONDS = 5.0  # interrupt(): how long the host has to stop before it is ended
_POLL_SECONDS = 0.1  # how often a wait looks at should_cancel
# how a host ends when its kernels crash (return codes: minus the signal)
KERNEL_CRASHES = tuple(-number for number in (signal.SIGILL, signal.SIGSEGV,
                                               getattr(signal, "SIGBUS", 0)) if number)


class HostWaits:
    """HostedEngine's waits; it sets what they use (_process, _lines, silence_seconds,
    _interrupted, _trying_extra, _say_notes, spec) and writes with _write."""

    def _next(self, should_cancel: Callable[[], bool] | None = None, *, cancel_id: int = -1,
              loading: bool = False) -> dict:
        """The host's next message. Raises EngineCrashed when it ended, wrote what no host
        writes (host_lines.HostBroken: it is killed), or said nothing for `silence_seconds`
        (it is killed); once `should_cancel` says so, request `cancel_id`
        (-1: the load) is cancelled in the host, which then ends it as it does."""
        waited, asked, stop_waited = 0.0, False, 0.0
        limit = max(self.silence_seconds, 600.0) if loading else self.silence_seconds
        # The host's CPU time when its silence began: read only once a wait runs long, never
        # for the lines of a reply that follow each other (this is its hot path).
        busy_since = None
        while True:
            try:
                message = self._lines.next(_POLL_SECONDS)
            except HostBroken as exc:  # what it says next cannot be trusted either
                self._process.kill()
                self._process.wait()
                if loading:
                    raise ModelLoadError(f"{exc}; it was ended") from None
                raise EngineCrashed(f"{exc}; it was ended, and the next message starts it "
                                    "again") from None
            except queue.Empty:
                waited += _POLL_SECONDS
                if busy_since is None:
                    busy_since = self._cpu_seconds()
                if waited > limit and self._cpu_seconds() - busy_since > BUSY_SHARE * limit:
                    # silent but working (a prompt of 30,000 tokens is minutes of batches
                    # that say nothing): a hung call does not use the CPU
                    waited, busy_since = 0.0, self._cpu_seconds()
                if not asked and (self._interrupted or (should_cancel is not None
                                                        and should_cancel())):
                    asked, stop_waited = True, 0.0
                    try:
                        self._write({"id": cancel_id, "op": "cancel"})
                    except OSError:
                        pass
                elif asked and self._interrupted:
                    stop_waited += _POLL_SECONDS
                    if stop_waited > STOP_SECONDS:  # Stop waits for no native call
                        self._process.kill()
                        self._process.wait()
                        raise EngineCrashed(f"the engine did not stop within {STOP_SECONDS:.0f}"
                                            " s and was ended; the next message starts it "
                                            "again")
                if waited > limit:
                    self._process.kill()
                    self._process.wait()
                    raise EngineCrashed(f"the engine stopped answering for {limit:.0f} s and "
                                        "was ended; the next message starts it again")
                continue
            if message is None:
                raise self._crashed(loading)
            return message

    def _cpu_seconds(self) -> float:
        """The CPU time the host has used (its threads together); 0 where it cannot be read."""
        try:
            times = psutil.Process(self._process.pid).cpu_times()
            return times.user + times.system
        except (psutil.Error, AttributeError):
            return 0.0

    def _crashed(self, loading: bool = False) -> BaseException:
        process = self._process
        code = process.wait() if process is not None else None
        how = MEANINGS.get(ending(code), ending(code))
        if self._trying_extra and code in KERNEL_CRASHES:
            # llama.cpp's extra buffers on trust, and a crash in native code (not a kill: a
            # closing window, a hang, the memory): they crash this CPU (the AMX kernels of
            # some builds); every host from now on runs without them
            self._trying_extra, self._say_notes = False, not loading
            self.spec = replace(self.spec, extra_buffers_crashed=True)
            return ExtraBuffersCrashed(f"the engine stopped ({how}) with llama.cpp's extra "
                                       "buffer types; it starts again without them")
        if loading:
            return ModelLoadError(f"llama.cpp could not load the model: its process ended "
                                  f"({how})")
        return EngineCrashed(f"the engine stopped ({how}); the conversation is kept, and the "
                             "next message starts it again")
