"""A reply while it streams, rendered as Markdown without jumps: its complete blocks as
Markdown, re-rendered when one more is complete (at most RERENDER_SHARE of the GUI thread's
time, a timer catching up when it is too soon), and the block being written as plain text with
its draft runs highlighted (cheap to append); once finished, the whole reply. Text above the
block being written never moves, so nothing jumps at the end; see
draftlight.ui.flash.markdown_render. StreamingMarkdown holds that state and where each run lies
in the plain tail; MessageView extends it."""

from __future__ import annotations

import math
import time

from PySide6.QtCore import QTimer
from PySide6.QtGui import QPalette

from draftlight.ui.flash import highlight, markdown_render

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
            highlight.append_plain(self.document, text, offset, runs, self.highlights,
                                   self.scheme, markdown_render.LINE_BREAK)
            # A run that began before `offset` may have grown: its colour depends on its length.
            for index in arrived:
                if runs[index][0] < offset:
                    highlight.format_spans(self.document, self.run_spans(index),
                                           runs[index][2], self.highlights, self.scheme)
        self._shown = len(text)
        if self.highlights and flash:
            self.flash.start(arrived)

    def _may_render_blocks(self) -> bool:
        """Whether one more block is complete and re-rendering now keeps within RERENDER_SHARE;
        if it is too soon, a timer catches up (the last blocks must not wait for the end)."""
        if markdown_render.complete_blocks_end(self.text, self._md_end) <= self._md_end:
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
        """The document anew: text[:md_end] as Markdown, the rest as plain text after it."""
        started = time.perf_counter()
        doc = self.document
        self._spans, self._md_spans, self.code_blocks = {}, {}, []
        if md_end:
            self._render_markdown(doc, self.text[:md_end], self._md_spans)
        else:
            doc.clear()
        self._md_end = md_end
        self._tail_at = markdown_render.start_tail(doc)
        highlight.append_plain(doc, self.text, md_end, self.runs, self.highlights, self.scheme,
                               markdown_render.LINE_BREAK)
        self._shown = len(self.text)
        cost = time.perf_counter() - started
        self._next_render = time.perf_counter() + cost / RERENDER_SHARE

    def _plain_span(self, start: int, end: int) -> list[tuple[int, int]]:
        """Where text[start:end] is in the plain part of the document (its part after _md_end)."""
        start = max(start, self._md_end)
        if start >= end:
            return []
        to = highlight.utf16_len
        tail = self.text[self._md_end:]
        return [(self._tail_at + to(tail[:start - self._md_end]),
                 self._tail_at + to(tail[:end - self._md_end]))]
