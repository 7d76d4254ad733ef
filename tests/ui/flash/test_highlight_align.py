"""Highlights after Markdown: a run of the raw reply lights up exactly the rendered characters
that came from it (draftlight.ui.flash.markdown_render.align, through render_markdown).

Each expected range is found by the test itself: the rendered substrings that must be lit,
looked up in order in the document's plain text and counted in UTF-16 code units (QTextDocument
positions; an emoji counts 2).
"""

from __future__ import annotations

import pytest

pytest.importorskip("pytestqt")

from PySide6.QtGui import QColor, QTextDocument  # noqa: E402

from draftlight.ui.flash import highlight  # noqa: E402
from draftlight.ui.flash import markdown_render  # noqa: E402


@pytest.fixture(autouse=True)
def _app(qapp):
    return qapp  # fonts and the Markdown importer need a QGuiApplication


def run_over(raw: str, part: str, tokens: int = 3) -> list[int]:
    """The run [start, end, tokens] covering the first `part` of `raw`."""
    start = raw.index(part)
    return [start, start + len(part), tokens]


def lit_ranges(raw: str, runs: list[list[int]]) -> tuple[str, list[tuple[int, int]]]:
    """Render `raw` as the reply view does; the document's plain text and the (start, end)
    positions of each stretch of characters that carries one run's format."""
    doc = QTextDocument()
    markdown_render.render_markdown(doc, raw, runs, True, QColor("blue"))
    ranges: list[tuple[int, int]] = []
    block = doc.begin()
    while block.isValid():
        it = block.begin()
        while not it.atEnd():
            fragment = it.fragment()
            if fragment.charFormat().hasProperty(highlight.RUN_TOKENS):
                # Qt merges neighbours of one format: a fragment is a whole stretch of a run
                ranges.append((fragment.position(), fragment.position() + fragment.length()))
            it += 1
        block = block.next()
    return doc.toPlainText(), ranges


def units(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


def ranges_of(plain: str, *parts: str) -> list[tuple[int, int]]:
    """Document ranges of `parts`, each looked up in `plain` after the one before."""
    out, i = [], 0
    for part in parts:
        i = plain.index(part, i)
        out.append((units(plain[:i]), units(plain[:i + len(part)])))
        i += len(part)
    return out


def test_a_run_across_list_items_lights_their_text_not_the_markers():
    raw = "- alpha beta\n- gamma delta\n"
    plain, lit = lit_ranges(raw, [run_over(raw, "beta\n- gamma")])
    assert plain == "alpha beta\ngamma delta"  # the bullets are drawn, not text
    assert lit == ranges_of(plain, "beta", "gamma")


def test_the_number_of_an_ordered_item_is_not_taken_from_the_text():
    raw = "1. one 1\n2. two 2\n"
    plain, lit = lit_ranges(raw, [run_over(raw, "2. two")])
    assert plain == "one 1\ntwo 2"
    assert lit == ranges_of(plain, "two")


def test_a_links_hidden_target_is_skipped_and_the_words_after_it_still_match():
    raw = "See [the docs](https://docs.example/the) today, the end."
    plain, lit = lit_ranges(raw, [run_over(raw, "the docs"),
                                  run_over(raw, "](https://docs.example/the) to", 2),
                                  run_over(raw, "end", 1)])
    assert plain == "See the docs today, the end."
    # "docs" and " to" come from runs of different lengths, so they stay two ranges.
    assert lit == ranges_of(plain, "the docs", " to", "end")


def test_table_cells_are_lit_where_their_text_is():
    raw = "| name | pet |\n|---|---|\n| cat | dog |\n| ant | bee |\n"
    plain, lit = lit_ranges(raw, [run_over(raw, "cat | dog"), run_over(raw, "bee", 1)])
    assert lit == ranges_of(plain, "cat", "dog", "bee")


def test_a_backslash_escape_lights_the_character_it_shows():
    raw = r"2 \* 3 = 6 and \*stars\* stay"
    plain, lit = lit_ranges(raw, [run_over(raw, r"\*stars\*")])
    assert plain == "2 * 3 = 6 and *stars* stay"
    assert lit == ranges_of(plain, "*stars*")


def test_an_entity_lights_the_character_it_shows():
    raw = "salt &amp; pepper, 1 &lt; 2 and 3 < 4 &amp; so on"
    plain, lit = lit_ranges(raw, [run_over(raw, "&amp; pepper"), run_over(raw, "&lt; 2", 2),
                                  run_over(raw, "3 < 4", 1)])
    assert plain == "salt & pepper, 1 < 2 and 3 < 4 & so on"
    assert lit == ranges_of(plain, "& pepper", "< 2", "3 < 4")


def test_a_literal_less_than_sign_is_plain_text():
    raw = "if a < b then b > a"
    plain, lit = lit_ranges(raw, [run_over(raw, "< b then")])
    assert plain == raw
    assert lit == ranges_of(plain, "< b then")


def test_emoji_count_two_positions_before_and_inside_a_run():
    raw = "Nice 🎉 work 👍 done 🚀"
    plain, lit = lit_ranges(raw, [run_over(raw, "work 👍"), run_over(raw, "🚀", 1)])
    assert plain == raw
    assert lit == ranges_of(plain, "work 👍", "🚀")
    assert lit == [(8, 15), (21, 23)]  # counted by hand: 🎉 and 👍 are 2 units each


def test_emoji_in_bold_list_items_and_an_emoji_entity():
    raw = "- **🎉 party** now\n- 👍 &#x1F680; go\n"
    plain, lit = lit_ranges(raw, [run_over(raw, "🎉 party**"), run_over(raw, "&#x1F680; go", 1)])
    assert plain == "🎉 party now\n👍 🚀 go"
    assert lit == ranges_of(plain, "🎉 party", "🚀 go")


def test_characters_outside_every_run_stay_plain():
    raw = "**bold** and `code` and [link](https://x.example)"
    plain, lit = lit_ranges(raw, [run_over(raw, "and `code`")])
    assert plain == "bold and code and link"
    assert lit == ranges_of(plain, "and ", "code")  # code has its own font: two fragments


def test_an_entity_in_code_is_shown_and_lit_as_written():
    raw = "Write `a &lt; b` for a < b."
    plain, lit = lit_ranges(raw, [run_over(raw, "&lt; b`"), run_over(raw, "< b.", 1)])
    assert plain == "Write a &lt; b for a < b."
    assert lit == ranges_of(plain, "&lt; b", "< b.")
