"""When a target loads without a draft, the window offers the best draft model already on this
computer (its own or another app's, store.pairs): one that shares the target's vocabulary and
is small enough to pay. One click in the banner loads it; the target stays. Offered once per
target, from what the window's scan has read (no header is read on the GUI thread): when the
scan answers after the load, the offer comes then."""

from __future__ import annotations

from draftlight.store.pairs import drafts_for


def draft_offer(target_path: str, models: list, facts) -> tuple[str, str] | None:
    """(the banner's line, the draft's path) for the target at `target_path` (a file, or a found
    model's reference as Settings keep it) among `models`, from their `facts` as far as read;
    None when no model here drafts for it token for token."""
    target = next((m for m in models if target_path in (str(m.path), m.name)), None)
    if target is None:
        return None
    choices = [c for c in drafts_for(target, models, facts, read=False) if c.same_vocabulary]
    if not choices:
        return None
    draft = choices[0].draft
    share = draft.size / target.size
    return (f"{draft.name} can draft for {target.name}: it shares its vocabulary and is "
            f"{share:.0%} of its size.", str(draft.path))


def offer_draft(window) -> None:
    """On a MainWindow whose own target (not the default model) is loaded with no draft, on
    this computer's engine; at most once per target."""
    target = window.settings.target_path
    if (window.draft_name or not target or not window.models.runs_locally
            or not window.ready or window.draft_offered == target):
        return
    offer = draft_offer(target, window.model_scan.models, window.model_scan.facts)
    if offer is not None:
        window.draft_offered = target
        line, path = offer
        window.banner.show_message(line, "Use it", lambda: window.choose_draft(path))
