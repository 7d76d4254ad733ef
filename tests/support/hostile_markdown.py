"""A corpus of hostile message texts (tests only): Markdown and HTML that Qt's importer and
layout took seconds to minutes over, on the GUI thread, before render_bounds.py and
long_words.py (the times in the comments: the issue's, or measured on a slow shared core).
tests/ui/flash/test_render_bounds.py renders each as a reply and as a user's message, streams
them and imports them; beside the GGUF, attachment and other-apps corpora."""

from __future__ import annotations

from dataclasses import dataclass


def table(rows: int, columns: int) -> str:
    row = "|" + "|".join(f"c{i}" for i in range(columns)) + "|"
    return "\n".join([row, "|" + "|---" * columns] + [row] * rows)


@dataclass(frozen=True)
class Case:
    name: str
    text: str
    plain: bool  # shown as plain text under a note (else as Markdown, within the bounds)


def cases() -> list[Case]:
    return [
        # Qt's HTML importer is quadratic in nesting (220 KB: 21 s); tags are text now
        Case("20,000 nested divs", "<div>" * 20_000 + "x" + "</div>" * 20_000, plain=False),
        Case("a 300 x 300 table", table(300, 300), plain=True),  # 45 s
        Case("a list 20,000 deep on one line", "- " * 20_000 + "x", plain=True),  # 15 s, 2 GB
        Case("quotes 20,000 deep", ">" * 20_000 + " x", plain=True),
        Case("quotes a level deeper each line", "\n".join("> " * i + "x" for i in range(200)),
             plain=True),
        Case("31,000 items in one list", "- x\n" * 31_000, plain=True),  # 77 s
        Case("1,000 lines of lists 31 deep", ("- " * 31 + "x\n") * 1_000, plain=True),  # 4 s
        Case("100 tables of 100 cells", "\n\n".join([table(24, 4)] * 100), plain=True),  # 3 s
        # 20,001 lines: past the bound on lines (100,000 such paragraphs took 3 s)
        Case("10,000 paragraphs", "x\n\n" * 10_000, plain=True),
        # a word is laid out again for each line it fills (a million characters: 44 s)
        Case("a word of a million characters", "ab" * 500_000, plain=True),
        Case("a word of 100,000 letters, each emphasised", "*a" * 50_000, plain=False),  # 4 s
        # a link's target is not shown, so its spaces are not either: one long word on screen
        Case("links that hide their spaces", "[aaaaaaaaaaaaaaaaaaaa](<x y>)" * 10_000,
             plain=False),  # 3.4 s
    ]
