"""Can this draft speak for this target, and how?

Where token ids mean the same text on both sides the draft's tokens are proposed as they are
(drafters.ModelDrafter). Otherwise it drafts through text (cross_vocab.CrossVocabDrafter), which
is exact for any pair; it is refused only where the vocabularies share too little to ever pay.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

from draftlight.engine.core.errors import IncompatibleDraftError

# llama.cpp's own speculative example tolerates this much padding difference (Qwen2.5 7B vs 0.5B).
MAX_VOCAB_SIZE_DIFFERENCE = 128
# A cross-vocabulary draft is refused when the two vocabularies share fewer than this fraction
# of the smaller one's strings. Drafting through text is exact whatever the overlap, but the
# overlap says whether the models were trained on the same kind of text: tokenizers trained on
# similar text learn the same common words, so real pairs share most of the smaller vocabulary
# (SmolLM2-135M, 49k: 80% with Qwen2.5's 151k, 94% with Gemma 3's 262k), while a pair that
# shares little beyond single characters (another script or language) spells the draft's text
# in fragments the target never chooses and could never pay. Whether a pair that passes pays
# on this machine is auto mode's call (adaptive.py), from measured cost and acceptance.
MIN_SHARED_FRACTION = 0.25
VOCAB_TYPE_NAMES = {0: "none", 1: "SentencePiece (SPM)", 2: "byte-level BPE", 3: "WordPiece",
                    4: "Unigram", 5: "RWKV", 6: "PLaMo-2"}


class Vocabulary(Protocol):
    vocab_type: int
    n_vocab: int
    bos: int
    eos: int

    def token_text(self, token: int) -> str: ...


@dataclass(frozen=True)
class Compatibility:
    same_vocabulary: bool  # token ids mean the same text: the draft's tokens are the target's
    note: str = ""  # for a cross-vocabulary pair: "different vocabularies: drafting through …"
    vocab_map: object = field(default=None, repr=False)  # vocab_map.VocabMap, if cross

    @property
    def label(self) -> str:
        return "same vocabulary" if self.same_vocabulary else "cross-vocabulary"


def check_compatible(target, draft) -> Compatibility:
    """How `draft` drafts for `target`; IncompatibleDraftError, in plain words, if it cannot."""
    differences = vocabulary_differences(target, draft)
    if not differences:
        return Compatibility(True)
    from draftlight.engine.text.vocab_map import vocab_map_for
    vocab_map = vocab_map_for(target, draft)
    needed = MIN_SHARED_FRACTION * vocab_map.smaller
    if vocab_map.shared < needed:
        raise IncompatibleDraftError(
            f"the draft model cannot draft for this target: {differences[0]}, and their "
            f"vocabularies share only {vocab_map.shared:,} tokens ({MIN_SHARED_FRACTION:.0%} of "
            f"the smaller one, {needed:,.0f}, needed to ever pay)")
    return Compatibility(False, vocab_map.describe(), vocab_map)


def vocabulary_differences(target: Vocabulary, draft: Vocabulary) -> list[str]:
    """How the two vocabularies differ, in plain words, the most telling first; [] if they are
    the same. Token texts are compared only where the headers agree (a 262k vocabulary takes a
    while), and only up to the first token that differs."""
    differences = []
    if target.vocab_type != draft.vocab_type:
        differences.append(
            f"their tokenizers differ (target: {VOCAB_TYPE_NAMES.get(target.vocab_type, '?')}, "
            f"draft: {VOCAB_TYPE_NAMES.get(draft.vocab_type, '?')})")
    if abs(target.n_vocab - draft.n_vocab) > MAX_VOCAB_SIZE_DIFFERENCE:
        differences.append(f"their vocabulary sizes differ (target: {target.n_vocab:,} tokens, "
                           f"draft: {draft.n_vocab:,})")
    for name, t, d in (("beginning-of-text", target.bos, draft.bos),
                       ("end-of-text", target.eos, draft.eos)):
        if t != d:
            differences.append(f"their {name} tokens differ (target: {t}, draft: {d})")
    if differences:
        return differences
    for token in range(min(target.n_vocab, draft.n_vocab)):
        t_text, d_text = target.token_text(token), draft.token_text(token)
        if t_text != d_text:
            return [f"token {token} is {t_text!r} for the target but {d_text!r} for the draft"]
    return []
