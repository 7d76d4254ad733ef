"""The remote engine against a loopback server that streams as vLLM does with speculative decoding
(tests/support/openai_stub.py, vllm_chunks): chunks of one engine step each, usage on every
chunk, and the per-request metrics on the final usage chunk. vLLM itself never ran here (no
GPU)."""

from __future__ import annotations

import pytest

from draftlight.engine.core.sampling import SamplingParams
from draftlight.engine.server.client import Endpoint
from draftlight.engine.server.server_engine import ServerEngine
from draftlight.engine.server.reply_labels import (FIRST_VLLM_NOTE, MERGED_NOTE, SUMMARY_NOTE,
                                            UNKNOWN_NOTE, WRONG_MARKS)
from draftlight.engine.server.vllm_metrics import chunks_as_steps, spec_metrics
from tests.support.openai_stub import VLLM_ACCEPTED, VLLM_DRAFTED, VLLM_STEPS, WORDS
from draftlight.modes import REMOTE
from tests.support.replies import reply as run_reply

MESSAGES = [{"role": "user", "content": "Hi"}]
TEXT = "".join("".join(tokens) for tokens, _ in VLLM_STEPS)
TOKENS = sum(len(tokens) for tokens, _ in VLLM_STEPS)  # 11
DRAFTED, ACCEPTED = sum(VLLM_DRAFTED), sum(VLLM_ACCEPTED)  # 12, 6
# Each step's tokens: its kept drafts, then its own token; the last step lost its own token to
# the end-of-text token it drafted, so all three of its tokens are drafted.
MARKED = [("target", 0), ("draft", 1), ("target", 1), ("target", 2), ("draft", 3), ("draft", 3),
          ("target", 3), ("target", 4), ("draft", 5), ("draft", 5), ("draft", 5)]


def run(engine):
    answer = run_reply(engine, MESSAGES, SamplingParams(max_tokens=20), REMOTE)
    return answer.pieces, answer.done


def test_the_request_asks_for_usage_on_every_chunk(stub):
    server = stub("vllm")
    run(ServerEngine.remote(Endpoint(server.url)))
    assert server.bodies[0]["stream_options"] == {"include_usage": True,
                                                  "continuous_usage_stats": True}


def test_a_first_reply_is_counted_from_the_metrics_and_not_marked(stub):
    pieces, done = run(ServerEngine.remote(Endpoint(stub("vllm").url)))
    assert done.text == TEXT and len(pieces) == TOKENS
    assert {p.source for p in pieces} == {"unknown"}
    stats = done.stats
    assert (stats.new_tokens, stats.drafted, stats.accepted) == (TOKENS, DRAFTED, ACCEPTED)
    assert stats.target_passes == len(VLLM_STEPS) and stats.draft_kind == "vLLM"
    assert stats.engine_note == FIRST_VLLM_NOTE and FIRST_VLLM_NOTE in stats.summary()


def test_once_chunks_matched_steps_each_token_is_marked_with_its_pass(stub):
    engine = ServerEngine.remote(Endpoint(stub("vllm").url))
    run(engine)
    pieces, done = run(engine)
    assert [(p.source, p.step) for p in pieces] == MARKED
    # the text of a chunk goes with its last token
    assert [p.text for p in pieces if p.text] == ["".join(t) for t, _ in VLLM_STEPS
                                                  if "".join(t)]
    assert done.text == TEXT and done.stats.engine_note == ""
    assert sum(p.source == "draft" for p in pieces) == done.stats.accepted == ACCEPTED
    assert (done.stats.drafted, done.stats.target_passes) == (DRAFTED, len(VLLM_STEPS))


def test_chunks_that_merged_steps_are_owned_up_to_and_marking_stops(stub):
    server = stub("vllm")
    engine = ServerEngine.remote(Endpoint(server.url))
    run(engine)
    server.behaviour = "vllm-merged"  # steps 3 and 4 in one chunk (d d T + T): marked d d d T
    pieces, done = run(engine)
    assert [(p.source, p.step) for p in pieces] == MARKED[:4] + [
        ("draft", 3), ("draft", 3), ("draft", 3), ("target", 3),  # one token wrongly "draft"
        ("draft", 4), ("draft", 4), ("target", 4)]  # not known to be cut: the check failed
    assert done.stats.engine_note == WRONG_MARKS + MERGED_NOTE
    assert (done.stats.drafted, done.stats.accepted) == (DRAFTED, ACCEPTED)
    server.behaviour = "vllm"
    pieces, done = run(engine)  # checked again before anything is marked
    assert {p.source for p in pieces} == {"unknown"} and done.stats.engine_note == FIRST_VLLM_NOTE


