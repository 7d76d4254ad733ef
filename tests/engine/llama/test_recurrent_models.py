"""Hybrid, recurrent and MoE models in the built-in engine, on synthetic GGUFs of random weights
(tests/support/synthetic_models.py): a rejected draft rolls back cheaply (llama.cpp's snapshots on
lfm2, a restored state checkpoint on mamba) and exactly (greedy output is plain decoding's in
every mode; sampled output keeps the target's distribution through a restore)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from draftlight.engine.step.drafters import Draft
from draftlight.engine.reply.events import Done
from draftlight.engine.reply.generator import Engine
from draftlight.engine.llama.llama_backend import LlamaBackend
from draftlight.engine.core.load_options import LoadOptions
from draftlight.engine.core.sampling import SamplingParams, to_probs
from draftlight.engine.step.speculative import speculative_step
from tests.support.chi_square import chi_square_sf, pearson
from tests.support.synthetic_models import cached_model
from draftlight.modes import AUTO, DRAFT, NGRAM, OFF
from tests.support.replies import reply as run_reply

OPTIONS = LoadOptions(n_ctx=2048, n_threads=1)
GREEDY = SamplingParams(temperature=0.0, max_tokens=40)
PROMPTS = ["Repeat exactly: the cat sat on the mat, the cat sat on the mat.",
           "Write a list of ten numbers.",
           "What is the capital of France?"]
# which rollback each synthetic architecture gets (llama_backend.LlamaBackend.rollback)
ROLLBACK = {"lfm2": "native", "mamba": "checkpoint", "qwen3moe": "cut"}


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    folder = tmp_path_factory.mktemp("synthetic")
    return {(arch, seed): cached_model(arch, "small", folder, seed=seed)
            for arch in ROLLBACK for seed in (0, 1)}


def load(files, arch, seed=0, options=OPTIONS) -> LlamaBackend:
    return LlamaBackend(files[(arch, seed)], options)


def reply(engine, prompt, mode, params=GREEDY) -> tuple[list[int], Done]:
    answer = run_reply(engine, [{"role": "user", "content": prompt}], params, mode)
    return answer.tokens, answer.done


@pytest.mark.parametrize("arch", list(ROLLBACK))
def test_each_architecture_gets_its_rollback(files, arch):
    with load(files, arch) as model:
        assert model.rollback == ROLLBACK[arch]
        assert (model.native_rollback > 0) == (ROLLBACK[arch] == "native")
        assert (model.checkpoint_bytes() > 0) == (ROLLBACK[arch] != "cut")


# lfm2 without n_rs_seq: a hybrid restored from checkpoints (its attention half is cut)
ROLLBACK_WAYS = {"lfm2": ("lfm2", OPTIONS), "mamba": ("mamba", OPTIONS),
                 "lfm2-checkpoints": ("lfm2", replace(OPTIONS, rollback_tokens=0))}


@pytest.mark.parametrize("way", list(ROLLBACK_WAYS))
@pytest.mark.parametrize("kept", [0, 1, 3, 5])
def test_a_rollback_leaves_the_state_a_fresh_model_has(files, way, kept):
    """Checkpoint, a 6-token pass, roll back to `kept` of its tokens (at most all but one: what
    a verify pass keeps; none: what llama.cpp's snapshots cannot undo), and the next token's
    logits are those of a model that never saw the rest."""
    arch, options = ROLLBACK_WAYS[way]
    context = list(range(300, 420))
    step = [7, 1200, 44, 9000, 301, 15]
    with load(files, arch, options=options) as model, load(files, arch) as fresh:
        assert model.rollback == ("checkpoint" if way != "lfm2" else "native")
        model.eval(context, n_logits=0)
        model.checkpoint(len(step) if kept else 0)  # the promise holds only if one is kept
        model.eval(step, n_logits=len(step))
        model.truncate(len(context) + kept)
        assert model.tokens == context + step[:kept]
        after = model.eval([77], n_logits=1)[0]
        expected = fresh.eval(context + step[:kept] + [77], n_logits=1)[0]
        np.testing.assert_array_equal(after, expected)
        counters = model.rollback_counters
        assert counters.full == 0, "rolled back by re-evaluating the whole context"


def test_rolling_back_past_the_checkpoint_re_evaluates_and_stays_right(files):
    with load(files, "mamba") as model, load(files, "mamba") as fresh:
        model.eval(list(range(500, 600)), n_logits=0)
        model.checkpoint()
        model.eval([5, 6, 7], n_logits=1)
        model.truncate(50)  # before the checkpoint
        assert model.rollback_counters.full == 1
        np.testing.assert_array_equal(model.eval([9], n_logits=1)[0],
                                      fresh.eval(list(range(500, 550)) + [9], n_logits=1)[0])


@pytest.mark.parametrize("arch", list(ROLLBACK))
def test_greedy_speculation_is_plain_decoding_in_every_mode(files, arch):
    """ngram, a draft model of the same vocabulary (another synthetic model: it is mostly
    wrong, so the target rolls back often), auto: token for token what mode off gives."""
    target, draft = load(files, arch), load(files, arch, seed=1)
    engine = Engine(target, draft)
    try:
        differences, rollbacks_before = [], rollbacks(target)
        for prompt in PROMPTS:
            plain, _ = reply(engine, prompt, OFF)
            for mode in (NGRAM, DRAFT, AUTO):
                fast, done = reply(engine, prompt, mode)
                if fast != plain:
                    differences.append((prompt, mode, plain, fast))
                if mode == DRAFT:
                    assert done.stats.drafted > done.stats.accepted  # it did reject drafts
        assert not differences
        if arch != "qwen3moe":
            assert rollbacks(target) > rollbacks_before  # the cheap way was taken
            # each reply re-reads at most its prompt once (sync_cache), never a rejected step
            assert target.rollback_counters.full <= 4 * len(PROMPTS)
    finally:
        engine.close()


def rollbacks(model: LlamaBackend) -> int:
    return model.rollback_counters.native + model.rollback_counters.restored


def test_the_footer_says_what_a_rejected_draft_costs(files):
    engine = Engine(load(files, "mamba"))
    try:
        _, done = reply(engine, PROMPTS[0], NGRAM)
        assert done.stats.rollback_note == "recurrent: rejected drafts cost a re-decode"
        assert "recurrent: rejected drafts cost a re-decode" in done.stats.summary()
        _, plain = reply(engine, PROMPTS[0], OFF)
        assert plain.stats.rollback_note == ""  # nothing drafted, nothing to roll back
    finally:
        engine.close()


def test_a_model_says_what_going_back_would_re_read(files):
    with load(files, "mamba") as model:
        model.eval(list(range(500, 800)), n_logits=0)
        assert model.rewind_tokens(300) == 0
        assert model.rewind_tokens(250) == 250  # no checkpoint: all of it
        model.checkpoint()
        model.eval([1, 2, 3], n_logits=0)
        assert model.rewind_tokens(301) == 1  # from the checkpoint at 300
        assert model.rewind_seconds(301) is not None  # a 300-token pass was timed


class SlowRecurrentModel:
    """Just what rereading_notice reads: re-reading costs 1 ms a token."""

    def __init__(self, tokens):
        self.tokens = tokens

    def rewind_tokens(self, n):
        return n if n < len(self.tokens) else 0  # no checkpoint: everything kept, again

    def rewind_seconds(self, n):
        return self.rewind_tokens(n) * 0.001


def test_going_back_for_more_than_a_second_is_announced_first():
    from draftlight.engine.reply.rollback_notes import rereading_notice
    model = SlowRecurrentModel(list(range(3000)))
    assert rereading_notice(model, list(range(500)) + [1]) == ""  # half a second
    notice = rereading_notice(model, list(range(2000)) + [1])
    assert "Reading the conversation again (2,000 tokens)" in notice
    assert rereading_notice(model, list(range(3000)) + [1]) == ""  # nothing to undo


# --- the sampled distribution through a partial acceptance and a restore ---------------------

PARAMS = SamplingParams(temperature=1.0, top_k=3, max_tokens=8)
DRAWS = 2000


class FixedGuess:
    """Proposes the same three tokens every time: the target's likeliest next token (accepted
    often), then two others (rejected often), so most steps accept part of the draft."""

    def __init__(self, guess: list[int]) -> None:
        self.guess = guess

    def propose(self, context, max_tokens, params, rng) -> Draft:
        return Draft(self.guess[:max_tokens])


class StaleRollback:
    """The negative control: a rollback that forgets the tokens but keeps their state."""

    def __init__(self, model: LlamaBackend) -> None:
        self.model, self._tokens = model, list(model.tokens)
        self.n_vocab = model.n_vocab

    @property
    def tokens(self):
        return list(self._tokens)

    @property
    def token_view(self):
        return self._tokens

    def eval(self, tokens, n_logits=1):
        self._tokens += list(tokens)
        return self.model.eval(tokens, n_logits)

    def truncate(self, n):
        del self._tokens[n:]

    def checkpoint(self, span=0):
        pass


def three_tokens(target, guess, prompt, rng) -> tuple[int, int, int]:
    """The first three tokens of a sampled reply: a speculative step with the fixed guess,
    then plain steps (each after the state the rollback left)."""
    last, out = prompt[-1], []
    drafter = FixedGuess(guess)
    while len(out) < 3:
        step = speculative_step(target, drafter if not out else None, last, 3, PARAMS, rng)
        out += step.accepted + [step.token]
        last = step.token
    return tuple(out[:3])


def exact_joint(model: LlamaBackend, prompt: list[int]) -> dict[tuple, float]:
    """P(t1, t2, t3) of plain sampling, from the model's own rows (top_k = 3: 27 cells)."""
    def probs(prefix):
        model.truncate(0)
        return to_probs(model.eval(prefix, n_logits=1)[0], PARAMS)[0]
    joint = {}
    p1 = probs(prompt)
    for a in np.flatnonzero(p1):
        p2 = probs(prompt + [int(a)])
        for b in np.flatnonzero(p2):
            p3 = probs(prompt + [int(a), int(b)])
            for c in np.flatnonzero(p3):
                joint[(int(a), int(b), int(c))] = float(p1[a] * p2[b] * p3[c])
    return joint


