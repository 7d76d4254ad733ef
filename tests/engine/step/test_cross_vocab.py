"""Cross-vocabulary drafting on scripted models (no llama.cpp): a draft whose tokens are another
tokenisation of the same bytes. Greedy output is token-identical to plain decoding, sampled
output keeps the target's distribution (chi-square, with a negative control), and a damaged
mapping costs acceptance, never correctness."""

from __future__ import annotations

import numpy as np
import pytest

from draftlight.engine.text import compat
from draftlight.engine.step.cross_vocab import CrossVocabDrafter
from draftlight.engine.step.drafters import Draft
from draftlight.engine.core.errors import IncompatibleDraftError
from draftlight.engine.reply.generator import Engine
from draftlight.engine.core.sampling import SamplingParams
from draftlight.engine.step.speculative import speculative_step
from draftlight.engine.text.vocab_map import build_vocab_map, map_cache_path, save_vocab_map, vocab_map_for
from tests.support.chi_square import CHI2_CRITICAL_P001
from tests.support.fake_backend import WORDS, FakeChatModel, FakeWordChatModel, scripted_costs
from tests.support.fake_engine import run as run_engine
from draftlight.modes import AUTO, DRAFT, OFF

GREEDY = SamplingParams(temperature=0.0, max_tokens=200)
# The target's words, where it has any: "é" whole, and other merges than the draft's
# (WORDS: common English pieces, and two that split "é" (C3 A9) between them).
TARGET_WORDS = [b"\xc3\xa9", b"Th", b"e q", b"uick", b" bro", b"wn f", b"ox", b" jum", b"ps",
                b" la", b"zy", b"ai", b"d:", b" c", b"af"]
MOTTO = "The quick brown fox jumps over the lazy dog. Un café au lait 🙂, s'il vous plaît."


def reply_for(conversation: bytes) -> bytes:
    question = conversation[conversation.rfind(b"<|user|>") + 8:]
    return b"You said: " + question[:-4] + b". " + MOTTO.encode()


def wandering_reply(conversation: bytes) -> bytes:
    """The draft is right at first, then wanders off (its guesses are then rejected)."""
    return reply_for(conversation)[:30] + b" and something else entirely, " + MOTTO.encode()


def run(engine, messages, params=GREEDY, mode=DRAFT):
    return run_engine(engine, messages, params, mode)


PAIRS = {
    "bytes target, word draft": (lambda r: FakeChatModel(r), lambda r: FakeWordChatModel(r, WORDS)),
    "word target, byte draft": (lambda r: FakeWordChatModel(r, TARGET_WORDS),
                                lambda r: FakeChatModel(r)),
    "word target, word draft": (lambda r: FakeWordChatModel(r, TARGET_WORDS),
                                lambda r: FakeWordChatModel(r, WORDS)),
}


@pytest.mark.parametrize("pair", PAIRS)
@pytest.mark.parametrize("draft_reply", [reply_for, wandering_reply])
def test_greedy_output_is_token_identical_to_plain_decoding(pair, draft_reply):
    make_target, make_draft = PAIRS[pair]
    for question in ("Hello there", "Ünïcödé ✓ 🙂 text", "café, s'il vous plaît", "ab ab ab"):
        messages = [{"role": "user", "content": question}]
        plain = run(Engine(make_target(reply_for), cost_source=scripted_costs), messages,
                    mode=OFF)
        for mode in (DRAFT, AUTO):
            engine = Engine(make_target(reply_for), make_draft(draft_reply),
                            cost_source=scripted_costs)
            assert not engine.compatibility.same_vocabulary
            pieces, done = run(engine, messages, mode=mode)
            assert [p.token for p in pieces] == [p.token for p in plain[0]], (mode, question)
            assert done.text == plain[1].text and "\ufffd" not in done.text
            assert done.stats.accepted > 0, (mode, question)
            assert done.stats.draft_kind == "cross-vocabulary"
            assert "[draft, cross-vocabulary]" in done.stats.summary() or mode == AUTO


def test_a_character_split_across_draft_tokens_is_proposed_whole():
    """The draft writes é as "caf\\xc3" + "\\xa9 au": the target (é one token) gets é."""
    target = FakeWordChatModel(reply_for, TARGET_WORDS)
    draft = FakeWordChatModel(reply_for, WORDS)
    engine = Engine(target, draft, cost_source=scripted_costs)
    pieces, done = run(engine, [{"role": "user", "content": "Hi"}])
    e_acute = target.tokenize("é", add_bos=False)
    assert e_acute == [0]  # one target token
    assert any(p.token == 0 and p.source == "draft" for p in pieces)
    assert done.text.endswith(MOTTO)


