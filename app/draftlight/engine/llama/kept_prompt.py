"""The target's prompt cache kept across a restart of the app.

When the engine closes, the cache's state goes to a file in the cache folder (llama.cpp's state
file: the cache's own bytes and its tokens), one per model file and load options; a closing
window gives the engine's host seconds for it (host/hosted.py, CLOSE_SECONDS). The next
engine on that model compares each reply's prompt with the kept tokens; where they hold more of
it than the cache does, the file is loaded and only the rest is read. A long conversation
reopened after a restart is then not read again: its 5,000 tokens took the bundled model 36 s
on a 2-core CPU; loading their state takes a fraction of a second (`draftlight bench scale`).

Lossless: the state is what the same model, loaded with the same options, computed for those
tokens. Bounded: a cache over MAX_BYTES keeps its first tokens only, one shorter than MIN_TOKENS
is not kept (it is read again in moments), and the folder holds the files of KEEP_MODELS models.
Recurrent models (Mamba and hybrids) keep nothing: their rollback snapshots are not in the
file. Everything here is safe to delete.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Sequence

import numpy as np

from draftlight import paths
from draftlight.engine.core.backend import common_prefix_length
from draftlight.engine.core.disk_cache import digest, file_identity

MIN_TOKENS = 256
MAX_BYTES = 256 * 2**20
KEEP_MODELS = 2
FOLDER = "prompts"
STATE, TOKENS = ".state", ".tokens"
PARTIAL = ".partial"  # a file being written (KEY.state.partial): not kept until renamed
ABANDONED_SECONDS = 600  # a partial file this old was left by an engine killed mid-write


def _files(target) -> tuple[Path, Path] | None:
    """(state file, token list) of `target`'s model and options; None: it keeps nothing."""
    path = getattr(target, "path", None)
    if path is None or not hasattr(target, "save_state") or target.rollback != "cut":
        return None
    try:
        key = digest(file_identity(Path(path)), repr(target.options), target.build)
    except OSError:
        return None
    stem = paths.cache_dir() / FOLDER / key
    return stem.with_suffix(STATE), stem.with_suffix(TOKENS)


def keep(target) -> int:
    """Save the target's cache (when the engine closes: a cache over MAX_BYTES is cut to its
    first tokens first). Returns how many tokens were kept (0: none)."""
    files = _files(target)
    size = len(target.token_view) if files is not None else 0
    if size < MIN_TOKENS:
        return 0
    fitting = int(MAX_BYTES / max(target.state_bytes() / size, 1.0))
    if fitting < MIN_TOKENS:
        return 0
    target.truncate(min(size, fitting))
    state, listed = files
    # Written under other names and renamed once whole: a write cut short (the engine killed
    # mid-way) leaves only a partial file, which is never read and never listed as kept.
    partial = [state.with_name(state.name + PARTIAL), listed.with_name(listed.name + PARTIAL)]
    try:
        state.parent.mkdir(parents=True, exist_ok=True)
        if not target.save_state(partial[0]):
            return 0
        np.asarray(target.token_view, dtype=np.int32).tofile(partial[1])
        os.replace(partial[0], state)
        os.replace(partial[1], listed)
    except OSError:
        return 0
    finally:
        for left in partial:
            left.unlink(missing_ok=True)
    _forget_older(state.parent)
    return len(target.token_view)


def _forget_older(folder: Path) -> None:
    """The newest KEEP_MODELS models' files stay; older ones are deleted, and so are partial
    files that no write is still making (an engine writing one takes seconds)."""
    try:
        states = sorted(folder.glob("*" + STATE), key=lambda p: p.stat().st_mtime, reverse=True)
        for old in states[KEEP_MODELS:]:
            old.unlink(missing_ok=True)
            old.with_suffix(TOKENS).unlink(missing_ok=True)
        for left in folder.glob("*" + PARTIAL):
            if time.time() - left.stat().st_mtime > ABANDONED_SECONDS:
                left.unlink(missing_ok=True)
    except OSError:
        pass


class KeptPrompt:
    """The kept cache of one engine's target, read when it would save reading."""

    def __init__(self, target) -> None:
        self._target = target
        self._files = _files(target)
        self._tokens: list[int] | None = None  # read from its file when first asked

    def restore(self, context: Sequence[int]) -> int:
        """Load the kept cache if it holds more of `context` than the cache does now (the cache
        then holds the kept tokens: the caller cuts it back to what `context` shares). Returns
        how many of `context`'s tokens it brought (0: not loaded)."""
        kept = self._kept()
        if not kept:
            return 0
        shared = common_prefix_length(kept, context)
        if shared < MIN_TOKENS or shared <= common_prefix_length(self._target.token_view,
                                                                 context):
            return 0
        if self._target.load_state(self._files[0]) != kept:  # not the file it was, or refused
            self._target.truncate(0)
            self._tokens = []
            return 0
        return shared

    def _kept(self) -> list[int]:
        if self._tokens is None:
            self._tokens = []
            if self._files is not None and self._files[0].exists():
                try:
                    self._tokens = np.fromfile(self._files[1], dtype=np.int32).tolist()
                except (OSError, ValueError):
                    pass
        return self._tokens
