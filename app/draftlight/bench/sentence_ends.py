"""Where a copied passage's sentence or line ends: evidence about a copy's end, measured in
hindsight (replay.py --hindsight) before auto is asked to use it (docs/replay.md).

A recording keeps each token's marks beside its words (recorded_words.py), so the replay reads
them without the model."""

from __future__ import annotations

from typing import Callable, Sequence

# What a token's text says about where a sentence or a line ends, as bits
NEWLINE, STOP, SPACED = 1, 2, 4  # holds a line break; ends with . ! or ?; starts with a space
Marks = Callable[[int], int]


def token_marks(piece: Callable[[int], bytes]) -> Marks:
    """A token's marks (NEWLINE | STOP | SPACED), from the model's `piece`, worked out once per
    token."""
    known: dict[int, int] = {}

    def marks(token: int) -> int:
        value = known.get(token)
        if value is None:
            text = piece(token).decode("utf-8", "replace")
            value = known[token] = ((NEWLINE if "\n" in text else 0)
                                    | (STOP if text.rstrip().endswith((".", "!", "?")) else 0)
                                    | (SPACED if text[:1].isspace() else 0))
        return value
    return marks


def sentence_left(guess: Sequence[int], marks: Marks) -> int | None:
    """How many tokens of a copied `guess` come up to the first end of a sentence or line in
    it (that token included): a token holding a line break, or one ending with . ! ? that the
    next starts a new word after (so "os.path" and "3.14" go on); None if the guess has none."""
    for i, token in enumerate(guess):
        mark = marks(token)
        if mark & NEWLINE:
            return i + 1
        if mark & STOP and i + 1 < len(guess) and marks(guess[i + 1]) & (SPACED | NEWLINE):
            return i + 1
    return None
