"""Which streamed tokens a llama-server drafted, rebuilt from the counters it streams.

With "timings_per_token": true every chunk carries the slot's running totals: predicted_n
(tokens generated so far), draft_n (tokens drafted so far; absent while 0) and draft_n_accepted.
In the vendored server (tools/server/server-context.cpp) one speculative pass goes:

    draft:   draft_n += len(draft)                       (before the target's pass)
    verify:  draft_n_accepted += a                       (a = drafted tokens the target kept)
    emit:    a drafted tokens, then the target's own token, one chunk each, back to back

so a chunk whose counters differ from the previous chunk's opens a pass: its first a tokens
(a = the rise of draft_n_accepted) were drafted, the next one is the target's. Tokens after that
with unchanged counters are plain one-token passes. A hybrid target that restores a checkpoint
re-runs the kept part of the draft ("replay") and emits the correction and the replay's bonus
token: both are the target's, and the rule above labels them so.

A chunk can carry several tokens (a character split over two tokens, text held back while it
might start a stop string): each gets its own label, and the text goes with the last of them, as
the in-process engine gives an incomplete character's text to the token that completes it.
Where the counters are missing (another OpenAI-compatible server) nothing can be said: tokens
are "unknown", never guessed.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class PassTracker:
    generated: int = 0  # predicted_n of the previous chunk
    drafted: int = 0  # draft_n of the previous chunk
    accepted: int = 0  # draft_n_accepted of the previous chunk
    passes: int = 0  # target passes opened so far
    drafted_left: int = 0  # tokens of the current pass still to come from its draft
    target_left: int = 0  # 1 while the current pass's own token is still to come
    known: bool = True  # False once a chunk came without counters

    def label(self, timings: dict | None) -> list[tuple[str, int]]:
        """(source, pass index) of each token of the next chunk with text, from its `timings`."""
        if not timings or "predicted_n" not in timings:
            self.known = False
            self.passes += 1
            return [("unknown", self.passes - 1)]
        generated = int(timings["predicted_n"])
        drafted = int(timings.get("draft_n", 0))
        accepted = int(timings.get("draft_n_accepted", 0))
        tokens = max(generated - self.generated, 1)
        if (drafted, accepted) != (self.drafted, self.accepted):
            self.passes += 1
            self.drafted_left, self.target_left = max(accepted - self.accepted, 0), 1
        self.generated, self.drafted, self.accepted = generated, drafted, accepted
        labels = []
        for _ in range(tokens):
            source = self._take()
            labels.append((source, self.passes - 1))
        return labels

    def _take(self) -> str:
        if self.drafted_left:
            self.drafted_left -= 1
            return "draft"
        if self.target_left:
            self.target_left = 0
            return "target"
        self.passes += 1  # a plain pass: one token, the target's
        return "target"
