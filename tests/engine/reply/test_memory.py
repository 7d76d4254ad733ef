"""Speculation adds at most 300 MB of peak RSS over plain decoding (no n_ctx × n_vocab buffer)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from draftlight.modes import AUTO, DRAFT, NGRAM, OFF, Mode

SCRIPT = """
import resource, sys
from draftlight.engine.reply.generator import Engine
from draftlight.engine.core.load_options import LoadOptions
from draftlight.engine.core.sampling import SamplingParams
from draftlight.modes import DRAFT, Mode
target, mode = sys.argv[1], Mode.parse(sys.argv[2])
engine = Engine.load(target, target if mode == DRAFT else None, LoadOptions(n_ctx=4096))
messages = [{"role": "user", "content": "Describe the water cycle in detail. " * 10}]
for _ in engine.generate(messages, SamplingParams(max_tokens=16), mode):
    pass
engine.close()
print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024)
"""


def peak_rss_mb(model, mode: Mode) -> int:
    out = subprocess.run([sys.executable, "-c", SCRIPT, str(model), str(mode)], capture_output=True,
                         text=True, timeout=300, check=True)
    return int(out.stdout.strip().splitlines()[-1])


@pytest.mark.slow
def test_speculation_adds_less_than_300_mb_peak_rss(bundled_model):
    plain = peak_rss_mb(bundled_model, OFF)
    for mode in (NGRAM, DRAFT, AUTO):
        extra = peak_rss_mb(bundled_model, mode) - plain
        print(f"{mode}: +{extra} MB over plain ({plain} MB)")
        assert extra < 300, f"{mode} adds {extra} MB over plain decoding ({plain} MB)"
