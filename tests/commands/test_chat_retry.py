"""/retry and /edit in `draftlight chat` (issue 40, part 5): the last question answered again,
the earlier answer drafting the new one (a Predicted Output: the model never sees it)."""

from __future__ import annotations

import json
import subprocess
import sys


def chat(*args: str, stdin: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-P", "-m", "draftlight", "chat", *args],
                          capture_output=True, text=True, timeout=300, input=stdin)


def test_retry_repeats_a_greedy_answer_drafted_by_the_earlier_one(bundled_model):
    proc = chat("--json", "--max-tokens", "40", "--mode", "ngram",
                stdin="Name three colours of the rainbow.\n/retry\n/edit\n"
                      "/edit Name two colours.\n")
    assert proc.returncode == 0, proc.stderr
    dones = [json.loads(line) for line in proc.stdout.splitlines()
             if '"done"' in line or '"type": "done"' in line]
    assert len(dones) == 3, proc.stdout[-2000:]
    first, again, edited = dones
    text = lambda d: d.get("text")  # noqa: E731
    assert text(again) == text(first)  # greedy: the same answer
    stats = again["stats"]
    assert stats["prediction_accepted"] >= 0.6 * stats["new_tokens"], stats
    assert "/edit needs the new question" in proc.stderr
    assert text(edited) and edited["stats"]["new_tokens"] > 0
    # The edited question answered as if asked first, with speculation off: the same text.
    plain = chat("--json", "--max-tokens", "40", "--mode", "off", "Name two colours.", stdin="")
    [plain_done] = [json.loads(line) for line in plain.stdout.splitlines() if '"done"' in line]
    assert text(edited) == text(plain_done)


def test_continue_writes_on_from_the_last_answer(bundled_model):
    """/continue (issue 40, part 3): 16 tokens, then 16 more, are the 32 written at once."""
    proc = chat("--json", "--max-tokens", "16", "--mode", "ngram",
                stdin="/continue\nDescribe a busy harbour.\n/continue\n")
    assert proc.returncode == 0, proc.stderr
    assert "no answer to continue yet" in proc.stderr
    first, more = [json.loads(line)["text"] for line in proc.stdout.splitlines()
                   if '"done"' in line]
    whole = chat("--json", "--max-tokens", "32", "--mode", "off", "Describe a busy harbour.",
                 stdin="")
    [at_once] = [json.loads(line)["text"] for line in whole.stdout.splitlines() if '"done"' in line]
    assert first + more == at_once
