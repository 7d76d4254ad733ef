"""What a mode is (draftlight/modes.py): parse and format round-trip, chains, which need a draft
model, llama-server's --spec-type value, the window's labels and the argparse type."""

from __future__ import annotations

import argparse

import pytest

from draftlight.modes import (AUTO, DRAFT, IN_PROCESS, NGRAM, OFF, REMOTE, SPEC_TYPES, Mode,
                              ModeError, mode_argument, mode_label)


@pytest.mark.parametrize("text", [*map(str, IN_PROCESS), "remote", *(f"llama:{t}" for t in SPEC_TYPES),
                                  "llama:draft-mtp+ngram-mod", "llama:ngram-simple+ngram-mod"])
def test_every_mode_reads_back_as_it_is_written(text):
    assert str(Mode.parse(text)) == text


def test_a_chain_is_llama_servers_comma_list_and_has_its_parts():
    chain = Mode.parse("llama:ngram-simple+ngram-mod")
    assert chain.runs_on_llama_server and not chain.runs_in_process
    assert chain.spec_type_argument == "ngram-simple,ngram-mod"
    assert [str(p) for p in chain.parts] == ["llama:ngram-simple", "llama:ngram-mod"]
    assert Mode.llama("ngram-simple,ngram-mod") == chain
    assert str(Mode.llama("draft-mtp,ngram-mod")) == "llama:draft-mtp+ngram-mod"
    assert chain.label == mode_label(str(chain)) == "llama.cpp ngram-simple + ngram-mod"


def test_a_mode_compared_with_text_is_an_error_not_unequal():
    assert Mode.parse("ngram") == NGRAM and NGRAM != AUTO and {NGRAM: 1}[Mode.parse("ngram")]
    with pytest.raises(TypeError, match="parse it first"):
        _ = NGRAM == "ngram"
    with pytest.raises(TypeError):
        _ = "off" in (OFF, AUTO)


@pytest.mark.parametrize("bad", ["", "fast", "llama:", "llama:ngram", "llama:none+ngram-mod",
                                 "llama:ngram-mod+ngram-mod", "llama:ngram-mod,ngram-simple",
                                 "Auto"])
def test_what_is_not_a_mode_is_refused_with_the_choices(bad):
    with pytest.raises(ModeError) as caught:
        Mode.parse(bad)
    assert "llama:" in str(caught.value) or "chain" in str(caught.value)


def test_which_modes_need_a_draft_model():
    assert DRAFT.needs_draft_model and Mode.parse("llama:draft-simple").needs_draft_model
    assert Mode.parse("llama:ngram-mod+draft-eagle3").needs_draft_model
    assert not any(Mode.parse(m).needs_draft_model for m in ("auto", "off", "ngram", "remote",
                                                             "llama:draft-mtp", "llama:ngram-mod"))


def test_llama_servers_spec_type_for_a_mode():
    assert OFF.spec_type_argument == "none"
    assert Mode.parse("llama:draft-mtp+ngram-mod").spec_type_argument == "draft-mtp,ngram-mod"
    with pytest.raises(ModeError):
        _ = NGRAM.spec_type_argument


def test_the_closest_llama_server_mode_for_a_split_model():
    assert [str(Mode.parse(m).on_llama_server()) for m in ("off", "draft", "ngram", "auto")] \
        == ["llama:none", "llama:draft-simple", "llama:ngram-simple", "llama:ngram-simple"]


def test_labels_the_window_shows():
    assert [Mode.parse(m).label for m in ("auto", "off", "llama:none", "llama:draft-mtp",
                                          "llama:ngram-mod", "remote")] == \
        ["Auto", "Off", "Off (llama-server)", "MTP (built into the model)",
         "llama.cpp ngram-mod", "The server's own"]
    assert mode_label("plain_old") == "Plain old"  # a record's text that is no mode


def test_the_argparse_type_names_the_choices():
    assert mode_argument(" llama:ngram-simple+ngram-mod ") == Mode.llama("ngram-simple,ngram-mod")
    with pytest.raises(argparse.ArgumentTypeError, match="ngram-cache"):
        mode_argument("llama:bogus")
    with pytest.raises(argparse.ArgumentTypeError, match="--engine"):
        mode_argument("remote")


def test_every_mode_the_window_lists_is_explained_in_a_sentence():
    for mode in (*IN_PROCESS, REMOTE, *(Mode.llama(t) for t in SPEC_TYPES)):
        sentence = mode.help
        assert sentence.endswith(".") and len(sentence) > 30, mode
    assert Mode.parse("llama:draft-mtp+ngram-mod").help.count(".") >= 2  # a chain: each in turn


def test_the_toolbar_shows_each_modes_sentence_as_its_tooltip(qtbot):
    from PySide6.QtCore import Qt

    from draftlight.ui.chat.mode_box import ModeBox
    box = ModeBox()
    qtbot.addWidget(box)
    box.fill((AUTO, OFF, DRAFT, NGRAM), draft_loaded=False, wanted=AUTO)
    tips = {box.itemData(i): box.itemData(i, Qt.ToolTipRole) for i in range(box.count())}
    assert tips[AUTO] == AUTO.help and box.current_mode() == AUTO
    assert tips[DRAFT].startswith(DRAFT.help) and "Choose a draft model" in tips[DRAFT]
