"""A model whose passes stop once a load is cancelled: auto mode times its models while they
load (seconds on a large model, engine/costs.py), and a window that closes then must not wait
for the timing to end."""

from __future__ import annotations

from typing import Callable

from draftlight.engine.backend import LanguageModel
from draftlight.engine.errors import ModelLoadError


class CancellableModel:
    """`model`, except that `eval` raises ModelLoadError once `should_cancel()` is true."""

    def __init__(self, model: LanguageModel, should_cancel: Callable[[], bool]) -> None:
        self._model, self._should_cancel = model, should_cancel

    def eval(self, *args, **kwargs):
        if self._should_cancel():
            raise ModelLoadError("the load was cancelled while its passes were being timed")
        return self._model.eval(*args, **kwargs)

    def __getattr__(self, name: str):
        return getattr(self._model, name)


def cancellable(model: LanguageModel, should_cancel: Callable[[], bool] | None) -> LanguageModel:
    return model if should_cancel is None else CancellableModel(model, should_cancel)