def sampled_p_value(files, way, stale: bool) -> float:
    arch, options = ROLLBACK_WAYS[way]
    model = load(files, arch, options=options)
    try:
        prompt = model.tokenize("<|im_start|>user\nHello there<|im_end|>\n<|im_start|>"
                                "assistant\n", add_bos=False)
        joint = exact_joint(model, prompt)
        likeliest = max(joint, key=joint.get)[0]
        guess = [likeliest, 11, 12]
        cells = {key: i for i, key in enumerate(joint)}
        counts = np.zeros(len(cells) + 1)
        rng = np.random.default_rng(7)
        model.truncate(0)
        model.eval(prompt[:-1], n_logits=0)
        model.checkpoint()  # each draw starts from here (the step's own checkpoints are here too)
        for _ in range(DRAWS):
            model.truncate(len(prompt) - 1)
            target = StaleRollback(model) if stale else model
            counts[cells.get(three_tokens(target, guess, prompt, rng), len(cells))] += 1
        probs = np.array([*joint.values(), 0.0])
        statistic, df = pearson(counts, probs / probs.sum())
        return chi_square_sf(statistic, df)
    finally:
        model.close()


@pytest.mark.parametrize("way", list(ROLLBACK_WAYS))
def test_sampling_through_a_restore_keeps_the_target_distribution(files, way):
    """lfm2 through llama.cpp's snapshots and through checkpoints, mamba through checkpoints."""
    assert sampled_p_value(files, way, stale=False) > 0.001


def test_the_distribution_check_catches_a_rollback_that_keeps_stale_state(files):
    assert sampled_p_value(files, "mamba", stale=True) < 1e-6


def test_bench_rollback_prints_the_cost_of_a_rejected_step(files, capsys):
    """`draftlight bench rollback`: its last line, exactly as documented, with both costs."""
    import re
    from draftlight.cli import main
    assert main(["bench", "rollback", "--target", str(files[("mamba", 0)]), "--threads", "1"]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert "copied before each verify pass" in lines[1]
    assert re.fullmatch(r"rejected step: \d+\.\d\d passes at 500 tokens, \d+\.\d\d passes at "
                        r"2000 tokens", lines[-1])
