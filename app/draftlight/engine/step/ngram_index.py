"""Where each short n-gram of a token list occurs: the lookup behind prompt lookup
(drafters.NgramDrafter, over the conversation) and Predicted Outputs (prediction.py, over the
client's guess)."""

from __future__ import annotations

from typing import Callable, Hashable, Sequence

# A token's word for measuring a match (drafters.word_fold): tokens that spell the same word up
# to case and surrounding spaces ("The" and " the") count as agreeing there.
Fold = Callable[[int], Hashable]


class NgramIndex:
    """For n = min_ngram..max_ngram, each n-gram -> the positions p where tokens[p-n:p] is that
    n-gram and tokens[p] exists (what followed it), in increasing order. `extend` indexes only
    the new tokens, so a growing context costs a few dict updates per token, not a rescan."""

    MAX_MATCH = 64  # how far back a match's length is measured
    MAX_CANDIDATES = 32  # how many occurrences of an n-gram are compared

    def __init__(self, min_ngram: int, max_ngram: int, tokens: Sequence[int] = (),
                 fold: Fold | None = None) -> None:
        self.min_ngram, self.max_ngram = min_ngram, max_ngram
        self.fold = fold
        self.tokens: list[int] = []
        # each token's fold (its word), worked out as it is indexed: a match is then measured by
        # comparing words, one list lookup a token (with a fold called at each, 40% of an n-gram
        # step's time went there)
        self.words: list[Hashable] = self.tokens if fold is None else []
        self._tables: dict[int, dict[tuple[int, ...], list[int]]] = {
            n: {} for n in range(min_ngram, max_ngram + 1)}
        self.extend(tokens)

    def extend(self, new: Sequence[int]) -> None:
        known = len(self.tokens)
        tokens = self.tokens
        tokens.extend(new)
        if self.fold is not None:
            self.words.extend(map(self.fold, tokens[known:]))
        # Position p becomes a continuation once tokens[p] exists: index the n-gram before it.
        for n, table in self._tables.items():
            for p in range(max(known, n), len(tokens)):
                table.setdefault(tuple(tokens[p - n:p]), []).append(p)

    def positions(self, ngram: Sequence[int]) -> list[int]:
        """Where what followed `ngram` (of min_ngram..max_ngram tokens) is; [] if nowhere."""
        return self._tables[len(ngram)].get(tuple(ngram), [])

    def match_length(self, position: int, other: Sequence[int]) -> int:
        """How many tokens before `position` agree with the end of `other` (at most MAX_MATCH):
        a long agreement means `other` is copying this passage. With a `fold`, tokens that spell
        the same word agree too: a reply that starts a sentence with a phrase the message has
        mid-sentence ("The United States" after "the United States") copies it all the same."""
        return common_suffix_length(self.tokens, position, other, self.MAX_MATCH, self.fold)

    def match_length_to_end(self, position: int) -> int:
        """match_length(position, self.tokens): how far back the tokens before `position`
        agree with the newest indexed ones (prompt lookup asks this at every step)."""
        words = self.words
        end = len(words)
        limit = min(position, end, self.MAX_MATCH)
        length = 0
        while length < limit and words[position - 1 - length] == words[end - 1 - length]:
            length += 1
        return length


def common_suffix_length(a: Sequence[int], end: int, b: Sequence[int], limit: int,
                         fold: Fold | None = None) -> int:
    """Length of the common suffix of a[:end] and b, at most `limit` (tokens equal, or of
    equal `fold`)."""
    limit = min(end, len(b), limit)
    length = 0
    while length < limit:
        x, y = a[end - 1 - length], b[-1 - length]
        if x != y and (fold is None or fold(x) != fold(y)):
            break
        length += 1
    return length