def test_the_proposal_is_the_draft_text_in_target_tokens_without_its_last_token():
    target = FakeChatModel(reply_for)  # one token per byte
    draft = FakeWordChatModel(reply_for, WORDS)
    drafter = CrossVocabDrafter(draft, target, build_vocab_map(target, draft))
    engine = Engine(target, cost_source=scripted_costs)
    context = engine.tokenize_chat([{"role": "user", "content": "Hi"}])
    proposal = drafter.propose(context, 6, GREEDY, None)
    # Draft: "You", " said", ": ", ".", " ", "The", " quick" (7 draft tokens for 6 target
    # ones): the target's tokens of those bytes, one per byte, are cut to 6.
    assert proposal.probs is None  # one-hot: verified like an n-gram draft
    assert bytes(proposal.tokens) == b"You sa"
    longer = drafter.propose(context, 40, GREEDY, None)  # 41 draft tokens: more than enough
    assert bytes(longer.tokens) == reply_for(b"<|user|>Hi")[:40]
    assert b"You said: . The quick brown fox" in b"".join(map(draft.piece, draft.tokens))


def test_the_draft_context_follows_the_target_and_reuses_its_cache():
    target = FakeWordChatModel(reply_for, TARGET_WORDS)
    draft = FakeWordChatModel(reply_for, WORDS)
    engine = Engine(target, draft, cost_source=scripted_costs)
    run(engine, [{"role": "user", "content": "Hello there"}])
    drafter = engine.model_drafter
    text = b"".join(target.piece(t) or target.token_text(t).encode() for t in drafter._target_tokens)
    assert bytes(drafter._text) == text
    assert b"".join(draft.piece(t) or draft.token_text(t).encode()
                    for t in drafter._draft_tokens) == text
    # Each step re-tokenised a few tokens at the end, not the conversation.
    assert draft.evaluated < len(drafter._draft_tokens) + 4 * engine.target.passes
    # (what a conversion costs is measured by python -m draftlight.bench.cross_vocab_cost, not
    # bounded here: a wall-clock bound failed on a machine with a CPU quota)
    assert drafter.conversions


# --- sampling -----------------------------------------------------------------------------------

# Target: a constant next-token distribution over a few of its tokens, so every emitted token at
# every position must follow EXPECTED. The draft writes a, b or c (by position), which the
# target's tokenizer turns into "ab", "ba", "a", ... proposals.
SAMPLE_WORDS = [b"ab", b"ba", b"aa"]
P = {b"a": 0.30, b"b": 0.20, b"ab": 0.22, b"ba": 0.13, b"aa": 0.05, b"c": 0.10}
SAMPLING = SamplingParams(temperature=1.0)
POSITIONS, TRIALS = 4, 3_000


class ConstantWordModel(FakeWordChatModel):
    def __init__(self):
        super().__init__(lambda c: b"", SAMPLE_WORDS)
        self.support = [self._id[w] for w in P]
        self.log_p = np.full(self.n_vocab, -np.inf)
        self.log_p[self.support] = np.log(list(P.values()))

    def _logits(self, prefix):
        return self.log_p


class CyclingByteModel(FakeChatModel):
    """Greedy writes a, b, a, a, c, b, ... by position: varied proposals, all deterministic."""

    def _logits(self, prefix):
        logits = np.zeros(self.n_vocab)
        logits[b"abaacb"[len(prefix) % 6]] = 5.0
        return logits


EXPECTED = np.array(list(P.values()))


class OverconfidentDrafter(CrossVocabDrafter):
    """Negative control: claims q(x) = 0.9 for tokens it chose deterministically (the draft's
    confidence, say), so the step accepts x with p(x)/0.9 instead of p(x)."""

    def propose(self, context, max_tokens, params, rng):
        draft = super().propose(context, max_tokens, params, rng)
        n = self.target.n_vocab
        probs = np.full((len(draft.tokens), n), 0.1 / (n - 1))
        probs[np.arange(len(draft.tokens)), draft.tokens] = 0.9
        return Draft(draft.tokens, probs if draft.tokens else None)


