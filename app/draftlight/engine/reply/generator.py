"""The in-process engine: a target model, an optional draft model, and `generate()`.

    engine = Engine.load(target_path, draft_path=None)
    for event in engine.generate(messages, SamplingParams(), NGRAM):
        ...  # TextPiece(text, source, step) ... then Done(text, stats)

Modes (draftlight.modes' values): OFF (plain decoding), DRAFT (the draft model guesses), NGRAM
(prompt lookup over the conversation), AUTO (drafts only as much as pays on this machine, with
n-gram lookup and the draft model if one is loaded: see adaptive.py). The mode may change
between two calls; nothing is reloaded, and each call reuses the KV cache for the part of the
conversation that is unchanged. What a reply is set up with (its drafter, its prompt read) is
reply_setup.py's; its steps' helpers are reply_steps.py's; auto's drafter is auto_setup.py's.

Engine depends only on the LanguageModel protocol (backend.py): llama.cpp is imported by
Engine.load alone, so tests drive generate() on a scripted model (tests/support/fake_backend.py).
"""

from __future__ import annotations

import codecs
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Iterator

import numpy as np

from draftlight.engine.auto.adaptive import AdaptiveDrafter
from draftlight.engine.core.backend import LanguageModel
from draftlight.engine.core.grammar import Grammar
from draftlight.engine.reply.auto_setup import PROBE_TEXT, AutoSetup  # noqa: F401 - the bench's
from draftlight.engine.text.chat_template import ChatTemplate
from draftlight.engine.text.control_text import ControlText
from draftlight.engine.text.compat import Compatibility, check_compatible
from draftlight.engine.step.cross_vocab import CrossVocabDrafter
from draftlight.engine.auto.costs import PRIOR, BatchCosts, cached_costs
from draftlight.engine.step.drafters import Drafter, ModelDrafter, NgramDrafter, word_fold
from draftlight.engine.core.errors import EngineError, ReadStopped
from draftlight.engine.step.origins import OriginFinder, kept_messages
from draftlight.engine.reply.events import (Done, Event, Notice, Progress, Reading, Stats,
                                           TextPiece)
from draftlight.engine.auto.invariance import BatchDrift, cached_drift, known_drift
from draftlight.engine.llama.kept_prompt import KeptPrompt
from draftlight.engine.llama.kept_prompt import keep as keep_prompt
from draftlight.engine.step.prediction import PredictionDrafter
from draftlight.engine.text.prompt import answered_start, fit_prompt
from draftlight.engine.text.raw_prompt import RawPrompt, raw_prompt_tokens
from draftlight.engine.reply.reply_setup import ReplySetup
from draftlight.engine.reply.reply_steps import (emit, learn, up_to_the_end, window_full_notice,
                                           with_prediction)
from draftlight.engine.core.sampling import SamplingParams
from draftlight.engine.step.speculative import speculative_step
from draftlight.modes import AUTO, DRAFT, IN_PROCESS, NGRAM, Mode

if TYPE_CHECKING:
    from draftlight.engine.core.load_options import LoadOptions

# (model, probe tokens, "target" | "draft") -> (v(k) curve, one-token seconds)
CostSource = Callable[[LanguageModel, list[int], str], tuple[BatchCosts, float]]
# (model, probe tokens) -> how far batched logits stray from one-token ones (invariance.py)
DriftSource = Callable[[LanguageModel, list[int]], BatchDrift]

# The lengths Stats.pass_costs gives v(k) for
PLOTTED_K = (2, 3, 4, 5, 6, 8, 10, 12, 16)

# A user message this long holds an attached file or a paste: text a reader expects copied
LONG_MESSAGE = 400


def copy_source(messages: list[dict[str, str]], prediction: str | None) -> str:
    """What the user gave this reply to copy from (Stats.copy_source): a Predicted Output, or
    a long message of theirs (an attachment or a paste); "" where neither."""
    if prediction:
        return "prediction"
    if any(m.get("role") == "user" and isinstance(m.get("content"), str)
           and len(m["content"]) >= LONG_MESSAGE for m in messages):
        return "long message"
    return ""


@dataclass(frozen=True)
class SpeculationConfig:
    draft_tokens: int = 4  # tokens a draft model guesses per step
    ngram_tokens: int = 8  # tokens an n-gram match may propose per step
    ngram_max: int = 3  # longest suffix looked up
    ngram_min: int = 2  # shortest suffix looked up
    auto_max_tokens: int = 16  # longest draft auto mode considers
    # Predicted Outputs: tokens a match in the client's prediction may propose per step, until
    # the cost curve is known (then the timed length with the best k / v(k): prediction_tokens)
    prediction_tokens: int = 8


