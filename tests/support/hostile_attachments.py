"""A corpus of hostile attachments (tests only): Word, PDF, HTML and text files that are nested,
huge, bombs, broken or badly encoded, and paths that are not files at all. Each case is small on
disk; what it would cost to read is the point. tests/store/test_attachments_hostile.py runs every
case through read_attachment with a time and memory bound, beside the GGUF header corpus
(hostile_gguf.py), so the next parser added meets the same bar."""

from __future__ import annotations

import io
import os
import socket
import zipfile
from collections.abc import Callable
from pathlib import Path

WORD = 'xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"'


def docx(body: str, *, extra: dict[str, bytes] | None = None, prolog: str = "") -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("word/document.xml",
                         f"{prolog}<w:document {WORD}><w:body>{body}</w:body></w:document>")
        for name, data in (extra or {}).items():
            archive.writestr(name, data)
    return buffer.getvalue()


def docx_streamed(parts, count: int, *, first: str = "") -> bytes:
    """A Word file whose document.xml is `first` and `count` repeats of `parts` (count a
    multiple of 10,000), written without holding it whole (11 million paragraphs compress to
    ~100 KB)."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        with archive.open("word/document.xml", "w", force_zip64=True) as xml:
            xml.write(f"<w:document {WORD}><w:body>{first}".encode())
            chunk = parts.encode() * 10_000
            for _ in range(count // 10_000):
                xml.write(chunk)
            xml.write(b"</w:body></w:document>")
    return buffer.getvalue()


def zip_bomb() -> bytes:
    """document.xml inflating to 1 GB of one byte."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        with archive.open("word/document.xml", "w", force_zip64=True) as xml:
            block = b"<" * (1 << 20)
            for _ in range(1024):
                xml.write(block)
    return buffer.getvalue()


def pdf(objects: list[bytes], root: int = 1) -> bytes:
    """A PDF of `objects` (numbered from 1) with a correct cross-reference table."""
    out, offsets = bytearray(b"%PDF-1.4\n"), []
    for number, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    out += b"trailer\n<< /Size %d /Root %d 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (
        len(objects) + 1, root, xref)
    return bytes(out)


