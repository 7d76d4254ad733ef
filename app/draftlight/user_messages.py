"""What the terminal commands tell the user: errors they can fix, and notes.

A leaf module (it imports nothing of the app), so every subcommand can raise and print these
without importing the `draftlight` dispatcher that imports the subcommands.
"""

from __future__ import annotations

import re
import sys

# C0 controls but tab, DEL and C1 controls: what a terminal acts on (an escape clears it or sets
# its title) and a prompt splits on (a newline forges a header)
_CONTROL = re.compile("[\x00-\x08\x0a-\x1f\x7f-\x9f]")


def visible(text: str) -> str:
    """`text` with its control characters shown as escapes ("\\x1b", "\\n"), for a name that
    came from outside (a file, a folder, a model) on its way to a terminal or a prompt."""
    return _CONTROL.sub(lambda m: m.group().encode("unicode_escape").decode("ascii"), text)


class UserError(Exception):
    """A problem with what the user asked for; `draftlight` shows it as one line, exit 2."""


def note(message: str) -> None:
    """Something the user should know that does not stop the command: one line on stderr."""
    print(f"draftlight: note: {visible(message)}", file=sys.stderr)


def error_line(problem: object) -> str:
    """The one line an error is printed as, its control characters visible."""
    return f"draftlight: error: {visible(str(problem))}"
