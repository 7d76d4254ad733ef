"""What `Engine.generate` yields: pieces of text that say where they came from, then one Done."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, replace
from typing import TYPE_CHECKING, Literal

from draftlight.modes import AUTO, OFF, Mode, ModeError

if TYPE_CHECKING:
    from draftlight.engine.step.origins import Origin
    from draftlight.engine.step.speculative import StepResult

# "unknown": a server that does not say which tokens were drafted (server/reply_labels.py)
Source = Literal["draft", "target", "unknown"]


# Stats.slower_note speaks only of replies at least this long (and drafting a fourth as many)
SLOWER_SAID_AFTER = 32

# What auto_note calls each Stats.copy_source
COPY_SOURCES = {"prediction": "the text it was given to edit or retry",
                "long message": "the attached or pasted text"}


@dataclass(frozen=True)
class TextPiece:
    """Text of one emitted token (may be "" while a UTF-8 character is incomplete).

    source: "draft" = a drafted token the target accepted; "target" = a token the target
    produced itself (the correction or bonus token of a pass, or plain decoding).
    step: index of the target pass that produced it; consecutive "draft" pieces with the same
    step form one accepted run.
    """

    text: str
    source: Source
    step: int
    token: int = -1  # the token id (-1 for text flushed at the end of a reply)
    # For "draft" pieces, where the drafted token came from (origins.Origin: a span of a
    # message, of the reply or of the prediction, the draft model, the template's markup);
    # None where unknown.
    origin: Origin | None = None


@dataclass
class Stats:
    """Figures of one reply. Times are wall-clock seconds."""

    new_tokens: int = 0  # tokens emitted (stop tokens excluded)
    target_passes: int = 0  # target forward passes after the prompt (one per step)
    drafted: int = 0  # tokens proposed by the drafter
    accepted: int = 0  # proposed tokens the target accepted
    prediction_drafted: int = 0  # of the drafted tokens, those from a Predicted Output
    prediction_accepted: int = 0  # of those, the ones the target accepted
    prompt_tokens: int = 0  # tokens in the rendered prompt
    reused_prompt_tokens: int = 0  # of those, found already in the KV cache
    prefill_seconds: float = 0.0  # evaluating the new part of the prompt
    # of those new prompt tokens, the ones read at llama.cpp's f16 speed (fast_prefill.py)
    prompt_read_fast: int = 0
    draft_seconds: float = 0.0  # drafter time (draft model passes, n-gram lookups)
    # auto: what its probes of an idle draft model cost (their drafting, and the extra token
    # in their passes): the price of exploring
    probe_seconds: float = 0.0
    verify_seconds: float = 0.0  # target passes over [last token + draft]
    seconds: float = 0.0  # whole call, prefill included
    mode: Mode = OFF  # written as its text by to_dict and the host's pipe
    # "cross-vocabulary" when the draft model has another vocabulary and drafts through text
    draft_kind: str = ""
    stop_reason: str = ""  # "eos", "max_tokens", "context_full", "cancelled"
    # Greedy speculation only: the largest change of a logit gap between batched and one-token
    # evaluation, measured at load (invariance.py). 0 = exactly plain decoding.
    batch_drift: float | None = None
    # A recurrent target: what a rejected draft costs it (llama_backend.LlamaBackend.rollback)
    rollback_note: str = ""
    # A server engine: what it could not tell (e.g. which tokens were drafted)
    engine_note: str = ""
    # Auto has timed a one-token target pass here: plain decoding's speed (0 = not measured)
    plain_token_seconds: float = 0.0
    # Auto: its passes that drafted nothing, by why (adaptive.WHY_NOT's keys), and what a pass
    # over 2 and over 8 tokens cost in one-token passes as the reply ended (v(2), v(8); 0 = not
    # known)
    undrafted: dict = field(default_factory=dict)
    pass_cost_2: float = 0.0
    pass_cost_8: float = 0.0
    # What the user gave the reply to copy from, where a reader would expect drafted colour:
    # "prediction" (a Predicted Output: an Edit chip's file, the answer a Regenerate replaces),
    # "long message" (an attached file or a paste), "" where nothing of the kind
    copy_source: str = ""
    # v(k), a target pass over k tokens in one-token passes, as this engine had it when the
    # reply ended (auto's, corrected by its passes, else the timed curve), by k written as text
    # (the history's JSON); {} where not known. The window's "This machine" view plots it.
    pass_costs: dict = field(default_factory=dict)
    # Passes that drafted nothing, and their time: plain decoding's pace in this very reply
    single_passes: int = 0
    single_pass_seconds: float = 0.0
    # Auto priced its passes by costs.PRIOR: this machine's curve was still being timed
    untimed: bool = False

    @classmethod
    def from_dict(cls, figures: dict) -> "Stats":
        """Stats from to_dict()'s form (as the history stores it); unknown keys are ignored,
        missing ones keep their defaults."""
        names = cls.__dataclass_fields__
        values = {k: v for k, v in figures.items() if k in names}
        try:  # a mode is text in a record; one no longer known reads as off
            values["mode"] = Mode.parse(str(values.get("mode") or OFF))
        except ModeError:
            values["mode"] = OFF
        return cls(**values)

    def after(self, earlier: "Stats") -> "Stats":
        """These figures as the end of a reply that `earlier` began (Continue): its counts and
        times add up; the rest (mode, why it stopped, the prompt) is this part's."""
        summed = ("new_tokens", "target_passes", "drafted", "accepted", "prediction_drafted",
                  "prediction_accepted", "prefill_seconds", "draft_seconds", "probe_seconds",
                  "verify_seconds", "seconds", "single_passes", "single_pass_seconds")
        return replace(self, **{name: getattr(earlier, name) + getattr(self, name)
                                for name in summed})

    def add_step(self, step: StepResult, why_nothing: str = "") -> None:
        """Count one speculative step: a target pass, what it drafted and kept, and its times
        (`why_nothing`: auto's reason, where it drafted nothing)."""
        if why_nothing and not step.drafted:
            self.undrafted[why_nothing] = self.undrafted.get(why_nothing, 0) + 1
        self.target_passes += 1
        if not step.drafted:
            self.single_passes += 1
            self.single_pass_seconds += step.verify_seconds
        self.drafted += step.drafted
        self.accepted += len(step.accepted)
        self.draft_seconds += step.draft_seconds
        self.verify_seconds += step.verify_seconds

    @property
    def identity_note(self) -> str:
        """What a reader of a greedy speculative reply must know about its exactness."""
        if not self.batch_drift:
            return ""
        return (f"greedy identity not guaranteed here: max logit difference "
                f"{self.batch_drift:.2g} between batched and one-token passes")

    @property
    def auto_note(self) -> str:
        """Why auto drafted little or nothing in this reply, where a reader would have expected
        colour, in measured terms ("" where it drafted enough, is not auto, or had nothing to
        copy and was given nothing to copy: plain decoding was then simply right). It tells
        apart copies found but dearer to check than to write (with the measured cost), a reply
        that did not repeat what it was given, and a machine still being timed."""
        if self.mode != AUTO or self.target_passes < 4 or self.accepted * 10 >= self.new_tokens:
            return ""
        found = self.undrafted.get("costly", 0) + self.undrafted.get("too-short", 0)
        copies = found * 10 >= self.target_passes  # a tenth of its passes had a guess
        if not copies and not self.copy_source:
            return ""
        said = ("Auto drafted nothing" if not self.drafted else
                f"Auto drafted little ({self.accepted} of {self.new_tokens} tokens)")
        if copies:  # the measured cost; none while auto prices by a prior, not this machine
            k, cost = (8, self.pass_cost_8) if self.pass_cost_8 else (2, self.pass_cost_2)
            measured = (f" (checking {k} tokens costs {cost:.1f}x one)"
                        if cost and not self.untimed else "")
            reason = ("it found text to copy, but checking it costs more than it saves on this "
                      f"machine{measured}")
            advice = " N-gram drafts it anyway, whatever it costs."
        else:
            reason = f"the reply did not repeat {COPY_SOURCES.get(self.copy_source, 'it')}"
            advice = ""
        untimed = (" It is still timing this machine's passes (once, in the background) and "
                   "until then drafts only copies it is nearly sure of." if self.untimed else "")
        return f"{said}: {reason}.{untimed}{advice}"

    @property
    def slower_note(self) -> str:
        """Why a reply that drafted ran slower than plain decoding would have here ("" where it
        did not, or plain's pace is not known). Compared: the time its passes and drafting took
        per token made, against a one-token pass (this reply's own passes that drafted nothing
        where it had a few: same context, same machine load; else auto's timed one), so that
        what every mode spends besides (sampling, text) counts on neither side. Under 0.95 of
        plain's pace only, in a reply of SLOWER_SAID_AFTER tokens or more that drafted at least
        a fourth as many: closer, shorter or barely drafting, it is a reply's noise (a 12-token
        answer with 2 drafted tokens read "slower" on a busy machine)."""
        if (self.mode == OFF or self.new_tokens < SLOWER_SAID_AFTER
                or self.drafted * 4 < SLOWER_SAID_AFTER):
            return ""
        if self.single_passes >= 3:
            one = self.single_pass_seconds / self.single_passes
        else:
            one = self.plain_token_seconds
        spent = (self.verify_seconds + self.draft_seconds) / self.new_tokens
        if not one or not spent or spent * 0.95 <= one:
            return ""
        return (f"Slower than plain decoding here (about {1 / spent:.1f} against {1 / one:.1f} "
                f"tokens a second of passes): {self.accepted} of {self.drafted} drafted tokens "
                f"were kept, {self.mean_accepted_length:.1f} tokens a pass, and on this machine "
                f"checking them cost more than they saved.")

    @property
    def acceptance_rate(self) -> float:
        return self.accepted / self.drafted if self.drafted else 0.0

    @property
    def mean_accepted_length(self) -> float:
        """Tokens made per target pass (1.0 for plain decoding): accepted drafts + 1. The end
        token counts: its pass made it, though the reply does not show it (without it a plain
        reply of 14 tokens read "0.93 tokens/pass")."""
        made = self.new_tokens + (self.stop_reason == "eos")
        return made / self.target_passes if self.target_passes else 0.0

    @property
    def decode_seconds(self) -> float:
        return max(self.seconds - self.prefill_seconds, 0.0)

    @property
    def other_seconds(self) -> float:
        """Sampling, detokenizing and bookkeeping: the part of decoding that is neither."""
        return max(self.decode_seconds - self.draft_seconds - self.verify_seconds, 0.0)

    @property
    def tokens_per_second(self) -> float:
        """New tokens over decoding time (prefill excluded, so modes compare fairly)."""
        return self.new_tokens / self.decode_seconds if self.decode_seconds > 0 else 0.0

    def to_dict(self) -> dict:
        """The figures as JSON's types (the history, the host's pipe, chat --json)."""
        out = asdict(self) | {"mode": str(self.mode)}
        for name in ("acceptance_rate", "mean_accepted_length", "tokens_per_second",
                     "other_seconds", "decode_seconds", "identity_note", "auto_note",
                     "slower_note"):
            out[name] = getattr(self, name)
        return out

    def summary(self) -> str:
        """One line for terminals and footers."""
        line = (f"{self.new_tokens} tokens, {self.tokens_per_second:.1f} tok/s, "
                f"{self.target_passes} target passes")
        if self.drafted:
            line += (f", accepted {self.accepted}/{self.drafted} "
                     f"({100 * self.acceptance_rate:.0f}%), "
                     f"{self.mean_accepted_length:.2f} tokens/pass")
        if self.prediction_drafted:
            line += (f", {self.prediction_accepted}/{self.prediction_drafted} drafted by the "
                     f"prediction")
        fast = f" ({self.prompt_read_fast} tokens fast)" if self.prompt_read_fast else ""
        line += (f" | {self.seconds:.2f} s: prefill {self.prefill_seconds:.2f}{fast}, "
                 f"draft {self.draft_seconds:.2f}, verify {self.verify_seconds:.2f}, "
                 f"other {self.other_seconds:.2f} [{self.mode}"
                 f"{', ' + self.draft_kind if self.draft_kind else ''}]")
        if self.slower_note:
            line += f" | {self.slower_note}"
        if self.identity_note:
            line += f" | {self.identity_note}"
        if self.rollback_note:
            line += f" | {self.rollback_note}"
        if self.engine_note:
            line += f" | {self.engine_note}"
        return line


@dataclass(frozen=True)
class Notice:
    """Something the user should be told (e.g. old turns dropped to fit the context)."""

    message: str


@dataclass(frozen=True)
class Progress:
    """Running statistics, after every target pass (for live displays)."""

    stats: Stats
    # Tokens drafted since the previous Progress, all in pass stats.target_passes - 1 (the
    # acceptance strip's cells): counted once, where the pass happened.
    pass_drafted: int = 0
    # Auto, where that pass drafted nothing: why (a key of adaptive.WHY_NOT)
    pass_why: str = ""


@dataclass(frozen=True)
class Reading:
    """How far the prompt's read has come (a long paste or file is minutes of it on a CPU),
    told while it is read through generate()'s `on_read`, between llama.cpp's batches."""

    read: int  # tokens of this read done
    total: int  # tokens it reads (the prompt less what the cache already held)
    seconds: float  # since it began

    @property
    def seconds_left(self) -> float | None:
        """At the pace so far; None before a first batch is done."""
        if self.read <= 0 or self.seconds <= 0:
            return None
        return self.seconds * (self.total - self.read) / self.read


@dataclass(frozen=True)
class Done:
    text: str
    stats: Stats = field(default_factory=Stats)


Event = TextPiece | Notice | Progress | Reading | Done
