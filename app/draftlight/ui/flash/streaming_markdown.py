"""A reply while it streams, rendered as Markdown without jumps: its complete blocks as
Markdown, re-rendered when one more is complete (at most RERENDER_SHARE of the GUI thread's
time, a timer catching up when it is too soon), and the block being written as plain text with
its draft runs highlighted (cheap to append), or, where it is fenced code whose closing fence
has not come, as the code block it will be (open_code.py); once finished, the whole reply. Text
above the block being written never moves, so nothing jumps at the end; see
draftlight.ui.flash.markdown_render. StreamingMarkdown holds that state and where each run lies
in the tail; MessageView extends it."""

from __future__ import annotations

import math
import time

from PySide6.QtCore import QTimer
from PySide6.QtGui import QPalette

from draftlight.ui.flash import highlight, markdown_render, open_code

# Re-rendering the complete blocks costs time on the GUI thread (setMarkdown, then aligning the
# highlights): at most this share of it, however long the reply grows.
RERENDER_SHARE = 0.1


class StreamingMarkdown:
    """The streaming half of MessageView (which sets text, runs, highlights, scheme, document,
    flash, _spans, _shown and code_blocks)."""

    def _init_streaming(self) -> None:
        # While streaming: text[:_md_end] is rendered as Markdown (its runs' spans in
        # _md_spans), the rest is plain text from document position _tail_at on.
        self._md_end = 0
        self._tail_at = 0
        self._md_spans: dict[int, list[tuple[int, int]]] = {}
        # A fenced code block open in the tail: (its fence line's start and its code's start in
        # the text, where its code starts in the document); None: the tail is all plain text.
        self._code: tuple[int, int, int] | None = None
        self._next_render = 0.0  # perf_counter time before which no re-render starts
        self._render_later = QTimer(self, singleShot=True)
        self._render_later.timeout.connect(self._catch_up)

    def stream_update(self, text: str, runs: list[list[int]], flash: bool = True) -> None:
        """Show what arrived since the last call (called at most ~30 times a second);
        `flash=False`: its runs do not flash (a reply written before, being continued)."""
        self.text, self.runs = text, runs
        offset = self._shown
        arrived = []
        for index in range(len(runs) - 1, -1, -1):
            if runs[index][1] <= offset:
                break
            arrived.append(index)
            self._spans.pop(index, None)
        if self._may_render_blocks():
            self._render_streaming(markdown_render.complete_blocks_end(text, self._md_end))
            self.flash.repaint()
        else:
            self._append_tail(offset)
            # A run that began before `offset` may have grown: its colour depends on its length.
            for index in arrived:
                if runs[index][0] < offset:
                    highlight.format_spans(self.document, self.run_spans(index),
                                           runs[index][2], self.highlights, self.scheme)
        self._shown = len(text)
        if self.highlights and flash:
            self.flash.start(arrived)

    def _append_tail(self, offset: int) -> None:
        """text[offset:] at the end of the document: into the open code block, if one is."""
        if self._code is None:
            highlight.append_plain(self.document, self.text, offset, self.runs, self.highlights,
                                   self.scheme, markdown_render.LINE_BREAK)
            return
        open_code.append_code(self.document, self.text, offset, self.runs, self.highlights,
                              self.scheme)
        self.code_blocks[-1] = self.text[self._code[1]:].rstrip("\n")  # its Copy code, so far

    def _may_render_blocks(self) -> bool:
        """Whether one more block is complete, or a code block opened, and re-rendering now keeps
        within RERENDER_SHARE; if it is too soon, a timer catches up (the last blocks must not
        wait for the end)."""
        if (markdown_render.complete_blocks_end(self.text, self._md_end) <= self._md_end
                and (self._code is not None
                     or open_code.open_fence(self.text, self._md_end) is None)):
            return False
        wait = self._next_render - time.perf_counter()
        if wait <= 0:
            return True
        if not self._render_later.isActive():
            self._render_later.start(math.ceil(wait * 1000))
        return False

    def _catch_up(self) -> None:
        if self.streaming and self._may_render_blocks():
            self._render_streaming(markdown_render.complete_blocks_end(self.text, self._md_end))
            self.flash.repaint()

    def _render_markdown(self, doc, text: str, spans_by_run: dict) -> None:
        """Render `text` as Markdown into `doc`, recording where each run's spans landed."""
        spans: list[tuple[int, int, int]] = []
        self.code_blocks = markdown_render.render_markdown(doc, text, self.runs, self.highlights,
                                                     self.palette().color(QPalette.Link),
                                                     self.scheme, spans)
        for start, end, index in spans:
            spans_by_run.setdefault(index, []).append((start, end))

    def _render_streaming(self, md_end: int) -> None:
        """The document anew: text[:md_end] as Markdown, the rest as plain text after it, but
        for a code block open at its end, which is a code block already."""
        started = time.perf_counter()
        doc = self.document
        self._spans, self._md_spans, self.code_blocks = {}, {}, []
        if md_end:
            self._render_markdown(doc, self.text[:md_end], self._md_spans)
        else:
            doc.clear()
        self._md_end = md_end
        fence = open_code.open_fence(self.text, md_end)
        self._code = None
        if fence is None:
            self._tail_at = markdown_render.start_tail(doc)
            self._append_tail(md_end)
        else:
            fence_at, code_from = fence
            self._tail_at = doc.characterCount() - 1  # (no paragraph: an empty tail)
            if fence_at > md_end:  # a paragraph before the fence, ended by the newline before
                self._tail_at = markdown_render.start_tail(doc)  # it (the block separator)
                highlight.append_plain(doc, self.text[:fence_at - 1], md_end, self.runs,
                                       self.highlights, self.scheme, markdown_render.LINE_BREAK)
            code_at = open_code.start_code_block(doc, len(self.code_blocks),
                                                 self.palette().color(QPalette.Link))
            self._code = (fence_at, code_from, code_at)
            self.code_blocks.append("")
            self._append_tail(code_from)
        self._shown = len(self.text)
        cost = time.perf_counter() - started
        self._next_render = time.perf_counter() + cost / RERENDER_SHARE

    def _plain_span(self, start: int, end: int) -> list[tuple[int, int]]:
        """Where text[start:end] is in the document's tail (its part after _md_end): the plain
        paragraph, then the open code block's lines (its fence line is not shown)."""
        to, text, spans = highlight.utf16_len, self.text, []
        plain_end = self._code[0] if self._code is not None else len(text)
        first, last = max(start, self._md_end), min(end, plain_end)
        if first < last:
            spans.append((self._tail_at + to(text[self._md_end:first]),
                          self._tail_at + to(text[self._md_end:last])))
        if self._code is not None:
            _fence_at, code_from, code_at = self._code
            first = max(start, code_from)
            if first < end:
                spans.append((code_at + to(text[code_from:first]),
                              code_at + to(text[code_from:end])))
        return spans
