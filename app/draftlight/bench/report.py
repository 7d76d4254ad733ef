"""Aggregate a benchmark run into report.json, report.md and report.png."""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path

import numpy as np

from draftlight.bench.runner import ORIGIN_KINDS, RunLog, TurnResult
from draftlight.bench.server_curve import passes_markdown, passes_report

BOOTSTRAP = 2000  # resamples of the questions for a speedup's 95% interval
# The fixed modes auto chooses between: its regret is measured against the fastest of them
FIXED_MODES = ("plain", "ngram", "draft")


def _figures(rows: list[TurnResult], plain_tps: float | None) -> dict:
    tokens = sum(r.new_tokens for r in rows)
    seconds = sum(r.decode_seconds for r in rows)
    drafted = sum(r.drafted for r in rows)
    accepted = sum(r.accepted for r in rows)
    passes = sum(r.target_passes for r in rows)
    server_seconds = sum(r.server_seconds for r in rows)
    tps = tokens / seconds if seconds > 0 else 0.0
    compared = [r.identical_to_plain for r in rows if r.identical_to_plain is not None]
    return {
        "tokens_per_second": round(tps, 2),
        "speedup_vs_plain": round(tps / plain_tps, 3) if plain_tps else 1.0,
        "acceptance_rate": round(accepted / drafted, 3) if drafted else None,
        "mean_accepted_length": round(tokens / passes, 3) if passes else None,
        "identical_to_plain": (round(sum(compared) / len(compared), 3) if compared
                               else (1.0 if rows and rows[0].mode == "plain" else None)),
        "accepted_by_origin": _origin_shares(rows),
        # server modes: the share of the decoding time seen here that the server accounts for
        # (the rest is HTTP, streaming and this process)
        "server_share_of_wall": (round(server_seconds / seconds, 3)
                                 if server_seconds > 0 and seconds > 0 else None),
        # auto: the share of its decoding time its probes of an idle draft model took (the price
        # of exploring; n-gram lookup needs no probe)
        "probe_share": (round(sum(r.probe_seconds for r in rows) / seconds, 4)
                        if rows and rows[0].mode == "auto" and seconds > 0 else None),
    }


def _origin_shares(rows: list[TurnResult]) -> dict[str, float]:
    """The share of accepted draft tokens from each origin (runner.ORIGIN_KINDS); {} if none."""
    counts = {kind: sum(r.origins.get(kind, 0) for r in rows) for kind in ORIGIN_KINDS}
    total = sum(counts.values())
    return {kind: round(n / total, 3) for kind, n in counts.items()} if total else {}


def build_report(log: RunLog) -> dict:
    by_category: dict[str, dict[str, list[TurnResult]]] = defaultdict(lambda: defaultdict(list))
    by_mode: dict[str, list[TurnResult]] = defaultdict(list)
    for r in log.results:
        by_category[r.category][r.mode].append(r)
        by_mode[r.mode].append(r)

    def table(groups: dict[str, list[TurnResult]]) -> dict:
        plain = _figures(groups["plain"], None)["tokens_per_second"] if "plain" in groups else None
        figures = {mode: _figures(rows, plain) for mode, rows in groups.items()}
        for mode, rows in groups.items():
            if mode != "plain" and "plain" in groups:
                figures[mode]["speedup_ci"] = speedup_interval(rows, groups["plain"])
                figures[mode]["flat_cost_projection"] = flat_cost_projection(
                    rows, groups["plain"], log.draft_cost if mode == "draft" else 0.0)
        if "auto" in groups:
            figures["auto"].update(auto_vs_best_fixed(groups, figures))
        return figures

    divergences = [
        {"question_id": r.question_id, "category": r.category, "turn": r.turn, "mode": r.mode,
         "divergence": r.divergence}
        for r in log.results if r.divergence]
    ceiling = {c: _ceiling(groups.get("plain", [])) for c, groups in by_category.items()}
    ceiling["overall"] = _ceiling(by_mode.get("plain", []))
    return {
        "categories": {c: table(groups) for c, groups in by_category.items()},
        "overall": table(by_mode),
        "peak_rss_mb": {m: round(v, 1) for m, v in log.peak_rss_mb.items()},
        "divergences": divergences,
        "greedy_identity": log.greedy_identity,
        "target": log.target,
        "draft_kind": log.draft_kind,
        "rollback": log.rollback,
        "cost_curve": log.cost_curve,
        "server_passes": passes_report(log.server_passes),
        # Speedup in target passes of an oracle drafting exactly the n-gram guesses that will be
        # accepted (app/draftlight/bench/ceiling.py); only when auto ran (it needs the cost curve).
        "ngram_ceiling": ceiling if ceiling["overall"] is not None else {},
    }


