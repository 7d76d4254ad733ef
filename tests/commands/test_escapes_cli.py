"""What other people wrote never drives the terminal: names of files, folders, repositories and
models, an error about them, and a model's reply reach it with their control characters shown
as escapes (user_messages.visible, visible_reply). OSC 52 writes the clipboard, OSC 0 the
title, CSI 2J clears the screen, U+202E reverses what follows; C1 controls (U+009B is CSI) act
like ESC [ on many terminals."""

from __future__ import annotations

import json
import re

import pytest

from draftlight import paths
from draftlight.cli import main
from draftlight.commands.chat import JsonPrinter, TextPrinter
from draftlight.engine.reply.events import TextPiece
from draftlight.store.found_models import forget_found
from draftlight.user_messages import visible, visible_reply
from tests.support.hostile_gguf import gguf_bytes, good_kvs
from tests.support.hub_server import synthetic_gguf
from tests.support.other_apps import ollama_pull

# clipboard write, title, clear screen, right-to-left override, a C1 CSI, a bell
HOSTILE = "\x1b]52;c;ZWNobyBvd25lZA==\x07\x1b]0;pwned\x07\x1b[2J\u202eevil\x9b31m\x07"
BIDI = "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c"
# what a terminal acts on, newline and tab apart (checked line by line, so they do no harm)
ACTS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f" + BIDI + "]")


def assert_inert(text: str) -> None:
    found = ACTS.search(text)
    assert found is None, f"{found.group()!r} reached the terminal in {text!r}"


def test_visible_shows_every_control_and_bidi_character_as_an_escape():
    shown = visible(HOSTILE + BIDI + "\r\n\x00\x7f")
    assert_inert(shown)
    assert "\n" not in shown
    assert shown.startswith("\\x1b]52;c;") and "\\u202e" in shown and "\\x9b" in shown
    assert visible("plain Ünïcödé name, tab\tkept") == "plain Ünïcödé name, tab\tkept"


def test_a_reply_keeps_its_newlines_and_tabs_and_nothing_else():
    shown = visible_reply("line one\n\tindented " + HOSTILE + BIDI + "\r over")
    assert_inert(shown)
    assert shown.startswith("line one\n\tindented \\x1b]52") and "\\r over" in shown


@pytest.fixture
def hostile_model(tmp_path):
    path = tmp_path / f"{HOSTILE}.gguf"
    path.write_bytes(gguf_bytes(good_kvs()))
    return path


def test_models_add_and_list_show_a_hostile_name_inert(hostile_model, tmp_path, monkeypatch,
                                                        capsys):
    assert main(["models", "add", str(hostile_model)]) == 0
    out, err = capsys.readouterr()
    assert_inert(out + err)
    assert out.startswith("added ") and "\\x1b]52;c;" in out
    broken = paths.models_dir() / f"broken{HOSTILE}.gguf"
    broken.write_bytes(b"GGUF" + b"\xff" * 30)  # an error line names it
    main(["models", "add", str(broken)])
    out, err = capsys.readouterr()
    assert_inert(out + err)
    from draftlight.store.installed import register_download
    register_download(repo=f"org/{HOSTILE}", file=broken.name, path=broken, sha256=None,
                      commit=None)
    ollama = tmp_path / "ollama"
    ollama_pull(ollama, f"model{HOSTILE}", "1b")
    (ollama / "manifests/registry.ollama.ai/library" / f"bad{HOSTILE}").mkdir(parents=True)
    (ollama / "manifests/registry.ollama.ai/library" / f"bad{HOSTILE}" / "1b").write_text("[]")
    monkeypatch.setenv("OLLAMA_MODELS", str(ollama))
    forget_found()
    assert main(["models", "list"]) == 2  # the broken file's header is unreadable
    out, err = capsys.readouterr()
    forget_found()
    assert_inert(out + err)
    assert out.count("\\x1b]52;c;") == 5  # the added file (name, path), its repo, Ollama's (ref, path)
    assert "draftlight: error: broken\\x1b]52" in err and "skipped" in err


def test_models_search_and_files_show_the_hubs_names_inert(fake_hub, capsys):
    fake_hub.add_repo(f"evil/{HOSTILE}-GGUF", {"m-Q4_K_M.gguf": b""}, licence=HOSTILE,
                      architecture=HOSTILE, parameters=1_000_000_000)
    assert main(["models", "search", "evil", "--endpoint", fake_hub.url]) == 0
    out, err = capsys.readouterr()
    assert_inert(out + err)
    assert out.startswith("evil/\\x1b]52;c;")
    assert main(["models", "search", f"none{HOSTILE}", "--endpoint", fake_hub.url]) == 0
    assert_inert("".join(capsys.readouterr()))
    # a file's name is the repository's to choose (a repository's name is checked by the hub
    # client: only letters, digits, "-", "_" and ".")
    fake_hub.add_repo("org/Evil-GGUF", {f"{HOSTILE}-Q4_K_M.gguf": synthetic_gguf(1 << 12),
                                        f"{HOSTILE}-00001-of-00002.gguf": b""})
    assert main(["models", "files", "org/Evil-GGUF", "--endpoint", fake_hub.url]) == 0
    out, err = capsys.readouterr()
    assert_inert(out + err)
    assert "\\x1b]52;c;" in out


def piece(text: str, source: str = "target") -> TextPiece:
    return TextPiece(text, source, 0)


def test_chat_prints_a_replys_text_inert_with_its_newlines(capsys):
    printer = TextPrinter(colour=False, stats=False)
    for text in ("Sure:\n\t", HOSTILE, "\u202e", "done\r"):
        printer.piece(piece(text))
    printer.notice(f"dropped turns {HOSTILE}")
    out, err = capsys.readouterr()
    assert_inert(out + err)
    assert out.startswith("Sure:\n\t\\x1b]52;c;") and out.endswith("done\\r")
    coloured = TextPrinter(colour=True, stats=False)
    coloured.piece(piece(HOSTILE, "draft"))
    out = capsys.readouterr().out
    assert ACTS.sub("", out.replace("\x1b[1;36m", "").replace("\x1b[0m", "")) == out.replace(
        "\x1b[1;36m", "").replace("\x1b[0m", "")  # only the app's own colour is raw


def test_chat_json_lines_carry_the_reply_exactly_and_inert(capsys):
    printer = JsonPrinter()
    printer.piece(piece("a\n" + HOSTILE + BIDI))
    printer.notice(HOSTILE)
    out = capsys.readouterr().out
    assert_inert(out.replace("\n", ""))
    token, notice = [json.loads(line) for line in out.splitlines()]
    assert token["text"] == "a\n" + HOSTILE + BIDI and notice["message"] == HOSTILE
