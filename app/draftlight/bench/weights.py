"""Which weight type of a model speculates best and keeps its answers: the evidence behind the
default model (docs/weights.md).

    python -m draftlight.bench.weights [--source PATH] [--types Q4_1,Q4_0,…] [--tokens 128] [--out DIR]

Each type is made from the source file with draftlight.store.convert, then measured in this process
one after another: file size, one-token time and v(k) (draftlight.engine.auto.costs.measure), whether
batched logits equal one-token ones (draftlight.engine.auto.invariance), and quality against the source:
the source's greedy reply to each first turn of app/draftlight/bench/questions.jsonl is evaluated
teacher-forced by both files, giving top-1 agreement (the share of positions where both
files' greedy choice is the same) and the mean KL divergence KL(source || type) of the
next-token distributions; then each type answers greedily itself and the share of replies
identical to the source's is counted. Times are noisy here: compare within one run.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

from draftlight import paths
from draftlight.bench.runner import DEFAULT_QUESTIONS
from draftlight.bench.runner import load_questions
from draftlight.engine.text.chat_template import ChatTemplate
from draftlight.engine.auto.costs import measure
from draftlight.engine.reply.generator import PROBE_TEXT
from draftlight.engine.auto.invariance import measure_drift
from draftlight.store.convert import convert

DEFAULT_TYPES = ("Q4_1", "Q4_0", "IQ4_NL", "Q4_K_M", "Q5_0", "Q8_0")
V_POINTS = (2, 4, 8, 16)


def main(argv: list[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    source = args.source or paths.bundled_model_path()
    if source is None:
        parser.error("the bundled model is not installed; pass --source")
    args.out.mkdir(parents=True, exist_ok=True)
    questions = load_questions(DEFAULT_QUESTIONS)
    if args.prompts:
        questions = questions[:args.prompts]
    files = _converted(source, args.types.split(","), args.out)

    from draftlight.engine.llama.llama_backend import LlamaBackend
    if args.speed_only:
        print(_table_speed(_interleaved_speed(files, args.speed_only)))
        return 0
    corpus = "\n\n".join(turn for q in questions for turn in q["turns"])
    if args.perplexity_only:
        _print_perplexities(files, corpus)
        return 0
    with LlamaBackend(source) as reference:
        prompts = [_prompt_tokens(reference, q["turns"][0]) for q in questions]
        replies = [_greedy(reference, p, args.tokens) for p in prompts]  # what it says
        reference_rows = [_teacher_forced(reference, p, r) for p, r in zip(prompts, replies)]
    results = []
    for type_name, path in files.items():
        result = _measure_type(type_name, path, prompts, replies, reference_rows, corpus,
                               tokens=args.tokens, free_run=not args.no_free_run)
        results.append(result)
        print(json.dumps(result), flush=True)
    report = {"source": str(source), "tokens": args.tokens, "prompts": len(prompts),
              "date": time.strftime("%Y-%m-%d"), "results": results}
    (args.out / "weights.json").write_text(json.dumps(report, indent=1))
    print(_table(results))
    return 0


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m draftlight.bench.weights", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--source", type=Path, help="GGUF to convert (default: the bundled model)")
    parser.add_argument("--types", default=",".join(DEFAULT_TYPES))
    parser.add_argument("--tokens", type=int, default=128, help="greedy reply length")
    parser.add_argument("--prompts", type=int, default=0, help="use the first N prompts (0: all)")
    parser.add_argument("--out", type=Path, default=Path("bench-weights"))
    parser.add_argument("--speed-only", type=int, metavar="ROUNDS", default=0,
                        help="only time the types, all loaded at once, taking turns for ROUNDS "
                             "rounds (fair under a changing machine load)")
    parser.add_argument("--no-free-run", action="store_true",
                        help="skip the free-running greedy replies (the slow part)")
    parser.add_argument("--perplexity-only", action="store_true",
                        help="only each type's perplexity on the prompts' own text")
    return parser


def _converted(source: Path, types: list[str], out: Path) -> dict[str, Path]:
    """Each weight type's file under `out`, converted from `source` unless already there."""
    files = {}
    for type_name in types:
        dest = out / f"{source.stem.rsplit('.', 1)[0]}.{type_name}.gguf"
        if not dest.exists():
            convert(source, dest, type_name)
        files[type_name] = dest
    return files


def _print_perplexities(files: dict[str, Path], corpus: str) -> None:
    from draftlight.engine.llama.llama_backend import LlamaBackend
    for type_name, path in files.items():
        with LlamaBackend(path) as model:
            value = _perplexity(model, model.tokenize(corpus, add_bos=model.add_bos))
        print(json.dumps({"type": type_name, "perplexity": round(value, 3)}), flush=True)


