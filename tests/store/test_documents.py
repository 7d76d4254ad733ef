"""Documents as attachments (issue 39, parts 1, 3 and 5): a PDF's text layer page by page, a
Word document's paragraphs, an HTML page's visible text; a run copied from a PDF says its page;
an encrypted, scanned or broken PDF and a ZIP that is not a Word document get one line."""

from __future__ import annotations

import pytest

from draftlight.store.attachments import (AttachmentError, attachment_at, read_attachment,
                                          with_attachments)
from tests.support.documents import docx_bytes, encrypted_pdf_bytes, pdf_bytes

def zip_of(files: dict[str, str]) -> bytes:
    import io
    import zipfile
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        for name, text in files.items():
            archive.writestr(name, text)
    return out.getvalue()


REPORT = [["Quarterly report.", "Sales rose by four percent."],
          ["Costs fell in the second quarter.", "The plant in Lyon reopened."],
          ["Outlook: steady growth next year."]]


def test_a_pdf_is_read_page_by_page_and_a_copied_run_names_its_page(tmp_path):
    path = tmp_path / "report.pdf"
    path.write_bytes(pdf_bytes(REPORT))
    attached = read_attachment(path)
    assert attached.pages == 3 and attached.describe() == "report.pdf · 3 pages"
    assert "The plant in Lyon reopened." in attached.text
    message = with_attachments("Where did the plant reopen?", [attached])
    assert attachment_at(message, message.index("Lyon"))[::2] == ("report.pdf", 2)
    assert attachment_at(message, message.index("Outlook"))[2] == 3
    assert attachment_at(message, message.index("Where did")) is None


def test_a_word_document_and_an_html_page_give_their_text(tmp_path):
    doc = tmp_path / "minutes.docx"
    doc.write_bytes(docx_bytes(["Minutes of the meeting", "Agreed: ship on Friday & test."]))
    page = tmp_path / "page.html"
    page.write_text("<!doctype html><html><head><title>t</title><style>p{}</style></head>"
                    "<body><h1>Release notes</h1><p>Fixed the <b>parser</b>.</p>"
                    "<script>alert(1)</script></body></html>")
    word, html = read_attachment(doc), read_attachment(page)
    assert word.text == "Minutes of the meeting\nAgreed: ship on Friday & test."
    assert word.encoding == "docx"
    assert html.text == "Release notes\n\nFixed the parser." and html.encoding == "html"


@pytest.mark.parametrize("name, data, says", [
    ("locked.pdf", encrypted_pdf_bytes(REPORT), "is an encrypted PDF"),
    ("scan.pdf", pdf_bytes([[], [], []]), r"no text in 3 pages \(scanned\?"),
    ("cut.pdf", pdf_bytes(REPORT)[:200], "is a PDF that cannot be read"),
    ("fake.docx", zip_of({"notes.txt": "not Word"}), "not a Word document"),
])
def test_a_document_that_cannot_be_read_gets_one_line(tmp_path, name, data, says):
    path = tmp_path / name
    path.write_bytes(data)
    with pytest.raises(AttachmentError, match=says) as caught:
        read_attachment(path)
    assert "\n" not in str(caught.value)


def test_chat_json_says_which_page_of_an_attached_pdf_a_run_was_copied_from(tmp_path, capsys,
                                                                            bundled_model):
    """On the bundled model: the reply copies a sentence of page 2; each token drafted from the
    file is {"kind": "attachment", "name", "page", "start", "end"}, and that span of the file's
    text is the token's text."""
    import json

    from draftlight.cli import main
    path = tmp_path / "report.pdf"
    path.write_bytes(pdf_bytes([REPORT[0], [REPORT[1][0], "The plant in Lyon reopened after "
                                            "the long strike of the winter."], REPORT[2]]))
    assert main(["chat", "--attach", str(path), "--json", "--max-tokens", "40", "--mode",
                 "ngram", "Copy the second sentence of page 2 of the attached report, word "
                 "for word."]) == 0
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    text = read_attachment(path).text
    copied = [line for line in lines if line.get("origin", {}).get("kind") == "attachment"]
    assert sum(line["origin"]["page"] == 2 for line in copied) >= 5, lines[-1]
    pages = text.split("--- page ")
    for line in copied:
        origin = line["origin"]
        assert origin["name"] == "report.pdf"
        assert text[origin["start"]:origin["end"]] == line["text"]
        assert line["text"] in pages[origin["page"]]  # the page it names holds it


