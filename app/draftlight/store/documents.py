"""The text of an attached document that is not plain text (read in a process of its own,
document_child.py, bounded in time and memory): a PDF's text layer page by page
(pypdf), a DOCX's paragraphs (its word/document.xml, read with the standard library) and an HTML
page's visible text. Each gives one line when it cannot: an encrypted or broken PDF, a PDF with
no text layer ("scanned?"), a ZIP that is not a Word document.

A PDF's pages are kept apart by a line of their own, PAGE_MARK with the page's number, so a run
copied from the file can say which page it came from (page_at).
"""

from __future__ import annotations

import io
import logging
import re
import zipfile
from html.parser import HTMLParser
from xml.etree import ElementTree

from draftlight.store.errors import StoreError

PAGE_MARK = "--- page {} ---"
PAGE_LINE = re.compile(r"^--- page (\d+) ---$", re.MULTILINE)
MAX_PDF_PAGES = 2000  # a larger PDF is refused before its pages are read
MAX_DOCUMENT_TEXT = 16 << 20  # characters of text taken from a PDF or Word document at most
WORD = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"


class DocumentError(StoreError):
    """A document whose text cannot be read, and why (one line)."""


class TextTooLong(DocumentError):
    """A document whose text passes the characters the reader was allowed: it is stopped as
    soon as it does, never read whole first (a 10 KB PDF can draw one text 10^6 times)."""

    def __init__(self, name: str, limit: int) -> None:
        super().__init__(f"{name}: over {limit:,} characters of text")
        self.limit = limit


class _PastLimit(BaseException):
    """Raised inside pypdf's text extraction to stop it: pypdf logs and skips an Exception
    raised while it extracts a form and goes on with the next (a million of them)."""


def pdf_text(data: bytes, name: str, max_chars: int = MAX_DOCUMENT_TEXT) -> tuple[str, int]:
    """(text with a PAGE_MARK line before each page's, number of pages). TextTooLong once
    more than `max_chars` characters have been drawn, checked as each piece is drawn: one page
    can draw the same text from a form a million times."""
    from pypdf import PdfReader
    from pypdf.errors import PyPdfError
    logging.getLogger("pypdf").setLevel(logging.ERROR)  # its warnings: the one line says it
    try:
        reader = PdfReader(io.BytesIO(data))
        if reader.is_encrypted and not reader.decrypt(""):  # an owner password alone is fine
            raise DocumentError(f"{name} is an encrypted PDF: open it with its password and "
                                "save a copy without one")
        count = len(reader.pages)
        if count > MAX_PDF_PAGES:
            raise DocumentError(f"{name} has {count:,} pages: attachments are at most "
                                f"{MAX_PDF_PAGES:,}")
        pages, drawn = [], [0]

        def tally(text, *_) -> None:  # pypdf's visitor, called for each piece it draws
            drawn[0] += len(text)
            if drawn[0] > max_chars:
                raise _PastLimit  # not an Exception: pypdf goes on after those in a form

        for page in reader.pages:
            pages.append((page.extract_text(visitor_text=tally) or "").strip())
    except _PastLimit:
        raise TextTooLong(name, max_chars) from None
    except DocumentError:
        raise
    except (PyPdfError, ValueError, KeyError, TypeError, AttributeError, RecursionError,
            NotImplementedError) as exc:  # pypdf's ways of meeting a broken file
        raise DocumentError(f"{name} is a PDF that cannot be read ({type(exc).__name__}: "
                            f"{str(exc).splitlines()[0] if str(exc) else 'broken'})") from None
    if not any(pages):
        raise DocumentError(f"{name}: no text in {count} page{'s' if count != 1 else ''} "
                            "(scanned? only a PDF's text layer can be read)")
    text = "\n\n".join(f"{PAGE_MARK.format(number)}\n{page}"
                       for number, page in enumerate(pages, 1))
    return text, count


def page_at(text: str, position: int) -> int | None:
    """The page of a pdf_text whose text holds character `position`; None before the first."""
    page = None
    for match in PAGE_LINE.finditer(text, 0, position + 1):
        if match.start() <= position:
            page = int(match.group(1))
    return page


# A Word document's XML is read in one streaming pass; more elements than this is no document a
# person wrote (a 97 KB file held 11 million empty paragraphs) and is refused
MAX_DOCX_ELEMENTS = 1_000_000