def test_merged_chunks_on_a_first_reply_mark_nothing(stub):
    pieces, done = run(ServerEngine.remote(Endpoint(stub("vllm-merged").url)))
    assert {p.source for p in pieces} == {"unknown"} and done.stats.engine_note == MERGED_NOTE
    assert done.stats.accepted == ACCEPTED


def test_summary_metrics_are_counted_but_never_marked(stub):
    engine = ServerEngine.remote(Endpoint(stub("vllm-summary").url))
    for _ in range(2):
        pieces, done = run(engine)
        assert {p.source for p in pieces} == {"unknown"}
        assert done.stats.engine_note == SUMMARY_NOTE
        assert (done.stats.drafted, done.stats.accepted) == (DRAFTED, ACCEPTED)
        # passes = tokens - accepted drafts; the cut last step can make it one short
        assert len(VLLM_ACCEPTED) <= done.stats.target_passes <= len(VLLM_STEPS)


@pytest.mark.parametrize("behaviour, text", [("vllm-nospec", TEXT), ("ok", "".join(WORDS))])
def test_without_metrics_nothing_is_marked_or_counted(stub, behaviour, text):
    engine = ServerEngine.remote(Endpoint(stub(behaviour).url))
    for _ in range(2):
        pieces, done = run(engine)
        assert done.text == text and {p.source for p in pieces} == {"unknown"}
        assert done.stats.engine_note == UNKNOWN_NOTE and done.stats.drafted == 0
        assert done.stats.draft_kind == "server"


def test_a_server_that_refuses_stream_options_is_asked_again_without_them(stub):
    server = stub("strict-usage")
    engine = ServerEngine.remote(Endpoint(server.url))
    pieces, done = run(engine)
    assert done.text == "".join(WORDS) and done.stats.engine_note == UNKNOWN_NOTE
    assert "stream_options" in server.bodies[0] and "stream_options" not in server.bodies[1]
    assert "timings_per_token" not in server.bodies[1]
    run(engine)  # remembered: no refused request the second time
    assert len(server.bodies) == 3


def test_vllm_without_stream_options_still_gets_its_text(stub):
    server = stub("vllm")
    engine = ServerEngine.remote(Endpoint(server.url))
    engine._extra_fields = False  # as after a refusal: no usage, so no metrics either
    pieces, done = run(engine)
    assert done.text == TEXT and {p.source for p in pieces} == {"unknown"}
    assert done.stats.engine_note == UNKNOWN_NOTE


@pytest.mark.parametrize("sizes, accepted, expected", [
    ([1, 2, 1, 3, 1, 3], (1, 0, 2, 3), "cut"),  # the stub's reply
    ([1, 2, 1, 3, 1, 4], (1, 0, 2, 3), "whole"),  # the last step kept its own token
    ([1, 2, 1, 4, 3], (1, 0, 2, 3), "no"),  # two steps in one chunk
    ([1, 2, 2], (1, 1), "whole"),
    ([1, 3], (1, 1), "no"),  # a chunk of 3 tokens is no step that kept 1
    ([1, 1, 1], (), "whole"),  # nothing drafted
    ([2, 1], (1, 0, 0), "no"),  # two rejected drafts need two one-token chunks
    ([1, 1], (1,), "cut"),  # the last step's kept draft was the end-of-text token
    ([], (1,), "no"),
])
def test_chunks_as_steps(sizes, accepted, expected):
    assert chunks_as_steps(sizes, accepted) == expected


def test_spec_metrics_reads_the_documented_shape_and_nothing_else():
    spec = {"num_spec_steps": 2, "num_accepted_draft_tokens": 3, "num_draft_tokens": 6,
            "per_step_accepted": [1, 2], "per_step_drafted": [3, 3]}
    got = spec_metrics({"metrics": {"speculative_decoding": spec}})
    assert got.detailed and got.per_step_accepted == (1, 2) and got.drafted == 6
    bad = dict(spec, per_step_accepted=[1, 1])  # does not add up to the total: summary only
    assert not spec_metrics({"metrics": {"speculative_decoding": bad}}).detailed
    assert spec_metrics({"metrics": {"speculative_decoding": None}}) is None
    assert spec_metrics({"metrics": {"time_to_first_token_ms": 8.0}}) is None
    assert spec_metrics({"usage": {"completion_tokens": 3}}) is None
