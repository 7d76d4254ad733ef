"""The best n-gram drafting could do on an answer: a yardstick for auto mode.

An oracle that knows the answer drafts, at every step, exactly the n-gram guesses the target
will accept (none when a pass over them would cost more than it saves), and pays for each pass
with the measured cost curve v(k). Its speedup over plain decoding, in target passes,

    ceiling = answer tokens / Σ_steps v(accepted + 1)

bounds what any policy choosing draft lengths for the same n-gram lookup can reach on this
machine. It is not a bound for other drafters.
"""

from __future__ import annotations

from typing import Callable

from draftlight.engine.step.drafters import NgramDrafter


def ngram_oracle_cost(prompt: list[int], answer: list[int], costs: Callable[[int], float],
                      max_draft: int, drafter: NgramDrafter) -> float:
    """Σ v(k) over the oracle's passes, in one-token target passes."""
    context, position, total = list(prompt), 0, 0.0
    while position < len(answer):
        room = min(max_draft, len(answer) - position - 1)
        guess = drafter.propose(context, room).tokens if room > 0 else []
        right = followed(guess, answer, position)
        if right and (right + 1) / costs(right + 1) < 1.0:
            right = 0  # too short a run to pay for its pass
        total += costs(right + 1)
        context += answer[position:position + right + 1]
        position += right + 1
    return total


def followed(guess: list[int], answer: list[int], position: int) -> int:
    """How many of `guess`'s tokens the answer has from `position` on (the accepted prefix)."""
    right = 0
    while right < len(guess) and guess[right] == answer[position + right]:
        right += 1
    return right
