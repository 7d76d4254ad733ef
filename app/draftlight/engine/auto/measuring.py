"""What the engine measures about its models after they load, off the path of the first reply.

A model is usable as soon as llama.cpp has loaded it. What the app learns about it on this
machine (whether batched passes are exact, what a pass over k tokens costs, how fast the draft
drafts) is read from the cache (disk_cache.py) or, where missing, measured later: the window's
worker runs one step at a time while no request waits, and a request that arrives interrupts
the step (its passes stop at the next one; nothing is cached) and it runs again afterwards.
Until a measurement exists auto prices passes by costs.PRIOR, drafting only copies it is nearly
sure of.

Measuring after a reply must not throw away the conversation's cache (re-reading it would cost
the next reply seconds on a large model), so the probe's passes go after the cached tokens
where the window has room (AfterTokens) and the cache is cut back to them afterwards.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from draftlight.engine.auto import costs, invariance
from draftlight.engine.core.backend import LanguageModel
from draftlight.engine.core.errors import EngineError

# The steps, as the window names them while they run
GREEDY_CHECK = "checking batched passes against one-token ones"
PASS_COSTS = "timing passes of 1-16 tokens"
DRAFT_SPEED = "timing the draft model"

# Tokens the largest probe puts in the cache: the cost curve's context and passes (a draft's
# timing and the drift probe need fewer)
PROBE_ROOM = max(costs.CONTEXT_TOKENS + max(costs.MEASURED_K) + costs.REPEATS + 1,
                 max(invariance.PROBE_CONTEXTS) + invariance.PROBE_TOKENS + 1)


class MeasurementInterrupted(EngineError):
    """A request arrived while a model was being measured: it runs first, the step later."""

    def __init__(self) -> None:
        super().__init__("a request came first; the measurement runs again after it")


class AfterTokens:
    """`model` seen from after its first `base` cached tokens: a probe evaluates, truncates and
    checkpoints as if the cache were empty, and the conversation's tokens stay where they are."""

    def __init__(self, model: LanguageModel, base: int) -> None:
        self._model, self.base = model, base

    @property
    def n_ctx(self) -> int:
        return self._model.n_ctx - self.base

    @property
    def tokens(self) -> list[int]:
        return self._model.tokens[self.base:]

    @property
    def token_view(self) -> Sequence[int]:
        return self.tokens  # a probe's few tokens

    def eval(self, tokens: Sequence[int], n_logits: int = 1) -> np.ndarray:
        return self._model.eval(tokens, n_logits)

    def truncate(self, n: int) -> None:
        self._model.truncate(self.base + n)

    def checkpoint(self, span: int = 0) -> None:
        self._model.checkpoint(span)

    def __getattr__(self, name: str):  # path, options, tokenize, rollback, ...
        return getattr(self._model, name)


def probe_view(model: LanguageModel, room: int) -> LanguageModel:
    """`model` for a probe that needs `room` tokens: after its cached tokens where a cut back to
    them is free (a KV cache) and the window has room, else from an emptied cache."""
    base = len(model.tokens)
    if base == 0 or getattr(model, "rollback", "cut") != "cut" or base + room > model.n_ctx:
        model.truncate(0)
        return model
    return AfterTokens(model, base)
