"""`draftlight bench load`: the app's time to a first token against a bare llama.cpp load, fresh
and cached, on the real bundled model (issue 54, item 1)."""

from __future__ import annotations

import re

import pytest

from draftlight.bench.load import report_lines
from draftlight.cli import main

pytest.importorskip("llama_cpp")


def test_bench_load_reports_both_states_with_ratios_steps_and_background(capsys):
    assert main(["bench", "load", "--repeats", "1"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("# draftlight bench load --repeats 1")
    rows = {m.group(1): (float(m.group(2)), float(m.group(3)), float(m.group(4)))
            for m in re.finditer(r"^\| (fresh|cached) \| ([0-9.]+) s \| ([0-9.]+) s \| "
                                 r"([0-9.]+)x \|", out, re.M)}
    assert set(rows) == {"fresh", "cached"}
    for bare, app, ratio in rows.values():
        # (the seconds are printed to 0.01 s, the ratio from the unrounded medians)
        assert bare > 0 and app > 0 and ratio == pytest.approx(app / bare, rel=0.05)
    assert "bare loads SmolLM2-135M-Instruct.Q4_1.gguf" in out
    assert "app loads SmolLM2-135M-Instruct.Q4_1.gguf at once, then" in out
    assert re.search(r"app's steps, cached \(medians\): default model ready [0-9.]+ s, load "
                     r"[0-9.]+ s, first token [0-9.]+ s", out)
    # the fresh home answers on the shipped file and makes its copy afterwards
    background = next(line for line in out.splitlines() if "in the background" in line)
    assert "making the default model's faster copy and loading it" in background
    assert "timing passes of 1-16 tokens" in background


def test_the_goal_column_says_met_or_missed_by_the_median_ratio():
    runs = {"bare": [1.0, 1.0], "app": [1.4, 1.6], "steps": [{"load": 1.0}] * 2,
            "background": {}}
    lines = report_lines("m", {"first_file": "/a/m.gguf", "file": "/a/m.gguf", "bare_file": "/a/m.gguf", "n_ctx": 4096,
                               "states": {"fresh": runs,
                                          "cached": dict(runs, app=[1.3, 1.3])}})
    table = "\n".join(lines)
    assert "| fresh | 1.00 s | 1.50 s | 1.50x | 1.40-1.60x | met (≤ 1.5x) |" in table
    assert "| cached | 1.00 s | 1.30 s | 1.30x | 1.30-1.30x | MISSED (≤ 1.2x) |" in table
