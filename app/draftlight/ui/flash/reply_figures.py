"""What the window keeps about a finished reply, typed: the engine's Stats, the strip's passes,
each run's origin, what a Predicted Output was, what Compare found, and the model that wrote it.
No Qt here.

The history stores it as JSON in the reply's "stats" (`record()`: Stats.to_dict's keys and the
ones below), and `from_record` reads it back, leaving out what is damaged or of the wrong type.
That JSON is the only form in which these figures are a dict.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

from draftlight.engine.reply.events import Stats
from draftlight.ui.flash.run_origin import RunOrigin

Row = tuple[int, int, int, int]  # a pass: (end in the text, tokens, accepted, drafted)


@dataclass(frozen=True)
class Compared:
    """What Compare found for a reply: decoding speed against speculation off."""

    mode: str
    speedup: float
    low: float  # the rounds' interval
    high: float
    rounds: int = 1
    identical: bool = False
    inconclusive: str = ""  # why the figure is not to be trusted, if it is not

    @classmethod
    def of(cls, result) -> "Compared":
        """From a Comparison (engine/reply/compare.py), rounded as it is shown."""
        low, high = result.interval
        return cls(str(result.mode), round(result.speedup, 3), round(low, 3), round(high, 3),
                   len(result.plain_runs) or 1, bool(result.identical),
                   result.inconclusive or "")

    def record(self) -> dict:
        return {f.name: getattr(self, f.name) for f in fields(self)}

    @classmethod
    def from_record(cls, stored) -> "Compared | None":
        if not isinstance(stored, dict):
            return None
        try:
            speedup, low, high = (float(stored[k]) for k in ("speedup", "low", "high"))
            rounds = int(stored.get("rounds", 1))
        except (KeyError, TypeError, ValueError):
            return None
        inconclusive = stored.get("inconclusive")
        return cls(str(stored.get("mode", "")), speedup, low, high, rounds,
                   stored.get("identical") is True,
                   inconclusive if isinstance(inconclusive, str) else "")


@dataclass(frozen=True)
class ReplyFigures:
    stats: Stats
    passes: tuple[Row, ...] | None = None  # None: not recorded (a reply saved before the strip)
    passes_why: tuple[str, ...] = ()  # per pass, auto's reason it drafted nothing ("": it did)
    origins: tuple[RunOrigin | None, ...] | None = None  # per run; None: not recorded
    prediction_from: str = ""  # what the Predicted Output was ("greet.py", an earlier answer)
    prediction_file: bool = False  # whether that is a file being edited (a diff is offered)
    compared: Compared | None = None
    model: str = ""  # the target that wrote it, as its card names it ("": not kept)

    def record(self) -> dict:
        """The history's JSON of these figures."""
        out = self.stats.to_dict()
        if self.passes is not None:
            out["passes"] = [list(row) for row in self.passes]
            out["passes_why"] = list(self.passes_why)
        if self.origins is not None:
            out["origins"] = [o.record() if o else None for o in self.origins]
        if self.prediction_from:
            out["prediction_from"] = self.prediction_from
            if self.prediction_file:
                out["prediction_file"] = self.prediction_from
        if self.compared is not None:
            out["compared"] = self.compared.record()
        out.update(model_record(self.model) or {})
        return out

    @classmethod
    def from_record(cls, stored) -> "ReplyFigures | None":
        """A reply's stored figures (record()'s form, or an older reply's); None for what is not
        a reply's figures."""
        if not isinstance(stored, dict) or not any(f.name in stored for f in fields(Stats)):
            return None  # a user message's figures ({"attachments": ...}), or none at all
        stats = Stats.from_dict({f.name: stored[f.name] for f in fields(Stats)  # mode: parsed
                                 if f.name in stored and _fits(Stats(), f.name, stored[f.name])})
        table, why, origins = stored.get("passes"), stored.get("passes_why"), stored.get("origins")
        prediction_from = stored.get("prediction_from")
        return cls(stats,
                   passes=_rows(table),
                   passes_why=tuple(w if isinstance(w, str) else "" for w in why)
                   if isinstance(why, list) else (),
                   origins=tuple(RunOrigin.from_record(o) for o in origins)
                   if isinstance(origins, list) else None,
                   prediction_from=prediction_from if isinstance(prediction_from, str) else "",
                   prediction_file=isinstance(stored.get("prediction_file"), str),
                   compared=Compared.from_record(stored.get("compared")),
                   model=model_named(stored))

    def continued_by(self, later: "ReplyFigures") -> "ReplyFigures":
        """A continued reply's figures: both parts' counts and times added up (Stats.after), the
        later part's passes and origins (they include the earlier ones), and what the earlier
        part said of itself (what drafted it, its comparison) where the later one says nothing."""
        return ReplyFigures(later.stats.after(self.stats), later.passes, later.passes_why,
                            later.origins,
                            later.prediction_from or self.prediction_from,
                            later.prediction_file if later.prediction_from
                            else self.prediction_file,
                            later.compared or self.compared, later.model or self.model)


def model_record(model: str) -> dict | None:
    """The stored JSON of a reply that has no figures (yet): the model writing it, so that a
    reply kept while it streams, or one that failed, still names it; None without a name."""
    return {"model": model} if model else None


def model_named(stored) -> str:
    """The model a stored reply names ("" for a reply kept before replies named theirs)."""
    model = stored.get("model") if isinstance(stored, dict) else None
    return model if isinstance(model, str) else ""


def _fits(default: Stats, name: str, value) -> bool:
    """Whether a stored figure has its field's type (a count is no bool, a time may be an int)."""
    kind = type(getattr(default, name))
    if name == "mode":  # its text: Stats.from_dict parses it
        return isinstance(value, str)
    if name == "batch_drift" or kind is float:
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if kind is int:
        return isinstance(value, int) and not isinstance(value, bool)
    return isinstance(value, kind)


def _rows(table) -> tuple[Row, ...] | None:
    """A stored pass table, or None where it is not one (passes.from_table checks its ends
    against the text)."""
    if not isinstance(table, list):
        return None
    rows = []
    for row in table:
        if not (isinstance(row, list) and len(row) == 4
                and all(isinstance(v, int) and not isinstance(v, bool) for v in row)):
            return None
        rows.append(tuple(row))
    return tuple(rows)
