"""A replay's result per answer, and its table per category (replay.py, hindsight.py)."""

from __future__ import annotations

from dataclasses import dataclass

from draftlight.bench.report import speedup_interval
from draftlight.bench.runner import TurnResult


@dataclass
class Replayed:
    category: str
    question_id: object
    tokens: int
    passes: float  # Σ v(k) of auto's steps, in one-token passes
    oracle: float  # the same for the n-gram oracle

    @property
    def speedup(self) -> float:
        return self.tokens / self.passes


def summarise(rows: list[Replayed]) -> dict[str, dict[str, float | None]]:
    """Per category and overall: auto's speedup (tokens / passes, pooled), the ceiling, auto's
    share of it, and the bench's 95% bootstrap interval of the speedup (report.py, resampling
    whole questions), plain decoding costing one pass per token."""
    groups: dict[str, list[Replayed]] = {}
    for row in rows:
        groups.setdefault(row.category, []).append(row)
    groups["overall"] = rows
    table = {}
    for name, group in groups.items():
        def as_turns(seconds):  # TurnResults as the bench's interval reads them
            return [TurnResult(r.question_id, r.category, 0, "", "", [], r.tokens, seconds(r))
                    for r in group]
        interval = speedup_interval(as_turns(lambda r: r.passes), as_turns(lambda r: r.tokens))
        speed = sum(r.tokens for r in group) / sum(r.passes for r in group)
        ceiling = sum(r.tokens for r in group) / sum(r.oracle for r in group)
        lo, hi = interval or (None, None)
        table[name] = {"auto": speed, "lo": lo, "hi": hi, "ceiling": ceiling,
                       "share": speed / ceiling}
    return table


def format_table(table: dict[str, dict[str, float]], policy: str = "auto") -> str:
    lines = [f"| category | {policy} (95% interval) | n-gram ceiling | {policy} / ceiling |",
             "|---|---|---|---|"]
    for name, row in table.items():
        interval = f" ({row['lo']:.2f}–{row['hi']:.2f})" if row["lo"] is not None else ""
        lines.append(f"| {name} | {row['auto']:.2f}x{interval} | "
                     f"{row['ceiling']:.2f}x | {row['share']:.2f} |")
    return "\n".join(lines)
