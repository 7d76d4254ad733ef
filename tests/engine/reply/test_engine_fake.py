"""Engine.generate() on a scripted chat model (no llama.cpp): the edge cases of a reply."""

from __future__ import annotations

from pathlib import Path

import pytest

from draftlight.engine.reply.generator import Engine, SpeculationConfig
from draftlight.engine.core.sampling import SamplingParams
from tests.support.fake_backend import FakeChatModel, scripted_costs
from tests.support.fake_engine import run
from draftlight.modes import AUTO, DRAFT, NGRAM, OFF

MOTTO = b"The quick brown fox jumps over the lazy dog, and then it rests."


def engine_for(reply, draft_reply=None, **model_options) -> Engine:
    draft = FakeChatModel(draft_reply) if draft_reply else None
    return Engine(FakeChatModel(reply, **model_options), draft, cost_source=scripted_costs)


def ask_again(first_answer: str) -> list[dict[str, str]]:
    """A second turn whose answer repeats the first: n-gram lookup copies it from the prompt."""
    return [{"role": "user", "content": "Say the motto."},
            {"role": "assistant", "content": first_answer},
            {"role": "user", "content": "Again, please."}]


def test_end_of_generation_inside_an_accepted_run_ends_the_reply_there(monkeypatch):
    # The earlier answer is followed by the end-of-text token and the next user turn: an
    # n-gram draft runs through EOS, the target accepts EOS and rejects what follows. Whether
    # EOS lands inside a draft depends on where the draft runs start: try several lengths.
    from draftlight.engine.reply import generator, reply_steps
    cut = []

    def up_to_the_end(step, target):
        seen = reply_steps.up_to_the_end(step, target)
        cut.append(seen is not step)
        return seen

    monkeypatch.setattr(generator, "up_to_the_end", up_to_the_end)
    for draft_tokens in range(3, 11):
        engine = Engine(FakeChatModel(lambda conversation: MOTTO),
                        config=SpeculationConfig(ngram_tokens=draft_tokens))
        pieces, done = run(engine, ask_again(MOTTO.decode()))
        assert done.text == MOTTO.decode()
        assert done.stats.stop_reason == "eos"
        assert done.stats.new_tokens == len(MOTTO) == len(pieces)
        # The figures count what the reply shows: every accepted draft token is a piece of it
        # (a draft through EOS counts as a draft that stopped there).
        assert done.stats.accepted == sum(p.source == "draft" for p in pieces)
    assert sum(cut) >= 2  # EOS was inside an accepted run for at least two draft lengths


def test_max_tokens_is_never_exceeded_inside_an_accepted_run():
    engine = engine_for(lambda conversation: MOTTO)
    for limit in (1, 2, 7, 12, 30):
        pieces, done = run(engine, ask_again(MOTTO.decode()),
                           SamplingParams(temperature=0.0, max_tokens=limit))
        assert done.text == MOTTO[:limit].decode()
        assert done.stats.new_tokens == limit == len(pieces)
        assert done.stats.stop_reason == "max_tokens"
    assert any(p.source == "draft" for p in pieces)  # it speculated on the way


@pytest.mark.parametrize("mode", [OFF, NGRAM, AUTO], ids=str)
def test_a_full_context_stops_the_reply_cleanly(mode):
    long_answer = (MOTTO + b" ") * 8
    engine = engine_for(lambda conversation: long_answer, n_ctx=160)
    pieces, done = run(engine, ask_again(MOTTO.decode()[:20]),
                       SamplingParams(temperature=0.0, max_tokens=500), mode)
    assert done.stats.stop_reason == "context_full"
    assert long_answer.decode().startswith(done.text) and len(done.text) > 20
    assert len(engine.target.tokens) <= engine.target.n_ctx


