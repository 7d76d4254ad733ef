"""What auto learnt of n-gram lookup on a target, kept between sessions (the disk cache).

A new conversation, or a one-shot `draftlight chat`, then starts from the counts the last session
on this target file ended with instead of the shipped priors, which draft little until they have
seen the model copy. Keyed by the file and ACCEPTANCE_VERSION.
"""

from __future__ import annotations

from draftlight.engine.auto.acceptance import AcceptanceModel
from draftlight.engine.core.disk_cache import cache_key, load_cached, store_cached

# Part of the key of saved acceptance counts (adaptive.py buckets); 4: matches measured in words
ACCEPTANCE_VERSION = 4


def learnt_key(target) -> str | None:
    """Cache key of auto's n-gram acceptance counts for this target's file (None: no file)."""
    path = getattr(target, "path", None)
    return cache_key(path, "ngram-acceptance", ACCEPTANCE_VERSION) if path else None


def restore_learnt(target, model: AcceptanceModel) -> None:
    """Start `model` from the counts saved for this target, where there are any."""
    key = learnt_key(target)
    saved = load_cached(key) if key else None
    if saved:
        model.restore(saved)


def save_learnt(target, model: AcceptanceModel) -> None:
    """Keep `model`'s counts for the next session on this target."""
    key = learnt_key(target)
    if key is None:
        return
    try:
        store_cached(key, model.counts())
    except OSError:
        pass  # the cache folder is not writable: only a head start is lost
