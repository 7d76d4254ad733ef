"""Run every question in every mode, interleaved, in one process; collect per-turn results."""

from __future__ import annotations

import json
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from draftlight.bench.ceiling import ngram_oracle_cost
from draftlight.engine.step.drafters import NgramDrafter
from draftlight.engine.reply.events import Done, TextPiece
from draftlight.engine.reply.compare import explain_divergence
from draftlight.engine.reply.generator import Engine
from draftlight.engine.step.origins import Origin
from draftlight.modes import AUTO, DRAFT, NGRAM, OFF
from draftlight.bench.server_modes import is_server_mode
from draftlight.engine.reply.rollback_notes import rollback_note
from draftlight.engine.core.sampling import SamplingParams

BENCH_MODES = ("plain", "ngram", "draft", "auto", "lcp-pld")
# the engine's mode for each of the bench's own words ("plain" is the baseline row: off)
ENGINE_MODE = {"plain": OFF, "ngram": NGRAM, "draft": DRAFT, "auto": AUTO}
DEFAULT_QUESTIONS = Path(__file__).with_name("questions.jsonl")


@dataclass
class TurnResult:
    question_id: object
    category: str
    turn: int
    mode: str
    text: str
    tokens: list[int]
    new_tokens: int
    decode_seconds: float
    drafted: int = 0
    accepted: int = 0
    target_passes: int = 0
    identical_to_plain: bool | None = None
    divergence: str | None = None  # where a greedy run left plain decoding, and the logit gap
    oracle_passes: float | None = None  # plain rows: cost of the n-gram oracle (ceiling.py)
    repeat: int = 0  # which pass over the question set (--repeats)
    # accepted draft tokens by where they came from (ORIGIN_KINDS)
    origins: dict[str, int] = field(default_factory=dict)
    server_seconds: float = 0.0  # server modes: decoding time by the server's own clock
    probe_seconds: float = 0.0  # auto: what its probes of an idle draft model cost (Stats)


@dataclass
class RunLog:
    results: list[TurnResult] = field(default_factory=list)
    peak_rss_mb: dict[str, float] = field(default_factory=dict)
    greedy_identity: str = ""  # whether greedy speculation is exact on this target (invariance.py)
    target: str = ""  # llama.cpp's description of the target: architecture, size, weight type
    cost_curve: dict[int, float] = field(default_factory=dict)  # v(k) as auto corrected it
    draft_cost: float = 0.0  # a draft-model token's cost in target passes (0: not measured)
    # How the draft model drafts: "same vocabulary", or "cross-vocabulary: different
    # vocabularies: drafting through N shared tokens (X% …)" ("" without a draft model)
    draft_kind: str = ""
    # A recurrent target: what a rejected draft costs it (generator.rollback_note; "" for a KV
    # cache)
    rollback: str = ""
    # llama-server's pass times (ServerModes.time_passes): {"machines": [...], "split",
    # "local" or "remote": {k: ms}, and why a side was not timed}
    server_passes: dict = field(default_factory=dict)


def load_questions(path: Path) -> list[dict]:
    """Spec-Bench questions, one JSON object a line: {"question_id", "category", "turns"}, and
    optionally "attach": files (a path, or {"path", "name"}) put before the first turn under a
    header naming each, as the window attaches them. A path is taken from the questions file's
    folder, else from this package's (its documents/ category ships here)."""
    questions = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
            if not isinstance(row.get("turns"), list) or not row["turns"]:
                raise ValueError("needs a non-empty list 'turns'")
            if row.get("attach"):
                row["turns"] = [_with_files(row["attach"], row["turns"][0], path.parent)] + \
                    row["turns"][1:]
        except (ValueError, AttributeError, TypeError) as exc:
            raise ValueError(f"{path}:{number}: not a Spec-Bench question ({exc})") from exc
        row.setdefault("category", "uncategorised")
        row.setdefault("question_id", number)
        questions.append(row)
    return questions


def _with_files(attach: list, text: str, folder: Path) -> str:
    from dataclasses import replace

    from draftlight.store.attachments import AttachmentError, read_attachment, with_attachments
    files = []
    for entry in attach:
        where, name = ((entry, None) if isinstance(entry, str)
                       else (entry["path"], entry.get("name")))
        path = folder / where
        if not path.exists():
            path = Path(__file__).parent / where
        try:
            attachment = read_attachment(path)
        except AttachmentError as exc:
            raise ValueError(f"cannot attach {exc}") from None
        files.append(replace(attachment, name=name) if name else attachment)
    return with_attachments(text, files)


