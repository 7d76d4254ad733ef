"""Long prompts read down llama.cpp's tiled attention in a second context (fast_prefill.py), and
the saved-state arithmetic that hands them to the exact cache (kv_state.py)."""

from __future__ import annotations

import numpy as np
import pytest

from draftlight.engine.llama import fast_prefill, kv_state
from draftlight.engine.reply.generator import Engine
from draftlight.engine.llama.llama_backend import LlamaBackend
from draftlight.engine.core.load_options import LoadOptions
from tests.support.real_engine import run
from draftlight.modes import AUTO, NGRAM, OFF

OPTIONS = LoadOptions(n_ctx=4096)
ARTICLE = " ".join(
    f"Shipment {i} of the harbour ledger lists {i % 7 + 2} crates of tin, bound for "
    f"{['Lisbon', 'Genoa', 'Bristol', 'Riga'][i % 4]} on the {i % 28 + 1}th." for i in range(30))


# --- kv_state: the saved layout, without a model ------------------------------------------


def _state(cells: int, layers: int = 2, width: int = 64, seed: int = 0) -> kv_state.SequenceState:
    rng = np.random.default_rng(seed)
    meta = np.stack([np.arange(cells), np.ones(cells), np.zeros(cells)], axis=1)
    keys = tuple(kv_state.Rows(kv_state.F16, width * 2, rng.normal(size=cells * width)
                               .astype(np.float16).view(np.uint8)) for _ in range(layers))
    values = tuple(kv_state.Rows(kv_state.F16, width * 2, rng.normal(size=cells * width)
                                 .astype(np.float16).view(np.uint8)) for _ in range(layers))
    return kv_state.SequenceState(cells, meta.astype("<i4").reshape(-1).view(np.uint8),
                                  keys, values)


def test_q8_0_keeps_each_value_within_half_a_step():
    values = np.random.default_rng(1).normal(scale=3.0, size=32 * 50).astype(np.float16)
    values[:32] = 0.0  # a block of zeros has scale 0
    back = kv_state.q8_0_to_f16(kv_state.to_q8_0(values)).astype(np.float32)
    step = np.abs(values.astype(np.float32)).reshape(-1, 32).max(axis=1) / 127
    error = np.abs(back - values.astype(np.float32)).reshape(-1, 32).max(axis=1)
    # half a step, plus the scale's and the result's rounding to f16 (11 bits)
    assert (error <= step * (0.5 + 127 * 2**-11) + step * 127 * 2**-10).all()
    assert (back[:32] == 0).all()


def test_a_saved_state_reads_back_to_the_same_bytes():
    state = _state(10)
    data = state.to_bytes()
    assert np.array_equal(kv_state.parse(data).to_bytes(), data)
    assert kv_state.parse(_state(0).to_bytes()).cells == 0


@pytest.mark.parametrize("damage", ["magic", "streams", "positions", "trailing", "short"])
def test_layouts_it_does_not_read_are_refused(damage):
    data = _state(6).to_bytes().copy()
    words = data[:16].view("<u4")
    if damage == "magic":
        words[0] = 0x12345678
    elif damage == "streams":
        words[2] = 2
    elif damage == "positions":
        data[16:20] = np.array([3], "<i4").view(np.uint8)
    elif damage == "trailing":  # a sliding-window model's second cache follows the first
        data = np.concatenate([data, np.ones(8, np.uint8)])
    else:
        data = data[:-5]
    assert kv_state.parse(data) is None


def test_a_splice_keeps_the_old_rows_byte_for_byte_and_converts_only_the_new():
    read = _state(12, seed=2)
    kept = kv_state.with_key_type(_state(5, seed=3), kv_state.Q8_0)
    joined = kv_state.spliced(kept, read, kv_state.Q8_0, kv_state.F16)
    assert joined.cells == 12
    for old, new, source in zip(kept.keys, joined.keys, read.keys):
        assert new.type == kv_state.Q8_0
        assert np.array_equal(new.first(5).data, old.data)
        tail = kv_state.converted(source.after(5), kv_state.Q8_0)
        assert np.array_equal(new.after(5).data, tail.data)
    for old, new, source in zip(kept.values, joined.values, read.values):
        assert np.array_equal(new.first(5).data, old.data)
        assert np.array_equal(new.after(5).data, source.after(5).data)


# --- on the bundled model -----------------------------------------------------------------


def _saved(backend: LlamaBackend) -> kv_state.SequenceState:
    return kv_state.parse(fast_prefill._saved(backend._ctx.ctx))


