"""The engine on the real bundled model: greedy identity, self-draft acceptance, mode switching."""

from __future__ import annotations

import numpy as np
import pytest

from draftlight.engine.core.errors import ModelLoadError
from draftlight.engine.reply.events import Done
from draftlight.engine.reply.compare import explain_divergence
from draftlight.engine.reply.generator import Engine
from draftlight.engine.llama.llama_backend import LlamaBackend
from draftlight.engine.core.load_options import LoadOptions
from draftlight.engine.core.sampling import SamplingParams
from tests.support.cpu_curve import cpu_costs
from tests.support.real_engine import PROMPTS, run
from draftlight.modes import AUTO, DRAFT, NGRAM, OFF

OPTIONS = LoadOptions(n_ctx=2048)


@pytest.fixture(scope="module")
def engine(bundled_model, module_home):
    """SmolLM2 as target and as its own draft (identical vocabularies, ~100% acceptance)."""
    engine = Engine.load(bundled_model, bundled_model, OPTIONS)
    yield engine
    engine.close()


@pytest.mark.parametrize("mode", [NGRAM, DRAFT, AUTO], ids=str)
def test_greedy_speculation_matches_plain_decoding(engine, mode):
    differences = []
    for prompt in PROMPTS:
        messages = [{"role": "user", "content": prompt}]
        plain, _, plain_done = run(engine, messages, OFF)
        fast, _, fast_done = run(engine, messages, mode)
        if fast != plain:
            # Never hide a divergence: report where it is and how close the logits were.
            divergence = explain_divergence(engine, messages, plain, fast)
            differences.append(f"{prompt!r}: {divergence.describe() if divergence else 'length'}")
        elif fast_done.text != plain_done.text:
            differences.append(f"{prompt!r}: same tokens, different text")
    assert not differences, "\n".join(differences)


def test_self_draft_is_accepted_almost_always(engine):
    messages = [{"role": "user", "content": PROMPTS[2]}]
    _, sources, done = run(engine, messages, DRAFT)
    stats = done.stats
    assert stats.drafted > 20
    assert stats.acceptance_rate >= 0.99, stats.summary()
    assert stats.target_passes < stats.new_tokens / 2
    assert sources.count("draft") == stats.accepted or stats.stop_reason != "max_tokens"


def test_mode_switches_between_turns_without_reloading(engine):
    conversation = [{"role": "user", "content": "Name a fruit that is yellow."}]
    outputs = {}
    for mode in [NGRAM, OFF, DRAFT]:
        tokens, _, done = run(engine, conversation, mode)
        outputs[mode] = tokens
        assert done.stats.mode == mode
    assert outputs[NGRAM] == outputs[OFF] == outputs[DRAFT]
    # A second turn reuses the cached prefix of the conversation.
    conversation += [{"role": "assistant", "content": done.text},
                     {"role": "user", "content": "And a red one?"}]
    second, _, done2 = run(engine, conversation, NGRAM)
    assert done2.stats.reused_prompt_tokens > done.stats.prompt_tokens // 2
    plain_second, _, _ = run(engine, conversation, OFF)
    assert second == plain_second


def test_auto_measures_the_cost_curve_once_per_model_and_machine(bundled_model):
    first = Engine.load(bundled_model, None, OPTIONS)
    try:
        first.prepare_auto()
        curve = first.costs  # as measured at load (auto corrects a copy as it runs)
    finally:
        first.close()
    ks = sorted(curve.v)
    assert curve.v[1] == 1.0 and curve.token_seconds > 0
    assert all(curve.v[a] <= curve.v[b] for a, b in zip(ks, ks[1:]))
    assert curve(16) > 1.5  # on a CPU a 16-token pass costs well over one token
    second = Engine.load(bundled_model, None, OPTIONS)
    try:
        second.prepare_auto()
        assert second.costs.v == curve.v  # from the cache, not timed again
    finally:
        second.close()


def test_batched_and_single_token_logits_are_identical(bundled_model):
    """Greedy speculation relies on llama.cpp's logits being batch-invariant. Checked after a
    short context and after long ones (with an f16 KV cache a split-KV attention path breaks
    invariance from 256 cached tokens on): catches a regression from a llama.cpp update or a
    flag before it shows up as drift."""
    with LlamaBackend(bundled_model, OPTIONS) as backend:
        text = "The quick brown fox jumps over the lazy dog because it can. " * 120
        tokens = backend.tokenize(text, add_bos=False)
        for context in (0, 300, 1200):
            backend.truncate(0)
            if context:
                backend.eval(tokens[:context], n_logits=0)
            probe = tokens[context:context + 6]
            batched = backend.eval(probe, n_logits=len(probe))
            backend.truncate(context)
            single = np.stack([backend.eval([t], n_logits=1)[0] for t in probe])
            assert np.abs(batched - single).max() == 0.0, f"after {context} cached tokens"