class Engine(AutoSetup, ReplySetup):
    """Owns the models; use it from one thread only, and close() it."""

    def __init__(self, target: LanguageModel, draft: LanguageModel | None = None,
                 config: SpeculationConfig = SpeculationConfig(), *,
                 cost_source: CostSource = cached_costs,
                 drift_source: DriftSource = cached_drift, measure_later: bool = False) -> None:
        """`measure_later`: what is not in the cache yet is measured by measure_next(), one
        step at a time, and not before the first reply (measuring.py); else it is measured
        here (the drift) and at auto's first use (the costs)."""
        self.target = target
        self.config = config
        self.cost_source = cost_source  # how auto mode learns what a k-token pass costs
        self.drift_source = drift_source
        self.measure_later = measure_later
        meta = target.metadata()
        self.template = ChatTemplate(meta.get("tokenizer.chat_template"),
                                     bos_token=target.token_text(target.bos),
                                     eos_token=target.token_text(target.eos))
        self.control_text = ControlText(target)  # messages stay text (control_text.py)
        self.ngram = NgramDrafter(config.ngram_max, config.ngram_min, fold=word_fold(target.piece))
        self.kept_prompt = KeptPrompt(target)  # the cache kept when the last engine closed
        self.draft: LanguageModel | None = None
        # ModelDrafter (same vocabulary) or CrossVocabDrafter (another one: drafts through text)
        self.model_drafter: ModelDrafter | CrossVocabDrafter | None = None
        self.compatibility: Compatibility | None = None  # how the draft drafts, with its note
        self.costs: BatchCosts | None = None  # measured on first use of auto mode, or later
        self._retime_costs = False  # the cached curve was timed on a busier machine
        self.draft_cost = 0.0  # draft token time / target token time
        self._draft_seconds: float | None = None  # one drafted token, once timed
        self._auto: AdaptiveDrafter | None = None
        # Whether greedy speculation is exactly plain decoding here (invariance.py), cached per
        # model file and settings; None until measured. Checked at load or in the background,
        # not at the first speculative reply: the probe would empty the conversation's cache.
        self.drift: BatchDrift | None = (known_drift(target) if measure_later
                                         else drift_source(target, self._probe_tokens()))
        if draft is not None:
            self.attach_draft(draft)

    @classmethod
    def load(cls, target_path: str | Path, draft_path: str | Path | None = None,
             options: LoadOptions | None = None,
             draft_options: LoadOptions | None = None, *,
             should_cancel: Callable[[], bool] | None = None,
             measure_later: bool = False,
             on_progress: Callable[[float], None] | None = None) -> "Engine":
        """Load GGUF files on llama.cpp; `should_cancel` returning True stops a load;
        `on_progress` hears how much of the target's weights is loaded (0 to 1)."""
        from draftlight.engine.text.chat_template import renderer
        from draftlight.engine.llama.llama_backend import LlamaBackend
        from draftlight.engine.core.load_options import LoadOptions
        options = options or LoadOptions()
        renderer().start()  # the template's process starts while the weights load
        target = LlamaBackend(target_path, options, should_cancel=should_cancel,
                              on_progress=on_progress)
        try:
            engine = cls(target, measure_later=measure_later)
            if draft_path is not None:
                engine.attach_draft_file(draft_path, draft_options or options,
                                         should_cancel=should_cancel)
        except BaseException:
            target.close()
            raise
        return engine

    def attach_draft_file(self, path: str | Path, options: LoadOptions, *,
                          should_cancel: Callable[[], bool] | None = None) -> None:
        """attach_draft on the GGUF file `path`, loaded on llama.cpp (HostedEngine's too)."""
        from draftlight.engine.llama.llama_backend import LlamaBackend
        self.attach_draft(LlamaBackend(path, options, should_cancel=should_cancel),
                          should_cancel=should_cancel)

    def attach_draft(self, draft: LanguageModel, *,
                     should_cancel: Callable[[], bool] | None = None) -> None:
        """Use `draft` as the draft model, after checking its vocabulary. Closes it if refused.
        A draft of another vocabulary drafts through text (cross_vocab.py); `compatibility`
        says which. If auto mode was ready it is made ready again now, timing the new draft
        while it loads rather than at the first message (`should_cancel`: prepare_auto's)."""
        try:
            compatibility = check_compatible(self.target, draft)
        except EngineError:
            draft.close()
            raise
        auto_was_ready = self._auto is not None
        self.detach_draft()
        self.draft = draft
        self.compatibility = compatibility
        if compatibility.same_vocabulary:
            self.model_drafter = ModelDrafter(draft, self.target.n_vocab, n_ctx=draft.n_ctx)
        else:
            self.model_drafter = CrossVocabDrafter(draft, self.target, compatibility.vocab_map)
        if auto_was_ready:
            self.prepare_auto(should_cancel)

    def detach_draft(self) -> None:
        """Close the draft model; auto mode is rebuilt for the next one (what it learnt about
        n-gram lookup is saved first and restored by prepare_auto)."""
        self.save_learnt()
        if self.draft is not None:
            self.draft.close()
        self.draft = None
        self.model_drafter = None
        self.compatibility = None
        self._draft_seconds = None
        self._auto = None

    def close(self) -> None:
        self.detach_draft()  # keeps what auto learnt
        keep_prompt(self.target)  # for the next engine on this model (kept_prompt.py)
        self.target.close()

    # --- prompt --------------------------------------------------------------------------

    def tokenize_chat(self, messages: list[dict[str, str]]) -> list[int]:
        return self.control_text.prompt_tokens(self.template, messages)

    def fit_prompt(self, messages: list[dict[str, str]], reserve: int
                   ) -> tuple[list[int], int]:
        """(tokens, oldest messages dropped) of a conversation that leaves `reserve` tokens."""
        return fit_prompt(self.tokenize_chat, messages, reserve, self.target.n_ctx)

    def tokenize_raw(self, prompt: RawPrompt) -> list[int]:
        """The tokens a text completion's prompt is read as (raw_prompt.py): EngineError for
        a suffix on a model without fill-in-the-middle tokens."""
        return raw_prompt_tokens(self.target, prompt)

    # --- generation ----------------------------------------------------------------------

    @property
    def n_ctx(self) -> int:
        """The target's context window in tokens."""
        return self.target.n_ctx

    @property
    def load_notices(self) -> tuple[str, ...]:
        """What the user should know about how the target was loaded (without repacked weights
        where they crash this CPU; no chat template of its own)."""
        from draftlight.engine.text.chat_template import FALLBACK_NOTICE
        notices = [self.target.load_note] if getattr(self.target, "load_note", "") else []
        if self.template.is_fallback:
            path = getattr(self.target, "path", None)
            notices.append(FALLBACK_NOTICE.format(name=path.name if path else "the model"))
        return tuple(notices)

    @property
    def modes(self) -> tuple[Mode, ...]:
        """The modes generate() takes now (draft mode needs a draft model)."""
        return tuple(m for m in IN_PROCESS if m != DRAFT or self.model_drafter is not None)

    def reserve(self, params: SamplingParams) -> int:
        """Tokens of context kept free for the reply (older turns are dropped to keep them)."""
        return min(params.max_tokens, max(self.target.n_ctx // 4, 1))

    def generate(self, messages: list[dict[str, str]], params: SamplingParams, mode: Mode, *,
                 prediction: str | None = None, raw_prompt: RawPrompt | None = None,
                 grammar: str | None = None,
                 should_stop: Callable[[], bool] | None = None,
                 on_read: Callable[[Reading], None] | None = None) -> Iterator[Event]:
        """Reply to `messages`, or with `raw_prompt` complete that text as given, without the
        chat template (`messages` is then not read: raw_prompt.py), by the same steps.
        `prediction` (Predicted Outputs) is text the reply is expected
        to resemble: it drafts first, in any mode (prediction.py). `should_stop` is asked
        while the prompt is read, within llama.cpp's passes (a long prompt is minutes of
        them; between tokens, closing the iterator stops the reply): once true, the reply
        ends there, cancelled, and the cache keeps what was read. `on_read` hears how far a
        long read has come, as it goes (Reading). `grammar` (GBNF, root rule "root")
        constrains the reply's tokens, in every mode (structured output: core/grammar.py);
        EngineError if it does not parse."""
        params.validate()
        constraint = self.parse_grammar(grammar) if grammar is not None else None
        try:
            yield from self._generate(messages, params, mode, prediction, raw_prompt,
                                      constraint, should_stop, on_read)
        finally:
            if constraint is not None:
                constraint.close()

    def parse_grammar(self, gbnf: str) -> Grammar:
        """The grammar `gbnf` at its start, on the target's vocabulary (a scripted model brings
        its own: its grammar(gbnf))."""
        own = getattr(self.target, "grammar", None)
        if own is not None:
            return own(gbnf)
        from draftlight.engine.llama.grammar_sampler import GrammarSampler
        return GrammarSampler.parse(self.target.vocab, self.target.n_vocab, gbnf)

    def _generate(self, messages, params: SamplingParams, mode: Mode, prediction: str | None,
                  raw_prompt: RawPrompt | None, grammar: Grammar | None, should_stop,
                  on_read) -> Iterator[Event]:
        started = time.perf_counter()
        target = self.target
        rng = np.random.default_rng(params.seed)
        drafter = self.drafter_for(mode)
        if isinstance(drafter, AdaptiveDrafter):
            drafter.new_reply()
        stats = self._new_stats(mode, params, drafter, bool(prediction))
        if raw_prompt is not None:  # origins name the prompt message 0, its suffix 1
            messages = raw_prompt.as_messages()
        stats.copy_source = copy_source(messages, prediction)
        try:
            prompt, dropped = yield from self._prefill(messages, params, stats, should_stop,
                                                       on_read, raw_prompt)
        except ReadStopped:
            stats.stop_reason = "cancelled"
            stats.seconds = stats.prefill_seconds = time.perf_counter() - started
            yield Done("", stats)
            return
        stats.prefill_seconds = time.perf_counter() - started
        if mode in (NGRAM, AUTO):  # where n-gram matches lie: only its drafts ask
            kept = [messages[i] for i in kept_messages(messages, dropped)]
            answered = (0 if raw_prompt is not None  # a raw prompt is all "the message"
                        else answered_start(self.tokenize_chat, kept, prompt))
            self.ngram.regions = (answered, len(prompt))
        prediction_tokens = target.tokenize(prediction, add_bos=False) if prediction else []
        path = getattr(self.draft, "path", None)  # origins name a draft model by its file
        origins = OriginFinder(target.piece, messages, kept_messages(messages, dropped), prompt,
                               prediction_tokens, Path(path).stem if path else "the draft model")
        drafter, draft_length, predicted = with_prediction(
            drafter, self.draft_length(mode), prediction_tokens, len(prompt),
            ngram=self.ngram, own_length=self.prediction_tokens)
        yield from self._decode(prompt[-1], drafter, draft_length, predicted, origins, params,
                                rng, stats, started, grammar)

    def _decode(self, last: int, drafter: Drafter | None, draft_length: int, predicted,
                origins: OriginFinder, params: SamplingParams, rng, stats: Stats,
                started: float, grammar: Grammar | None = None) -> Iterator[Event]:
        """The reply's speculative steps from the prompt's `last` token to its end: each step's
        pieces and a Progress, then the Done."""
        target = self.target
        learner = drafter if isinstance(drafter, (AdaptiveDrafter, PredictionDrafter)) else None
        decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        text: list[str] = []
        stats.stop_reason = "max_tokens"
        told_window_full = False  # the draft's context is full: said once per reply
        try:
            while stats.new_tokens < params.max_tokens:
                room = target.n_ctx - len(target.tokens) - 1
                if room <= 0:
                    stats.stop_reason = "context_full"
                    break
                budget = params.max_tokens - stats.new_tokens - 1  # the step adds one token itself
                gamma = max(0, min(draft_length, budget, room - 1))
                step = up_to_the_end(speculative_step(target, drafter, last, gamma, params, rng,
                                                      grammar),
                                     target)
                why = getattr(drafter, "why_nothing", "") if not step.drafted else ""
                stats.add_step(step, why)
                learn(step, learner, predicted, stats)
                if step.left_out and not told_window_full:
                    told_window_full = True
                    yield Notice(window_full_notice(self.draft.n_ctx))
                finished = yield from emit(step, target, decoder, origins, text, stats, params)
                last = step.token
                stats.seconds = time.perf_counter() - started
                if why and isinstance(drafter, AdaptiveDrafter):
                    stats.pass_cost_2 = drafter.costs(2)  # v(2) and v(8) as they are now
                    stats.pass_cost_8 = drafter.costs(8)
                yield Progress(replace(stats, undrafted=dict(stats.undrafted)),
                               pass_drafted=step.drafted, pass_why=why)
                if finished:
                    break
        except GeneratorExit:
            stats.stop_reason = "cancelled"
            raise
        tail = decoder.decode(b"", final=True)
        if tail:
            text.append(tail)
            yield TextPiece(tail, "target", stats.target_passes - 1)
        stats.pass_costs = self._pass_costs(drafter)
        stats.seconds = time.perf_counter() - started
        yield Done("".join(text), stats)

    def _pass_costs(self, drafter: Drafter | None) -> dict[str, float]:
        """Stats.pass_costs: auto's curve as its passes corrected it, else the timed one."""
        if isinstance(drafter, AdaptiveDrafter) and drafter.costs.measured is not PRIOR:
            curve = drafter.costs  # (priced by the PRIOR it would be no measurement)
        elif self.costs is not None:
            curve = self.costs
        else:
            return {}
        return {str(k): round(curve(k), 3) for k in PLOTTED_K}