def test_a_long_run_is_read_fast_and_the_cached_prefix_keeps_its_bytes(bundled_model):
    with LlamaBackend(bundled_model, OPTIONS) as backend:
        tokens = backend.tokenize(ARTICLE, add_bos=True)
        assert len(tokens) > 300 + fast_prefill.MIN_TOKENS
        backend.eval(tokens[:100], n_logits=0)  # too short: read the ordinary way
        assert backend._fast_prefill.reads == 0
        before = _saved(backend)
        backend.eval(tokens[100:], n_logits=0)
        assert backend._fast_prefill.reads == 1
        assert backend.tokens == tokens
        after = _saved(backend)
        assert after.cells == len(tokens)
        for old, new in zip(before.keys + before.values, after.keys + after.values):
            assert np.array_equal(new.first(100).data, old.data)


def test_a_read_longer_than_memory_allows_is_made_the_ordinary_way(bundled_model):
    with LlamaBackend(bundled_model, OPTIONS) as backend:
        tokens = backend.tokenize(ARTICLE, add_bos=True)
        backend.eval(tokens[:200], n_logits=0)
        assert backend._fast_prefill.reads == 1 and backend._fast_prefill.max_cells > 10_000
        backend._fast_prefill.max_cells = 300  # as if the machine had little memory free
        backend.eval(tokens[200:], n_logits=0)
        assert backend._fast_prefill.reads == 1 and backend.tokens == tokens


def test_the_fast_read_predicts_what_the_ordinary_read_does(bundled_model):
    """Not bit for bit (another summation order, keys rounded to f16 before q8_0), but close:
    the next token's logits differ by little and agree on the top token."""
    logits = {}
    for fast in (True, False):
        options = LoadOptions(n_ctx=4096, fast_prefill=fast)
        with LlamaBackend(bundled_model, options) as backend:
            tokens = backend.tokenize(ARTICLE + " The crates bound for Riga", add_bos=True)
            backend.eval(tokens[:-1], n_logits=0)
            assert (backend._fast_prefill is not None) == fast
            assert not fast or backend._fast_prefill.reads == 1
            logits[fast] = backend.eval(tokens[-1:], n_logits=1)[0]
    assert logits[True].argmax() == logits[False].argmax()
    assert np.abs(logits[True] - logits[False]).max() < 1.0


def test_decoding_after_a_fast_read_stays_exact(bundled_model):
    with LlamaBackend(bundled_model, OPTIONS) as backend:
        tokens = backend.tokenize(ARTICLE, add_bos=True)
        context = len(tokens) - 8
        backend.eval(tokens[:context], n_logits=0)
        assert backend._fast_prefill.reads == 1
        batched = backend.eval(tokens[context:], n_logits=8)
        backend.truncate(context)
        single = np.stack([backend.eval([t], n_logits=1)[0] for t in tokens[context:]])
        assert np.abs(batched - single).max() == 0.0


@pytest.fixture(scope="module")
def engine(bundled_model, module_home):
    engine = Engine.load(bundled_model, bundled_model, OPTIONS)
    yield engine
    engine.close()


@pytest.mark.parametrize("mode", [NGRAM, AUTO], ids=str)
def test_greedy_speculation_on_long_prompts_matches_plain_decoding(engine, mode):
    """Two turns, each bringing a long passage: both prompts are read fast, in every mode
    the same way, so the replies are token for token those of plain decoding."""
    first = [{"role": "user", "content": ARTICLE + "\nCopy the first three shipments."}]
    plain, _, plain_done = run(engine, first, OFF)
    fast, _, _ = run(engine, first, mode)
    assert fast == plain
    assert engine.target._fast_prefill.reads >= 2
    second = first + [{"role": "assistant", "content": plain_done.text},
                      {"role": "user", "content": ARTICLE.replace("tin", "copper")
                       + "\nNow list the shipments bound for Genoa."}]
    plain, _, second_done = run(engine, second, OFF)
    assert second_done.stats.prompt_read_fast > 500  # the new passage; the figures say so
    assert "tokens fast)" in second_done.stats.summary()
    fast, _, _ = run(engine, second, mode)
    assert fast == plain


def test_the_prefill_bench_times_both_reads_and_says_the_ratio(bundled_model, capsys):
    from draftlight.cli import main
    assert main(["bench", "prefill", "--target", str(bundled_model), "--lengths", "300",
                 "--ordinary"]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert lines[-1].startswith("prefill: ") and lines[-1].endswith("x llama.cpp's time at "
                                                                    "the longest length")
    assert float(lines[-1].split()[1].rstrip("x")) > 0
    assert "ordinary" in lines[-2] and "128 new tokens" in lines[-2]
