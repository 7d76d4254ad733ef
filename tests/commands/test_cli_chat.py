"""`draftlight chat` as scripts use it: JSON lines, modes, exit codes."""

from __future__ import annotations

import json
import subprocess
import sys

QUESTION = "Repeat after me: the United States of America."


def chat(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-P", "-m", "draftlight", "chat", *args], capture_output=True,
                          text=True, timeout=300)


def json_lines(stdout: str) -> list[dict]:
    return [json.loads(line) for line in stdout.splitlines() if line.strip()]


def test_json_output_is_identical_between_ngram_and_off():
    results = {}
    for mode in ("ngram", "off"):
        proc = chat("--json", "--mode", mode, "--max-tokens", "40", QUESTION)
        assert proc.returncode == 0, proc.stderr
        lines = json_lines(proc.stdout)
        tokens, done = lines[:-1], lines[-1]
        assert all(l["type"] == "token" and l["source"] in ("draft", "target") for l in tokens)
        assert done["type"] == "done"
        assert done["text"] == "".join(l["text"] for l in tokens)
        for key in ("new_tokens", "target_passes", "drafted", "accepted", "acceptance_rate",
                    "mean_accepted_length", "tokens_per_second", "seconds"):
            assert key in done["stats"]
        results[mode] = done
    assert results["ngram"]["text"] == results["off"]["text"]
    assert results["off"]["stats"]["drafted"] == 0


def test_stats_line_and_plain_text():
    proc = chat("--stats", "--no-color", "--max-tokens", "16", "Say hello.")
    assert proc.returncode == 0, proc.stderr
    assert "\x1b[" not in proc.stdout
    stats = proc.stdout.strip().splitlines()[-1]
    assert "tok/s" in stats
    assert stats.endswith("[auto]")  # the default, as in the window


def test_errors_are_one_line_and_exit_2(tmp_path):
    bogus = tmp_path / "x.gguf"
    bogus.write_text("hello")
    for args in (["--target", str(tmp_path / "missing.gguf"), "hi"],
                 ["--target", str(bogus), "hi"],
                 ["--mode", "draft", "hi"],
                 ["--temp", "-1", "hi"]):
        proc = chat(*args)
        assert proc.returncode == 2, (args, proc.stderr)
        assert "Traceback" not in proc.stderr
        assert len(proc.stderr.strip().splitlines()) == 1, proc.stderr
        assert proc.stderr.startswith("draftlight: error:")


def test_a_draft_of_another_vocabulary_drafts_and_changes_nothing(gemma_model):
    """Gemma 3 (SentencePiece, 262k) drafts for the bundled SmolLM2 (BPE, 49k) through text:
    the same reply as plain decoding, with drafts accepted (issue 14)."""
    results = {}
    for mode in ("draft", "off"):
        proc = chat("--json", "--mode", mode, "--draft", str(gemma_model),
                    "--max-tokens", "24", QUESTION)
        assert proc.returncode == 0, proc.stderr
        results[mode] = json_lines(proc.stdout)[-1]
    assert results["draft"]["text"] == results["off"]["text"]
    stats = results["draft"]["stats"]
    assert stats["drafted"] > 0 and stats["accepted"] > 0
    assert stats["draft_kind"] == "cross-vocabulary"
