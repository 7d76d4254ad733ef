"""The words and numbers shown for a reply's statistics (live line and per-reply footer), and the
names of the speculation modes."""

from __future__ import annotations

from app.engine.server.engine import LLAMA_PREFIX, REMOTE_MODE

LABELS = {"off": "Off", "draft": "Draft model", "ngram": "N-gram", "auto": "Auto",
          LLAMA_PREFIX + "none": "Off (llama-server)", REMOTE_MODE: "The server's own",
          LLAMA_PREFIX + "draft-mtp": "MTP (built into the model)"}


def mode_label(mode: str) -> str:
    """A speculation mode as the window names it (a mode without a label gets its own name;
    llama-server's are its --spec-type names)."""
    if mode not in LABELS and mode.startswith(LLAMA_PREFIX):
        return "llama.cpp " + mode[len(LLAMA_PREFIX):]
    return LABELS.get(mode, mode.replace("_", " ").capitalize() if mode else "")


def live_line(stats: dict | None, tokens: int, passes: int, accepted: int,
              seconds: float) -> str:
    """While a reply streams. `stats` is the engine's live snapshot (Stats.to_dict()) when it
    gives one; otherwise the figures come from the pieces seen so far."""
    if stats:
        return footer_line(stats, live=True)
    rate = tokens / seconds if seconds > 0 else 0.0
    per_pass = tokens / passes if passes else 0.0
    return (f"{tokens} tokens · {rate:.1f} tok/s · {accepted} accepted from drafts · "
            f"{per_pass:.2f} tokens/pass")


def footer_line(stats: dict, live: bool = False) -> str:
    parts = [f"{stats.get('new_tokens', 0)} tokens",
             f"{stats.get('tokens_per_second', 0.0):.1f} tok/s"]
    drafted = stats.get("drafted", 0)
    if drafted:
        parts.append(f"accepted {stats.get('accepted', 0)}/{drafted} "
                     f"({100 * stats.get('acceptance_rate', 0.0):.0f}%)")
    else:
        parts.append("nothing drafted")
    parts.append(f"{stats.get('mean_accepted_length', 0.0):.2f} tokens/pass")
    parts.append(f"draft {stats.get('draft_seconds', 0.0):.2f} s / "
                 f"verify {stats.get('verify_seconds', 0.0):.2f} s")
    if not live:
        mode = mode_label(stats.get("mode", ""))
        if stats.get("draft_kind"):  # "cross-vocabulary": the draft model drafts through text
            mode += f" ({stats['draft_kind']})"
        parts.append(mode)
        if stats.get("stop_reason") in ("max_tokens", "context_full"):
            parts.append("stopped: " + stats["stop_reason"].replace("_", " "))
        if stats.get("identity_note"):
            parts.append(stats["identity_note"])
        if stats.get("rollback_note"):  # a recurrent target: what a rejected draft costs
            parts.append(stats["rollback_note"])
        if stats.get("engine_note"):  # a server engine: what it could not tell
            parts.append(stats["engine_note"])
    return " · ".join(parts)
