"""Compare: the same message answered greedily with speculation off and on, side by side."""

from __future__ import annotations

import os
import statistics
from dataclasses import dataclass, replace
from typing import Iterator

from draftlight.engine.core.backend import common_prefix_length, sync_cache
from draftlight.engine.reply.events import Done, Notice, Stats, TextPiece
from draftlight.engine.reply.generator import Engine
from draftlight.engine.core.sampling import SamplingParams
from draftlight.modes import OFF, Mode

SIDES = ("plain", "speculative")


@dataclass(frozen=True)
class SidePiece:
    side: str  # "plain" or "speculative"
    piece: TextPiece


# Each side runs this many times, in alternating order (off, on; on, off; off, on), so a burst
# of load elsewhere or a warm cache favours neither; the speedup is the median of the rounds.
ROUNDS = 3
# Inconclusive when one side's decode times spread by more than this (the slowest over the
# fastest): the machine was busy, or the answers too short to time.
SPREAD = 1.25


@dataclass(frozen=True)
class Comparison:
    mode: Mode
    plain: Stats  # the first round's (its text is the one shown)
    speculative: Stats
    plain_text: str
    speculative_text: str
    identical: bool  # token for token
    divergence: str | None  # where and why they differ, when they do
    # Decode seconds (prompt time apart) of every round, per side, in round order
    plain_runs: tuple[float, ...] = ()
    speculative_runs: tuple[float, ...] = ()
    load: float = 0.0  # the machine's 1-minute load average per core when it began (0: unknown)

    @property
    def identity_note(self) -> str:
        """Set where greedy identity is not guaranteed on this target (invariance.py)."""
        return self.speculative.identity_note

    def _ratios(self) -> list[float]:
        """Per round: plain's decode time over speculation's (the same tokens both sides)."""
        plain = self.plain_runs or (self.plain.decode_seconds,)
        fast = self.speculative_runs or (self.speculative.decode_seconds,)
        return sorted(p / f for p, f in zip(plain, fast) if p > 0 and f > 0)

    @property
    def speedup(self) -> float:
        """The median round's speedup in decoding time (prompt time apart); 0 if untimed."""
        ratios = self._ratios()
        return statistics.median(ratios) if ratios else 0.0

    @property
    def interval(self) -> tuple[float, float]:
        """The lowest and highest round's speedup."""
        ratios = self._ratios()
        return (ratios[0], ratios[-1]) if ratios else (0.0, 0.0)

    @property
    def spread(self) -> float:
        """The larger of the two sides' slowest-over-fastest decode times."""
        return max((max(runs) / min(runs) for runs in (self.plain_runs, self.speculative_runs)
                    if runs and min(runs) > 0), default=1.0)

    @property
    def inconclusive(self) -> str:
        """Why the speedup cannot be trusted ("" when it can): rounds that disagree about
        which side is faster, times that spread too far, or a busy machine."""
        low, high = self.interval
        if len(self._ratios()) < 2:
            return "timed once"
        if self.spread > SPREAD:
            busy = f"; the machine was busy (load {self.load:.1f} per core)" if self.load > 0.5 \
                else ""
            return f"the rounds' times differ by {100 * (self.spread - 1):.0f}%{busy}"
        if low < 1.0 < high:
            return "the rounds disagree on which side is faster"
        return ""

    def summary(self) -> str:
        low, high = self.interval
        line = (f"plain {self.plain.decode_seconds:.2f} s ({self.plain.tokens_per_second:.1f} "
                f"tok/s), {self.mode} {self.speculative.decode_seconds:.2f} s "
                f"({self.speculative.tokens_per_second:.1f} tok/s), decoding: "
                f"{self.speedup:.2f}x (rounds {low:.2f}-{high:.2f}x)")
        if self.inconclusive:
            line += f", inconclusive: {self.inconclusive}"
        verdict = "identical text" if self.identical else f"texts differ ({self.divergence})"
        return line + "; " + verdict + (f"; {self.identity_note}" if self.identity_note else "")


def machine_load() -> float:
    """The 1-minute load average per core (0 where the system does not say)."""
    try:
        return os.getloadavg()[0] / (os.cpu_count() or 1)
    except (AttributeError, OSError):
        return 0.0


def compare(engine: Engine, messages: list[dict[str, str]], params: SamplingParams,
            mode: Mode, rounds: int = ROUNDS) -> Iterator[SidePiece | Notice | Comparison]:
    """Greedy (temperature 0, whatever `params` say) so the two answers must be identical.
    The first round streams its pieces; the others are timed only, in alternating order."""
    greedy = replace(params, temperature=0.0)
    load = machine_load()
    results: dict[str, tuple[list[int], Done]] = {}
    runs: dict[str, list[float]] = {side: [] for side in SIDES}
    for round_ in range(max(1, rounds)):
        order = SIDES if round_ % 2 == 0 else SIDES[::-1]
        if round_:
            yield Notice(f"Timing again, round {round_ + 1} of {rounds}…")
        for side in order:
            side_mode = OFF if side == "plain" else mode
            tokens: list[int] = []
            for event in engine.generate(messages, greedy, side_mode):
                if isinstance(event, TextPiece):
                    if event.token >= 0:
                        tokens.append(event.token)
                    if not round_:
                        yield SidePiece(side, event)
                elif isinstance(event, Notice):  # e.g. a recurrent model reading it all again
                    if not round_:
                        yield event
                elif isinstance(event, Done):
                    runs[side].append(event.stats.decode_seconds)
                    if not round_:
                        results[side] = (tokens, event)
    (plain_tokens, plain), (fast_tokens, fast) = results["plain"], results["speculative"]
    identical = plain_tokens == fast_tokens
    divergence = None
    if not identical:
        # a hosted engine reads the target's logits in its own process (hosted.py)
        explain = getattr(engine, "explain_divergence", None)
        found = (explain(messages, plain_tokens, fast_tokens) if explain is not None
                 else explain_divergence(engine, messages, plain_tokens, fast_tokens))
        divergence = found.describe() if found else "one reply stopped earlier"
    yield Comparison(mode, plain.stats, fast.stats, plain.text, fast.text, identical, divergence,
                     tuple(runs["plain"]), tuple(runs["speculative"]), load)


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
