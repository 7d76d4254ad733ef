"""Predicted Outputs on the project's code-editing prompts, and what `draftlight serve` adds.

    python -m draftlight.bench.prediction_speed [--target PATH] [--max-tokens N] [--limit N] [--repeats N]
                                         [--serve]

Each code_editing question of app/draftlight/bench/questions.jsonl (first turn) is answered greedily by
plain decoding, n-gram prompt lookup, auto, and with the question's own code as the prediction
(alone: mode off; and with auto drafting where it has no match), in one process, interleaved.
It prints tokens/s (decoding, prefill excluded) per mode and its ratio to plain, and whether
every reply is plain decoding's text.

With --serve it then starts `draftlight serve` on a free loopback port (after closing its own
engine: one model at a time) and sends the same plain requests through the `openai` client,
non-streamed and streamed: the overhead is the client's wall time over the engine's own time
for the same call (what `draftlight chat --json` runs, without its model load).
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from types import SimpleNamespace

from draftlight.bench.report import speedup_interval
from draftlight.modes import AUTO, NGRAM, OFF
from draftlight.bench.runner import DEFAULT_QUESTIONS, load_questions
from draftlight.engine.reply.events import Done
from draftlight.engine.core.sampling import SamplingParams

# name: (engine mode, with the prediction). "auto+prediction" is what `draftlight serve` does
# by default with a request that has one.
RUNS = {"plain": (OFF, False), "ngram": (NGRAM, False), "auto": (AUTO, False),
        "prediction": (OFF, True), "auto+prediction": (AUTO, True)}


def code_of(prompt: str) -> str:
    """The code block of a code-editing prompt: the file the user wants edited."""
    found = re.search(r"```[a-z]*\n(.*?)```", prompt, re.S)
    return found.group(1) if found else ""


def run_engine(engine, prompts, params, repeats):
    """{mode: [(text, new_tokens, decode_seconds, wall_seconds, prediction_accepted)]}."""
    rows: dict[str, list] = {name: [] for name in RUNS}
    for _ in range(repeats):
        for prompt in prompts:
            for name, (mode, predict) in RUNS.items():
                started = time.perf_counter()
                done = None
                for event in engine.generate([{"role": "user", "content": prompt}], params, mode,
                                             prediction=code_of(prompt) if predict else None):
                    if isinstance(event, Done):
                        done = event
                wall = time.perf_counter() - started
                s = done.stats
                rows[name].append((done.text, s.new_tokens, s.decode_seconds, wall,
                                   s.prediction_accepted))
    return rows


def report_engine(rows, prompts: int) -> bool:
    """Print tokens/s per mode, its ratio to plain with a 95% bootstrap interval over the
    prompts (report.speedup_interval: what the figure could be on other code edits), and
    whether every reply is plain decoding's."""
    plain = rows["plain"]
    rate = {name: sum(r[1] for r in rs) / sum(r[2] for r in rs) for name, rs in rows.items()}

    def turns(rs):  # rows run prompt after prompt, repeat after repeat
        return [SimpleNamespace(question_id=i % prompts, new_tokens=r[1], decode_seconds=r[2])
                for i, r in enumerate(rs)]

    print(f"{'mode':<16} {'tok/s':>7} {'vs plain':>9} {'95% interval':>14} {'identical':>10} "
          f"{'accepted pred.':>15}")
    identical_all = True
    for name, rs in rows.items():
        same = sum(a[0] == b[0] for a, b in zip(rs, plain))
        identical_all &= same == len(rs)
        low, high = speedup_interval(turns(rs), turns(plain)) or (float("nan"),) * 2
        print(f"{name:<16} {rate[name]:>7.1f} {rate[name] / rate['plain']:>8.2f}x "
              f"{f'{low:.2f}-{high:.2f}':>14} {same:>5}/{len(rs):<4} {sum(r[4] for r in rs):>15}")
    return identical_all


def serve_overhead(target: Path, prompts, params, repeats, direct) -> None:
    import openai
    home = tempfile.mkdtemp(prefix="draftlight-bench-serve-")
    log = Path(home) / "server.log"
    with log.open("w") as stderr:
        server = subprocess.Popen([sys.executable, "-P", "-m", "draftlight", "serve", "--port", "0",
                                   "--target", str(target), "--mode", "off"],
                                  stdout=subprocess.DEVNULL, stderr=stderr)
    try:
        deadline = time.monotonic() + 300
        while not (found := re.search(r"serving (\S+) at (http://\S+/v1)", log.read_text())):
            if server.poll() is not None or time.monotonic() > deadline:
                raise SystemExit(f"the server did not start:\n{log.read_text()}")
            time.sleep(0.1)
        model, url = found.groups()
        client = openai.OpenAI(base_url=url, api_key="none", max_retries=0, timeout=600)
        walls, inside, texts = _time_requests(client, url, model, prompts, params, repeats)
    finally:
        server.terminate()
        server.wait(60)
    _print_overhead(walls, inside, texts, direct)