def test_sampled_run_is_reproducible_with_a_seed(engine):
    messages = [{"role": "user", "content": "Tell me a short story about a robot."}]
    params = SamplingParams(temperature=0.9, top_p=0.95, seed=42, max_tokens=32)
    a, _, _ = run(engine, messages, DRAFT, params)
    b, _, _ = run(engine, messages, DRAFT, params)
    assert a == b and len(a) > 5


def test_streamed_text_is_utf8_safe(bundled_model):
    """Characters split across byte-level tokens are held back until complete."""
    import codecs
    text = "naïve café — 日本語 😀🎉"
    with LlamaBackend(bundled_model, OPTIONS) as backend:
        tokens = backend.tokenize(text, add_bos=False)
        pieces = [backend.piece(t) for t in tokens]
    assert any(p and not _complete_utf8(p) for p in pieces), "expected a split character"
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    streamed = [decoder.decode(p) for p in pieces]
    assert "".join(streamed) == text and "\ufffd" not in "".join(streamed)


def _complete_utf8(data: bytes) -> bool:
    try:
        data.decode("utf-8")
        return True
    except UnicodeDecodeError:
        return False


def test_not_a_gguf_is_refused_in_plain_words(tmp_path):
    bogus = tmp_path / "model.gguf"
    bogus.write_bytes(b"PK\x03\x04 this is a zip file")
    with pytest.raises(ModelLoadError, match="not a GGUF"):
        LlamaBackend(bogus)
    with pytest.raises(ModelLoadError, match="not found"):
        LlamaBackend(tmp_path / "missing.gguf")


def test_truncated_gguf_is_refused(tmp_path, bundled_model):
    cut = tmp_path / "cut.gguf"
    cut.write_bytes(bundled_model.read_bytes()[:5_000_000])
    with pytest.raises(ModelLoadError, match="could not load"):
        LlamaBackend(cut)


def test_compare_runs_both_sides_and_explains_the_result(engine):
    from draftlight.engine.reply.compare import Comparison, SidePiece, compare
    messages = [{"role": "user", "content": PROMPTS[3]}]
    events = list(compare(engine, messages, SamplingParams(temperature=0.7, max_tokens=32),
                          NGRAM))
    result = events[-1]
    assert isinstance(result, Comparison)
    sides = {e.side for e in events[:-1] if isinstance(e, SidePiece)}
    assert sides == {"plain", "speculative"}
    assert result.identical and result.divergence is None  # greedy despite temperature 0.7
    assert result.plain_text == result.speculative_text
    assert result.plain.drafted == 0 and result.speculative.drafted > 0
    assert "identical" in result.summary()


def test_a_conversation_longer_than_the_context_drops_its_oldest_turns(bundled_model):
    from draftlight.engine.reply.events import Notice
    engine = Engine.load(bundled_model, None, LoadOptions(n_ctx=512))
    try:
        filler = "The quick brown fox jumps over the lazy dog. " * 12
        conversation = []
        for i in range(6):
            conversation += [{"role": "user", "content": f"Note {i}: {filler}"},
                             {"role": "assistant", "content": "Noted."}]
        conversation.append({"role": "user", "content": "Say OK."})
        events = list(engine.generate(conversation, SamplingParams(max_tokens=8), NGRAM))
        notices = [e for e in events if isinstance(e, Notice)]
        assert notices and "oldest" in notices[0].message
        assert isinstance(events[-1], Done) and events[-1].stats.prompt_tokens <= 512 - 8
    finally:
        engine.close()


def test_auto_starts_a_new_session_from_what_it_learnt_on_this_model(bundled_model):
    """A one-shot chat would otherwise start from the cautious prior every time."""
    copy = [{"role": "user", "content": PROMPTS[3]}]
    first = Engine.load(bundled_model, None, OPTIONS)
    first.cost_source = cpu_costs  # not this machine's timing (failed once when busy)
    try:
        run(first, copy, AUTO)
        learnt = first.prepare_auto().candidates[0].model
        trials = sum(sum(counts.trials) for counts in learnt.places.values())
        assert trials > 5
    finally:
        first.close()
    second = Engine.load(bundled_model, None, OPTIONS)
    second.cost_source = cpu_costs
    try:
        restored = second.prepare_auto().candidates[0].model
        for place, counts in learnt.places.items():  # each place's counts, as they were
            assert restored.places[place].trials == pytest.approx(counts.trials)
            assert restored.places[place].hits == pytest.approx(counts.hits)
    finally:
        second.close()


