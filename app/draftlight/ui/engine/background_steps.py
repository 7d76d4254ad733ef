"""What the engine's worker does while no request waits (EngineWorker inherits it): the bundled
model's faster copy made and loaded, then the measurements of draftlight.engine.auto.measuring, one
step at a time from the event loop, each stopped at its next pass by a request that arrives.

Uses the worker's engine, factory, pending requests (PendingWork), `load_event` signal and
_load; runs on the worker's thread only.
"""

from __future__ import annotations

import sys
import traceback

from PySide6.QtCore import QTimer

from draftlight.ui.engine.loaded import Measuring


class BackgroundSteps:
    def _measure_soon(self) -> None:
        """Measure what is left once the event loop has handed over any queued request."""
        if not self._measure_queued and (self._convert_default
                                         or hasattr(self.engine, "measure_next")):
            self._measure_queued = True
            QTimer.singleShot(0, self._measure_step)

    def _measure_step(self) -> None:
        """One of the engine's pending measurements (seconds on a large model), then the next
        from the event loop; a request that arrives stops it and it runs again after."""
        from draftlight.engine.auto.measuring import MeasurementInterrupted
        self._measure_queued = False
        engine = self.engine
        if (engine is None or self._measuring_failed or self.pending.waiting()
                or self._closing()):
            return
        if self._convert_default:
            self._make_default_copy()
            return
        if not hasattr(engine, "measure_next"):
            return
        try:
            pending = engine.pending_measurements()
            if not pending:
                return
            self.load_event.emit(Measuring(pending[0]))
            engine.measure_next(should_cancel=lambda: self.pending.waiting() or self._closing())
        except MeasurementInterrupted:
            self.load_event.emit(Measuring(""))
            return
        except Exception:  # noqa: BLE001 - auto keeps its prior; the chat goes on
            traceback.print_exc()
            self._measuring_failed = True
            self.load_event.emit(Measuring(""))
            return
        if engine.pending_measurements():
            self._measure_soon()
        else:
            self.load_event.emit(Measuring(""))

    def _make_default_copy(self) -> None:
        """Convert the bundled model (seconds), then load the engine again on the copy; a
        request that arrives stops the conversion (nothing is left) and it runs again later."""
        from draftlight.store.convert import ConversionCancelled
        from draftlight.store.default_model import DEFAULT_TYPE
        self.load_event.emit(Measuring(f"making the faster {DEFAULT_TYPE} copy of the bundled "
                                       "model"))
        try:
            _, note = self.factory.prepare_default(
                lambda done, total, what: None,
                should_cancel=lambda: self.pending.waiting() or self._closing())
        except ConversionCancelled:
            self.load_event.emit(Measuring(""))
            return
        if note:  # could not be made: the bundled file stays, and measuring goes on
            self._convert_default = False
            print(f"draftlight: {note}", file=sys.stderr)
            self._measure_soon()
        elif self.pending.waiting() or self._closing():
            self.load_event.emit(Measuring(""))  # loaded on the copy once the request has run
        else:
            self._load(self._spec, quiet=True)  # finds the copy now; then measures it
