"""Which streamed tokens a vLLM server drafted, from its chunking and its per-request metrics.

The metrics are vLLM's "Per-Request Acceptance Metrics" (docs.vllm.ai/en/v0.32.0/features/
speculative_decoding/acceptance_metrics/, marked experimental there). A server started with
`--per-request-spec-decode-metrics summary|detailed` puts them, when the stream asked for usage
(`stream_options.include_usage`), on the final usage chunk (after the finishing chunk,
`choices: []`; vLLM's own test of it checks that this is the last chunk before [DONE]):

    "metrics": {"speculative_decoding": {
        "mean_acceptance_length": 1.23, "draft_acceptance_rate": 0.077,
        "acceptance_histogram": [39, 1, 0, 3], "acceptance_histogram_by_draft_length": {...},
        "num_spec_steps": 43, "num_accepted_draft_tokens": 10, "num_draft_tokens": 129,
        "num_spec_tokens": 3,
        "per_step_accepted": [...], "per_step_drafted": [...]}}     # these two: `detailed` only

one array entry per verification step, in order; steps that drafted nothing are left out.

With `stream_options.continuous_usage_stats` (and include_usage) every chunk carries
`usage.completion_tokens`, the tokens sent so far (vllm/entrypoints/openai/chat_completion/
serving.py, chat_completion_stream_generator: `previous_num_tokens[i] += len(output.token_ids)`),
so each chunk's token count is known. That generator sends one chunk per RequestOutput, and the
engine makes one per step of the request; a step emits its a accepted drafted tokens then the
target's own token (a + 1 tokens, in order). So a chunk of m tokens reads as m - 1 drafted tokens
and one of the target's, one pass. That holds only while chunks are steps: when the server gets
ahead of its HTTP side it merges the outputs of several steps (vllm/v1/engine/output_processor.py,
RequestOutputCollector), and `--stream-interval N` batches them on purpose. So the chunk sizes
are checked against `per_step_accepted` at the end of every reply (`chunks_as_steps`), and the
engine marks tokens as drafted only on a server whose previous reply passed that check
(reply_labels.py says why).

A reply that ends on a stop token or max_tokens loses the tokens of its last step after that
point, while the step's accepted count keeps them: a last chunk of m <= a tokens was all drafted.
"""

from __future__ import annotations

from dataclasses import dataclass, field

STREAM_OPTIONS = {"include_usage": True, "continuous_usage_stats": True}


@dataclass(frozen=True)
class SpecMetrics:
    """One reply's `metrics.speculative_decoding`."""

    drafted: int  # num_draft_tokens
    accepted: int  # num_accepted_draft_tokens
    steps: int  # num_spec_steps: verification steps that had a draft
    per_step_accepted: tuple[int, ...] | None = None  # with `detailed` only
    per_step_drafted: tuple[int, ...] | None = None

    @property
    def detailed(self) -> bool:
        return self.per_step_accepted is not None


def spec_metrics(chunk: dict) -> SpecMetrics | None:
    """The chunk's `metrics.speculative_decoding`, or None (absent, null, or not that shape).
    Per-step arrays that do not add up to the totals are dropped, as if `summary`."""
    found = (chunk.get("metrics") or {}).get("speculative_decoding")
    if not isinstance(found, dict):
        return None
    try:
        drafted = int(found["num_draft_tokens"])
        accepted = int(found["num_accepted_draft_tokens"])
        steps = int(found["num_spec_steps"])
    except (KeyError, TypeError, ValueError):
        return None
    per_accepted, per_drafted = found.get("per_step_accepted"), found.get("per_step_drafted")
    if not (_ints(per_accepted) and _ints(per_drafted) and len(per_accepted) == steps
            and len(per_drafted) == steps and sum(per_accepted) == accepted
            and sum(per_drafted) == drafted):
        return SpecMetrics(drafted, accepted, steps)
    return SpecMetrics(drafted, accepted, steps, tuple(per_accepted), tuple(per_drafted))


def _ints(values) -> bool:
    return isinstance(values, list) and all(isinstance(v, int) and v >= 0 for v in values)


@dataclass
class ChunkSteps:
    """The token count of each streamed chunk, from vLLM's running usage, and their labels."""

    marked: bool = False  # label a chunk as one step (draft..., target); else "unknown"
    sizes: list[int] = field(default_factory=list)  # tokens of each chunk that had any
    completion_tokens: int = 0  # usage.completion_tokens of the last chunk
    gaps: bool = False  # a chunk came without usage: its size is a guess

    def add(self, usage: dict | None) -> int:
        """Count the next chunk's tokens (0 for vLLM's first chunk, which only names the
        role). A chunk without usage counts as one token, and the sizes are no longer exact."""
        if not usage:
            self.gaps = True
            tokens = 1
        else:
            total = int(usage.get("completion_tokens") or 0)
            tokens = max(total - self.completion_tokens, 0)
            self.completion_tokens = max(total, self.completion_tokens)
        if tokens:
            self.sizes.append(tokens)
        return tokens

    def last_labels(self, *, cut: bool = False) -> list[tuple[str, int]]:
        """(source, pass index) of each token of the chunk counted last; `cut`: it is a last
        step that lost its tail to a stop, so every token of it was drafted."""
        step, tokens = len(self.sizes) - 1, self.sizes[-1]
        if not self.marked or self.gaps:
            return [("unknown", step)] * tokens
        if cut:
            return [("draft", step)] * tokens
        return [("draft", step)] * (tokens - 1) + [("target", step)]


def chunks_as_steps(sizes: list[int], accepted: tuple[int, ...]) -> str:
    """Whether chunks of these token counts can be vLLM's steps with these accepted counts:
    "whole" (each chunk one step), "cut" (so, and the last step lost tokens after a stop or
    max_tokens), or "no".

    A chunk of m > 1 tokens must be the next step of `accepted`, with m - 1 accepted. A
    one-token chunk is a step that drafted nothing (not in `accepted`) or one whose draft was
    all rejected (a 0 there); taking the 0 whenever one is next is never worse, because only
    one-token chunks can take it."""
    j = 0
    for i, size in enumerate(sizes):
        last = i == len(sizes) - 1
        if j < len(accepted) and last and j == len(accepted) - 1 and size <= accepted[j]:
            return "cut"  # size - 1 < accepted: the tokens after the stop were dropped
        if j < len(accepted) and accepted[j] == size - 1:
            j += 1
        elif size > 1:
            return "no"
    return "whole" if j == len(accepted) else "no"
