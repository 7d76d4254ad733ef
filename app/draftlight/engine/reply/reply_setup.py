"""What a reply of Engine (generator.py) is set up with before its first step: the mode's
drafter and draft length, a Predicted Output's length, the reply's statistics as they start,
and the prompt read into the target's cache (fitted to the context, restored from a kept file,
stoppable while it is read). Engine extends ReplySetup as it extends AutoSetup."""

from __future__ import annotations

import time
from typing import Callable, Generator

from draftlight.engine.core.backend import common_prefix_length, sync_cache
from draftlight.engine.core.errors import EngineError
from draftlight.engine.core.sampling import SamplingParams
from draftlight.engine.reply.events import Event, Notice, Reading, Stats
from draftlight.engine.reply.rollback_notes import rereading_notice, rollback_note
from draftlight.engine.step.drafters import Drafter
from draftlight.engine.text.raw_prompt import RawPrompt, fit_raw_prompt
from draftlight.modes import AUTO, DRAFT, IN_PROCESS, NGRAM, OFF, Mode

# A read of this many tokens or more is told as it goes (Reading): shorter ones end before a
# reader would look for a figure. At most one Reading every READ_TOLD_EVERY seconds.
READ_TOLD_FROM = 256
READ_TOLD_EVERY = 0.25


class ReplySetup:
    """Engine.__init__ sets what these use (target, ngram, model_drafter, config, costs, drift,
    compatibility, kept_prompt); fit_prompt, reserve and prepare_auto are Engine's."""

    def drafter_for(self, mode: Mode) -> Drafter | None:
        if mode == OFF:
            return None
        if mode == NGRAM:
            return self.ngram
        if mode == AUTO:
            return self.prepare_auto()
        if mode == DRAFT:
            if self.model_drafter is None:
                raise EngineError("draft mode needs a draft model; load one or use n-gram mode")
            return self.model_drafter
        raise EngineError(f"mode {mode} runs on a server engine; choose one of "
                          f"{', '.join(map(str, IN_PROCESS))}")

    def draft_length(self, mode: Mode) -> int:
        return {OFF: 0, DRAFT: self.config.draft_tokens, NGRAM: self.config.ngram_tokens,
                AUTO: self.config.auto_max_tokens}[mode]

    def prediction_tokens(self) -> int:
        """Draft length for a Predicted Output. Its matches are usually right to the end, so the
        length is the one a fully accepted draft pays most at, γ = argmax k/v(k) − 1 over the
        timed batch sizes, once auto mode has timed them (before that, the configured length)."""
        if self.costs is None:
            return self.config.prediction_tokens
        sizes = [k for k in self.costs.v if 2 <= k <= self.config.auto_max_tokens + 1]
        if not sizes:
            return self.config.prediction_tokens
        return max(sizes, key=lambda k: k / self.costs.v[k]) - 1

    def _new_stats(self, mode: Mode, params: SamplingParams, drafter: Drafter | None,
                   predicted: bool) -> Stats:
        stats = Stats(mode=mode, plain_token_seconds=getattr(self.costs, "token_seconds", 0.0)
                      if self.costs is not None else 0.0)
        if mode in (DRAFT, AUTO) and self.compatibility and not self.compatibility.same_vocabulary:
            stats.draft_kind = self.compatibility.label
        if drafter is not None and params.greedy and self.drift is not None:  # None: not yet
            stats.batch_drift = self.drift.gap_change
        if drafter is not None or predicted:
            stats.rollback_note = rollback_note(self.target)
        stats.untimed = mode == AUTO and self.costs is None  # auto priced by costs.PRIOR
        return stats

    def _prefill(self, messages, params: SamplingParams, stats: Stats,
                 should_stop: Callable[[], bool] | None = None,
                 on_read: Callable[[Reading], None] | None = None,
                 raw_prompt: RawPrompt | None = None
                 ) -> Generator[Event, None, tuple[list[int], int]]:
        """Fit the conversation (or `raw_prompt`, which is never cut) to the context and bring
        the cache to it; yields the notices and returns (prompt tokens, oldest messages
        dropped). The cache holds the prompt minus its last token: each step starts from that
        token. `on_read` hears how far a long read has come, while it runs (a generator cannot
        yield from inside llama.cpp's pass)."""
        if raw_prompt is not None:
            prompt, dropped = fit_raw_prompt(self.target, raw_prompt, self.reserve(params)), 0
        else:
            prompt, dropped = self.fit_prompt(messages, self.reserve(params))
        if dropped:
            yield Notice(f"The {dropped} oldest message(s) were left out so the conversation "
                         f"fits the {self.target.n_ctx:,}-token context.")
        stats.prompt_tokens = len(prompt)
        self.kept_prompt.restore(prompt[:-1])  # sync_cache cuts it back to what is shared
        rereading = rereading_notice(self.target, prompt[:-1])
        if rereading:
            yield Notice(rereading)
        read_fast = getattr(self.target, "fast_read_tokens", 0)
        stoppable = should_stop is not None and hasattr(self.target, "stop_reading")
        if stoppable:
            self.target.stop_reading = should_stop
        told = on_read is not None and hasattr(self.target, "on_read")
        if told:
            self.target.on_read = _read_teller(on_read, len(prompt) - 1 - common_prefix_length(
                self.target.tokens, prompt[:-1]))
        try:
            stats.reused_prompt_tokens = sync_cache(self.target, prompt[:-1])
        finally:
            if stoppable:
                self.target.stop_reading = None
            if told:
                self.target.on_read = None
        stats.prompt_read_fast = getattr(self.target, "fast_read_tokens", 0) - read_fast
        return prompt, dropped


def _read_teller(on_read: Callable[[Reading], None], to_read: int
                 ) -> Callable[[int, int], None] | None:
    """The backend's on_read for a read of `to_read` tokens: a Reading at once (the read has
    begun), then one every READ_TOLD_EVERY seconds and at its end; None where it is short."""
    if to_read < READ_TOLD_FROM:
        return None
    began = time.perf_counter()
    told_at = began
    on_read(Reading(0, to_read, 0.0))

    def tell(done: int, total: int) -> None:
        nonlocal told_at
        now = time.perf_counter()
        if done < total and now - told_at < READ_TOLD_EVERY:
            return
        told_at = now
        on_read(Reading(done, total, now - began))
    return tell
