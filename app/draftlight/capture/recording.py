"""`draftlight --record OUT.gif --prompt TEXT`: the chat area as an animated GIF while a reply
streams, flashes included. The real window runs offscreen (draftlight.ui.desktop.run_app and
draftlight.capture.screenshot, as for --screenshot); a timer grabs the chat FPS times a second from
sending until the reply has finished and its last flashes have faded, or until --seconds have
passed.

The GIF is kept small: PALETTE_COLOURS colours per frame, no dithering, identical frames merged,
each frame shown for as long as it really lasted, the last one held so the finished reply can
be read.
"""

from __future__ import annotations

import time

from PySide6.QtCore import QTimer
from PySide6.QtGui import QImage

from draftlight.capture.screenshot import OffscreenRun
from draftlight.ui.flash.driver import DURATION

FPS = 20
AFTER_REPLY_S = DURATION + 0.6  # keep grabbing until the last run has settled to its tint
HOLD_LAST_MS = 2500
PALETTE_COLOURS = 64
RECORD_SIZE = (900, 520)  # the window; the GIF is its chat area


class RecordRun(OffscreenRun):
    """Send the prompt once the model is loaded, grab the chat area FPS times a second, write
    the GIF when the reply is in (or at `seconds`), and exit."""

    def __init__(self, window, path: str, prompt: str | None, seconds: float) -> None:
        super().__init__(window, path, prompt)
        self.seconds = seconds
        self.frames: list[tuple[float, QImage]] = []  # (seconds since sending, chat pixels)
        self._started = 0.0
        self._timer = QTimer(self)
        self._timer.setInterval(round(1000 / FPS))
        self._timer.timeout.connect(self._grab)
        window.resize(*RECORD_SIZE)

    def _send(self) -> None:
        self._started = time.perf_counter()
        self._grab()
        self._timer.start()
        super()._send()
        QTimer.singleShot(round(self.seconds * 1000), self._finish)

    def _grab(self) -> None:
        self.frames.append((time.perf_counter() - self._started, self.window.chat.grab().toImage()))

    def _reply_done(self, _view) -> None:
        QTimer.singleShot(round(AFTER_REPLY_S * 1000), self._finish)

    def _finish(self) -> None:
        if not self._timer.isActive():
            return  # the reply ended and --seconds ran out: write once
        self._timer.stop()
        self._grab()
        try:
            write_gif(self.path, self.frames)
        except OSError as exc:
            self._end(2, f"could not write {self.path}: {exc}")
        else:
            self._end(0)


def to_pillow(image: QImage):
    from PIL import Image
    rgb = image.convertToFormat(QImage.Format_RGB888)
    return Image.frombuffer("RGB", (rgb.width(), rgb.height()), bytes(rgb.constBits()),
                            "raw", "RGB", rgb.bytesPerLine(), 1).copy()


def write_gif(path: str, frames: list[tuple[float, QImage]]) -> None:
    """Frames (time in seconds, image) as a looping GIF, each shown until the next one."""
    from PIL import Image
    images = [to_pillow(image) for _, image in frames]
    # A palette per frame: with one shared palette the steps of a fade quantise to the same
    # few colours, Pillow merges the then identical frames, and a fast reply's flashes are lost
    # (6 frames left of 30). Unchanged frames are still merged, so the file stays small.
    indexed = [image.quantize(PALETTE_COLOURS, method=Image.Quantize.MEDIANCUT,
                              dither=Image.Dither.NONE) for image in images]
    times = [t for t, _ in frames]
    durations = [max(20, round((b - a) * 1000)) for a, b in zip(times, times[1:])]
    durations.append(HOLD_LAST_MS)
    indexed[0].save(path, format="GIF", save_all=True, append_images=indexed[1:],
                    duration=durations, loop=0, optimize=False)
