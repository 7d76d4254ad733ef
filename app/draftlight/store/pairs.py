"""Which models can draft for which: for a target, the smaller models on this computer (its
own and other apps', store.found_models) that share its vocabulary, then those that draft
through text (cross-vocabulary), judged from the GGUF headers. The engine still compares every
token when it loads a draft."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from draftlight.store.gguf_info import vocabulary_of

MAX_VOCAB_SIZE_DIFFERENCE = 128  # as draftlight.engine.compat (padding differs between sizes)
# A draft at most this share of the target's size: a larger one costs too much of a target
# pass per drafted token to pay on a CPU (docs/cross-vocab.md, the cost ratio c).
MAX_DRAFT_SHARE = 0.3


@dataclass(frozen=True)
class DraftChoice:
    draft: object  # an InstalledModel
    same_vocabulary: bool
    why: str  # "same vocabulary (gpt2, 151,936 tokens)", or how it differs


def vocabulary_difference(target: str, draft: str, headers: dict) -> str | None:
    """How `draft`'s vocabulary differs from `target`'s, from their headers; None if it looks
    the same. `headers` caches what was read, by path and modification time.

    Raises:
        OSError, StoreError: a header cannot be read."""
    (t_type, t_size), (d_type, d_size) = _vocabulary(target, headers), _vocabulary(draft, headers)
    if t_type != d_type:
        return f"another tokenizer ({d_type or '?'}; the target's is {t_type or '?'})"
    if t_size and d_size and abs(t_size - d_size) > MAX_VOCAB_SIZE_DIFFERENCE:
        return f"another vocabulary ({d_size:,} tokens; the target has {t_size:,})"
    return None


def drafts_for(target, models: list, headers: dict) -> list[DraftChoice]:
    """The drafts `target` can use among `models` (InstalledModels), best first: the same
    vocabulary before cross-vocabulary, then the larger (it guesses better) of those small
    enough (MAX_DRAFT_SHARE). A model whose header cannot be read is left out."""
    choices = []
    for model in models:
        if (model.path == target.path or not model.size or not target.size
                or model.size > MAX_DRAFT_SHARE * target.size):
            continue
        try:
            difference = vocabulary_difference(str(target.path), str(model.path), headers)
            kind, size = _vocabulary(str(model.path), headers)
        except (OSError, ValueError):
            continue
        why = difference or f"same vocabulary ({kind or '?'}, {size or 0:,} tokens)"
        choices.append(DraftChoice(model, difference is None, why))
    choices.sort(key=lambda c: (not c.same_vocabulary, -c.draft.size))
    return choices


def _vocabulary(path: str, cache: dict) -> tuple[str | None, int | None]:
    """Reads the header only up to the token list's length (reading the whole list, 50k–250k
    strings in Python, froze the window for a third of a second)."""
    file = Path(path)
    key = (str(file), file.stat().st_mtime_ns)
    if key not in cache:
        cache[key] = vocabulary_of(file)
    return cache[key]
