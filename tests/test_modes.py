"""What a mode is (draftlight/modes.py): parse and format round-trip, chains, which need a draft
model, llama-server's --spec-type value, the window's labels and the argparse type."""

from __future__ import annotations

import argparse

import pytest

from draftlight.modes import (IN_PROCESS, SPEC_TYPES, Mode, ModeError, llama_mode, mode_argument,
                              mode_label, needs_draft_model, spec_type_argument)


@pytest.mark.parametrize("text", [*IN_PROCESS, "remote", *(f"llama:{t}" for t in SPEC_TYPES),
                                  "llama:draft-mtp+ngram-mod", "llama:ngram-simple+ngram-mod"])
def test_every_mode_reads_back_as_it_is_written(text):
    assert str(Mode.parse(text)) == text


def test_a_chain_is_llama_servers_comma_list_and_has_its_parts():
    chain = Mode.parse("llama:ngram-simple+ngram-mod")
    assert chain.runs_on_llama_server and not chain.runs_in_process
    assert chain.spec_type_argument == "ngram-simple,ngram-mod"
    assert [str(p) for p in chain.parts] == ["llama:ngram-simple", "llama:ngram-mod"]
    assert Mode.llama("ngram-simple,ngram-mod") == chain
    assert llama_mode("draft-mtp,ngram-mod") == "llama:draft-mtp+ngram-mod"
    assert mode_label(str(chain)) == "llama.cpp ngram-simple + ngram-mod"


@pytest.mark.parametrize("bad", ["", "fast", "llama:", "llama:ngram", "llama:none+ngram-mod",
                                 "llama:ngram-mod+ngram-mod", "llama:ngram-mod,ngram-simple",
                                 "Auto"])
def test_what_is_not_a_mode_is_refused_with_the_choices(bad):
    with pytest.raises(ModeError) as caught:
        Mode.parse(bad)
    assert "llama:" in str(caught.value) or "chain" in str(caught.value)


def test_which_modes_need_a_draft_model():
    assert needs_draft_model("draft") and needs_draft_model("llama:draft-simple")
    assert needs_draft_model("llama:ngram-mod+draft-eagle3")
    assert not any(needs_draft_model(m) for m in ("auto", "off", "ngram", "remote",
                                                  "llama:draft-mtp", "llama:ngram-mod", "junk"))


def test_llama_servers_spec_type_for_a_mode():
    assert spec_type_argument("off") == "none"
    assert spec_type_argument("llama:draft-mtp+ngram-mod") == "draft-mtp,ngram-mod"
    with pytest.raises(ModeError):
        spec_type_argument("ngram")


def test_the_closest_llama_server_mode_for_a_split_model():
    assert [str(Mode.parse(m).on_llama_server()) for m in ("off", "draft", "ngram", "auto")] \
        == ["llama:none", "llama:draft-simple", "llama:ngram-simple", "llama:ngram-simple"]


def test_labels_the_window_shows():
    assert [mode_label(m) for m in ("auto", "off", "llama:none", "llama:draft-mtp",
                                    "llama:ngram-mod", "remote")] == \
        ["Auto", "Off", "Off (llama-server)", "MTP (built into the model)",
         "llama.cpp ngram-mod", "The server's own"]


def test_the_argparse_type_names_the_choices():
    assert mode_argument(" llama:ngram-simple+ngram-mod ") == "llama:ngram-simple+ngram-mod"
    with pytest.raises(argparse.ArgumentTypeError, match="ngram-cache"):
        mode_argument("llama:bogus")
    with pytest.raises(argparse.ArgumentTypeError, match="--engine"):
        mode_argument("remote")


def test_every_mode_the_window_lists_is_explained_in_a_sentence():
    from draftlight.modes import IN_PROCESS, REMOTE, SPEC_TYPES, mode_help
    for mode in (*IN_PROCESS, REMOTE, *(f"llama:{t}" for t in SPEC_TYPES)):
        sentence = mode_help(mode)
        assert sentence.endswith(".") and len(sentence) > 30, mode
    assert mode_help("llama:draft-mtp+ngram-mod").count(".") >= 2  # a chain: each in turn
    assert mode_help("nonsense") == ""


def test_the_toolbar_shows_each_modes_sentence_as_its_tooltip(qtbot):
    from PySide6.QtCore import Qt

    from draftlight.modes import mode_help
    from draftlight.ui.chat.mode_box import ModeBox
    box = ModeBox()
    qtbot.addWidget(box)
    box.fill(("auto", "off", "draft", "ngram"), draft_loaded=False, wanted="auto")
    tips = {box.itemData(i): box.itemData(i, Qt.ToolTipRole) for i in range(box.count())}
    assert tips["auto"] == mode_help("auto")
    assert tips["draft"].startswith(mode_help("draft")) and "Choose a draft model" in tips["draft"]
