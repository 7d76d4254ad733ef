"""The child process of cpu_check: load a model and evaluate one batch. A crash here (SIGILL) is
what the parent looks for; it runs as `python -m draftlight.engine.llama.cpu_check_child MODEL 1|0` (1: with
llama.cpp's extra buffer types) or through the frozen app's hidden command."""

from __future__ import annotations

import sys

from draftlight.engine.llama.llama_backend import LlamaBackend

from draftlight.engine.core.load_options import LoadOptions


def child(model: str, extra_buffers: str) -> int:
    options = LoadOptions(n_ctx=256, n_batch=64, extra_buffers=extra_buffers == "1",
                          check_cpu=False)
    with LlamaBackend(model, options) as backend:
        backend.eval(backend.tokenize("The United States of America is a country in",
                                      add_bos=True))
    return 0


if __name__ == "__main__":
    sys.exit(child(*sys.argv[1:3]))
