"""The steps of a reply, for Engine.generate(): a Predicted Output joining the mode's drafter,
what each step teaches the drafter that learns, and the step's tokens turned into events.

Kept apart from generator.py so that generate() reads as the loop it is; these take what they
need as arguments and hold no state of their own."""

from __future__ import annotations

import dataclasses
from typing import Callable, Generator

from draftlight.engine.auto.adaptive import AcceptanceModel, AdaptiveDrafter, Candidate
from draftlight.engine.core.backend import LanguageModel
from draftlight.engine.step.drafters import Drafter
from draftlight.engine.reply.events import Event, Stats, TextPiece
from draftlight.engine.step.origins import OriginFinder
from draftlight.engine.step.prediction import PredictionDrafter
from draftlight.engine.core.sampling import SamplingParams


def window_full_notice(draft_n_ctx: int) -> str:
    """What a reply says once when the draft model could not see all of the context."""
    return (f"The draft model's {draft_n_ctx:,}-token context is full: it now drafts from the "
            f"latest part of the conversation only. The reply is the same; fewer guesses may be "
            f"kept.")


def with_prediction(drafter: Drafter | None, draft_length: int,
                    prediction_tokens: list[int], prompt_length: int, *, ngram: Drafter,
                    own_length: Callable[[], int]
                    ) -> tuple[Drafter | None, int, PredictionDrafter | None]:
    """(drafter, draft length, the prediction's drafter or None): the mode's drafter, with
    a predicted output drafting first when there is one. `ngram` is the engine's prompt
    lookup (auto's prediction starts from what it learnt); `own_length` the draft length a
    prediction gets outside auto (Engine.prediction_tokens)."""
    if not prediction_tokens:
        return drafter, draft_length, None
    if isinstance(drafter, AdaptiveDrafter):
        # Auto: the prediction is one more free candidate, its draft length chosen like
        # n-gram lookup's, from its match length and the acceptance auto learns.
        predicted = PredictionDrafter(prediction_tokens, prompt_length,
                                      draft_tokens=draft_length, scale_by_match=False)
        # It starts from what prompt lookup has learnt (both copy text the reply may
        # repeat, and are judged by the length of the match), then learns on its own.
        lookup = next((c.model for c in drafter.candidates if c.drafter is ngram),
                      AcceptanceModel())
        learnt = lookup.copy()
        return (drafter.with_candidate(Candidate(predicted, 0.0, draft_length, learnt)),
                draft_length, predicted)
    own = own_length()
    predicted = PredictionDrafter(prediction_tokens, prompt_length, draft_tokens=own,
                                  fallback=drafter, fallback_tokens=draft_length)
    return predicted, max(draft_length, own), predicted


def learn(step, learner, predicted: PredictionDrafter | None, stats: Stats) -> None:
    """What a step teaches auto (or the prediction's drafter), and the prediction's counts."""
    if learner is not None:
        learner.observe(step.drafted, len(step.accepted), step.token,
                        step.verify_seconds, step.draft_seconds)
    if isinstance(learner, AdaptiveDrafter):
        stats.probe_seconds += learner.probe_seconds
    if isinstance(learner, AdaptiveDrafter) and learner.chose(predicted):
        # Auto learns for its candidates and calls no observe() of theirs
        predicted.record(step.drafted, len(step.accepted))
    if predicted is not None:
        stats.prediction_drafted = predicted.drafted
        stats.prediction_accepted = predicted.accepted


def up_to_the_end(step, target: LanguageModel):
    """The step as the reply sees it: a draft whose accepted tokens run past an end token (the
    draft guessed the end and went on) counts as a draft that stopped there, the end token being
    the pass's own. Otherwise the footer counted accepted tokens the reply never shows (16 of 16
    accepted in a reply of 14 tokens), while the strip and the colours counted what it shows."""
    end = next((i for i, t in enumerate(step.accepted) if target.is_end_of_generation(t)), None)
    if end is None:
        return step
    return dataclasses.replace(step, accepted=step.accepted[:end], token=step.accepted[end],
                               drafted=step.drafted - (len(step.accepted) - end))


def emit(step, target: LanguageModel, decoder, origins: OriginFinder, text: list[str],
         stats: Stats, params: SamplingParams) -> Generator[Event, None, bool]:
    """A step's accepted draft tokens, then the target's own, as TextPieces; returns whether
    the reply ended (an end-of-generation token)."""
    emitted = [(t, "draft") for t in step.accepted] + [(step.token, "target")]
    for i, (token, source) in enumerate(emitted):
        if target.is_end_of_generation(token):
            stats.stop_reason = "eos"
            return True
        piece = decoder.decode(target.piece(token))
        stats.new_tokens += 1
        text.append(piece)
        origin = origins.origin(step.origin, i) if source == "draft" else None
        origins.reply.add(token, piece)
        yield TextPiece(piece, source, stats.target_passes - 1, token, origin)
        if stats.new_tokens >= params.max_tokens:
            break
    return False