def auto_vs_best_fixed(groups: dict[str, list[TurnResult]], figures: dict) -> dict:
    """Auto's speed over the fastest fixed mode's (FIXED_MODES) in one group of rows, with its
    95% interval (whole questions resampled, speedup_interval): auto's regret is 1 minus it.
    {} where no fixed mode ran beside auto."""
    fixed = [m for m in FIXED_MODES if groups.get(m)]
    if not fixed:
        return {}
    best = max(fixed, key=lambda m: figures[m]["tokens_per_second"])
    best_tps = figures[best]["tokens_per_second"]
    ratio = figures["auto"]["tokens_per_second"] / best_tps if best_tps > 0 else 1.0
    return {"best_fixed": best, "vs_best_fixed": round(ratio, 3),
            "vs_best_fixed_ci": speedup_interval(groups["auto"], groups[best])}


def flat_cost_projection(rows: list[TurnResult], plain_rows: list[TurnResult],
                         draft_cost: float) -> float | None:
    """The speedup these runs' drafts would give where a target pass costs the same for any
    k ≤ 16 tokens (v(k) = 1, as on a GPU): tokens per unit of pass time, Σ tokens / Σ (passes +
    draft_cost · drafted), over plain decoding's. The drafts are those chosen for this machine's
    curve; on a flat curve auto would draft more. None for lcp-pld (its passes are not seen)."""
    passes = sum(r.target_passes for r in rows)
    plain_passes = sum(r.target_passes for r in plain_rows)
    if not passes or not plain_passes:
        return None
    cost = passes + draft_cost * sum(r.drafted for r in rows)
    plain_rate = sum(r.new_tokens for r in plain_rows) / plain_passes
    return round(sum(r.new_tokens for r in rows) / cost / plain_rate, 3)


def speedup_interval(rows: list[TurnResult], plain_rows: list[TurnResult]
                     ) -> list[float] | None:
    """95% bootstrap interval of the speedup (Σ tokens / Σ seconds over Σ of plain's), resampling
    whole questions (all their turns and repeats go together: they share a prompt), so it says
    how much the figure could move on other prompts of the same kind, and machine noise too."""
    ids = sorted({r.question_id for r in rows} & {r.question_id for r in plain_rows}, key=str)
    if len(ids) < 2:
        return None
    index = {q: i for i, q in enumerate(ids)}
    sums = np.zeros((2, 2, len(ids)))  # [mode, plain] x [tokens, seconds] x question
    for side, group in enumerate((rows, plain_rows)):
        for r in group:
            if r.question_id in index:
                sums[side, 0, index[r.question_id]] += r.new_tokens
                sums[side, 1, index[r.question_id]] += r.decode_seconds
    picks = np.random.default_rng(0).integers(0, len(ids), size=(BOOTSTRAP, len(ids)))
    totals = sums[:, :, picks].sum(axis=-1)  # [side, what, resample]
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = (totals[0, 0] / totals[0, 1]) / (totals[1, 0] / totals[1, 1])
    ratio = ratio[np.isfinite(ratio)]
    if not ratio.size:
        return None
    low, high = np.percentile(ratio, [2.5, 97.5])
    return [round(float(low), 3), round(float(high), 3)]


def _ceiling(plain_rows: list[TurnResult]) -> float | None:
    rows = [r for r in plain_rows if r.oracle_passes]
    if not rows:
        return None
    return round(sum(r.new_tokens for r in rows) / sum(r.oracle_passes for r in rows), 3)


