"""A misbehaving engine host (issue 76, hole 14) through the app's reader of its pipe
(engine/host/host_lines.py), case by case from tests/support/hostile_host_lines.py and fuzzed:
every line the app reads is an answer of the expected shape that hosted.py can read; past a
few lines that are not, a line too long or another version of the wire, the host is one
HostBroken line, soon and in bounded memory; through HostWaits, one EngineCrashed line and the
host killed. Before: 200,000 junk lines ended in RecursionError, a JSON list in
AttributeError, a 100 MB line without a newline took 102 s, another version waited 300 s."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from draftlight.engine.core.errors import EngineCrashed
from draftlight.engine.host import wire
from draftlight.engine.host.host_lines import MAX_JUNK_LINES, HostBroken, HostLines
from draftlight.engine.host.host_waits import HostWaits
from tests.support.hostile_host_lines import (GOOD, GOOD_BYTES, JUNK_BOUND, WRONG_SHAPES,
                                              hostile_outputs, line)
from tests.support.peak_memory import PeakMemory

FUZZ = settings(derandomize=True, database=None, deadline=None, max_examples=150,
                suppress_health_check=[HealthCheck.too_slow])


def read_all(chunks) -> tuple[list[dict], HostBroken | None]:
    """What HostLines makes of `chunks` written on a pipe: the messages, then the break."""
    read_end, write_end = os.pipe()

    def write() -> None:
        try:
            with os.fdopen(write_end, "wb") as out:
                for chunk in chunks:
                    out.write(chunk)
        except OSError:  # the reader stopped: the pipe is closed
            pass

    writer = threading.Thread(target=write, daemon=True)
    writer.start()
    messages: list[dict] = []
    broken = None
    with os.fdopen(read_end, "rb") as stream:
        lines = HostLines(stream)
        try:
            while (message := lines.next(5.0)) is not None:
                messages.append(message)
        except HostBroken as exc:
            broken = exc
    writer.join(10)
    return messages, broken


def test_the_corpus_bounds_are_the_readers():
    assert JUNK_BOUND == MAX_JUNK_LINES < len(WRONG_SHAPES)


@pytest.mark.parametrize("name", sorted(hostile_outputs()))
def test_each_hostile_output_is_its_answers_then_the_end_or_one_line(name):
    case = hostile_outputs()[name]
    started = time.monotonic()
    with PeakMemory() as memory:
        messages, broken = read_all(case.chunks)
    assert time.monotonic() - started < 10
    assert memory.growth_mb < 250
    assert len(messages) == case.reads
    assert messages[:len(GOOD)] == [{"v": 1, **m} for m in GOOD][:len(messages)] or \
        name == "a-line-of-8-mb"
    if case.says is None:
        assert broken is None
    else:
        assert broken is not None and case.says in str(broken)
        assert "\n" not in str(broken) and len(str(broken)) < 300


def test_every_answer_read_is_one_hosted_can_read():
    """The good lines, read, give hosted.py's events, errors and modes without a KeyError."""
    messages, broken = read_all([GOOD_BYTES])
    assert broken is None
    readable(messages)


def readable(messages: list[dict]) -> None:
    """What hosted.py reads of each message, read."""
    for message in messages:
        for record in message.get("events", ()):
            wire.event_from(record)
        for key in ("error", "failed"):
            if key in message:
                wire.error_from(message[key])
        if "ready" in message:
            wire.modes_from(message["ready"]["modes"])
        if "cpu" in message:
            message["cpu"].get("trying_extra")


# --- fuzzed: lines of any JSON, and good lines mutated ---------------------------------------

any_json = st.recursive(
    st.none() | st.booleans() | st.integers(-2**70, 2**70) | st.floats() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(
        st.sampled_from(["v", "id", "events", "result", "error", "end", "cpu", "loading",
                         "ready", "failed", "type", "text", "stats", "message", "modes"])
        | st.text(max_size=6), inner, max_size=5),
    max_leaves=16)
answer_like = st.fixed_dictionaries(
    {"v": st.just(1)},
    optional={"id": st.integers(0, 3) | any_json,
              "events": st.lists(st.fixed_dictionaries(
                  {"type": st.sampled_from(["piece", "notice", "progress", "reading", "done"])},
                  optional={k: any_json for k in ("text", "source", "step", "token", "origin",
                                                  "message", "stats", "pass_drafted",
                                                  "pass_why", "read", "total", "seconds")}),
                  max_size=3) | any_json,
              "result": any_json, "error": any_json, "end": any_json, "cpu": any_json,
              "loading": any_json, "ready": any_json, "failed": any_json})


@FUZZ
@given(st.lists(answer_like.map(lambda m: json.dumps(m).encode() + b"\n")
                | st.binary(max_size=60).map(lambda b: b.replace(b"\n", b"") + b"\n"),
                max_size=12))
def test_fuzzed_lines_are_answers_hosted_can_read_or_one_line(lines):
    messages, broken = read_all([b"".join(lines) + GOOD_BYTES])
    readable(messages)
    assert broken is None or "\n" not in str(broken)
    if broken is None:
        assert messages[-len(GOOD):] == [{"v": 1, **m} for m in GOOD]


@FUZZ
@given(st.integers(0, len(GOOD_BYTES) - 1), st.binary(min_size=1, max_size=3))
def test_a_good_stream_with_bytes_changed_is_read_or_one_line(at, new):
    messages, broken = read_all([GOOD_BYTES[:at] + new + GOOD_BYTES[at + len(new):]])
    readable(messages)
    assert broken is None or "\n" not in str(broken)


# --- through HostWaits: one EngineCrashed line, the host killed --------------------------------

class FakeHost(HostWaits):
    """HostWaits on a child that writes `output` on its pipe and then waits."""

    def __init__(self, output: bytes) -> None:
        script = ("import sys, time; sys.stdout.buffer.write(sys.stdin.buffer.read()); "
                  "sys.stdout.flush(); time.sleep(60)")
        self._process = subprocess.Popen([sys.executable, "-c", script], stdin=subprocess.PIPE,
                                         stdout=subprocess.PIPE)
        self._process.stdin.write(output)
        self._process.stdin.close()
        self._lines = HostLines(self._process.stdout)
        self.silence_seconds = 30.0
        self._interrupted = self._trying_extra = self._say_notes = False

    def _write(self, message: dict) -> None:
        pass


@pytest.mark.parametrize("output, says", [
    (b"junk\n" * 200_000, "lines that are not its answers"),
    (line(GOOD[0], 2), "version 2 of the wire"),
])
def test_a_broken_host_is_one_crash_line_and_is_killed(output, says):
    host = FakeHost(output)
    started = time.monotonic()
    with pytest.raises(EngineCrashed) as raised:
        while True:
            host._next()
    assert says in str(raised.value) and "it was ended" in str(raised.value)
    assert "\n" not in str(raised.value)
    assert host._process.poll() is not None  # killed, not left to the silence limit
    assert time.monotonic() - started < 10
