"""A load says how far it is (issue 54, item 1): llama.cpp's reports reach `on_progress`, and
the window's worker turns them into a percentage beside the step's words."""

from __future__ import annotations

import pytest

pytest.importorskip("llama_cpp")


def test_llama_cpp_reports_the_weights_loading_from_zero_to_one(bundled_model):
    from draftlight.engine.llama.llama_backend import LlamaBackend
    from draftlight.engine.core.load_options import LoadOptions
    seen: list[float] = []
    with LlamaBackend(bundled_model, LoadOptions(n_ctx=512), on_progress=seen.append):
        pass
    assert len(seen) >= 2 and seen == sorted(seen) and seen[-1] == pytest.approx(1.0)


def test_the_status_line_names_the_model_and_its_size(bundled_model):
    from draftlight.ui.engine.load_words import loading_words
    assert loading_words("smol", str(bundled_model)) == "Loading smol (98.4 MB of weights)…"
    assert loading_words("ollama:gone:1b", "/nowhere.gguf") == "Loading ollama:gone:1b…"
