"""A model whose passes stop once asked to: auto mode times its models (seconds on a large model,
engine/auto/costs.py) while they load, where a window that closes must not wait for the timing to
end, or in the background (engine/auto/measuring.py), where a request that arrives goes first."""

from __future__ import annotations

from typing import Callable

from draftlight.engine.core.backend import LanguageModel
from draftlight.engine.core.errors import ModelLoadError


def load_cancelled() -> Exception:
    return ModelLoadError("the load was cancelled while its passes were being timed")


class CancellableModel:
    """`model`, except that `eval` raises `error()` (a ModelLoadError by default) once
    `should_cancel()` is true."""

    def __init__(self, model: LanguageModel, should_cancel: Callable[[], bool],
                 error: Callable[[], Exception] = load_cancelled) -> None:
        self._model, self._should_cancel, self._error = model, should_cancel, error

    def eval(self, *args, **kwargs):
        if self._should_cancel():
            raise self._error()
        return self._model.eval(*args, **kwargs)

    def __getattr__(self, name: str):
        return getattr(self._model, name)


def cancellable(model: LanguageModel, should_cancel: Callable[[], bool] | None,
                error: Callable[[], Exception] = load_cancelled) -> LanguageModel:
    return model if should_cancel is None else CancellableModel(model, should_cancel, error)
