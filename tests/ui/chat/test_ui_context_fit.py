"""The window's context (issue 38, part 6), on llama.cpp: left automatic in Settings, a model
loads with what fits in free memory with its draft, capped by its trained context, and the
status bar says the choice; a context set in Settings is used as it is."""

from __future__ import annotations

from draftlight.settings import Settings
from tests.support.real_window import cost_cache_file, real_window, shared_cost_cache  # noqa: F401
from tests.support.window import wait_ready


def test_an_automatic_context_is_what_fits_and_the_status_bar_says_so(qtbot, real_window,
                                                                     bundled_model):
    window = real_window(Settings(target_path=str(bundled_model), n_threads=1))
    assert window.settings.n_ctx == 0  # the default: automatic
    wait_ready(qtbot, window)
    assert window.models.n_ctx == 8192  # SmolLM2's trained context: it fits here
    status = window.status_label.text()
    assert "context 8,192 tokens: the model's trained context" in status, status
    assert window.serve_switch.runner.n_ctx == 8192


def test_a_context_set_in_settings_is_kept(qtbot, real_window, bundled_model):
    window = real_window(Settings(target_path=str(bundled_model), n_threads=1, n_ctx=1024))
    wait_ready(qtbot, window)
    assert window.models.n_ctx == 1024
    assert "context" not in window.status_label.text()
