"""What one pass of a llama-server costs, asked of the server itself: v(k) of the model as that
server runs it (one machine, or split over others with RPC), and how much of a pass RPC adds.

    passes = time_passes(endpoint)          # {k: median ms of a k-token pass}
    curve = cost_curve(passes)              # {k: v(k)} = ms(k) / ms(1)

A k-token pass is timed as llama-server times prompt processing: a request whose prompt is a
cached prefix plus k fresh tokens makes the server evaluate exactly those k tokens in one batch
(its `timings.prompt_n` says so, and `prompt_ms` is that pass), then sample one token
(n_predict = 1, timed apart as `predicted_ms`). A verify pass of a speculative step is the same
batch. Times come from the server's own clock, so HTTP does not enter them.

Over RPC a pass also sends activations to each helper and waits for its answer: one round trip
per helper and pass, whatever k is. So next to the same model on this machine alone, computing
as the helpers do (RPC devices keep plain weights: no repacked CPU kernels, `--no-repack`),

    rpc share of a k-token pass = 1 − ms_local(k) / ms_split(k)

and a split whose v(k) is lower than the local one gains more from every accepted draft token
(the round trips are paid once per verify pass instead of once per token).
"""

from __future__ import annotations

import random
import statistics

from draftlight.engine.server.client import Endpoint, ServerError, post_json

PASS_SIZES = (1, 2, 4, 8, 16)
SIDES = ("split", "local", "remote")  # over RPC; this machine alone; a server at --engine URL
ERRORS = ("error", "local_error", "remote_error")  # why a side was not timed
REPEATS = 5  # passes timed per size (the median is kept)
PREFIX_TOKENS = 256  # context the passes run after (a cached prefix)
# Ordinary text for the prefix: a pass costs what it costs after real tokens
PREFIX_TEXT = ("The history of the printing press begins long before Gutenberg. Carved wooden "
               "blocks printed cloth and paper in China and Korea for centuries, and movable "
               "type of clay, wood and metal followed there. ")


def time_passes(endpoint: Endpoint, sizes=PASS_SIZES, repeats: int = REPEATS,
                seed: int = 0) -> dict[int, float]:
    """{k: median milliseconds of a k-token pass} on the llama-server at `endpoint`.

    Raises:
        ServerError: the server is not a llama-server, refused, or went away."""
    text_tokens = post_json(endpoint, "/tokenize", {"content": PREFIX_TEXT})["tokens"]
    if not text_tokens:
        raise ServerError("the server's tokenizer returned no tokens")
    prefix = (text_tokens * (PREFIX_TOKENS // len(text_tokens) + 1))[:PREFIX_TOKENS]
    fresh = random.Random(seed)
    _complete(endpoint, prefix)  # cached from here on
    times: dict[int, list[float]] = {k: [] for k in sizes}
    for _ in range(repeats):
        for k in sizes:  # interleaved, so a slow spell of the machine hits every size alike
            # fresh tokens from the prefix's own, so nothing past the prefix is cached
            tokens = [fresh.choice(text_tokens) for _ in range(k)]
            timings = _complete(endpoint, prefix + tokens)
            if int(timings.get("prompt_n", -1)) != k:
                raise ServerError(f"the server evaluated {timings.get('prompt_n')} tokens for a "
                                  f"{k}-token pass: it did not keep the prefix cached")
            times[k].append(float(timings["prompt_ms"]))
    return {k: statistics.median(values) for k, values in times.items()}


def cost_curve(passes: dict[int, float]) -> dict[int, float]:
    """{k: v(k)}: a k-token pass over a one-token pass."""
    one = passes[1]
    return {k: round(ms / one, 2) for k, ms in sorted(passes.items())} if one > 0 else {}


def rpc_shares(split: dict[int, float], local: dict[int, float]) -> dict[int, float]:
    """{k: share of a k-token pass over the split that the split added} (0 when it was not
    slower than this machine alone)."""
    return {k: round(max(0.0, 1 - local[k] / split[k]), 3) for k in sorted(split)
            if k in local and split[k] > 0}


def _complete(endpoint: Endpoint, prompt: list[int]) -> dict:
    answer = post_json(endpoint, "/completion", {"prompt": prompt, "n_predict": 1,
                                                 "cache_prompt": True, "temperature": 0})
    timings = answer.get("timings")
    if not isinstance(timings, dict) or "prompt_ms" not in timings:
        raise ServerError("the server does not report llama-server's timings")
    return timings


def passes_report(passes: dict) -> dict:
    """The report's "server_passes": pass times, v(k), RPC's share and the verdict (whether
    drafting pays more over the split: its v(k) over this machine's, geometric mean, k > 1)."""
    if not passes:
        return {}
    out = {key: passes[key] for key in ("machines", "remote_url", *ERRORS) if key in passes}
    for side in SIDES:
        if side in passes:
            out[side] = {"ms": {k: round(ms, 2) for k, ms in sorted(passes[side].items())},
                         "v": cost_curve(passes[side])}
    if "split" in out and "local" in out:
        out["rpc_share"] = rpc_shares(passes["split"], passes["local"])
        split_v, local_v = out["split"]["v"], out["local"]["v"]
        ratios = [split_v[k] / local_v[k] for k in split_v if k > 1 and local_v.get(k)]
        if ratios:
            out["v_split_over_local"] = round(statistics.geometric_mean(ratios), 3)
    return out


def passes_markdown(report: dict) -> list[str]:
    """report.md's lines for passes_report(…)."""
    if not report:
        return []
    machines = ", ".join(report.get("machines", []))
    labels = {"split": f"split over {machines}",
              "local": "this machine alone" + (" (no repacking)" if machines else ""),
              "remote": f"the server at {report.get('remote_url')}"}
    lines = ["", "Passes on llama-server (its own clock, median of "
                 f"{REPEATS} after {PREFIX_TOKENS} tokens; app/draftlight/bench/server_curve.py):"]
    sides = [(side, labels[side]) for side in SIDES if side in report]
    whose = dict(zip(ERRORS, ("llama-server", "this machine alone", labels["remote"])))
    for error, who in whose.items():
        if error in report:
            lines += ["", f"{who[0].upper()}{who[1:]} was not timed: {report[error]}"]
    if not sides:
        return lines
    sizes = list(report[sides[0][0]]["ms"])
    lines += ["", "| k | " + " | ".join(str(k) for k in sizes) + " |",
              "|---|" + "---|" * len(sizes)]
    for side, label in sides:
        lines.append(f"| ms, {label} | " + " | ".join(
            f"{report[side]['ms'][k]:.1f}" for k in sizes) + " |")
    for side, label in sides:
        lines.append(f"| v(k), {label} | " + " | ".join(
            f"{report[side]['v'][k]:.2f}" for k in sizes) + " |")
    if "rpc_share" in report:
        lines.append("| RPC's share of the pass | " + " | ".join(
            f"{100 * report['rpc_share'].get(k, 0):.0f}%" for k in sizes) + " |")
    ratio = report.get("v_split_over_local")
    if ratio is not None:
        verdict = ("drafting pays more over the split" if ratio < 0.95 else
                   "drafting pays less over the split" if ratio > 1.05 else
                   "drafting pays about the same over the split (within 5%)")
        lines += ["", f"Over the split a k-token pass costs {ratio:.2f}× the one-token passes "
                      f"it costs here alone (v(k) ratio, geometric mean over k > 1): {verdict}. "
                      f"RPC's share: 1 − ms alone / ms split, alone computing as the helpers "
                      f"do (no repacked weights)."]
    return lines
