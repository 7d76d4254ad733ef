"""Which tokens of one streamed server reply were drafted, from whatever the server says.

    labels = ReplyLabels(vllm_marked=False)
    for chunk in stream:
        for piece, tokens in labels.read(chunk):   # tokens: [(source, pass index), ...]
            ...
    for piece, tokens in labels.end():             # a piece held back until the metrics came
        ...
    vllm_marked = labels.settle(stats)             # counts and the footer's note

Three sources, in this order: llama-server's per-chunk counters (provenance.PassTracker); a
vLLM server's per-chunk token counts, read as engine steps and checked against its per-step
metrics at the end (vllm_metrics.py); else nothing, and every token is "unknown".

vLLM's metrics come after the last token, and a mark once shown cannot be taken back (the
window flashes it, `chat --json` has printed it). So a vLLM reply is marked from its chunks only
when the previous reply on this engine showed that the server's chunks are its steps
(`vllm_marked`); until then its tokens are "unknown" and only counted. A marked reply whose
chunks then fail the check says so in its footer, and the next reply is unmarked again.
"""

from __future__ import annotations

from typing import Iterator

from draftlight.engine.reply.events import Stats
from draftlight.engine.server.pass_tracker import PassTracker
from draftlight.engine.server.vllm_metrics import ChunkSteps, SpecMetrics, chunks_as_steps, spec_metrics

Labels = list[tuple[str, int]]  # (source, pass index) per token

UNKNOWN_NOTE = "this server does not say which tokens were drafted"
# What a vLLM reply's footer says when its drafted tokens are counted but not marked.
FIRST_VLLM_NOTE = ("drafted tokens counted from vLLM's metrics; its chunks matched its steps, "
                   "so they are marked from the next reply on")
SUMMARY_NOTE = ("vLLM sent summary metrics only: drafted tokens are counted, not marked "
                "(start it with --per-request-spec-decode-metrics detailed)")
MERGED_NOTE = ("vLLM's chunks were not one engine step each (a busy server, or "
               "--stream-interval): drafted tokens are counted, not marked")
NO_USAGE_NOTE = "vLLM sent no per-chunk token counts: drafted tokens are counted, not marked"
WRONG_MARKS = "this reply's drafted marks may be wrong: "


class ReplyLabels:
    def __init__(self, *, vllm_marked: bool = False) -> None:
        self.tracker = PassTracker()  # llama-server's counters, or "unknown" one token a chunk
        self.steps = ChunkSteps(marked=vllm_marked)  # vLLM: chunks counted from their usage
        self.per_chunk_usage: bool | None = None  # decided by the first chunk with a choice
        self.metrics: SpecMetrics | None = None
        # a marked reply's last chunk: labelled once the metrics say whether a stop cut its
        # step short
        self.held: str | None = None
        self.match = "no"  # chunks_as_steps' verdict, once the reply ended

    @property
    def passes(self) -> int:
        return self.tracker.passes + len(self.steps.sizes)

    def read(self, chunk: dict) -> Iterator[tuple[str, Labels]]:
        """(text, labels of its tokens) for each choice of `chunk` that brought tokens."""
        self.metrics = spec_metrics(chunk) or self.metrics
        for choice in chunk.get("choices") or []:
            piece = (choice.get("delta") or {}).get("content") or ""
            if self.per_chunk_usage is None:
                self.per_chunk_usage = bool(chunk.get("usage"))
            timings = chunk.get("timings")
            if (timings and "predicted_n" in timings) or not self.per_chunk_usage:
                if piece:
                    yield piece, self.tracker.label(timings)
                continue
            if not self.steps.add(chunk.get("usage")):
                continue
            if choice.get("finish_reason") and self.steps.marked:
                self.held = piece
                continue
            yield piece, self.steps.last_labels()

    def end(self) -> Iterator[tuple[str, Labels]]:
        """After the last chunk: check the chunks against vLLM's steps, and label the piece
        held back for that."""
        metrics, steps = self.metrics, self.steps
        if metrics and metrics.detailed and steps.sizes and not steps.gaps:
            self.match = chunks_as_steps(steps.sizes, metrics.per_step_accepted)
        if self.held is not None:
            yield self.held, steps.last_labels(cut=self.match == "cut")

    def settle(self, stats: Stats) -> bool:
        """Counts from vLLM's metrics and the footer's note into `stats`; whether the next
        reply may be marked from its chunks."""
        steps = self.steps
        if self.metrics is not None:
            _count_vllm(stats, self.metrics, steps, self.match)
        elif not self.tracker.known or steps.sizes:
            stats.engine_note = UNKNOWN_NOTE
        if steps.marked and steps.sizes and self.match == "no":  # marks were shown, unchecked
            stats.engine_note = WRONG_MARKS + stats.engine_note
        return self.match != "no"


def _count_vllm(stats: Stats, metrics: SpecMetrics, steps: ChunkSteps, match: str) -> None:
    """Stats from vLLM's metrics, and the footer's word on what could not be marked."""
    stats.draft_kind = "vLLM"
    stats.drafted, stats.accepted = metrics.drafted, metrics.accepted
    if match != "no":
        stats.target_passes = len(steps.sizes)  # each chunk was one engine step
        stats.engine_note = "" if steps.marked else FIRST_VLLM_NOTE
        return
    if steps.sizes and not steps.gaps:
        # each step sends its accepted drafts and one token of its own (a step cut by a stop
        # sends fewer, so this can be a pass short)
        stats.target_passes = max(stats.new_tokens - metrics.accepted, metrics.steps)
    if not metrics.detailed:
        stats.engine_note = SUMMARY_NOTE
    elif not steps.sizes or steps.gaps:
        stats.engine_note = NO_USAGE_NOTE
    else:
        stats.engine_note = MERGED_NOTE