def first_of_each_category(questions: list[dict], limit: int) -> list[dict]:
    """The first `limit` questions of each category, in their order (bench --limit)."""
    kept, seen = [], {}
    for question in questions:
        seen[question["category"]] = seen.get(question["category"], 0) + 1
        if seen[question["category"]] <= limit:
            kept.append(question)
    return kept


def current_rss_mb() -> float:
    try:
        with open("/proc/self/statm") as handle:
            pages = int(handle.read().split()[1])
        import os
        return pages * os.sysconf("SC_PAGE_SIZE") / 2**20
    except (OSError, ValueError):
        import resource
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


# Where accepted drafts came from, as the report counts them (app/draftlight/engine/step/origins.py's kinds):
# copied from the user's messages or the template ("prompt"), from an earlier assistant
# message, from earlier in this reply, from a prediction, or guessed by a draft model.
ORIGIN_KINDS = ("prompt", "earlier reply", "this reply", "prediction", "model")


def origin_kind(origin: Origin | None, messages) -> str | None:
    if origin is None:
        return None
    if origin.kind == "message":
        return "earlier reply" if messages[origin.message]["role"] == "assistant" else "prompt"
    return {"template": "prompt", "reply": "this reply", "prediction": "prediction",
            "model": "model"}.get(origin.kind)


def run_engine_turn(engine: Engine, messages, params, mode: str, log: RunLog
                    ) -> tuple[Done, list[int], dict[str, int]]:
    """(Done, the reply's tokens, accepted draft tokens by ORIGIN_KINDS)."""
    done = None
    tokens = []
    origins: dict[str, int] = {}
    peak = log.peak_rss_mb.get(mode, 0.0)
    for event in engine.generate(messages, params, ENGINE_MODE[mode]):
        if isinstance(event, TextPiece) and event.token >= 0:
            tokens.append(event.token)
            if event.source == "draft" and (kind := origin_kind(event.origin, messages)):
                origins[kind] = origins.get(kind, 0) + 1
            if len(tokens) % 16 == 0:
                peak = max(peak, current_rss_mb())
        elif isinstance(event, Done):
            done = event
    log.peak_rss_mb[mode] = max(peak, current_rss_mb())
    return done, tokens, origins


def run_benchmark(engine: Engine, questions: list[dict], modes: list[str], params: SamplingParams,
                  peer=None, progress=None, repeats: int = 1, servers=None) -> RunLog:
    """Each turn of each question runs in every mode before the next turn (interleaved), so slow
    drifts of the machine hit every mode alike; the order of the modes rotates from question to
    question, because the first run after a new prompt decodes a few per cent slower (measured:
    65.0 vs 66.8 tok/s for the same mode first and fourth). Later turns follow plain decoding's
    answers in every mode, so each turn compares the modes on the same prompt. `repeats` runs
    the whole set that many times (the mode order shifted each time), for error bars.
    `servers` (server_modes.ServerModes) answers the "llama:…" and "remote" modes."""
    compatibility = getattr(engine, "compatibility", None)
    log = RunLog(draft_kind=("" if compatibility is None else compatibility.label
                             + (f": {compatibility.note}" if compatibility.note else "")),
                 greedy_identity=engine.drift.describe(),
                 target=getattr(engine.target, "description", ""),
                 rollback=rollback_note(engine.target))
    total = sum(len(q["turns"]) for q in questions) * len(modes) * repeats
    done_count = 0
    plain_turns: list[tuple[TurnResult, list[dict[str, str]]]] = []
    schedule = [(r, n, q) for r in range(repeats) for n, q in enumerate(questions)]
    for repeat, number, question in schedule:
        shift = (number + repeat) % len(modes)
        order = modes[shift:] + modes[:shift]
        history: list[dict[str, str]] = []
        for turn_index, user_text in enumerate(question["turns"]):
            messages = history + [{"role": "user", "content": user_text}]
            turn: dict[str, TurnResult] = {}
            for mode in order:
                turn[mode] = _run_one(engine, peer, messages, params, mode, log, question,
                                      turn_index, servers)
                turn[mode].repeat = repeat
                done_count += 1
                if progress:
                    progress(done_count, total, f"{question['category']} #{question['question_id']}"
                                                f" {mode}")
            plain = turn["plain"]
            plain_turns.append((plain, messages))
            history = messages + [{"role": "assistant", "content": plain.text}]
            for mode in modes:  # report rows in the order asked for
                log.results.append(_compared(engine, turn[mode], plain, messages, params))
        # lcp-pld and the server modes are compared on text (their tokens are not exposed)
        _mark_peer_identity(log, question, repeat)
    _price_the_oracle(engine, plain_turns)
    if engine.costs is not None:  # auto ran: its curve, as corrected by the run's passes
        curve = engine.prepare_auto().costs
        log.cost_curve = {k: round(curve(k), 2) for k in sorted(engine.costs.v)}
        log.draft_cost = round(engine.draft_cost, 3)
    return log


