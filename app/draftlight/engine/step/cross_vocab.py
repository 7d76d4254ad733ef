"""A draft model with another vocabulary drafts through text.

The draft speaks its own tokens; the target verifies its own. Between them is the text both
stand for (string-level drafting, as Hugging Face's Universal Assisted Generation and the SLEM
method of Timor, Mamou et al., ICML 2025):

    target context ─bytes─▶ draft tokens ─draft model, greedy─▶ draft tokens ─bytes─▶ target tokens

and the target then checks those target tokens with the one rule every drafter goes through
(speculative.py). The proposal is deterministic — one-hot q, as for n-gram lookup — so:

  * greedy: a drafted token is kept iff it is the target's argmax: plain decoding's tokens;
  * sampling: x is accepted with probability min(1, p(x)/q(x)) = p(x) and a rejection samples
    from p with x removed; P(emit y) = P(x=y)·p(y) + Σ_{x≠y} P(x)(1 − p(x))·p(y)/(1 − p(x)) = p(y)
    for any x chosen without the target's random draws (Leviathan et al. 2023, Thm 1, with
    q = δ_x). So sampled output keeps the target's distribution exactly.

Nothing the drafter gets wrong (a stale draft context, a bad mapping, an odd re-tokenisation)
can change the output: it only lowers acceptance. Token-level intersection (TLI: the draft's q
restricted to shared tokens, accepted with min(1, p/q)) would accept more under sampling but
needs one draft token per target token; this keeps the one rule and works for any pair.

The mapping between the two vocabularies (VocabMap, with its cache on disk) is vocab_map.py.
"""

from __future__ import annotations

import time
from typing import Sequence

import numpy as np

from draftlight.engine.core.backend import LanguageModel, common_prefix_length, sync_cache
from draftlight.engine.step.drafters import Draft, DraftOrigin, draft_window
from draftlight.engine.text.vocab_map import VocabMap

RETOKENIZE_MARGIN = 2  # draft tokens before a change that are tokenised again with it


