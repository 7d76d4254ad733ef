"""Hostile conversation exports (tests/support/hostile_imports.py) through File > Import's
import_conversation, and fuzzed ones: each is a new conversation that shows and exports again
(its figures' every number a float() can hold), or one ExportError with the history unchanged;
never another exception, within seconds and a bounded memory over the whole corpus (issue 76,
holes 5 and 13: a 63 MB export hit MemoryError at 6 GB in the nesting check; an Infinity or a
4,000-digit figure raised OverflowError each time it was shown)."""

from __future__ import annotations

import json
import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from draftlight.store.export import (ExportError, conversation_markdown, import_conversation,
                                     write_export)
from draftlight.store.history import History
from tests.support.hostile_imports import QUESTION, export, hostile_imports, reply
from tests.support.peak_memory import PeakMemory

FUZZ = settings(derandomize=True, database=None, deadline=None, max_examples=200,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])


def every_number_as_float(stats: dict) -> str:
    """A footer that does with every figure what a reply's footer does with some: float()."""
    numbers, waiting = [], [stats]
    while waiting:
        item = waiting.pop()
        if isinstance(item, dict):
            waiting.extend(item.values())
        elif isinstance(item, list):
            waiting.extend(item)
        elif isinstance(item, (int, float)):
            numbers.append(f"{float(item):.1f}")
    return " ".join(numbers)


def imported_or_refused(history: History, path) -> tuple[int | None, str]:
    """(the conversation made, or None; the error's or the notes' words)."""
    before = history.conversations()
    notes: list[str] = []
    try:
        conversation_id = import_conversation(history, path, notes=notes)
    except ExportError as exc:
        assert history.conversations() == before
        assert "\n" not in str(exc)
        return None, str(exc)
    conversation_markdown(history, conversation_id, footer=every_number_as_float,
                          branches="all")
    write_export(history, conversation_id, path.with_suffix(".again.json"))
    json.loads(path.with_suffix(".again.json").read_text(encoding="utf-8"))
    return conversation_id, " ".join(notes)


@pytest.mark.parametrize("name", sorted(hostile_imports()))
def test_each_hostile_export_is_imported_or_one_error(tmp_path, name):
    case = hostile_imports()[name]
    path = tmp_path / f"{name}.json"
    path.write_bytes(case.data)
    history = History(tmp_path / "h.sqlite3")
    started = time.monotonic()
    try:
        made, words = imported_or_refused(history, path)
    finally:
        history.close()
    assert time.monotonic() - started < 20
    assert (made is not None) == case.imported, words
    assert case.says in words


def test_the_whole_corpus_within_bounded_memory(tmp_path):
    history = History(tmp_path / "h.sqlite3")
    with PeakMemory() as memory:
        for name, case in hostile_imports().items():
            path = tmp_path / f"{name}.json"
            path.write_bytes(case.data)
            imported_or_refused(history, path)
            path.unlink()
    history.close()
    assert memory.growth_mb < 400


# --- fuzzed: exports with any JSON in any field --------------------------------------------------

# text with lone surrogates too: JSON's \ud800 escapes give them, and no stored text holds one
texts = st.text(max_size=8) | st.sampled_from(["\ud800", "a\udfffb", "\x00"])
any_json = st.recursive(
    st.none() | st.booleans() | st.integers(-2**70, 2**70)
    | st.floats(allow_nan=True, allow_infinity=True) | texts,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(texts, inner,
                                                                max_size=4),
    max_leaves=12)
stats = st.dictionaries(st.sampled_from(["new_tokens", "seconds", "passes", "origins", "mode",
                                         "batch_drift", "pass_costs", "compared", "x"]),
                        any_json, max_size=5)
message = st.fixed_dictionaries(
    {"id": st.integers(0, 3) | any_json, "parent": st.none() | st.integers(0, 3) | any_json,
     "role": st.sampled_from(["user", "assistant", "system", "robot"]) | any_json,
     "text": texts | any_json},
    optional={"runs": st.lists(st.lists(st.integers(-1, 30), min_size=3, max_size=3),
                               max_size=2) | any_json,
              "stats": stats | any_json, "status": st.sampled_from(["complete", "odd"]) | any_json,
              "mode": texts | any_json})


@FUZZ
@given(st.lists(message, max_size=4), st.integers(0, 4) | any_json, st.sampled_from([1, 2]),
       any_json)
def test_fuzzed_exports_are_imported_or_one_error(tmp_path, messages, shown, version, title):
    path = tmp_path / "fuzzed.json"
    path.write_bytes(export(messages, version=version, shown=shown, title=title))
    history = History(":memory:")
    try:
        imported_or_refused(history, path)
    finally:
        history.close()


@FUZZ
@given(st.integers(0, 2000), st.binary(min_size=1, max_size=4))
def test_a_good_export_with_bytes_changed_is_imported_or_one_error(tmp_path, at, new):
    good = export([QUESTION, reply(runs=[[0, 5, 2]], stats={"new_tokens": 2, "seconds": 0.5,
                                                            "passes": [[4, 1, 0, 0]]})])
    at = at % len(good)
    path = tmp_path / "changed.json"
    path.write_bytes(good[:at] + new + good[at + len(new):])
    history = History(":memory:")
    try:
        imported_or_refused(history, path)
    finally:
        history.close()
