"""The process an attached document's text is read in, bounded in time and memory from outside
(bounded_process.py): pypdf, the XML parser and the HTML parser were written for well-meaning
files, and one call inside them can run for minutes or take gigabytes.

    python -P -m draftlight.store.document_child   (started by attachments.py)

Each request is {"kind": "pdf" | "docx" | "html", "name", "data", "max_chars"} (data: base64
of the file, or an HTML page's text; max_chars: the most text to draw, stopped as soon as it is
passed); each answer is {"text", "pages"} or {"error": one line}, with "too_long": max_chars
where the text passed it.
"""

from __future__ import annotations

import base64
import sys

from draftlight.store.documents import (MAX_DOCUMENT_TEXT, DocumentError, TextTooLong, docx_text,
                                        html_text, pdf_text)


def answer(request: dict) -> dict:
    kind, name, data = request["kind"], request["name"], request["data"]
    most = int(request.get("max_chars", MAX_DOCUMENT_TEXT))
    try:
        if kind == "html":
            return {"text": html_text(data, name, most), "pages": None}
        raw = base64.b64decode(data)
        if kind == "pdf":
            text, pages = pdf_text(raw, name, most)
            return {"text": text, "pages": pages}
        return {"text": docx_text(raw, name, most), "pages": None}
    except TextTooLong as exc:
        return {"error": str(exc), "too_long": exc.limit}
    except DocumentError as exc:
        return {"error": str(exc)}
    except RecursionError:
        return {"error": f"{name} is nested too deeply to be read"}
    except MemoryError:
        raise  # answered by bounded_process.serve, which then ends this process
    except Exception as exc:  # noqa: BLE001 - a parser's bug met by a hostile file: one line
        return {"error": f"{name} cannot be read ({type(exc).__name__})"}


def main() -> int:
    from draftlight.bounded_process import serve
    return serve(answer)


if __name__ == "__main__":
    sys.exit(main())
