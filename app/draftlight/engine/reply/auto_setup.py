"""Auto mode's drafter for Engine (generator.py), and the measurements it prices drafts with:
the cost curve of batched passes, the draft's speed and the batch-drift check, read from the
cache, timed at first use, or one step at a time in the background (auto/measuring.py)."""

from __future__ import annotations

from typing import Callable

from draftlight.engine.auto.adaptive import AdaptiveDrafter, Candidate
from draftlight.engine.auto.costs import PRIOR, known_costs
from draftlight.engine.auto.learnt_counts import restore_learnt, save_learnt
from draftlight.engine.auto.measuring import (DRAFT_SPEED, GREEDY_CHECK, PASS_COSTS, PROBE_ROOM,
                                              MeasurementInterrupted, probe_view)
from draftlight.engine.core.backend import LanguageModel
from draftlight.engine.core.errors import ReadStopped
from draftlight.engine.reply.cancellable import cancellable
from draftlight.engine.step.cross_vocab import CrossVocabDrafter

# Text used to time the models for auto mode's cost curve.
PROBE_TEXT = ("Speculative decoding lets a small draft guess several tokens that a large model "
              "then checks in a single pass; accepted guesses stream out at once. ")


class AutoSetup:
    """Engine's auto mode and measurements; Engine.__init__ sets what they use (target, draft,
    model_drafter, ngram, config, costs, drift, the cost and drift sources, measure_later)."""

    def prepare_auto(self, should_cancel: Callable[[], bool] | None = None) -> AdaptiveDrafter:
        """Build auto mode's drafter on the cost curve: cached, else timed now (`should_cancel`
        returning True stops the timing: ModelLoadError; it runs while a model loads, and a
        window that closes then does not wait for it) or, with `measure_later`, costs.PRIOR
        until measure_next() has timed it (a draft model joins once it is timed too)."""
        if self._auto is not None:
            return self._auto
        self._read_cached()
        if not self.measure_later:
            if self.costs is None or self._retime_costs:
                self.costs, _ = self.cost_source(cancellable(self.target, should_cancel),
                                                 self._probe_tokens(), "target")
                self._retime_costs = False
            if self.draft is not None and self._draft_seconds is None:
                self._time_draft(cancellable(self.draft, should_cancel))
        candidates = [Candidate(self.ngram, 0.0, self.config.auto_max_tokens)]
        # start from what n-gram lookup achieved on this model last time
        restore_learnt(self.target, candidates[0].model)
        if self.draft is not None and self._draft_seconds is not None and self.costs:
            self.draft_cost = self._draft_seconds / self.costs.token_seconds
            cost = self.draft_cost
            if isinstance(self.model_drafter, CrossVocabDrafter):
                # It drafts one draft token more than it proposes (the last may be cut short):
                # at the usual length that is (γ + 1) / γ draft passes per proposed token.
                cost *= 1.0 + 1.0 / self.config.draft_tokens
            candidates.append(Candidate(self.model_drafter, cost,
                                        self.config.draft_tokens * 2))
        self._auto = AdaptiveDrafter(self.costs or PRIOR, candidates)
        return self._auto

    def _read_cached(self) -> None:
        """Take what the cache knows of the models' costs (a model's first use, or after another
        process measured it)."""
        if self.costs is None:
            self.costs, self._retime_costs = known_costs(self.target, "target")
        if self.draft is not None and self._draft_seconds is None:
            known, _ = known_costs(self.draft, "draft")
            self._draft_seconds = known.token_seconds if known is not None else None

    def _time_draft(self, draft: LanguageModel) -> None:
        # The draft is timed on its own tokens (another vocabulary's ids would be others).
        _, self._draft_seconds = self.cost_source(
            draft, draft.tokenize(PROBE_TEXT * 8, add_bos=False), "draft")

    # --- measuring in the background (measuring.py) ----------------------------------------

    def pending_measurements(self) -> tuple[str, ...]:
        """What measure_next() would measure, first first (measuring.GREEDY_CHECK, ...)."""
        self._read_cached()
        steps = [GREEDY_CHECK] if self.drift is None else []
        if self.costs is None or self._retime_costs:
            steps.append(PASS_COSTS)
        if self.draft is not None and self._draft_seconds is None:
            steps.append(DRAFT_SPEED)
        return tuple(steps)

    def measure_next(self, should_cancel: Callable[[], bool] | None = None) -> str:
        """Measure the first pending step and return its name ("" if none was pending); True
        from `should_cancel` stops it before its next pass, or in the middle of a long read
        (MeasurementInterrupted; nothing kept). The conversation's tokens stay cached
        (measuring.probe_view). After a timing, auto is rebuilt on it at its next use,
        keeping what it learnt."""
        pending = self.pending_measurements()
        if not pending:
            return ""
        step = pending[0]
        model = self.draft if step == DRAFT_SPEED else self.target
        view = probe_view(model, PROBE_ROOM)
        timed = cancellable(view, should_cancel, MeasurementInterrupted)
        # A probe's context read after a long conversation is seconds in one llama.cpp call:
        # it stops mid-way too (a closing window kills an engine that does not stop within
        # seconds, and the conversation's kept prompt is lost with it: kept_prompt.py).
        stoppable = should_cancel is not None and hasattr(model, "stop_reading")
        if stoppable:
            model.stop_reading = should_cancel
        try:
            if step == GREEDY_CHECK:
                self.drift = self.drift_source(timed, self._probe_tokens())
            elif step == PASS_COSTS:
                self.costs, _ = self.cost_source(timed, self._probe_tokens(), "target")
                self._retime_costs = False
            else:
                self._time_draft(timed)
        except (MeasurementInterrupted, ReadStopped) as stopped:
            if step == PASS_COSTS and self.costs is None:
                self._read_cached()  # the rounds it finished price auto's drafts from now
                if self.costs is not None:
                    self.save_learnt()
                    self._auto = None
            if isinstance(stopped, ReadStopped):
                raise MeasurementInterrupted() from None
            raise
        finally:
            if stoppable:
                model.stop_reading = None
            view.truncate(0)
        if step != GREEDY_CHECK:  # auto is rebuilt on the new prices, keeping what it learnt
            self.save_learnt()
            self._auto = None
        return step

    def measure(self, should_cancel: Callable[[], bool] | None = None) -> None:
        """Everything measure_next() would measure, now."""
        while self.measure_next(should_cancel):
            pass

    def _probe_tokens(self) -> list[int]:
        return self.target.tokenize(PROBE_TEXT * 8, add_bos=False)

    def save_learnt(self) -> None:
        """Keep auto's n-gram acceptance counts for the next session on this target."""
        if self._auto is None:
            return
        for candidate in self._auto.candidates:
            if candidate.drafter is self.ngram:
                save_learnt(self.target, candidate.model)