def test_saved_counts_are_bounded_and_bad_ones_ignored():
    from draftlight.engine.auto.adaptive import BUCKET_EDGES, AcceptanceModel
    model = AcceptanceModel()
    model.hits, model.trials = [900.0] * len(BUCKET_EDGES), [1000.0] * len(BUCKET_EDGES)
    counts = model.counts(memory=200)
    assert counts[""]["trials"][0] == 200 and counts[""]["hits"][0] == pytest.approx(180)
    fresh = AcceptanceModel()
    for bad in ({}, {"": {"hits": [1], "trials": [0]}}, {"": {"hits": ["x"] * 10,
                                                                 "trials": [1] * 10}},
                {"": {"hits": [5] * 10, "trials": [1] * 10}}, {"": [1, 2]}, [1, 2],
                {"hits": [5] * 10, "trials": [10] * 10}):  # the format before places
        fresh.restore(bad)
        assert fresh.trials == [0.0] * len(BUCKET_EDGES)
    fresh.restore(counts)
    assert fresh.mean(0) == pytest.approx(model.mean(0), abs=0.02)


def test_a_load_stops_when_asked_and_a_later_one_works(bundled_model):
    """A window that closes while a model loads asks the loader to stop (llama.cpp's progress
    callback): the load ends at once with one line, and nothing is left half-open."""
    asked = []

    def closing() -> bool:
        asked.append(True)
        return True

    with pytest.raises(ModelLoadError, match="was cancelled"):
        LlamaBackend(bundled_model, LoadOptions(n_ctx=256), should_cancel=closing)
    assert asked
    backend = LlamaBackend(bundled_model, LoadOptions(n_ctx=256), should_cancel=lambda: False)
    try:
        assert backend.tokenize("Hello", add_bos=False)
    finally:
        backend.close()


def test_a_draft_load_stops_when_asked(engine, bundled_model):
    """The draft model the window loads after its target (launch.attach_draft) stops as the
    target's load does; before, it was given no way to stop and a closing window waited."""
    from draftlight.engine_spec import EngineSpec
    from draftlight.launch import attach_draft
    spec = EngineSpec(target_path=str(bundled_model), draft_path=str(bundled_model), n_ctx=256)
    draft = engine.draft
    with pytest.raises(ModelLoadError, match="was cancelled"):
        attach_draft(engine, spec, should_cancel=lambda: True)
    assert engine.draft is draft


@pytest.mark.parametrize("mode", [OFF, NGRAM], ids=str)
def test_a_reply_continued_from_its_words_is_the_reply_written_at_once(engine, mode):
    """Continue (issue 40, part 3): a conversation ending with the assistant's words goes on
    from them; greedy, 24 tokens then 24 more are the 48 written at once, and the prompt that
    wrote the first 24 is still in the KV cache."""
    question = [{"role": "user", "content": "Describe the water cycle in a few sentences."}]
    whole = engine_reply(engine, question, 48, mode)
    first = engine_reply(engine, question, 24, mode)
    more = engine_reply(engine, question + [{"role": "assistant", "content": first.text}], 24,
                        mode)
    assert first.text + more.text == whole.text
    assert more.stats.reused_prompt_tokens >= more.stats.prompt_tokens - 2


def test_a_template_that_does_not_show_the_reply_cannot_continue_it():
    from draftlight.engine.text.chat_template import ChatTemplate
    from draftlight.engine.core.errors import ChatTemplateError
    hiding = ChatTemplate("{% for m in messages %}{{ m['role'] }}: {{ m['content'] | upper }}\n"
                          "{% endfor %}{% if add_generation_prompt %}assistant:{% endif %}")
    with pytest.raises(ChatTemplateError, match="cannot be continued"):
        hiding.render([{"role": "user", "content": "hi"}, {"role": "assistant", "content": "Yo"}])
    trimming = ChatTemplate("{% for m in messages %}<{{ m['role'] }}>{{ m['content'] | trim }}"
                            "</s>{% endfor %}{% if add_generation_prompt %}<assistant>{% endif %}")
    assert trimming.render([{"role": "user", "content": "hi"},
                            {"role": "assistant", "content": "Hello,\n"}]) == \
        "<user>hi</s><assistant>Hello,"


def engine_reply(engine, messages, max_tokens, mode) -> Done:
    done = None
    for event in engine.generate(messages, SamplingParams(temperature=0, max_tokens=max_tokens),
                                 mode):
        if isinstance(event, Done):
            done = event
    return done
