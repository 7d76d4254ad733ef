"""Which streamed tokens a llama-server drafted, rebuilt from its running counters
(app/draftlight.engine.server.pass_tracker.py), on scripted chunk sequences shaped like the vendored
server's (tools/server/server-context.cpp: counters move before a pass's tokens go out)."""

from __future__ import annotations

from draftlight.engine.server.pass_tracker import PassTracker


def t(n, drafted=0, accepted=0):
    timings = {"predicted_n": n}
    if drafted:  # the server leaves both out while nothing was drafted
        timings |= {"draft_n": drafted, "draft_n_accepted": accepted}
    return timings


def labels(chunks):
    tracker = PassTracker()
    return [label for c in chunks for label in tracker.label(c)], tracker


def test_plain_tokens_are_one_pass_each():
    got, tracker = labels([t(1), t(2), t(3)])
    assert got == [("target", 0), ("target", 1), ("target", 2)]
    assert tracker.passes == 3 and tracker.known


def test_an_accepted_run_then_the_targets_token_share_a_pass():
    # pass 0 plain; pass 1 drafts 4 and keeps 3: 3 drafted + 1 target; pass 2 plain
    got, _ = labels([t(1), t(2, 4, 3), t(3, 4, 3), t(4, 4, 3), t(5, 4, 3), t(6, 4, 3)])
    assert got == [("target", 0), ("draft", 1), ("draft", 1), ("draft", 1), ("target", 1),
                   ("target", 2)]


def test_a_rejected_draft_is_a_pass_of_the_targets_token_alone():
    got, _ = labels([t(1), t(2, 5, 0), t(3, 5, 0)])
    assert got == [("target", 0), ("target", 1), ("target", 2)]


def test_back_to_back_speculative_passes():
    got, tracker = labels([t(1, 2, 2), t(2, 2, 2), t(3, 2, 2), t(4, 4, 3), t(5, 4, 3)])
    assert got == [("draft", 0), ("draft", 0), ("target", 0), ("draft", 1), ("target", 1)]
    assert tracker.passes == 2


def test_a_hybrid_replay_labels_the_correction_and_the_bonus_as_the_targets():
    # draft of 4, target keeps 2 and restores its checkpoint; the replay pass re-runs the 2
    # kept tokens plus the correction, emits d1 d2 t3 and its own bonus t4
    # (draft_n_accepted rises by 2: the replayed correction is not counted as drafted)
    got, _ = labels([t(1), t(2, 4, 2), t(3, 4, 2), t(4, 4, 2), t(5, 4, 2)])
    assert [s for s, _ in got] == ["target", "draft", "draft", "target", "target"]


def test_a_chunk_of_several_tokens_labels_each():
    tracker = PassTracker()
    assert tracker.label(t(1)) == [("target", 0)]
    # d d T held back by a stop string, or a character split over tokens
    assert tracker.label(t(4, 3, 2)) == [("draft", 1), ("draft", 1), ("target", 1)]
    assert tracker.label(t(6, 3, 2)) == [("target", 2), ("target", 3)]


def test_no_counters_means_unknown_never_a_guess():
    tracker = PassTracker()
    assert tracker.label(None) == [("unknown", 0)]
    assert tracker.label({}) == [("unknown", 1)]
    assert not tracker.known
