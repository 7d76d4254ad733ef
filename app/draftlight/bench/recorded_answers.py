"""Greedy answers recorded with a model, for replay.py to replay without one.

`record` writes the plain greedy answer of every turn of the bench's questions (prompt and
answer tokens, later turns following plain's answers as in bench), then each token's word beside
them (recorded_words); `write_words_of` writes those words for answers recorded before, and
`load_records` reads the answers back. The command line is replay.py's (`record`, `words`).
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

from draftlight.bench.recorded_words import words_path, write_words
from draftlight.bench.runner import RunLog, run_engine_turn


def load_records(path: Path) -> list[dict]:
    """The turns `record` wrote; SystemExit with the reason for a file that is not one."""
    opener = gzip.open if path.suffix == ".gz" else open
    records = []
    try:
        with opener(path, "rt", encoding="utf-8") as handle:
            for number, line in enumerate(handle, 1):
                if not line.strip():
                    continue
                row = json.loads(line)
                if not (isinstance(row, dict) and isinstance(row.get("category"), str)
                        and isinstance(row.get("prompt"), list) and row["prompt"]
                        and isinstance(row.get("answer"), list)):
                    raise ValueError(f"line {number} is not a recorded turn (category, prompt, "
                                     "answer)")
                records.append(row)
    except (OSError, EOFError, UnicodeDecodeError, ValueError) as exc:
        raise SystemExit(f"{path}: cannot read recorded answers: {exc}") from None
    if not records:
        raise SystemExit(f"{path}: no recorded answers in it")
    return records


def record(target: Path | None, questions_path: Path, out: Path, max_tokens: int,
           limit: int | None) -> int:
    """Plain greedy answers of every turn (later turns follow plain's answers, as in bench),
    written as they come to `out`.partial, renamed to `out` when all are in."""
    from draftlight.bench.runner import (
        ProgressBar,
        first_of_each_category,
        load_questions,
    )
    from draftlight.engine.core.errors import EngineError
    from draftlight.engine.reply.generator import Engine
    from draftlight.engine.core.load_options import LoadOptions
    from draftlight.engine.core.sampling import SamplingParams
    from draftlight.store.default_in_terminal import default_target_in_terminal
    from draftlight.user_messages import UserError

    try:
        questions = load_questions(questions_path)
    except (OSError, ValueError) as exc:
        raise SystemExit(f"{questions_path}: {exc}") from None
    if limit:
        questions = first_of_each_category(questions, limit)
    params = SamplingParams(temperature=0.0, max_tokens=max_tokens, seed=0)
    partial = out.with_name(out.name + ".partial")
    try:
        handle = gzip.open(partial, "wt", encoding="utf-8")
    except OSError as exc:
        raise SystemExit(f"{out}: cannot write there: {exc}") from None
    try:
        with handle:
            try:
                engine = Engine.load(default_target_in_terminal(target), None,
                                     LoadOptions(n_ctx=4096))
            except (EngineError, UserError) as exc:
                raise SystemExit(str(exc)) from None
            try:
                written = _record_turns(engine, questions, params, handle, ProgressBar())
                handle.close()
                partial.replace(out)
                write_words(engine.target.piece, load_records(out), words_path(out))
            finally:
                engine.close()
    finally:
        partial.unlink(missing_ok=True)
    print(f"{written} turns written to {out}")
    return 0


def _record_turns(engine, questions, params, handle, progress) -> int:
    total, written = sum(len(q["turns"]) for q in questions), 0
    for question in questions:
        history: list[dict[str, str]] = []
        for turn, user_text in enumerate(question["turns"]):
            messages = history + [{"role": "user", "content": user_text}]
            prompt, _ = engine.fit_prompt(messages, engine.reserve(params))
            done, tokens, _ = run_engine_turn(engine, messages, params, "plain", RunLog())
            row = {"category": question["category"], "question_id": question["question_id"],
                   "turn": turn, "prompt": prompt, "answer": tokens}
            if not written:
                row["target"] = getattr(engine.target, "description", "")
            handle.write(json.dumps(row, separators=(",", ":")) + "\n")
            written += 1
            history = messages + [{"role": "assistant", "content": done.text}]
            progress(written, total, f"{question['category']} #{question['question_id']}")
    return written


def write_words_of(target: Path | None, paths: list[Path]) -> int:
    from draftlight.engine.core.errors import EngineError
    from draftlight.engine.llama.llama_backend import LlamaBackend
    from draftlight.engine.core.load_options import LoadOptions
    from draftlight.store.default_in_terminal import default_target_in_terminal
    from draftlight.user_messages import UserError

    try:
        backend = LlamaBackend(default_target_in_terminal(target), LoadOptions(n_ctx=512))
    except (EngineError, UserError) as exc:
        raise SystemExit(str(exc)) from None
    try:
        for path in paths:
            write_words(backend.piece, load_records(path), words_path(path))
            print(f"{words_path(path)} written")
    finally:
        backend.close()
    return 0