def test_the_hover_names_the_page_of_a_pdf(tmp_path):
    from draftlight.ui.flash.origin_words import Source, describe
    from draftlight.ui.flash.run_origin import RunOrigin
    path = tmp_path / "report.pdf"
    path.write_bytes(pdf_bytes(REPORT))
    message = with_attachments("Where?", [read_attachment(path)])
    start = message.index("Lyon")
    words = describe(RunOrigin("message", role="user", at=0, start=start, end=start + 4),
                     Source("user", message, 1))
    assert words.startswith("copied from report.pdf, page 2 (attached to your message 1): '")
    assert "Lyon" in words


def test_chat_edit_makes_the_file_the_predicted_output_and_keeps_the_greedy_reply(
        tmp_path, capsys, bundled_model):
    """`chat --edit FILE` (issue 39, parts 6 and 7), on the bundled model: the same greedy
    reply as the file merely attached, and part of it drafted by the file as its Predicted
    Output, which the stats line reports."""
    import json

    from draftlight.cli import main
    code = tmp_path / "greet.py"
    code.write_text('def greet(name):\n    return "Hello, " + name + "!"\n\n\n'
                    'def part(name):\n    return "Goodbye, " + name + "."\n')
    ask = "Rewrite the file exactly as it is, in a code block."
    runs = {}
    for option in ("--attach", "--edit"):
        assert main(["chat", option, str(code), "--json", "--max-tokens", "60", "--mode",
                     "ngram", ask]) == 0
        runs[option] = json.loads(capsys.readouterr().out.splitlines()[-1])
    assert runs["--edit"]["text"] == runs["--attach"]["text"]
    stats = runs["--edit"]["stats"]
    assert stats["prediction_accepted"] >= 5, stats  # 11 of 38 tokens here (a 135M model)
    assert runs["--attach"]["stats"]["prediction_drafted"] == 0
    assert main(["chat", "--edit", str(code), "--stats", "--no-color", "--max-tokens", "60",
                 "--mode", "ngram", ask]) == 0
    assert "drafted by the prediction" in capsys.readouterr().out


def _docx_of(body: str) -> bytes:
    import io
    import zipfile
    ns = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("word/document.xml", f'<?xml version="1.0"?><w:document xmlns:w='
                                              f'"{ns}"><w:body>{body}</w:body></w:document>')
    return out.getvalue()


def test_word_text_is_found_in_linear_time_and_bounded(tmp_path):
    """Issue 56, item 3: a Word file's text was found in time quadratic in paragraph nesting
    (16k nested paragraphs, a 906-byte request, froze serve for 48 s), and 11 million empty
    paragraphs in 97 KB took 1.15 GB."""
    import time

    from draftlight.store.documents import DocumentError, docx_text
    nested = _docx_of("<w:p><w:r><w:t>x</w:t></w:r>" * 16_000 + "</w:p>" * 16_000)
    started = time.monotonic()
    assert docx_text(nested, "nested.docx").splitlines() == ["x"] * 16_000
    assert time.monotonic() - started < 5
    empty = _docx_of("<w:p/>" * 11_000_000)
    assert len(empty) < 200_000
    started = time.monotonic()
    with pytest.raises(DocumentError, match="over 1,000,000 XML elements"):
        docx_text(empty, "empty.docx")
    assert time.monotonic() - started < 10
    # a text box inside a paragraph: its own line, after the paragraph that holds it
    box = _docx_of("<w:p><w:r><w:t>before</w:t></w:r><w:p><w:r><w:t>box</w:t></w:r></w:p>"
                   "<w:r><w:t> after</w:t></w:r></w:p>")
    assert docx_text(box, "box.docx") == "before after\nbox"
