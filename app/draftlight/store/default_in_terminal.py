"""The default target for a terminal command: converted on first use with a progress bar on
stderr (draftlight.store.default_model does the work)."""

from __future__ import annotations

import sys
from pathlib import Path

from draftlight.store.progress_bars import ConvertBar
from draftlight.user_messages import note


def default_target_in_terminal(path: Path | None) -> Path:
    """The target a command was given, else the default model: converted on first use with a
    progress bar, or the shipped file with a note if that cannot be done."""
    from draftlight.store.default_model import DEFAULT_TYPE, default_target, needs_conversion
    # a terminal is told what the pause is; a log or a pipe only hears of a failure
    show = sys.stderr.isatty() and path is None and needs_conversion()
    if show:
        print(f"making the faster {DEFAULT_TYPE} copy of the bundled model (once)…",
              file=sys.stderr, flush=True)
    bar = ConvertBar(sys.stderr, DEFAULT_TYPE) if show else None

    def on_progress(progress) -> None:
        if progress.stage == "waiting":  # said in a pipe too: the pause is another program's
            note(f"waiting for the {DEFAULT_TYPE} copy of the bundled model that another "
                 "Draftlight is making"
                 + (f" ({progress.holder})" if progress.holder else ""))
        elif bar is not None:
            bar(progress)
    try:
        chosen = default_target(path, on_progress=on_progress)
    finally:
        if bar is not None:
            bar.finish()
    if chosen.note:
        note(chosen.note)
    return chosen.path
