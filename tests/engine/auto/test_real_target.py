"""The engine on a real 1.5B K-quant target (Qwen2.5-Coder-1.5B-Instruct Q4_K_M): the load-time
invariance check and greedy speculation against plain decoding. The full real-target benchmark
is in docs/bench-cpu.md, with its command."""

from __future__ import annotations

from pathlib import Path

import pytest

from draftlight.engine.reply.generator import Engine
from draftlight.engine.core.load_options import LoadOptions
from tests.support.real_engine import assert_identical_but_for_near_ties

PROMPTS = [
    "Summarize in one sentence: The meeting moved from Monday to Wednesday because the room "
    "was booked. Everyone must bring the quarterly report to the meeting on Wednesday.",
    "Rename the variable x to count in this code: def f(items):\n    x = 0\n    for i in items:"
    "\n        x += 1\n    return x",
    "What is 12 times 12? Answer with the number and one sentence.",
]


@pytest.fixture(scope="module")
def qwen_engine(qwen_1_5b, module_home):
    """One load of the 1.5B target for the module's tests (a load runs the invariance check:
    most of a test's time on a slow machine)."""
    engine = Engine.load(qwen_1_5b, None, LoadOptions(n_ctx=2048))
    yield engine
    engine.close()


@pytest.mark.slow
def test_the_load_time_check_finds_the_k_quant_target_not_batch_invariant(qwen_engine):
    assert qwen_engine.target.n_vocab > 150_000
    assert not qwen_engine.drift.exact
    assert "greedy identity not guaranteed here" in qwen_engine.drift.describe()


@pytest.mark.slow
def test_greedy_speculation_on_the_real_target_differs_only_at_near_ties(qwen_1_5b, qwen_engine):
    assert_identical_but_for_near_ties(qwen_1_5b, PROMPTS, max_tokens=32, min_identical=0.5,
                                       engine=qwen_engine)


def test_the_joined_file_is_checked_by_sha256_and_hashed_once(tmp_path, monkeypatch):
    """On three small stand-in parts: a swapped part of the right size is refused, a joined
    file is kept without re-reading it while its size and mtime are unchanged, and re-checked
    (then rejoined) once it changes."""
    import hashlib
    from tests.support import real_target
    parts = [bytes([n]) * 1000 for n in range(3)]
    for n, data in enumerate(parts, 1):
        (tmp_path / f"part{n:02d}.bin").write_bytes(data)
    monkeypatch.setattr(real_target, "PARTS", 3)
    monkeypatch.setattr(real_target, "SIZE", 3000)
    monkeypatch.setattr(real_target, "SHA256", hashlib.sha256(b"".join(parts)).hexdigest())
    monkeypatch.setattr(real_target, "part_path", lambda n: tmp_path / f"part{n:02d}.bin")
    joined = real_target.join_parts(tmp_path / "model.gguf")
    assert joined.read_bytes() == b"".join(parts)

    reads = []
    real_open = Path.open
    monkeypatch.setattr(Path, "open", lambda self, *a, **k: reads.append(self.name)
                        or real_open(self, *a, **k))
    assert real_target.join_parts(joined) == joined
    assert "model.gguf" not in reads  # the marker vouches for it: not read again

    joined.write_bytes(b"\0" * 3000)  # same size, other bytes, new mtime: hashed, then rejoined
    assert real_target.join_parts(joined).read_bytes() == b"".join(parts)
    assert "model.gguf" in reads

    (tmp_path / "part02.bin").write_bytes(b"\7" * 1000)
    with pytest.raises(AssertionError, match="not the expected file"):
        real_target.join_parts(tmp_path / "other.gguf")