def markdown(report: dict, command: str) -> str:
    modes = list(report["overall"])
    ceiling = report.get("ngram_ceiling") or {}
    rows = list(report["categories"].items()) + [("**overall**", report["overall"])]
    lines = _header_lines(report, command)
    regret = any("vs_best_fixed" in (figures.get("auto") or {}) for _, figures in rows)
    lines += ["Speedup vs plain decoding (tokens/s over decoding time, prefill excluded):\n",
              "| category | " + " | ".join(modes) + (" | auto / best fixed" if regret else "")
              + (" | n-gram ceiling |" if ceiling else " |"),
              "|---|" + "---|" * (len(modes) + regret + bool(ceiling))]
    for category, figures in rows:
        cells = [_speedup_cell(figures.get(mode)) for mode in modes]
        if regret:
            cells.append(_regret_cell(figures.get("auto") or {}))
        if ceiling:
            key = "overall" if figures is report["overall"] else category
            cells.append("–" if ceiling.get(key) is None else f"{ceiling[key]:.2f}x")
        lines.append(f"| {category} | " + " | ".join(cells) + " |")
    lines += _mode_lines(report)
    lines += passes_markdown(report.get("server_passes") or {})
    lines += _probe_lines(report)
    if regret:
        lines += ["", "auto / best fixed: auto's speed over the fastest of "
                      + ", ".join(m for m in FIXED_MODES if m in modes)
                      + " in that row (named), with its 95% interval; 1 minus it is auto's "
                      "regret for not knowing which fixed mode to pick."]
    if ceiling:
        lines += ["", "n-gram ceiling: the speedup, in target passes, of an oracle that drafts "
                      "exactly the n-gram guesses the target will accept, priced with the cost "
                      "curve v(k) auto measured and corrected during this run "
                      "(app/draftlight/bench/ceiling.py)."]
    lines += _origin_lines(rows)
    if report["divergences"]:
        lines += ["", "Greedy runs that differ from plain decoding:", ""]
        lines += [f"- {d['category']} #{d['question_id']} turn {d['turn']} ({d['mode']}): "
                  f"{d['divergence']}" for d in report["divergences"]]
    return "\n".join(lines) + "\n"


def _header_lines(report: dict, command: str) -> list[str]:
    """The title, the command, and what was run: target, draft model, rollback, cost curve."""
    identity, curve = report.get("greedy_identity"), report.get("cost_curve") or {}
    described = report.get("target") or "the target"
    return ["# Draftlight benchmark\n", f"Command: `{command}`\n",
            "Speedups with a 95% bootstrap interval over the questions in brackets.\n",
            *([f"Target: {described}; {identity}.\n"] if identity else []),
            *([f"Draft model: {report['draft_kind']}.\n"] if report.get("draft_kind") else []),
            *([f"Rollback: {report['rollback']}.\n"] if report.get("rollback") else []),
            *(["Cost of a target pass over k tokens, in one-token passes (v(k), as auto "
               "corrected it in this run): " + ", ".join(f"v({k})={v:.2f}"
                                                         for k, v in curve.items()) + ".\n"]
              if curve else [])]


def _speedup_cell(f: dict | None) -> str:
    """A mode's speedup in one category: its interval, and how often it differed from plain."""
    if not f:
        return "–"
    cell = f"{f['speedup_vs_plain']:.2f}x"
    if f.get("speedup_ci"):
        cell += " ({:.2f}–{:.2f})".format(*f["speedup_ci"])
    if f.get("identical_to_plain") is not None and f["identical_to_plain"] < 1.0:
        cell += f" ({100 * f['identical_to_plain']:.0f}% same)"
    return cell


def _regret_cell(auto: dict) -> str:
    """Auto against the row's fastest fixed mode: "0.99x of ngram (0.97–1.01)"."""
    if "vs_best_fixed" not in auto:
        return "–"
    cell = f"{auto['vs_best_fixed']:.2f}x of {auto['best_fixed']}"
    if auto.get("vs_best_fixed_ci"):
        cell += " ({:.2f}–{:.2f})".format(*auto["vs_best_fixed_ci"])
    return cell