def test_a_character_split_across_a_run_boundary_is_decoded_whole():
    # Earlier answer "café", new answer "cafè": the draft copies é = C3 A9; the target accepts
    # C3 and corrects A9 to A8 (è). The first byte is a draft token, the second the target's.
    first, second = "Un café 🙂 au lait, s'il vous plaît.", "Un cafè 🙂 au lait, s'il vous plaît."
    engine = engine_for(lambda conversation: second.encode())
    pieces, done = run(engine, ask_again(first))
    assert done.text == second and "\ufffd" not in done.text
    assert "".join(p.text for p in pieces) == second
    split = next(i for i, p in enumerate(pieces) if p.text == "è")
    assert pieces[split].source == "target"
    assert pieces[split - 1].text == "" and pieces[split - 1].source == "draft"
    emoji = next(p for p in pieces if "🙂" in p.text)  # four bytes, one piece with all of it
    assert emoji.text == "🙂"


def test_switching_modes_between_turns_reuses_the_cache_and_changes_nothing():
    def reply(conversation):
        return MOTTO if conversation.count(b"<|user|>") < 2 else MOTTO + b" Again: " + MOTTO

    engine = engine_for(reply)
    first = [{"role": "user", "content": "Say the motto."}]
    _, done1 = run(engine, first, mode=OFF)
    second = first + [{"role": "assistant", "content": done1.text},
                      {"role": "user", "content": "Twice."}]
    evaluated = engine.target.evaluated
    _, done2 = run(engine, second, mode=NGRAM)
    prompt2 = done2.stats.prompt_tokens
    # Turn 1's prompt and reply were in the cache: only the new turn's tokens were evaluated
    # for the prompt, then about one token per emitted one (drafts rejected cost a little).
    assert done2.stats.reused_prompt_tokens >= done1.stats.prompt_tokens + len(MOTTO) - 1
    assert engine.target.evaluated - evaluated < (prompt2 - done2.stats.reused_prompt_tokens
                                                   + 3 * done2.stats.new_tokens)
    assert done2.stats.accepted > 0
    fresh = engine_for(reply)
    _, plain = run(fresh, second, mode=OFF)
    assert done2.text == plain.text == (MOTTO + b" Again: " + MOTTO).decode()


def test_greedy_output_is_the_same_in_every_mode():
    def reply(conversation):  # depends on the question, and copies parts of it
        question = conversation[conversation.rfind(b"<|user|>") + 8:]
        return b"You said: " + question[:-4] + b". " + question[:12]

    def draft_reply(conversation):  # a draft that is right at first, then wanders off
        return reply(conversation)[:15] + b" something else entirely"

    for question in ("Hello there", "Repeat after me: speculation", "ab ab ab ab ab ab",
                     "Ünïcödé ✓ 🙂 text"):
        messages = [{"role": "user", "content": question}]
        texts = {}
        for mode in (OFF, NGRAM, DRAFT, AUTO):
            engine = engine_for(reply, draft_reply)
            texts[mode] = run(engine, messages, mode=mode)[1].text
        assert len(set(texts.values())) == 1, texts


def test_a_seed_makes_a_sampled_reply_reproducible():
    """The same seed gives the same tokens; other seeds give other replies. A sampled reply can
    be a single stray byte and EOS, and two seeds can both give that one (seeds 7 and 8 once
    both replied '\\ufffd'), so the check is that six seeds do not all agree, on token ids."""
    from dataclasses import replace
    params = SamplingParams(temperature=0.9, top_p=0.95, max_tokens=60)

    def sampled(seed, mode):
        engine = engine_for(lambda c: MOTTO, lambda c: MOTTO, noise=2.0, confidence=3.0)
        pieces, _ = run(engine, ask_again(MOTTO.decode()), replace(params, seed=seed), mode)
        return tuple(piece.token for piece in pieces)

    for mode in (OFF, NGRAM, DRAFT, AUTO):
        assert sampled(7, mode) == sampled(7, mode)
        assert len({sampled(seed, mode) for seed in range(7, 13)}) > 1, mode


def test_close_releases_both_models():
    engine = engine_for(lambda c: MOTTO, lambda c: MOTTO)
    target, draft = engine.target, engine.draft
    engine.close()
    assert target.closed and draft.closed


def test_draft_mode_without_a_draft_model_is_a_clear_error():
    from draftlight.engine.core.errors import EngineError
    engine = engine_for(lambda c: MOTTO)
    with pytest.raises(EngineError, match="draft mode needs a draft model"):
        run(engine, [{"role": "user", "content": "hi"}], mode=DRAFT)


