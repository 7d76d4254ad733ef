"""When a target loads without a draft, the window offers the best draft model already on this
computer (its own or another app's, store.pairs): one that shares the target's vocabulary and
is small enough to pay. One click in the banner loads it; the target stays."""

from __future__ import annotations

from draftlight.settings import added_model_folders
from draftlight.store.found_models import every_model
from draftlight.store.pairs import drafts_for


def draft_offer(target_path: str) -> tuple[str, str] | None:
    """(the banner's line, the draft's path) for the target at `target_path`; None when no
    model here drafts for it token for token."""
    models = [m for m in every_model(added_model_folders()) if m.exists]
    target = next((m for m in models if str(m.path) == target_path), None)
    if target is None:
        return None
    choices = [c for c in drafts_for(target, models, {}) if c.same_vocabulary]
    if not choices:
        return None
    draft = choices[0].draft
    share = draft.size / target.size
    return (f"{draft.name} can draft for {target.name}: it shares its vocabulary and is "
            f"{share:.0%} of its size.", str(draft.path))


def offer_draft(window) -> None:
    """On a MainWindow whose own target (not the default model) loaded with no draft, on this
    computer's engine."""
    if (window.draft_name or not window.settings.target_path
            or not window.models.runs_locally):
        return
    try:
        offer = draft_offer(window.settings.target_path)
    except OSError:  # a folder went away while it was read: no offer, nothing else
        return
    if offer is not None:
        line, path = offer
        window.banner.show_message(line, "Use it", lambda: window.choose_draft(path))