def pdf_page(content: bytes, filters: bytes = b"") -> bytes:
    return pdf([b"<< /Type /Catalog /Pages 2 0 R >>",
                b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
                b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R "
                b"/Resources << /Font << /F1 5 0 R >> >> >>",
                b"<< /Length %d %s>>\nstream\n" % (len(content), filters) + content
                + b"\nendstream",
                b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"])


def pdf_drawing_text(fanout: int, depth: int, text: bytes = b"A" * 1000) -> bytes:
    """A one-page PDF whose page draws a form that draws another `fanout` times, `depth`
    forms deep, the last showing `text`: len(text) * fanout**depth characters of text from a
    file of a few KB (pypdf draws them at about a million a second)."""
    forms = []  # form i draws form i - 1 `fanout` times; form 0 shows the text
    for level in range(depth + 1):
        if level == 0:
            body, resources = b"BT /F1 12 Tf (" + text + b") Tj ET", b"<< /Font << /F1 5 0 R >> >>"
        else:
            body = b" ".join([b"/X%d Do" % (level - 1)] * fanout)
            resources = b"<< /XObject << /X%d %d 0 R >> >>" % (level - 1, 6 + level - 1)
        forms.append(b"<< /Type /XObject /Subtype /Form /BBox [0 0 612 792] /Resources "
                     + resources + b" /Length %d >>\nstream\n" % len(body) + body
                     + b"\nendstream")
    top = b"/X%d Do" % depth
    return pdf([b"<< /Type /Catalog /Pages 2 0 R >>",
                b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
                b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R "
                b"/Resources << /XObject << /X%d %d 0 R >> >> >>" % (depth, 6 + depth),
                b"<< /Length %d >>\nstream\n" % len(top) + top + b"\nendstream",
                b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>", *forms])


def slow_docx() -> bytes:
    """A valid Word file of 9 KB that takes seconds to read (2.5 s here): one paragraph of
    text, then 900,000 empty ones (near the reader's bound of 1,000,000 elements)."""
    return docx_streamed("<w:p/>", 900_000, first="<w:p><w:r><w:t>Slow to read.</w:t></w:r></w:p>")


def flate_bomb() -> bytes:
    """A page whose content stream inflates to 400 MB (compressed a megabyte at a time)."""
    import zlib
    packer, block = zlib.compressobj(9), b"0" * (1 << 20)
    packed = b"".join(packer.compress(block) for _ in range(400)) + packer.flush()
    return pdf_page(packed, b"/Filter /FlateDecode ")


FILES: dict[str, tuple[str, Callable[[], bytes]]] = {
    # Word
    "docx nested 16k paragraphs": ("nested.docx", lambda: docx("<w:p>" * 16_000 + "<w:r><w:t>x"
                                                               "</w:t></w:r>" + "</w:p>" * 16_000)),
    "docx 11M empty paragraphs": ("empty.docx", lambda: docx_streamed("<w:p/>", 11_000_000)),
    "docx 200k paragraphs of text": ("long.docx",
                                   lambda: docx_streamed("<w:p><w:r><w:t>word word</w:t></w:r></w:p>",
                                                         200_000)),
    "docx zip bomb": ("bomb.docx", zip_bomb),
    "docx billion laughs": ("laughs.docx", lambda: docx(
        "<w:p><w:r><w:t>&l9;</w:t></w:r></w:p>",
        prolog="<?xml version='1.0'?><!DOCTYPE d [<!ENTITY l0 'ha'>"
               + "".join(f"<!ENTITY l{i} '{('&l' + str(i - 1) + ';') * 10}'>" for i in range(1, 10))
               + "]>")),
    "docx external entity": ("xxe.docx", lambda: docx(
        "<w:p><w:r><w:t>&secret;</w:t></w:r></w:p>",
        prolog="<?xml version='1.0'?><!DOCTYPE d [<!ENTITY secret SYSTEM 'file:///etc/passwd'>]>")),
    "docx not xml": ("garbage.docx", lambda: docx("<w:p><<<&&&")),
    "docx truncated zip": ("cut.docx", lambda: docx("<w:p><w:r><w:t>x</w:t></w:r></w:p>")[:60]),
    "docx without document.xml": ("other.docx", lambda: docx("", extra={"a.txt": b"x"})
                                  .replace(b"word/document.xml", b"word/xocument.xml")),
    # PDF
    "pdf truncated": ("cut.pdf", lambda: pdf_page(b"BT /F1 12 Tf (Hello) Tj ET")[:150]),
    "pdf garbage": ("garbage.pdf", lambda: b"%PDF-1.7\n" + os.urandom(4096)),
    "pdf page count 10^9": ("count.pdf", lambda: pdf(
        [b"<< /Type /Catalog /Pages 2 0 R >>", b"<< /Type /Pages /Kids [2 0 R] /Count 1000000000 >>"])),
    "pdf pages tree loop": ("loop.pdf", lambda: pdf(
        [b"<< /Type /Catalog /Pages 2 0 R >>", b"<< /Type /Pages /Kids [3 0 R] /Count 2 >>",
         b"<< /Type /Pages /Kids [2 0 R] /Parent 2 0 R /Count 1 >>"])),
    "pdf nested arrays": ("nested.pdf", lambda: pdf_page(b"[" * 100_000 + b"]" * 100_000)),
    "pdf flate bomb": ("bomb.pdf", flate_bomb),
    "pdf 200k text operators": ("ops.pdf", lambda: pdf_page(b"BT /F1 12 Tf " + b"(ab) Tj " * 200_000
                                                             + b"ET")),
    # HTML
    "html 200k unclosed comments": ("comments.html", lambda: b"<html>" + b"<!--" * 200_000),
    "html unclosed marked sections": ("marked.html", lambda: b"<html>" + b"<![" * 200_000),
    "html 100k nested divs": ("divs.html", lambda: b"<html>" + b"<div>" * 100_000 + b"x"),
    "html 2 MB of one entity": ("entity.html", lambda: b"<html><p>" + b"&amp;" * 400_000),
    "html closed comments": ("closed.html", lambda: b"<html>" + b"<!--x-->" * 250_000 + b"<p>y"),
    # Text
    "text bad utf-8": ("bad.txt", lambda: b"caf\xc3 \xff\xfe\x80 " * 1000),
    "text utf-16 without bom": ("wide.txt", lambda: "hello world\n".encode("utf-16-le") * 100),
    "text encoded surrogates": ("surrogate.txt", lambda: b"a\xed\xa0\x80b\n" * 100),
    "text NULs": ("nul.txt", lambda: b"abc\0" * 1000),
    "text one line of 2 MB": ("line.txt", lambda: b"x" * ((2 << 20) - 1)),
    "text just over the limit": ("big.txt", lambda: b"x" * ((2 << 20) + 1)),
    "text whitespace only": ("blank.txt", lambda: b" \n\t\r\n" * 100),
    "text control characters": ("ctrl.txt", lambda: bytes(range(1, 32)) * 100),
}


def make_file(folder: Path, case: str) -> Path:
    name, data = FILES[case]
    path = folder / case.replace(" ", "-") / name
    path.parent.mkdir(parents=True)
    path.write_bytes(data())
    return path


def not_files(folder: Path) -> dict[str, Path]:
    """Paths that are not regular files: devices, a FIFO, a socket, links to them, a folder, a
    dangling link, a loop of links, a file that cannot be read."""
    fifo = folder / "fifo.txt"
    os.mkfifo(fifo)
    listening = socket.socket(socket.AF_UNIX)
    listening.bind(str(folder / "socket.txt"))
    (folder / "zero.txt").symlink_to("/dev/zero")
    (folder / "random.pdf").symlink_to("/dev/urandom")
    (folder / "gone.txt").symlink_to(folder / "nothing")
    (folder / "loop.txt").symlink_to(folder / "loop.txt")
    (folder / "folder.docx").mkdir()
    locked = folder / "locked.txt"
    locked.write_text("secret")
    locked.chmod(0)
    return {"/dev/zero": Path("/dev/zero"), "/dev/null": Path("/dev/null"),
            "a fifo": fifo, "a socket": folder / "socket.txt", "link to /dev/zero": folder / "zero.txt",
            "link to /dev/urandom": folder / "random.pdf", "dangling link": folder / "gone.txt",
            "link loop": folder / "loop.txt", "a folder": folder / "folder.docx",
            "unreadable": locked}
