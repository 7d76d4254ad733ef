"""A scripted engine in place of llama.cpp, for the window's tests (fast, exact): the factory
the worker thread loads engines from, and the engines, which stream a script of
(text, source, step) pieces. Everything else under test is the real code."""

from __future__ import annotations

import threading
import time

from draftlight.engine.core.errors import ModelLoadError
from draftlight.engine.reply.events import Done, Reading, Stats, TextPiece
from draftlight.engine.step.origins import Origin
from draftlight.ui.engine.loaded import Capabilities
from draftlight.modes import DRAFT, NGRAM, OFF

# "Hello" (target), " wor" + "ld" (one accepted run of 2, step 1), "!" (target, step 1),
# " Bye" (run of 1, step 2), "." (target).
SCRIPT = [("Hello", "target", 0), (" wor", "draft", 1), ("ld", "draft", 1), ("!", "target", 1),
          (" Bye", "draft", 2), (".", "target", 2)]


class ScriptedEngine:
    load_notices: tuple[str, ...] = ()  # the engine protocol's after-load notices

    def __init__(self, factory) -> None:
        self.factory = factory
        self.draft = None
        self.closed = False
        self.thread = threading.get_ident()

    def generate(self, messages, params, mode, prediction=None):
        assert threading.get_ident() == self.thread, "engine used off its own thread"
        self.factory.calls.append((messages, mode))
        self.factory.predictions.append(prediction)
        script = self.factory.script(mode) if callable(self.factory.script) else (
            self.factory.script)
        stats = Stats(mode=mode)
        text = []
        if self.factory.reading:  # a long prompt's read, told in `reading` steps
            total = self.factory.reading_tokens
            for i in range(self.factory.reading + 1):
                yield Reading(total * i // self.factory.reading, total, 0.5 * i)
                time.sleep(self.factory.delay)
        # (text, source, step[, origin as its record, the JSON the API shows])
        for piece_text, source, step, *origin in script:
            origin = Origin.from_record(origin[0]) if origin else None
            if self.factory.delay:
                time.sleep(self.factory.delay)
            stats.new_tokens += 1
            stats.target_passes = step + 1
            if source == "draft":
                stats.accepted += 1
                stats.drafted += 1
                if origin and origin.kind == "prediction":
                    stats.prediction_accepted += 1
                    stats.prediction_drafted += 1
            text.append(piece_text)
            yield TextPiece(piece_text, source, step, origin=origin)
        stats.seconds = 0.5
        stats.stop_reason = self.factory.stop_reason
        yield Done("".join(text), stats)

    def attach_draft(self, draft, *, should_cancel=None) -> None:
        self.draft = draft

    def detach_draft(self) -> None:
        self.draft = None

    def close(self) -> None:
        self.factory.closed_on.append(threading.get_ident())
        self.closed = True


class ScriptedFactory:
    def __init__(self, script=SCRIPT, delay=0.0, modes=(OFF, DRAFT, NGRAM),
                 fail_load=False) -> None:
        self.script, self.delay, self.modes, self.fail_load = script, delay, modes, fail_load
        self.stop_reason = "eos"  # why each reply ends ("max_tokens": Continue applies)
        self.reading = 0  # each reply first reads its prompt in this many told steps
        self.reading_tokens = 7900
        self.calls: list = []
        self.predictions: list = []  # each reply's Predicted Output (None: none)
        self.loads: list = []
        self.drafts: list = []
        self.closed_on: list[int] = []
        self.engines: list[ScriptedEngine] = []

    def capabilities(self):
        return Capabilities(tuple(self.modes))

    def default_now(self):
        return "default-model.gguf", False

    def prepare_default(self, report, should_cancel):
        report(136, 272, "Making the default model…")
        return "default-model.gguf", None

    def load_engine(self, spec, **_):
        self.loads.append(spec)
        if self.fail_load:
            raise ModelLoadError(f"model file not found: {spec.target_path}")
        engine = ScriptedEngine(self)
        if spec.draft_path:
            engine.attach_draft(spec.draft_path)
        self.engines.append(engine)
        return engine

    def open_draft(self, spec, *, should_cancel):
        self.drafts.append(spec.draft_path)
        return spec.draft_path

    def attach_draft(self, engine, spec, *, should_cancel):
        engine.attach_draft(self.open_draft(spec, should_cancel=should_cancel))


class HeldLoadFactory(ScriptedFactory):
    """A ScriptedFactory whose load waits until `release()` (at most 10 s): a slow first run."""

    def __init__(self, **options) -> None:
        super().__init__(**options)
        self.gate = threading.Event()

    def load_engine(self, spec, **options):
        self.gate.wait(10)
        return super().load_engine(spec, **options)

    def release(self) -> None:
        self.gate.set()


class CancelledDraftFactory(ScriptedFactory):
    """A ScriptedFactory whose draft loads until the load is cancelled (at most 60 s), as a
    large draft model loads for minutes; `cancelled` is set when it was."""

    def __init__(self, **options) -> None:
        super().__init__(**options)
        self.loading_draft, self.cancelled = threading.Event(), threading.Event()

    def open_draft(self, spec, *, should_cancel):
        self.loading_draft.set()
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if should_cancel():
                self.cancelled.set()
                raise ModelLoadError(f"loading {spec.draft_path} was cancelled")
            time.sleep(0.01)
        return super().open_draft(spec, should_cancel=should_cancel)


class HeldScript:
    """A script for ScriptedFactory: `head`'s pieces, then `last` held back until `release()`
    (at most 10 s), so a test can look at a reply while it is still streaming."""

    def __init__(self, head, last) -> None:
        self.head, self.last = list(head), last
        self.gate = threading.Event()

    def __call__(self, _mode):
        yield from self.head
        self.gate.wait(10)
        yield self.last

    def release(self) -> None:
        self.gate.set()