def _mode_lines(report: dict) -> list[str]:
    """The table of each mode's overall figures, and what its less obvious columns mean."""
    lines = ["", "| mode | tok/s | acceptance | tokens/pass | identical to plain | "
                 "projection, flat v(k) | server time / wall | peak RSS MB |",
             "|---|---|---|---|---|---|---|---|"]
    for mode, f in report["overall"].items():
        acc = "–" if f["acceptance_rate"] is None else f"{100 * f['acceptance_rate']:.0f}%"
        tpp = "–" if f["mean_accepted_length"] is None else f"{f['mean_accepted_length']:.2f}"
        same = "–" if f["identical_to_plain"] is None else f"{100 * f['identical_to_plain']:.0f}%"
        flat = f.get("flat_cost_projection")
        projection = "–" if flat is None else f"{flat:.2f}x"
        share = f.get("server_share_of_wall")
        server = "–" if share is None else f"{100 * share:.0f}%"
        lines.append(f"| {mode} | {f['tokens_per_second']:.1f} | {acc} | {tpp} | {same} | "
                     f"{projection} | {server} | {report['peak_rss_mb'].get(mode, 0):.0f} |")
    lines += ["", "Projection, flat v(k): a projection, not a measurement: the speedup these "
                  "runs' drafts would give if a pass over up to 16 tokens cost one pass (as on a "
                  "GPU), drafts chosen for this machine's curve."]
    if any(f.get("server_share_of_wall") for f in report["overall"].values()):
        lines += ["", "Server time / wall: the decoding time llama-server's own clock counts, "
                      "over the decoding time waited here; the rest is HTTP, streaming and this "
                      "process."]
    return lines


def _origin_lines(rows: list[tuple[str, dict]]) -> list[str]:
    """Where each mode's accepted drafts came from, per category (none where nothing says)."""
    shares = [(category, mode, f["accepted_by_origin"]) for category, figures in rows
              for mode, f in figures.items() if f.get("accepted_by_origin")]
    if not shares:
        return []
    return ["", "Where the accepted drafts came from (share of accepted draft tokens):", "",
            "| category | mode | " + " | ".join(ORIGIN_KINDS) + " |",
            "|---|---|" + "---|" * len(ORIGIN_KINDS)] + [
        f"| {category} | {mode} | " + " | ".join(
            f"{100 * share.get(kind, 0):.0f}%" for kind in ORIGIN_KINDS) + " |"
        for category, mode, share in shares]


def _probe_lines(report: dict) -> list[str]:
    """Auto's price of exploring: the share of its decoding time spent probing an idle draft
    model, overall and per category (none without a draft model: n-gram lookup's guess is
    checked for free at every step)."""
    overall = report["overall"].get("auto", {}).get("probe_share")
    if overall is None or not report.get("draft_kind"):
        return []
    per_category = ", ".join(
        f"{category} {100 * figures['auto']['probe_share']:.2f}%"
        for category, figures in report["categories"].items()
        if figures.get("auto", {}).get("probe_share") is not None)
    return ["", f"Probing: auto spent {100 * overall:.2f}% of its decoding time probing an idle "
                f"draft model, the drafting and the probed token's share of its pass ("
                f"{per_category})."]


def bar_chart(report: dict, path: Path) -> bool:
    """report.png; False when matplotlib is not installed."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    categories = list(report["categories"]) + ["overall"]
    modes = [m for m in report["overall"] if m != "plain"]
    fig, ax = plt.subplots(figsize=(max(8, 1.2 * len(categories)), 4.5))
    width = 0.8 / max(len(modes), 1)
    for i, mode in enumerate(modes):
        values = [report["categories"][c].get(mode, {}).get("speedup_vs_plain", 0)
                  for c in categories[:-1]] + [report["overall"][mode]["speedup_vs_plain"]]
        ax.bar([x + i * width for x in range(len(categories))], values, width, label=mode)
    ax.axhline(1.0, color="black", linewidth=0.8)
    ax.set_xticks([x + width * (len(modes) - 1) / 2 for x in range(len(categories))])
    ax.set_xticklabels(categories, rotation=30, ha="right")
    ax.set_ylabel("speedup vs plain")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


def write_reports(log: RunLog, out: Path, command: str) -> dict:
    out.mkdir(parents=True, exist_ok=True)
    report = build_report(log)
    (out / "report.json").write_text(json.dumps(report, indent=2))
    (out / "report.md").write_text(markdown(report, command))
    report["png_written"] = bar_chart(report, out / "report.png")
    return report