def docx_text(data: bytes, name: str, max_chars: int = MAX_DOCUMENT_TEXT) -> str:
    """A Word document's paragraphs, one per line (tables row by row, cells by tabs), in one
    streaming pass linear in the document's size: each paragraph's text is its own runs', a
    paragraph nested in it (a text box) is a line of its own."""
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            if "word/document.xml" not in archive.namelist():
                raise DocumentError(f"{name} is a ZIP archive, not a Word document")
            if archive.getinfo("word/document.xml").file_size > 64 << 20:
                raise DocumentError(f"{name}: its text is over 64 MB")
            with archive.open("word/document.xml") as xml:
                lines = _docx_lines(xml, name, max_chars)
    except DocumentError:
        raise
    except (zipfile.BadZipFile, ElementTree.ParseError, KeyError, OSError) as exc:
        raise DocumentError(f"{name} is a Word document that cannot be read "
                            f"({type(exc).__name__})") from None
    text = "\n".join(lines).strip()
    if not text:
        raise DocumentError(f"{name}: the Word document has no text")
    return text


def _docx_lines(xml, name: str, max_chars: int) -> list[str]:
    paragraph, text, tab, breaks = f"{WORD}p", f"{WORD}t", f"{WORD}tab", (f"{WORD}br", f"{WORD}cr")
    open_paragraphs: list[tuple[int, list[str]]] = []  # (its line, its parts), innermost last
    lines: list[str] = []  # in the order the paragraphs begin
    elements = characters = 0
    for event, node in ElementTree.iterparse(xml, events=("start", "end")):
        if event == "start":
            if node.tag == paragraph:
                open_paragraphs.append((len(lines), []))
                lines.append("")
            continue
        elements += 1
        if elements > MAX_DOCX_ELEMENTS:
            raise DocumentError(f"{name}: over {MAX_DOCX_ELEMENTS:,} XML elements, not a "
                                f"document to read")
        if open_paragraphs:
            parts = open_paragraphs[-1][1]
            if node.tag == text and node.text:
                parts.append(node.text)
                characters += len(node.text)
            elif node.tag == tab:
                parts.append("\t")
            elif node.tag in breaks:
                parts.append("\n")
        if node.tag == paragraph:
            line, parts = open_paragraphs.pop()
            lines[line] = "".join(parts)
        node.clear()  # what is read is let go: memory stays that of the open elements
        if characters > max_chars:
            raise TextTooLong(name, max_chars)
    return lines


class _VisibleText(HTMLParser):
    BLOCKS = {"p", "div", "br", "li", "tr", "h1", "h2", "h3", "h4", "h5", "h6", "pre",
              "section", "article", "header", "footer", "blockquote", "table", "ul", "ol"}
    HIDDEN = {"script", "style", "head", "template", "noscript"}

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.hidden = 0

    def handle_starttag(self, tag, attrs) -> None:
        if tag in self.HIDDEN:
            self.hidden += 1
        elif tag in self.BLOCKS:
            self.parts.append("\n")

    def handle_endtag(self, tag) -> None:
        if tag in self.HIDDEN:
            self.hidden = max(0, self.hidden - 1)
        elif tag in self.BLOCKS:
            self.parts.append("\n")

    def handle_data(self, data) -> None:
        if not self.hidden:
            self.parts.append(data)


# Markup opened after the page's last ">" never closes; a browser drops it (an unclosed comment
# runs to the end). Python's HTMLParser (before 3.13.4) instead rescans the rest of the page from
# each such "<": 200,000 "<!--" took minutes. Cut there first, and the parse is linear.
_OPENS_MARKUP = re.compile(r"<[A-Za-z/!?]")


def html_text(markup: str, name: str = "the page", max_chars: int | None = None) -> str:
    """An HTML page's visible text: scripts, styles and the head left out, blocks on lines.
    It is never longer than the page (entities shrink), so `max_chars` is checked at the end."""
    last_close = markup.rfind(">")
    unclosed = _OPENS_MARKUP.search(markup, last_close + 1)
    if unclosed:
        markup = markup[:unclosed.start()]
    parser = _VisibleText()
    try:
        parser.feed(markup)
        parser.close()
    except (AssertionError, ValueError) as exc:  # _markupbase's ways of meeting broken markup
        raise DocumentError(f"{name} is HTML that cannot be read ({type(exc).__name__})") from None
    lines = [" ".join(line.split()) for line in "".join(parser.parts).splitlines()]
    text = re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip()
    if max_chars is not None and len(text) > max_chars:
        raise TextTooLong(name, max_chars)
    return text


def looks_like_html(name: str, text: str) -> bool:
    head = text.lstrip()[:200].lower()
    return name.lower().endswith((".html", ".htm", ".xhtml")) or head.startswith(
        ("<!doctype html", "<html"))