def _compared(engine: Engine, result: TurnResult, plain: TurnResult, messages,
              params: SamplingParams) -> TurnResult:
    """`result`, marked as the same tokens as plain decoding's or not (and, greedy, where it
    parted from them); the modes compared on text are marked by _mark_peer_identity."""
    if result.mode != "plain" and not compared_on_text(result.mode):
        result.identical_to_plain = result.tokens == plain.tokens
        if not result.identical_to_plain and params.greedy:
            divergence = explain_divergence(engine, messages, plain.tokens, result.tokens)
            result.divergence = divergence.describe() if divergence else "length"
    return result


def compared_on_text(mode: str) -> bool:
    return mode == "lcp-pld" or is_server_mode(mode)


def _run_one(engine, peer, messages, params, mode, log, question, turn_index,
             servers=None) -> TurnResult:
    base = dict(question_id=question["question_id"], category=question["category"],
                turn=turn_index, mode=mode)
    if is_server_mode(mode):
        done, _ = servers.run(mode, messages, params)
        stats = done.stats
        log.peak_rss_mb[mode] = max(log.peak_rss_mb.get(mode, 0.0), servers.rss_mb(mode))
        return TurnResult(**base, text=done.text, tokens=[], new_tokens=stats.new_tokens,
                          decode_seconds=stats.decode_seconds, drafted=stats.drafted,
                          accepted=stats.accepted, target_passes=stats.target_passes,
                          server_seconds=stats.verify_seconds)
    if mode == "lcp-pld":
        peak = log.peak_rss_mb.get(mode, 0.0)
        out = peer.run(messages, params.max_tokens, params.temperature, params.seed)
        log.peak_rss_mb[mode] = max(peak, current_rss_mb())
        return TurnResult(**base, text=out.text, tokens=[], new_tokens=max(out.new_tokens - 1, 0),
                          decode_seconds=out.decode_seconds)
    done, tokens, origins = run_engine_turn(engine, messages, params, mode, log)
    stats = done.stats
    return TurnResult(**base, text=done.text, tokens=tokens, new_tokens=stats.new_tokens,
                      decode_seconds=stats.decode_seconds, drafted=stats.drafted,
                      accepted=stats.accepted, target_passes=stats.target_passes,
                      origins=origins, probe_seconds=stats.probe_seconds)


def _price_the_oracle(engine: Engine, plain_turns) -> None:
    """Each plain answer's cost under the n-gram oracle (ceiling.py), with auto's cost curve as
    corrected by every pass of the run (real passes at real context lengths, which cost more
    than the load-time timing). Skipped when auto did not run: there is no curve then."""
    if engine.costs is None:
        return
    curve = engine.prepare_auto().costs
    config = engine.config
    for plain, messages in plain_turns:
        if plain.tokens:
            plain.oracle_passes = ngram_oracle_cost(
                engine.tokenize_chat(messages), plain.tokens, curve, config.auto_max_tokens,
                NgramDrafter(config.ngram_max, config.ngram_min))


def _mark_peer_identity(log: RunLog, question, repeat: int) -> None:
    rows = [r for r in log.results
            if r.question_id == question["question_id"] and r.repeat == repeat]
    plain = {r.turn: r.text for r in rows if r.mode == "plain"}
    for r in rows:
        if compared_on_text(r.mode) and r.turn in plain:
            r.identical_to_plain = r.text == plain[r.turn]


class ProgressBar:
    """One self-rewriting line on stderr."""

    def __init__(self, stream=None) -> None:
        self.stream = stream or sys.stderr  # looked up now: sys.stderr may have been replaced
        self.started = time.perf_counter()

    def __call__(self, done: int, total: int, label: str) -> None:
        width = 30
        filled = int(width * done / max(total, 1))
        elapsed = time.perf_counter() - self.started
        eta = elapsed / done * (total - done) if done else 0
        self.stream.write(f"\r[{'#' * filled}{'.' * (width - filled)}] {done}/{total} "
                          f"ETA {eta:4.0f}s  {label[:40]:<40}")
        if done == total:
            self.stream.write("\n")
        self.stream.flush()
