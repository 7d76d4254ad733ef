"""Compare: the same message answered greedily with speculation off and on, side by side."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Iterator

from draftlight.engine.backend import common_prefix_length, sync_cache
from draftlight.engine.events import Done, Notice, Stats, TextPiece
from draftlight.engine.generator import Engine
from draftlight.engine.sampling import SamplingParams

SIDES = ("plain", "speculative")


@dataclass(frozen=True)
class SidePiece:
    side: str  # "plain" or "speculative"
    piece: TextPiece


@dataclass(frozen=True)
class Comparison:
    mode: str
    plain: Stats
    speculative: Stats
    plain_text: str
    speculative_text: str
    identical: bool  # token for token
    divergence: str | None  # where and why they differ, when they do

    @property
    def identity_note(self) -> str:
        """Set where greedy identity is not guaranteed on this target (invariance.py)."""
        return self.speculative.identity_note

    @property
    def speedup(self) -> float:
        plain = self.plain.tokens_per_second
        return self.speculative.tokens_per_second / plain if plain else 0.0

    def summary(self) -> str:
        line = (f"plain {self.plain.seconds:.2f} s ({self.plain.tokens_per_second:.1f} tok/s), "
                f"{self.mode} {self.speculative.seconds:.2f} s "
                f"({self.speculative.tokens_per_second:.1f} tok/s): {self.speedup:.2f}x; ")
        verdict = "identical text" if self.identical else f"texts differ ({self.divergence})"
        return line + verdict + (f"; {self.identity_note}" if self.identity_note else "")


def compare(engine: Engine, messages: list[dict[str, str]], params: SamplingParams,
            mode: str) -> Iterator[SidePiece | Notice | Comparison]:
    """Greedy (temperature 0, whatever `params` say) so the two answers must be identical."""
    greedy = replace(params, temperature=0.0)
    results: dict[str, tuple[list[int], Done]] = {}
    for side, side_mode in zip(SIDES, ("off", mode)):
        tokens: list[int] = []
        for event in engine.generate(messages, greedy, side_mode):
            if isinstance(event, TextPiece):
                if event.token >= 0:
                    tokens.append(event.token)
                yield SidePiece(side, event)
            elif isinstance(event, Notice):  # e.g. a recurrent model reading it all again
                yield event
            elif isinstance(event, Done):
                results[side] = (tokens, event)
    (plain_tokens, plain), (fast_tokens, fast) = results["plain"], results["speculative"]
    identical = plain_tokens == fast_tokens
    divergence = None
    if not identical:
        found = explain_divergence(engine, messages, plain_tokens, fast_tokens)
        divergence = found.describe() if found else "one reply stopped earlier"
    yield Comparison(mode, plain.stats, fast.stats, plain.text, fast.text, identical, divergence)


@dataclass(frozen=True)
class Divergence:
    """Where two greedy token sequences for the same prompt first differ, and how close the
    target's logits for the two tokens were there (a near-tie explains a batching difference)."""

    position: int
    token_a: int
    token_b: int
    text_a: str
    text_b: str
    logit_gap: float  # logit(token_a) − logit(token_b) in a fresh evaluation of the prefix

    def describe(self) -> str:
        return (f"first difference at token {self.position}: {self.text_a!r} vs {self.text_b!r}, "
                f"target logit gap {self.logit_gap:.4g}")


def explain_divergence(engine: Engine, messages: list[dict[str, str]], a: list[int],
                       b: list[int]) -> Divergence | None:
    """None when one sequence is a prefix of the other (e.g. stopped at different lengths)."""
    i = common_prefix_length(a, b)
    if i >= min(len(a), len(b)):
        return None
    prefix = engine.tokenize_chat(messages) + a[:i]
    sync_cache(engine.target, prefix[:-1])
    logits = engine.target.eval(prefix[-1:], n_logits=1)[0]
    piece = engine.target.piece
    return Divergence(i, a[i], b[i], piece(a[i]).decode("utf-8", "replace"),
                      piece(b[i]).decode("utf-8", "replace"),
                      float(logits[a[i]] - logits[b[i]]))
