"""Can this draft speak for this target? Token ids must mean the same text on both sides."""

from __future__ import annotations

from typing import Protocol

from app.engine.errors import IncompatibleDraftError

# llama.cpp's own speculative example tolerates this much padding difference (Qwen2.5 7B vs 0.5B).
MAX_VOCAB_SIZE_DIFFERENCE = 128
VOCAB_TYPE_NAMES = {0: "none", 1: "SentencePiece (SPM)", 2: "byte-level BPE", 3: "WordPiece",
                    4: "Unigram", 5: "RWKV", 6: "PLaMo-2"}


class Vocabulary(Protocol):
    vocab_type: int
    n_vocab: int
    bos: int
    eos: int

    def token_text(self, token: int) -> str: ...


def check_compatible(target: Vocabulary, draft: Vocabulary) -> None:
    """Raise IncompatibleDraftError naming the first mismatch, in plain words."""

    def fail(what: str) -> None:
        raise IncompatibleDraftError(f"the draft model cannot draft for this target: {what}")

    if target.vocab_type != draft.vocab_type:
        fail(f"their tokenizers differ (target: {VOCAB_TYPE_NAMES.get(target.vocab_type, '?')}, "
             f"draft: {VOCAB_TYPE_NAMES.get(draft.vocab_type, '?')})")
    if abs(target.n_vocab - draft.n_vocab) > MAX_VOCAB_SIZE_DIFFERENCE:
        fail(f"their vocabulary sizes differ (target: {target.n_vocab:,} tokens, "
             f"draft: {draft.n_vocab:,})")
    for name, t, d in (("beginning-of-text", target.bos, draft.bos),
                       ("end-of-text", target.eos, draft.eos)):
        if t != d:
            fail(f"their {name} tokens differ (target: {t}, draft: {d})")
    for token in range(min(target.n_vocab, draft.n_vocab)):
        t_text, d_text = target.token_text(token), draft.token_text(token)
        if t_text != d_text:
            fail(f"token {token} is {t_text!r} for the target but {d_text!r} for the draft")
