"""A 50-turn conversation through the engine on the bundled model: memory, threads and open
files stay flat. Run with -s to see the figures."""

from __future__ import annotations

import os
import threading
import time

import pytest

from draftlight.engine.reply.events import Done, Notice
from draftlight.engine.reply.generator import Engine
from draftlight.engine.core.load_options import LoadOptions
from draftlight.engine.core.sampling import SamplingParams
from draftlight.modes import NGRAM

pytestmark = pytest.mark.slow
TURNS = 50  # 200 took 4.5 min on 2 cores; 40 turns after the warm-up still show a leak of 0.3 MB a turn
WARMUP = 10  # turns before the baseline: first-use allocations are not leaks
N_CTX = 1536  # the 50 turns reach ~1,300 tokens


def rss_bytes() -> int:
    with open("/proc/self/statm") as stream:
        return int(stream.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


def test_50_turns_keep_memory_threads_and_files_flat(bundled_model):
    # 50 short turns take ~1,300 tokens: the context holds them all, so every turn reuses the
    # cache (dropping old turns re-evaluates the prompt: minutes on two cores; tested elsewhere).
    engine = Engine.load(bundled_model, None, LoadOptions(n_ctx=N_CTX))
    params = SamplingParams(max_tokens=8)
    messages: list[dict[str, str]] = []
    dropped_notices = 0
    started = time.perf_counter()
    try:
        # llama.cpp touches KV cache pages as the context grows: touch them all first, so that
        # they are not counted as growth (1,000 tokens ≈ 23 MB on this model).
        filler = engine.target.tokenize("The cat sat on the mat. " * 2000, add_bos=False)
        engine.target.eval(filler[:N_CTX - 1], n_logits=0)
        engine.target.truncate(0)
        for turn in range(TURNS):
            if turn == WARMUP:
                base = (rss_bytes(), threading.active_count(), open_fds())
            messages.append({"role": "user", "content": f"Turn {turn}: name a colour."})
            done = None
            for event in engine.generate(messages, params, NGRAM):
                if isinstance(event, Done):
                    done = event
                elif isinstance(event, Notice):
                    dropped_notices += 1
            messages.append({"role": "assistant", "content": done.text})
        prompt_tokens = done.stats.prompt_tokens
        end = (rss_bytes(), threading.active_count(), open_fds())
    finally:
        engine.close()
    seconds = time.perf_counter() - started
    growth_mb = (end[0] - base[0]) / 2**20
    print(f"\nsoak: {TURNS} turns in {seconds:.0f} s; RSS {base[0] / 2**20:.0f} -> "
          f"{end[0] / 2**20:.0f} MiB ({growth_mb:+.1f} MiB); threads {base[1]} -> {end[1]}; "
          f"open files {base[2]} -> {end[2]}; last prompt {prompt_tokens:,} tokens")
    assert growth_mb < 12  # 0.3 MB a turn (it was -0.5 MB over these 40 turns here)
    assert end[1] <= base[1] and end[2] <= base[2]
    assert dropped_notices == 0