def sampled_positions(drafter_class, seed=11) -> np.ndarray:
    target, draft = ConstantWordModel(), CyclingByteModel(lambda c: b"")
    vocab_map = build_vocab_map(target, draft)
    index = {t: i for i, t in enumerate(target.support)}
    rng = np.random.default_rng(seed)
    out = np.empty((TRIALS, POSITIONS), dtype=int)
    drafted = 0
    for trial in range(TRIALS):
        drafter = drafter_class(draft, target, vocab_map)
        target.truncate(0)
        prompt = target.tokenize("ab", add_bos=False)
        target.eval(prompt[:-1], n_logits=0)
        last, tokens = prompt[-1], []
        while len(tokens) < POSITIONS:
            step = speculative_step(target, drafter, last, 3, SAMPLING, rng)
            drafted += step.drafted
            tokens += step.accepted + [step.token]
            last = step.token
        out[trial] = [index[t] for t in tokens[:POSITIONS]]
    assert drafted > TRIALS  # it really drafted
    return out


def worst_position(tokens: np.ndarray) -> float:
    worst = 0.0
    for position in range(POSITIONS):
        counts = np.bincount(tokens[:, position], minlength=len(EXPECTED))
        expected = EXPECTED * len(tokens)
        statistic = float(((counts - expected) ** 2 / expected).sum())
        worst = max(worst, statistic / CHI2_CRITICAL_P001[len(EXPECTED) - 1])
    return worst


def test_sampled_output_keeps_the_target_distribution():
    assert worst_position(sampled_positions(CrossVocabDrafter)) < 1.0


def test_the_check_catches_a_drafter_that_claims_a_confidence_it_did_not_sample_from():
    assert worst_position(sampled_positions(OverconfidentDrafter)) > 1.0


# --- the mapping --------------------------------------------------------------------------------

def test_a_damaged_mapping_costs_acceptance_not_correctness():
    """Shuffled byte tables make the draft read and write the wrong text: every guess is then
    wrong, the target rejects it, and the reply is still plain decoding's, token for token."""
    messages = [{"role": "user", "content": "Hello there"}]
    plain = run(Engine(FakeChatModel(reply_for), cost_source=scripted_costs), messages,
                mode=OFF)[1]
    engine = Engine(FakeChatModel(reply_for), FakeWordChatModel(reply_for, WORDS),
                    cost_source=scripted_costs)
    good = run(engine, messages)[1]
    damaged = engine.model_drafter.map
    rng = np.random.default_rng(0)
    for pieces in (damaged.target_pieces, damaged.draft_pieces):
        order = rng.permutation(len(pieces))
        pieces[:] = [pieces[i] for i in order]
    engine = Engine(FakeChatModel(reply_for), cost_source=scripted_costs)
    engine.draft = draft = FakeWordChatModel(reply_for, WORDS)
    engine.model_drafter = CrossVocabDrafter(draft, engine.target, damaged)
    bad = run(engine, messages)[1]
    assert good.text == bad.text == plain.text
    assert good.stats.acceptance_rate > 0.6 and bad.stats.acceptance_rate < 0.2


def test_the_map_is_cached_on_disk_and_a_stale_file_is_rebuilt(tmp_path, isolated_home):
    target, draft = FakeWordChatModel(reply_for, TARGET_WORDS), FakeWordChatModel(reply_for, WORDS)
    for model, name in ((target, "target.gguf"), (draft, "draft.gguf")):
        model.path = tmp_path / name
        model.path.write_bytes(name.encode())
    path = map_cache_path(target, draft)
    assert path is not None and str(path).startswith(str(isolated_home))
    built = vocab_map_for(target, draft)
    assert path.exists()
    loaded = vocab_map_for(target, draft)
    assert loaded.target_pieces == built.target_pieces and loaded.shared == built.shared
    assert loaded.draft_specials == built.draft_specials
    # A file that no longer matches the models (here: another draft's tables) is not trusted.
    other = build_vocab_map(target, FakeWordChatModel(reply_for, WORDS[::-1]))
    save_vocab_map(other, path)
    again = vocab_map_for(target, draft)
    assert again.draft_pieces == built.draft_pieces


def test_compatibility_reports_the_overlap_and_refuses_a_pair_that_shares_too_little():
    target, draft = FakeChatModel(reply_for), FakeWordChatModel(reply_for, WORDS)
    result = compat.check_compatible(target, draft)
    assert not result.same_vocabulary and result.label == "cross-vocabulary"
    assert result.note == ("different vocabularies: drafting through 256 shared tokens "
                           "(99% of the target's vocabulary)")
    assert compat.check_compatible(target, FakeChatModel(reply_for)).same_vocabulary
    strangers = [f"q{i:04d}".encode() for i in range(1200)]
    foreign = FakeWordChatModel(reply_for, strangers)
    with pytest.raises(IncompatibleDraftError, match="share only 256 tokens"):
        compat.check_compatible(FakeWordChatModel(reply_for, [b"x" + s for s in strangers]),
                                foreign)
