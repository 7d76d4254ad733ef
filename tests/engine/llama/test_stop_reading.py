"""Stop while a long prompt is read (issue 55: Stop never waits for llama.cpp). The read ends
inside llama.cpp's pass (its abort callback, asked at every graph node), not at the end of a
batch or of the prompt; the reply ends cancelled, the cache keeps the batches read before (issue
75: down the fast read too), and the next reply goes on from them: read the ordinary way it is
exactly what it would have been; down the fast read the prompt is then two runs, whose cache
differs in rounding from one run's (fast_prefill.py), so it is the reply to that cache, the
same in every mode. In the host, Stop then costs no restart."""

from __future__ import annotations

import threading
import time
from dataclasses import replace

import pytest

from draftlight.engine.reply.events import Done
from draftlight.engine.reply.generator import Engine
from draftlight.engine.host.hosted import HostedEngine, HostSpec
from draftlight.engine.core.load_options import LoadOptions
from draftlight.engine.core.sampling import SamplingParams
from tests.support.real_engine import run
from draftlight.modes import OFF

OPTIONS = LoadOptions(n_ctx=2048, n_batch=128)  # small batches: several in a short prompt
ARTICLE = " ".join(
    f"Shipment {i} of the harbour ledger lists {i % 7 + 2} crates of tin, bound for "
    f"{['Lisbon', 'Genoa', 'Bristol', 'Riga'][i % 4]} on the {i % 28 + 1}th." for i in range(25))
LONG = [{"role": "user", "content": ARTICLE + "\n\nWhich cities are the crates bound for?"}]
PARAMS = SamplingParams(temperature=0.0, max_tokens=12)


@pytest.mark.parametrize("fast", [True, False], ids=["fast-read", "ordinary-read"])
def test_a_stopped_read_ends_inside_a_pass_and_the_next_reply_is_unchanged(bundled_model, fast):
    engine = Engine.load(bundled_model, None, replace(OPTIONS, fast_prefill=fast))
    try:
        plain, _, first = run(engine, LONG, OFF, PARAMS)
        prompt = first.stats.prompt_tokens
        batch_seconds = first.stats.prefill_seconds * OPTIONS.n_batch / prompt
        assert prompt > 3 * OPTIONS.n_batch  # several batches: a stop between them is no proof
        engine.target.truncate(0)  # read it all again
        asked = [0.0]

        def should_stop() -> bool:
            now = time.perf_counter()
            if not asked[0]:  # the read has begun: stop it in the middle of its second batch
                asked[0] = now + 1.5 * batch_seconds
            return now >= asked[0]

        events = list(engine.generate(LONG, PARAMS, OFF, should_stop=should_stop))
        took = time.perf_counter() - asked[0]
        done = events[-1]
        assert isinstance(done, Done) and done.stats.stop_reason == "cancelled" and not done.text
        assert took < batch_seconds / 3, (took, batch_seconds)  # not the batch's end
        kept = len(engine.target.tokens)
        assert OPTIONS.n_batch <= kept < prompt - 1  # the first batch, at least, is kept
        again, _, again_done = run(engine, LONG, OFF, PARAMS)
        assert again_done.stats.reused_prompt_tokens == kept
        if not fast:
            assert again == plain
        assert engine.target.stop_reading is None  # decoding passes pay no callback
    finally:
        engine.close()


def test_stop_during_a_long_read_in_the_host_ends_it_without_a_restart(bundled_model):
    engine = HostedEngine(HostSpec(str(bundled_model), options=replace(OPTIONS, fast_prefill=False),
                                   measure_later=True))
    try:
        pid = engine.pid
        threading.Timer(0.3, engine.interrupt).start()  # the read takes seconds here
        started = time.perf_counter()
        events = list(engine.generate(LONG, PARAMS, OFF))
        assert time.perf_counter() - started < 2.0
        assert isinstance(events[-1], Done) and events[-1].stats.stop_reason == "cancelled"
        assert engine.pid == pid and engine.restarts == 0  # nothing was ended
        *_, done = engine.generate(LONG, PARAMS, OFF)
        assert done.text and done.stats.stop_reason in ("eos", "max_tokens")
    finally:
        engine.close()


@pytest.mark.parametrize("fast", [True, False], ids=["fast-read", "ordinary-read"])
def test_a_long_read_is_told_as_it_goes_and_a_stopped_one_keeps_what_it_read(
        bundled_model, fast, monkeypatch):
    """Issue 75: a long read shows its progress (Reading, between llama.cpp's batches), and
    after Stop what was read stays in the cache for the next message, down either read."""
    from draftlight.engine.reply import reply_setup
    monkeypatch.setattr(reply_setup, "READ_TOLD_EVERY", 0.0)  # every batch told
    monkeypatch.setattr(reply_setup, "READ_TOLD_FROM", 1)
    engine = Engine.load(bundled_model, None, replace(OPTIONS, fast_prefill=fast))
    try:
        readings = []
        *_, done = engine.generate(LONG, PARAMS, OFF, on_read=readings.append)
        total = done.stats.prompt_tokens - 1
        assert readings[0].read == 0 and readings[-1].read == total
        assert all(r.total == total for r in readings) and len(readings) > 3
        assert [r.read for r in readings] == sorted(r.read for r in readings)
        assert readings[-1].seconds_left == 0.0

        engine.target.truncate(0)
        readings.clear()
        stop_after = 2 * OPTIONS.n_batch  # two batches read, then Stop

        def should_stop() -> bool:
            return bool(readings) and readings[-1].read >= stop_after

        *_, stopped = engine.generate(LONG, PARAMS, OFF, should_stop=should_stop,
                                      on_read=readings.append)
        assert stopped.stats.stop_reason == "cancelled"
        kept = len(engine.target.tokens)
        assert stop_after <= readings[-1].read <= kept < total  # what was told read is kept
        *_, again = engine.generate(LONG, PARAMS, OFF)
        assert again.stats.reused_prompt_tokens >= kept
        assert again.text == done.text
    finally:
        engine.close()
