"""What the terminal commands tell the user: errors they can fix, and notes.

A leaf module (it imports nothing of the app), so every subcommand can raise and print these
without importing the `draftlight` dispatcher that imports the subcommands.
"""

from __future__ import annotations

import sys


class UserError(Exception):
    """A problem with what the user asked for; `draftlight` shows it as one line, exit 2."""


def note(message: str) -> None:
    """Something the user should know that does not stop the command: one line on stderr."""
    print(f"draftlight: note: {message}", file=sys.stderr)
