"""The live speed meter: tokens/s now, plain speed of this target and the ratio, while a reply
streams; hidden after it. Scripted engine with a measured one-token pass (as auto mode has)."""

from __future__ import annotations

import time

from draftlight.engine.reply.events import Done, Progress, Stats, TextPiece
from draftlight.ui.chat.speed_meter import meter_text
from tests.support.scripted_engine import ScriptedEngine, ScriptedFactory

PIECE_SECONDS = 0.01  # about 100 tokens/s (sleep overshoots: a little less)
PLAIN_TOKEN_SECONDS = 0.04  # plain decoding: 25 tokens/s


class TimedEngine(ScriptedEngine):
    def generate(self, messages, params, mode, prediction=None):
        # as the in-process engine's stats once auto has timed a one-token pass
        stats = Stats(mode=mode, plain_token_seconds=PLAIN_TOKEN_SECONDS)
        for index in range(150):
            time.sleep(PIECE_SECONDS)
            stats.new_tokens += 1
            stats.target_passes = index // 2 + 1
            yield TextPiece(" x", "draft" if index % 2 else "target", index // 2)
            yield Progress(Stats(**vars(stats)))
        stats.seconds = 1.5
        yield Done(" x" * 150, stats)


class TimedFactory(ScriptedFactory):
    def load_engine(self, spec, **_):
        self.loads.append(spec)
        return TimedEngine(self)


def test_meter_text():
    assert meter_text(32.75, 25.0) == "32.8 tok/s now · plain 25.0 tok/s · 1.31× plain"
    assert meter_text(12.0, None) == "12.0 tok/s now"


def test_meter_shows_rate_now_plain_speed_and_ratio_while_streaming(qtbot, open_window):
    window = open_window(TimedFactory())
    meter = window.toolbar.speed_meter
    assert meter.isHidden()
    window.send("go")
    qtbot.waitUntil(lambda: "× plain" in meter.text(), timeout=5000)
    qtbot.wait(600)  # a second's worth of tokens in the window
    assert meter.isVisible()
    now, plain, ratio = _numbers(meter.text())
    assert plain == 25.0
    assert 40 < now < 110  # ≈ 1 / PIECE_SECONDS, less what sleep and the GUI take
    assert abs(ratio - now / plain) < 0.05
    with qtbot.waitSignal(window.session.reply_finished, timeout=10_000):
        pass
    assert meter.isHidden()
    assert "tokens" in window.chat.messages[-1].footer.text()  # the stats line stays


def _numbers(text: str) -> tuple[float, float, float]:
    # "97.1 tok/s now · plain 25.0 tok/s · 3.88× plain"
    parts = text.split(" · ")
    return (float(parts[0].split()[0]), float(parts[1].split()[1]),
            float(parts[2].split("×")[0]))