class CrossVocabDrafter:
    """A draft model of another vocabulary, behind the Drafter protocol (see the module doc).

    It keeps the draft's own token context in step with the target's text: the target's
    tokens become bytes (the map's pieces), and only the bytes after the last change are
    tokenised again for the draft (with a margin of RETOKENIZE_MARGIN tokens, as a change can
    merge with the tokens before it), so the draft's KV cache is reused like ModelDrafter's.
    When those tokens no longer fit the draft's window (its vocabulary may need many more
    tokens for the same text than the target's) it drafts from the latest part that does
    (drafters.draft_window).
    """

    def __init__(self, draft: LanguageModel, target: LanguageModel, vocab_map: VocabMap) -> None:
        self.draft, self.target, self.map = draft, target, vocab_map
        self._target_tokens: list[int] = []
        self._text = bytearray()  # the target context as bytes (specials as their text)
        self._target_ends: list[int] = []  # byte offset where each target token ends
        self._draft_tokens: list[int] = []  # the draft's tokenisation of _text
        self._draft_ends: list[int] = []
        self._draft_start = 0  # tokens before this are the draft's BOS (no bytes)
        # The draft's single-byte tokens, for bytes of a character split at a re-tokenisation
        self._byte_tokens = {p: i for i, p in reversed(list(enumerate(vocab_map.draft_pieces)))
                             if len(p) == 1}
        # (seconds spent converting, target tokens proposed) per proposal: the overhead of
        # drafting through text, besides the draft model's passes (app/draftlight/bench/cross_vocab_cost.py)
        self.conversions: list[tuple[float, int]] = []

    # The draft context ---------------------------------------------------------------------

    def _sync_text(self, context: Sequence[int]) -> int:
        """Make _text the bytes of `context`; return how many leading bytes were unchanged."""
        keep = common_prefix_length(self._target_tokens, context)
        kept_bytes = self._target_ends[keep - 1] if keep else 0
        del self._target_tokens[keep:], self._target_ends[keep:], self._text[kept_bytes:]
        for index in range(keep, len(context)):
            token = context[index]
            if not (index == 0 and token == self.target.bos):  # the draft has its own BOS
                self._text += self.map.context_bytes("target", token)
            self._target_tokens.append(token)
            self._target_ends.append(len(self._text))
        return kept_bytes

    def _sync_draft_context(self, unchanged_bytes: int) -> list[int]:
        if not self._draft_tokens and self.draft.add_bos:
            self._draft_tokens, self._draft_ends = [self.draft.bos], [0]
            self._draft_start = 1
        keep = len(self._draft_tokens)
        while keep > self._draft_start and self._draft_ends[keep - 1] > unchanged_bytes:
            keep -= 1
        keep = max(self._draft_start, keep - RETOKENIZE_MARGIN)
        start = self._draft_ends[keep - 1] if keep else 0
        del self._draft_tokens[keep:], self._draft_ends[keep:]
        tail = bytes(self._text[start:])
        if tail:
            new = self._draft_tokenize(tail)
            end = start
            for token in new:
                end += len(self.map.context_bytes("draft", token))
                self._draft_tokens.append(token)
                self._draft_ends.append(min(end, len(self._text)))
        return self._draft_tokens

    def _draft_tokenize(self, data: bytes) -> list[int]:
        """The draft's tokens for `data`, which may start or end inside a UTF-8 character (a
        token of either side can split one): those bytes become the draft's byte tokens."""
        head = 0
        while head < min(3, len(data)) and data[head] & 0xC0 == 0x80:  # continuation bytes
            head += 1
        end = head + _complete_utf8_prefix(data[head:])
        tokens = [self._byte_tokens[data[i:i + 1]] for i in range(head)
                  if data[i:i + 1] in self._byte_tokens]
        if end > head:
            tokens += self.draft.tokenize(data[head:end].decode("utf-8", "replace"),
                                          add_bos=False, special=True)
        tokens += [self._byte_tokens[data[i:i + 1]] for i in range(end, len(data))
                   if data[i:i + 1] in self._byte_tokens]
        return tokens

    # Draft text -> target tokens -----------------------------------------------------------

    def _to_target(self, context: Sequence[int], data: bytes) -> list[int]:
        """Target tokens for `data` after `context`: the target's tokenisation of the context's
        last token(s) + data, from the boundary where `data` starts (else of data alone). The
        last tokens are taken back to a whole UTF-8 character, so a character split across
        target tokens is tokenised whole."""
        pieces = self.map.target_pieces
        prefix = b""
        for token in reversed(context[-4:]):
            prefix = pieces[token] + prefix
            if not prefix or prefix[0] & 0xC0 != 0x80:  # starts a character: a whole one
                break
        attempts = [(prefix + data, len(prefix))] if prefix else []
        attempts.append((data, 0))
        for text, lead in attempts:
            tokens = self.target.tokenize(text.decode("utf-8", "replace"), add_bos=False,
                                          special=False)
            offset = 0
            for index, token in enumerate(tokens):
                if offset == lead:
                    return tokens[index:]
                if offset > lead:
                    break
                offset += len(pieces[token])
        return []

    def propose(self, context, max_tokens, params=None, rng=None) -> Draft:
        """Draft max_tokens + 1 draft tokens greedily and return their text as at most
        max_tokens target tokens, one-hot (Draft.probs None: see the module doc for why that
        is exact when sampling too). The last target token is dropped unless the draft ended
        its answer: its bytes may be the start of a longer token the target would choose."""
        if max_tokens <= 0 or not context:
            return Draft([])
        t0 = time.perf_counter()
        unchanged = self._sync_text(context)
        draft_context = self._sync_draft_context(unchanged)
        t1 = time.perf_counter()
        if not draft_context:
            return Draft([])
        draft_context, left_out = draft_window(draft_context, self.draft.n_ctx)
        # The cache ends with the draft context and all max_tokens + 1 drafts but the last.
        max_tokens = min(max_tokens, self.draft.n_ctx - len(draft_context))
        if max_tokens <= 0:
            return Draft([], left_out=left_out)
        sync_cache(self.draft, draft_context[:-1])
        self.draft.checkpoint()  # the next propose() comes back here, after a rejection
        token, drafted, end = draft_context[-1], [], None
        for _ in range(max_tokens + 1):
            token = int(np.argmax(self.draft.eval([token], n_logits=1)[0]))
            if self.draft.is_end_of_generation(token):
                end = self.map.draft_eog_to_target.get(token)
                break
            drafted.append(token)
        t2 = time.perf_counter()
        data = b"".join(self.map.draft_pieces[t] for t in drafted)
        valid = _complete_utf8_prefix(data)
        tokens = self._to_target(context, data[:valid]) if valid else []
        if end is None or valid < len(data):
            tokens = tokens[:-1]
        elif end is not None:
            tokens.append(end)
        tokens = tokens[:max_tokens]
        self.conversions.append(((t1 - t0) + (time.perf_counter() - t2), len(tokens)))
        proposed = data[:valid].decode("utf-8", "replace")
        return Draft(tokens, origin=DraftOrigin("model", text=proposed), left_out=left_out)


def _complete_utf8_prefix(data: bytes) -> int:
    """Length of the longest prefix of `data` that does not end inside a UTF-8 character."""
    for back in range(1, min(4, len(data)) + 1):
        byte = data[-back]
        if byte < 0x80:  # ASCII: complete
            return len(data)
        if byte >= 0xC0:  # a lead byte: complete iff its sequence fits in what follows
            need = 2 if byte < 0xE0 else 3 if byte < 0xF0 else 4
            return len(data) if back >= need else len(data) - back
    return len(data)