def _measure_type(type_name: str, path: Path, prompts, replies, reference_rows, corpus: str, *,
                  tokens: int, free_run: bool) -> dict:
    """One weight type's row: size, speed, batch drift and quality against the source's
    replies (teacher-forced agreement and KL, perplexity, and identical free-run replies)."""
    from draftlight.engine.llama.llama_backend import LlamaBackend
    with LlamaBackend(path) as model:
        probe = model.tokenize(PROBE_TEXT * 8, add_bos=False)
        costs = measure(model, probe)
        drift = measure_drift(model, probe)
        agree, kl, n = 0, 0.0, 0
        for prompt, reply, ref in zip(prompts, replies, reference_rows):
            rows = _teacher_forced(model, prompt, reply)
            agree += int((rows.argmax(1) == ref.argmax(1)).sum())
            kl += float(_kl(ref, rows).sum())
            n += len(reply)
        perplexity = _perplexity(model, model.tokenize(corpus, add_bos=model.add_bos))
        identical = None if not free_run else sum(
            _greedy(model, p, tokens) == r for p, r in zip(prompts, replies))
    return {
        "type": type_name, "megabytes": round(path.stat().st_size / 1e6, 1),
        "token_ms": round(costs.token_seconds * 1000, 2),
        "v": {k: round(costs(k), 2) for k in V_POINTS},
        "best_k_per_v": round(max(k / costs(k) for k in costs.v), 2),
        "batch_exact": drift.exact, "drift": round(drift.gap_change, 3),
        "top1_agreement": round(agree / n, 4), "mean_kl": round(kl / n, 5),
        "identical_replies": "-" if identical is None else f"{identical}/{len(prompts)}",
        "perplexity": round(perplexity, 3),
    }


def _interleaved_speed(files: dict[str, Path], rounds: int) -> dict[str, dict]:
    """Median over rounds of each type's one-token time and v(k), every type timed once per
    round, in turn: a burst of load elsewhere slows one round of every type, not one type.
    One model is loaded at a time: idle llama.cpp contexts keep threads that compete with the
    one being timed."""
    from draftlight.engine.llama.llama_backend import LlamaBackend
    samples: dict[str, list] = {t: [] for t in files}
    for _ in range(rounds):
        for type_name, path in files.items():
            with LlamaBackend(path) as model:
                samples[type_name].append(measure(model, model.tokenize(PROBE_TEXT * 8,
                                                                        add_bos=False)))
    result = {}
    for type_name, curves in samples.items():
        result[type_name] = {
            "token_ms": round(1000 * float(np.median([c.token_seconds for c in curves])), 2),
            "v": {k: round(float(np.median([c(k) for c in curves])), 2) for k in V_POINTS},
        }
        print(json.dumps({"type": type_name, **result[type_name]}), flush=True)
    return result


def _table_speed(speeds: dict[str, dict]) -> str:
    base = next(iter(speeds.values()))["token_ms"]
    lines = ["| weights | one token | vs first | " + " | ".join(f"v({k})" for k in V_POINTS)
             + " |", "|---|---|---|" + "---|" * len(V_POINTS)]
    for type_name, s in speeds.items():
        lines.append(f"| {type_name} | {s['token_ms']} ms | {base / s['token_ms']:.2f}x | "
                     + " | ".join(str(s["v"][k]) for k in V_POINTS) + " |")
    return "\n".join(lines)


def _prompt_tokens(model, question: str) -> list[int]:
    meta = model.metadata()
    template = ChatTemplate(meta.get("tokenizer.chat_template"))
    text = template.render([{"role": "user", "content": question}])
    return model.tokenize(text, add_bos=model.add_bos)


def _greedy(model, prompt: list[int], tokens: int) -> list[int]:
    model.truncate(0)
    logits = model.eval(prompt)[-1]
    reply = []
    for _ in range(tokens):
        token = int(np.argmax(logits))
        if model.is_end_of_generation(token):
            break
        reply.append(token)
        logits = model.eval([token])[-1]
    return reply


def _teacher_forced(model, prompt: list[int], reply: list[int]) -> np.ndarray:
    """Next-token logits at each reply position, from one batched pass over prompt + reply."""
    model.truncate(0)
    model.eval(prompt[:-1], n_logits=0)
    return model.eval([prompt[-1], *reply[:-1]], n_logits=len(reply)).astype(np.float64)


def _perplexity(model, tokens: list[int], window: int = 512) -> float:
    """exp(mean negative log-likelihood) of `tokens`, in independent windows of `window`."""
    nll, n = 0.0, 0
    for start in range(0, len(tokens) - 1, window):
        chunk = tokens[start:start + window + 1]
        if len(chunk) < 2:
            break
        model.truncate(0)
        logits = model.eval(chunk[:-1], n_logits=len(chunk) - 1).astype(np.float64)
        log_z = np.logaddexp.reduce(logits, axis=1)
        nll += float((log_z - logits[np.arange(len(chunk) - 1), chunk[1:]]).sum())
        n += len(chunk) - 1
    return float(np.exp(nll / n))


def _kl(p_logits: np.ndarray, q_logits: np.ndarray) -> np.ndarray:
    """KL(p || q) per row, from logits."""
    log_p = p_logits - np.logaddexp.reduce(p_logits, axis=1, keepdims=True)
    log_q = q_logits - np.logaddexp.reduce(q_logits, axis=1, keepdims=True)
    return (np.exp(log_p) * (log_p - log_q)).sum(axis=1)


def _table(results: list[dict]) -> str:
    head = ("| weights | MB | one token | " + " | ".join(f"v({k})" for k in V_POINTS)
            + " | best k/v(k) | batched = one-token | top-1 agreement | mean KL "
            "| identical replies | perplexity |")
    lines = [head, "|" + "---|" * (head.count("|") - 1)]
    for r in results:
        lines.append(f"| {r['type']} | {r['megabytes']} | {r['token_ms']} ms | "
                     + " | ".join(str(r["v"][k]) for k in V_POINTS)
                     + f" | {r['best_k_per_v']} | {'yes' if r['batch_exact'] else 'no'} | "
                     f"{r['top1_agreement']:.1%} | {r['mean_kl']} | {r['identical_replies']} | "
                     f"{r['perplexity']} |")
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