def _time_requests(client, url: str, model: str, prompts, params, repeats):
    """(wall seconds per kind of request, the engine's own seconds per kind, the JSON answers'
    texts): each prompt asked `repeats` times as JSON, as a stream and as JSON through urllib."""
    # The openai client spends ~40 ms of its own on a JSON answer here (GET /v1/models takes
    # 44 ms through it, 1 ms with curl), so JSON is also timed with the standard library.
    walls: dict[str, list[float]] = {"json": [], "stream": [], "json-urllib": []}
    inside: dict[str, list[float]] = {kind: [] for kind in walls}  # the engine's own seconds
    texts: list[str] = []
    for _ in range(repeats):
        for kind in walls:  # each request follows another prompt, as in run_engine
            for prompt in prompts:
                request = dict(model=model, messages=[{"role": "user", "content": prompt}],
                               temperature=0, max_tokens=params.max_tokens)
                started = time.perf_counter()
                if kind == "json":
                    reply = client.chat.completions.create(**request)
                    texts.append(reply.choices[0].message.content)
                    seconds = reply.usage.model_extra["draftlight"]["seconds"]
                elif kind == "stream":
                    for chunk in client.chat.completions.create(**request, stream=True):
                        usage = chunk.usage or None
                    seconds = usage.model_extra["draftlight"]["seconds"]
                else:
                    seconds = _post(f"{url}/chat/completions", request)["usage"][
                        "draftlight"]["seconds"]
                walls[kind].append(time.perf_counter() - started)
                inside[kind].append(seconds)
    return walls, inside, texts


def _print_overhead(walls: dict[str, list[float]], inside: dict[str, list[float]],
                    texts: list[str], direct) -> None:
    plain_walls = [r[3] for r in direct]
    same = sum(a == b[0] for a, b in zip(texts, direct))
    print(f"\nserve, plain decoding, {len(texts)} requests per kind; {same}/{len(texts)} texts "
          f"identical to the engine's in-process ones")
    print("  overhead = client wall time / the engine's own time for the same request "
          "(Engine.generate, as `draftlight chat --json` runs it)")
    for kind, ws in walls.items():
        ratios = [w / e for w, e in zip(ws, inside[kind])]
        print(f"  {kind:<11}: {sum(ws):.2f} s wall, {sum(inside[kind]):.2f} s in the engine, "
              f"overhead {100 * (sum(ws) / sum(inside[kind]) - 1):+.2f}% "
              f"(median per request {100 * (statistics.median(ratios) - 1):+.2f}%)")
    print(f"  (the in-process runs took {sum(plain_walls):.2f} s: another moment on a machine "
          f"whose speed varies, so not the measure)")


def _post(url: str, body: dict) -> dict:
    import urllib.request
    request = urllib.request.Request(url, data=json.dumps(body).encode(),
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=600) as answer:
        return json.load(answer)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m draftlight.bench.prediction_speed", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--target", type=Path, help="target GGUF (default: the default model)")
    parser.add_argument("--questions", type=Path, default=DEFAULT_QUESTIONS)
    parser.add_argument("--max-tokens", type=int, default=128)
    parser.add_argument("--limit", type=int, help="first N code-editing questions")
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--serve", action="store_true", help="also measure serve's overhead")
    args = parser.parse_args(argv)

    from draftlight.engine.reply.generator import Engine
    from draftlight.engine.core.load_options import LoadOptions
    from draftlight.store.default_in_terminal import default_target_in_terminal

    prompts = [q["turns"][0] for q in load_questions(args.questions)
               if q["category"] == "code_editing" and code_of(q["turns"][0])][:args.limit]
    params = SamplingParams(temperature=0.0, max_tokens=args.max_tokens)
    target = default_target_in_terminal(args.target)
    engine = Engine.load(target, None, LoadOptions(n_ctx=4096))
    try:
        engine.prepare_auto()  # the cost curve serve's default (auto) mode has: prediction_tokens
        print(f"{Path(target).name}: {len(prompts)} code-editing prompts, {args.max_tokens} "
              f"tokens, greedy, x{args.repeats}; prediction length "
              f"{engine.prediction_tokens()} tokens")
        rows = run_engine(engine, prompts, params, args.repeats)
    finally:
        engine.close()
    identical = report_engine(rows, len(prompts))
    print(json.dumps({"identical": identical}))
    if args.serve:
        serve_overhead(Path(target), prompts, params, args.repeats, rows["plain"])
    return 0 if identical else 1


if __name__ == "__main__":
    sys.exit(main())
