"""Which text a message asks to have changed, so that the unchanged part of it can flash in as
the reply's Predicted Output without the user knowing the Edit chip: a file attached to the
message and named in it, or a code block pasted into it, when the words around ask for a changed
version ("rename", "fix", "refactor"…). A reply that rewrites it copies most of it; a question
about it ("what does this do?") is left alone: there a prediction would only be checked and
thrown away."""

from __future__ import annotations

import re
from typing import Sequence

PASTED_CODE = "your pasted code"  # how the reply's footer, origins and diff name it
MIN_LINES = 3  # a shorter block is an example, not something to edit
# the words of a request for a changed version
CHANGE_WORDS = re.compile(
    r"\b(rename[sd]?|fix(es|ed)?|change|update|edit|refactor|rewrite|modify|add|remove|delete|"
    r"replace|convert|port|translate|clean ?up|simplify|optimi[sz]e|reformat|format|"
    r"implement|insert|extend|make it|make this|turn (it|this) into|apply)\b",
    re.IGNORECASE)
_FENCE = re.compile(r"^[ \t]*(`{3,}|~{3,})[^\n]*\n(.*?)^[ \t]*\1[ \t]*$",
                    re.MULTILINE | re.DOTALL)


def edit_target(message: str, attached: Sequence[tuple[str, str]] = ()
                ) -> tuple[str, str] | None:
    """(name, text) of what `message` (its own words, without the attached files' text) asks
    to change: an attached file it names, else its longest pasted code block; None where it
    asks for no changed version. `attached`: (name, text) of the files sent with it."""
    blocks = [match.group(2) for match in _FENCE.finditer(message)]
    words = _FENCE.sub(" ", message)
    if not CHANGE_WORDS.search(words):
        return None
    named = [(name, text) for name, text in attached
             if name and re.search(rf"(?<![\w.]){re.escape(name)}(?![\w])", words)]
    if len(named) == 1:
        return named[0]
    code = max(blocks, key=len, default="")
    if code.count("\n") >= MIN_LINES:
        return PASTED_CODE, code
    return None