def test_auto_measures_its_costs_inside_a_small_context():
    """The cost probe caches fewer tokens when the context window is small, instead of
    overflowing it."""
    from draftlight.engine.auto.costs import measure, token_seconds
    model = FakeChatModel(lambda c: MOTTO, n_ctx=48)
    probe = model.tokenize("Speculative decoding lets a small draft guess. ", add_bos=False)
    curve = measure(model, probe)
    assert curve.v[1] == 1.0 and token_seconds(model, probe) > 0
    engine = Engine(model, cost_source=lambda m, p, role: (measure(m, p), token_seconds(m, p)))
    _, done = run(engine, [{"role": "user", "content": "hi"}],
                  SamplingParams(temperature=0.0, max_tokens=8), AUTO)
    assert done.text == MOTTO[:8].decode()


def test_timing_for_auto_stops_when_the_load_is_cancelled():
    """Auto times its models while they load (issue 37, item 2): a window closing then asks
    the timing to stop, and it does before its next pass, with one ModelLoadError."""
    from draftlight.engine.auto.costs import measure, token_seconds
    from draftlight.engine.core.errors import ModelLoadError
    model = FakeChatModel(lambda c: MOTTO)
    engine = Engine(model, cost_source=lambda m, p, role: (measure(m, p), token_seconds(m, p)))
    passes = []
    with pytest.raises(ModelLoadError, match="cancelled"):
        engine.prepare_auto(should_cancel=lambda: (passes.append(1), len(passes) > 3)[1])
    assert len(passes) == 4 and engine.costs is None
    engine.prepare_auto()  # asked again, not cancelled: it is timed
    assert engine.costs.v[1] == 1.0


# --- the load-time check of batched vs one-token logits ---------------------------------------

def test_the_load_time_check_finds_bit_identical_logits_exact():
    engine = engine_for(lambda c: MOTTO)
    assert engine.drift.exact
    _, done = run(engine, ask_again(MOTTO.decode()))
    assert done.stats.batch_drift == 0.0 and done.stats.identity_note == ""


def test_the_load_time_check_measures_batched_logits_that_differ():
    engine = engine_for(lambda c: MOTTO, batch_drift=0.3)
    assert not engine.drift.exact
    assert 0.1 < engine.drift.gap_change <= 2 * 0.3  # a gap moves by two rows' drift at most
    assert "greedy identity not guaranteed here" in engine.drift.describe()


def test_a_reply_where_batched_logits_differ_says_identity_is_not_guaranteed():
    """The near-ties this model has flip in batched passes: the speculative reply may differ
    from plain decoding, and its statistics say why instead of implying identity."""
    model = dict(batch_drift=0.3, rival_every=3, rival_gap=0.05)
    answer = MOTTO + b" " + MOTTO
    texts, stats = {}, {}
    for mode in (OFF, NGRAM):
        engine = Engine(FakeChatModel(lambda c: answer, **model), cost_source=scripted_costs)
        _, done = run(engine, ask_again(MOTTO.decode()), mode=mode)
        texts[mode], stats[mode] = done.text, done.stats
    assert texts[NGRAM] != texts[OFF]  # the drift really changes this reply
    assert "greedy identity not guaranteed here" in stats[NGRAM].summary()
    assert stats[NGRAM].to_dict()["identity_note"] == stats[NGRAM].identity_note
    assert stats[OFF].identity_note == "" and stats[OFF].batch_drift is None


def test_the_scripted_model_is_the_same_model_in_every_process():
    """Its noise must not depend on the process's string-hash salt (PYTHONHASHSEED)."""
    import os
    import subprocess
    import sys
    script = ("import hashlib; from tests.support.fake_backend import FakeChatModel;"
              "m = FakeChatModel(lambda c: b'hi', noise=2.0, batch_drift=0.5);"
              "rows = m.eval(list(b'<|assistant|>h'), n_logits=3);"
              "print(hashlib.sha256(rows.tobytes()).hexdigest())")
    digests = set()
    for salt in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": salt}
        out = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                             text=True, check=True, cwd=Path(__file__).resolve().parents[3])
        digests.add(out.stdout.strip())
    assert len(digests) == 1
