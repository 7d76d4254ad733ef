"""The map between two vocabularies that cross-vocabulary drafting goes through
(cross_vocab.py), and its cache on disk.

The mapping (VocabMap) holds each token's bytes on both sides — the strings compared as the
bytes they decode to, so BPE's `Ġ` and SentencePiece's `▁` both become a space and `<0x41>`
becomes `A` — built once per pair and cached on disk (draftlight.paths.cache_dir(), named by the two
model files' identity as disk_cache.py names its entries).
"""

from __future__ import annotations

import io
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from draftlight import paths
from draftlight.engine.core.backend import LanguageModel
from draftlight.engine.core.disk_cache import digest, file_identity
from draftlight.shared_files import write_atomically

MAP_VERSION = 1  # part of a cached map's key: maps built the old way are rebuilt
SPOT_CHECKS = 64  # tokens per side compared with the live model when a cached map is loaded


@dataclass
class VocabMap:
    """Both vocabularies as bytes. Special (control) tokens have no bytes in `*_pieces`; their
    text is in `*_specials`, so a chat template's markers reach the draft as its own specials
    where it has them (ChatML models share `<|im_start|>`), and as text where it has not."""

    target_pieces: list[bytes] = field(repr=False)
    draft_pieces: list[bytes] = field(repr=False)
    target_specials: dict[int, bytes] = field(repr=False)
    draft_specials: dict[int, bytes] = field(repr=False)
    shared: int  # distinct non-empty strings that are a normal token on both sides
    smaller: int  # distinct non-empty strings of the side that has fewer
    # A draft end-of-generation token -> the target's token of the same text, if it ends
    # generation there too (a draft that ends its answer proposes the target's end).
    draft_eog_to_target: dict[int, int] = field(default_factory=dict)

    def shared_fraction(self) -> float:
        """Shared strings over the target's vocabulary."""
        return self.shared / max(len(self.target_pieces), 1)

    def describe(self) -> str:
        return (f"different vocabularies: drafting through {self.shared:,} shared tokens "
                f"({100 * self.shared_fraction():.0f}% of the target's vocabulary)")

    def context_bytes(self, side: str, token: int) -> bytes:
        pieces, specials = ((self.target_pieces, self.target_specials) if side == "target"
                            else (self.draft_pieces, self.draft_specials))
        return pieces[token] or specials.get(token, b"")


def _pieces(model: LanguageModel) -> tuple[list[bytes], dict[int, bytes]]:
    pieces, specials = [], {}
    for token in range(model.n_vocab):
        piece = model.piece(token)
        pieces.append(piece)
        if not piece:  # control tokens render as nothing: keep their text apart
            text = model.token_text(token)
            if text:
                specials[token] = text.encode("utf-8")
    return pieces, specials


def build_vocab_map(target: LanguageModel, draft: LanguageModel) -> VocabMap:
    target_pieces, target_specials = _pieces(target)
    draft_pieces, draft_specials = _pieces(draft)
    target_strings, draft_strings = set(filter(None, target_pieces)), set(filter(None, draft_pieces))
    shared = len(target_strings & draft_strings)
    smaller = min(len(target_strings), len(draft_strings))
    eog: dict[int, int] = {}
    for token, text in draft_specials.items():
        if draft.is_end_of_generation(token):
            ids = target.tokenize(text.decode("utf-8", "replace"), add_bos=False, special=True)
            if len(ids) == 1 and target.is_end_of_generation(ids[0]):
                eog[token] = ids[0]
    return VocabMap(target_pieces, draft_pieces, target_specials, draft_specials, shared, smaller,
                    eog)


# --- the cache on disk -----------------------------------------------------------------------

def _file_identity(model: LanguageModel) -> list | None:
    path = getattr(model, "path", None)
    return None if path is None else file_identity(Path(path))


def map_cache_path(target: LanguageModel, draft: LanguageModel) -> Path | None:
    ids = [_file_identity(target), _file_identity(draft)]
    if None in ids:
        return None
    return paths.cache_dir() / "vocab-maps" / f"{digest(MAP_VERSION, ids)}.npz"


def _pack(pieces: list[bytes]) -> tuple[np.ndarray, np.ndarray]:
    lengths = np.fromiter((len(p) for p in pieces), dtype=np.int64, count=len(pieces))
    return np.concatenate([[0], np.cumsum(lengths)]), np.frombuffer(b"".join(pieces), np.uint8)


def _unpack(offsets: np.ndarray, blob: np.ndarray) -> list[bytes]:
    data = blob.tobytes()
    bounds = offsets.tolist()
    return [data[a:b] for a, b in zip(bounds, bounds[1:])]


def save_vocab_map(vocab_map: VocabMap, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    arrays = {}
    for side in ("target", "draft"):
        arrays[f"{side}_offsets"], arrays[f"{side}_blob"] = _pack(getattr(vocab_map,
                                                                          f"{side}_pieces"))
        specials = getattr(vocab_map, f"{side}_specials")
        arrays[f"{side}_special_ids"] = np.array(sorted(specials), dtype=np.int64)
        arrays[f"{side}_special_offsets"], arrays[f"{side}_special_blob"] = _pack(
            [specials[i] for i in sorted(specials)])
    arrays["shared"] = np.array([vocab_map.shared, vocab_map.smaller])
    arrays["eog"] = np.array(sorted(vocab_map.draft_eog_to_target.items()),
                             dtype=np.int64).reshape(-1, 2)
    packed = io.BytesIO()
    np.savez_compressed(packed, **arrays)
    write_atomically(path, packed.getvalue())


def load_vocab_map(path: Path) -> VocabMap:
    with np.load(path) as f:
        sides = {}
        for side in ("target", "draft"):
            pieces = _unpack(f[f"{side}_offsets"], f[f"{side}_blob"])
            texts = _unpack(f[f"{side}_special_offsets"], f[f"{side}_special_blob"])
            sides[side] = (pieces, dict(zip(f[f"{side}_special_ids"].tolist(), texts)))
        return VocabMap(sides["target"][0], sides["draft"][0], sides["target"][1],
                        sides["draft"][1], int(f["shared"][0]), int(f["shared"][1]),
                        {int(a): int(b) for a, b in f["eog"].tolist()})


def matches_models(vocab_map: VocabMap, target: LanguageModel, draft: LanguageModel) -> bool:
    """Whether a loaded map still describes these models: sizes, and the bytes of tokens spread
    over both vocabularies. A stale or damaged file is rebuilt instead of trusted."""
    for pieces, model in ((vocab_map.target_pieces, target), (vocab_map.draft_pieces, draft)):
        if len(pieces) != model.n_vocab:
            return False
        for token in np.linspace(0, model.n_vocab - 1, SPOT_CHECKS).astype(int).tolist():
            if pieces[token] != model.piece(token):
                return False
    return True


def vocab_map_for(target: LanguageModel, draft: LanguageModel) -> VocabMap:
    """The pair's map: from the cache folder when it is there and still fits, else built (about
    a second for a 262k vocabulary) and stored for next time."""
    path = map_cache_path(target, draft)
    if path is not None and path.exists():
        try:
            cached = load_vocab_map(path)
            if matches_models(cached, target, draft):
                return cached
        except (OSError, ValueError, KeyError, IndexError):
            pass  # unreadable: rebuild it below
    vocab_map = build_vocab_map(target, draft)
    if path is not None:
        try:
            save_vocab_map(vocab_map, path)
        except OSError:
            pass  # a read-only cache folder only costs the rebuild next time
    return vocab_map
