"""What the terminal commands tell the user: errors they can fix, and notes.

A leaf module (it imports nothing of the app), so every subcommand can raise and print these
without importing the `draftlight` dispatcher that imports the subcommands. Every line a
command prints goes through `visible` (`say`, `note`, `error_line` call it), a model's reply
through `visible_reply`: names, errors and replies are written by others.
"""

from __future__ import annotations

import json
import re
import sys

# The bidirectional controls: they reorder what a terminal or a prompt shows (U+202E makes
# "report\u202ecod.exe" read "reportexe.doc"): embeddings and overrides, isolates, the
# left-to-right, right-to-left and Arabic letter marks
_BIDI = "\u202a-\u202e\u2066-\u2069\u200e\u200f\u061c"
# C0 controls but tab, DEL and C1 controls: what a terminal acts on (ESC starts the sequences
# that write the clipboard (OSC 52), set the title or clear the screen; U+009B is CSI on many
# terminals) and a prompt splits on (a newline forges a header); and the bidi controls
_CONTROL = re.compile(f"[\x00-\x08\x0a-\x1f\x7f-\x9f{_BIDI}]")
# … less newline: a reply is many lines (tab is kept by both)
_REPLY_CONTROL = re.compile(f"[\x00-\x08\x0b-\x1f\x7f-\x9f{_BIDI}]")
# what json.dumps(ensure_ascii=False) leaves raw of those (it escapes C0 itself)
_JSON_RAW = re.compile(f"[\x7f-\x9f{_BIDI}]")


def _escaped(match: re.Match) -> str:
    return match.group().encode("unicode_escape").decode("ascii")


def visible(text: str) -> str:
    """`text` with its control and bidi characters shown as escapes ("\\x1b", "\\n",
    "\\u202e"), for a name that came from outside (a file, a folder, a model) on its way to a
    terminal or a prompt: one line, shown as it is stored, driving nothing."""
    return _CONTROL.sub(_escaped, text)


def visible_reply(text: str) -> str:
    """A model's reply for the terminal: its newlines and tabs kept, every other control and
    bidi character shown as an escape (visible), so a reply cannot write the clipboard, set the
    title, clear the screen or return the cursor over what it said."""
    return _REPLY_CONTROL.sub(_escaped, text)


def json_line(record: object) -> str:
    """`record` as one JSON line, its strings exactly as they are once parsed, with no control
    or bidi character raw in the line itself (JSON's \\u escapes for those json.dumps leaves)."""
    return _JSON_RAW.sub(lambda m: f"\\u{ord(m.group()):04x}",
                         json.dumps(record, ensure_ascii=False))


def say(line: str, *, file=None, flush: bool = False) -> None:
    """Print one line of a command's output (stdout unless `file`), visible."""
    print(visible(line), file=sys.stdout if file is None else file, flush=flush)


class UserError(Exception):
    """A problem with what the user asked for; `draftlight` shows it as one line, exit 2."""


def note(message: str) -> None:
    """Something the user should know that does not stop the command: one line on stderr."""
    print(f"draftlight: note: {visible(message)}", file=sys.stderr)


def error_line(problem: object) -> str:
    """The one line an error is printed as, its control characters visible."""
    return f"draftlight: error: {visible(str(problem))}"
