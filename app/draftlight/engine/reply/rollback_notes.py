"""What the user is told about a recurrent model's rollbacks (llama_backend.LlamaBackend.rollback):
the reply footer's note, and the notice before a rollback that re-reads the conversation."""

from __future__ import annotations

from draftlight.engine.core.backend import LanguageModel, common_prefix_length

ROLLBACK_NOTES = {
    "checkpoint": "recurrent: rejected drafts cost a re-decode",
    "native": "recurrent: rejected drafts roll back through llama.cpp's state snapshots",
}


def rollback_note(model: LanguageModel) -> str:
    """What the footer says of a recurrent target's rollbacks ("" for a KV cache)."""
    return ROLLBACK_NOTES.get(getattr(model, "rollback", "cut"), "")


def rereading_notice(model: LanguageModel, context: list[int]) -> str:
    """Said before the cache is synced when that means evaluating again, for more than a
    second, tokens it already held: a recurrent model cannot step back past its latest
    checkpoint (Regenerate, an edited message, another conversation)."""
    if not hasattr(model, "rewind_seconds"):
        return ""
    keep = common_prefix_length(model.tokens, context)
    tokens, seconds = model.rewind_tokens(keep), model.rewind_seconds(keep)
    # No long pass timed yet: say it when it is many tokens.
    slow = tokens > 256 if seconds is None else seconds > 1.0
    if not slow:
        return ""
    return (f"Reading the conversation again ({tokens:,} tokens): this model's recurrent "
            f"state cannot step back to where it changed.")
