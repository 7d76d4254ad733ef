"""Which models can draft for which: for a target, the smaller models on this computer (its
own and other apps', store.found_models) that share its vocabulary, then those that draft
through text (cross-vocabulary), judged from the GGUF headers (store.model_facts, cached).
The engine still compares every token when it loads a draft."""

from __future__ import annotations

from dataclasses import dataclass

from draftlight.store.model_facts import DIGEST_TOKENS, FactsCache

MAX_VOCAB_SIZE_DIFFERENCE = 128  # as draftlight.engine.text.compat (padding differs between sizes)
# A draft at most this share of the target's size: a larger one costs too much of a target
# pass per drafted token to pay on a CPU (docs/cross-vocab.md, the cost ratio c).
MAX_DRAFT_SHARE = 0.3


@dataclass(frozen=True)
class DraftChoice:
    draft: object  # an InstalledModel
    same_vocabulary: bool
    why: str  # "same vocabulary (gpt2, 151,936 tokens)", or how it differs
    cost: float  # estimated draft token / target pass: the share of the weights each reads


def vocabulary_difference(target: str, draft: str, facts: FactsCache, *,
                          read: bool = True) -> str | None:
    """How `draft`'s vocabulary differs from `target`'s, from their headers (tokenizer, token
    count and a digest of the first tokens, store.model_facts); None if it looks the same, or,
    with `read` False (the GUI thread), if either header has not been read yet.

    Raises:
        OSError: a header cannot be read (its one-line reason)."""
    t, d = facts.get(target, read=read), facts.get(draft, read=read)
    if t is None or d is None:
        return None
    for known in (d, t):
        if known.error:
            raise OSError(known.error)
    if t.tokenizer != d.tokenizer:
        return f"another tokenizer ({d.tokenizer or '?'}; the target's is {t.tokenizer or '?'})"
    if t.vocab_size and d.vocab_size and abs(t.vocab_size - d.vocab_size) > \
            MAX_VOCAB_SIZE_DIFFERENCE:
        return f"another vocabulary ({d.vocab_size:,} tokens; the target has {t.vocab_size:,})"
    hashed = [min(v.vocab_size or 0, DIGEST_TOKENS) for v in (t, d)]
    if (t.vocab_digest and d.vocab_digest and hashed[0] == hashed[1]
            and t.vocab_digest != d.vocab_digest):
        return "another token list (the same tokenizer and size, other tokens)"
    return None


def drafts_for(target, models: list, facts: FactsCache, *, read: bool = True
               ) -> list[DraftChoice]:
    """The drafts `target` can use among `models` (InstalledModels), best first: the same
    vocabulary before cross-vocabulary, then the cheapest by estimated cost ratio (on a CPU a
    pass costs about the bytes of weights it reads, so a draft token costs its share of the
    target's size); a draft over MAX_DRAFT_SHARE is left out. A model whose header cannot be
    read is left out, and with `read` False so is one whose header has not been read yet.

    Cheapest first: the expected speedup (1 - a^(g+1)) / ((1 - a)(g c + 1)) gains more from a
    lower cost c than from the few points of acceptance a a larger draft of the same family
    adds (g = 4: a 0.6 at c 0.07 gives 1.80x, a 0.7 at c 0.21 gives 1.51x)."""
    choices = []
    for model in models:
        if (model.path == target.path or not model.size or not target.size
                or model.size > MAX_DRAFT_SHARE * target.size):
            continue
        known = facts.get(model.path, read=read)
        if known is None or facts.get(target.path, read=read) is None:
            continue
        try:
            difference = vocabulary_difference(str(target.path), str(model.path), facts,
                                               read=read)
        except OSError:
            continue
        cost = model.size / target.size
        why = (difference or (f"same vocabulary ({known.tokenizer or '?'}, "
                              f"{known.vocab_size or 0:,} tokens)")) + \
            f"; a drafted token costs about {cost:.0%} of a target pass"
        choices.append(DraftChoice(model, difference is None, why, cost))
    choices.sort(key=lambda c: (not c.same_vocabulary, c.cost))
    return choices
