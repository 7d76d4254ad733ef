"""`draftlight chat` answers before anything is measured about its models, and an interactive
chat measures while it waits for the next line (issue 54, item 1)."""

from __future__ import annotations

import time

from draftlight.commands.chat import measured_meanwhile
from draftlight.engine.auto.costs import measure, token_seconds
from draftlight.engine.reply.generator import Engine
from draftlight.engine.auto.invariance import measure_drift
from tests.support.fake_backend import FakeChatModel


def test_an_interactive_chat_measures_while_the_user_types_and_stops_when_they_send():
    engine = Engine(FakeChatModel(lambda c: b"hello"), measure_later=True,
                    cost_source=lambda m, p, role: (measure(m, p), token_seconds(m, p)),
                    drift_source=measure_drift)
    with measured_meanwhile(engine):  # the user is typing
        deadline = time.monotonic() + 30
        while (engine.drift is None or engine.costs is None) and time.monotonic() < deadline:
            time.sleep(0.01)
    assert engine.drift is not None and engine.costs is not None
    assert engine.pending_measurements() == ()

    slow = Engine(FakeChatModel(lambda c: b"hello"), measure_later=True,
                  cost_source=lambda m, p, role: (measure(m, p), token_seconds(m, p)),
                  drift_source=lambda m, p: (time.sleep(0.05), measure_drift(m, p))[1])
    started = time.monotonic()
    with measured_meanwhile(slow):
        pass  # the line came at once: the measuring thread stops and is joined
    assert time.monotonic() - started < 5
    assert slow.target.tokens == []  # nothing of the probe left in the cache


def test_a_server_engine_has_nothing_to_measure():
    class Server:
        pass

    with measured_meanwhile(Server()):
        pass
