"""One timed load for `draftlight bench load` (load.py), in a process of its own:

    python -m draftlight.bench.load_child bare FILE N_CTX
    python -m draftlight.bench.load_child app TARGET|"" [--measure]

`bare`: llama-cpp-python as its own users load a model: `Llama(model_path=FILE)` with the
context the app chose, then the first token of a chat completion. `app`: the window's worker's
path (the default model's copy, or the shipped file until it is made; a found model's reference
resolved; the context chosen; the engine opened as EngineSpec.from_settings opens it), then the
first token of a reply in auto mode; with --measure, what the worker would then do in the
background, each step timed (the default model's copy made and loaded, the measurements). Both
time from after their imports (llama_cpp; Draftlight's engine modules, which import it) and
print one JSON object on their last line.
"""

from __future__ import annotations

import json
import sys
import time
from dataclasses import replace

MESSAGES = [{"role": "user", "content": "Name three primary colours."}]


def bare(path: str, n_ctx: int) -> dict:
    from pathlib import Path

    import llama_cpp

    from draftlight.bench.lcp_pld import extra_buffers
    from draftlight.engine.llama.llama_load import extra_buffers_usable
    usable = extra_buffers_usable(Path(path))  # off where they crash this CPU (cpu_check.py)
    started = time.perf_counter()
    with extra_buffers(usable):
        model = llama_cpp.Llama(model_path=path, n_ctx=n_ctx, verbose=False)
    loaded = time.perf_counter()
    for chunk in model.create_chat_completion(MESSAGES, max_tokens=8, stream=True,
                                              temperature=0.0):
        if chunk["choices"][0]["delta"].get("content"):
            break
    first = time.perf_counter()
    model.close()
    return {"steps": {"load": loaded - started, "first token": first - loaded},
            "total": first - started}


def app(target: str, measure: bool) -> dict:
    import draftlight.engine.reply.generator  # noqa: F401 - imports before the clock, as bare's
    import draftlight.engine.llama.llama_backend  # noqa: F401   llama_cpp is imported before its own
    from draftlight.engine.reply.events import TextPiece
    from draftlight.engine.core.sampling import SamplingParams
    from draftlight.modes import AUTO
    from draftlight.engine_spec import EngineSpec, with_model_files
    from draftlight.launch import open_engine, resolve_context
    from draftlight.settings import Settings
    from draftlight.store.default_model import default_now

    steps: dict[str, float] = {}
    started = mark = time.perf_counter()

    def step(name: str) -> None:
        nonlocal mark
        now = time.perf_counter()
        steps[name] = steps.get(name, 0.0) + now - mark
        mark = now

    asked = with_model_files(EngineSpec.from_settings(Settings(target_path=target or None)))
    spec, copy_later = asked, False
    if not spec.target_path:  # as the window's worker: the shipped file until the copy is made
        path, copy_later = default_now()
        spec = replace(spec, target_path=str(path))
        step("default model ready")
    spec, _ = resolve_context(spec)
    engine = open_engine(spec)
    step("load")
    events = engine.generate(MESSAGES, SamplingParams(max_tokens=8), AUTO)
    for event in events:
        if isinstance(event, TextPiece) and event.text:
            break
    events.close()
    step("first token")
    total = time.perf_counter() - started
    background = {}
    if measure:
        engine, background = _background(engine, asked, copy_later)
    engine.close()
    return {"steps": steps, "total": total, "background": background, "n_ctx": spec.n_ctx,
            "file": spec.target_path, "copy_later": copy_later}


def _background(engine, asked, copy_later: bool):
    """(the engine the worker ends with, seconds of each step it would do in the background):
    the default model's faster copy made and loaded (where the shipped file was used), then
    each measurement."""
    from draftlight.launch import open_engine, resolve_context
    from draftlight.store.default_model import prepare_default_model
    background = {}
    if copy_later:  # the faster copy, then the engine again on it
        begun = time.perf_counter()
        copy = prepare_default_model().path
        engine.close()
        engine = open_engine(resolve_context(replace(asked, target_path=str(copy)))[0])
        background["making the default model's faster copy and loading it"] = (
            time.perf_counter() - begun)
    while True:
        begun = time.perf_counter()
        name = engine.measure_next()
        if not name:
            break
        background[name] = time.perf_counter() - begun
    return engine, background


def main(argv: list[str]) -> int:
    if argv[0] == "bare":
        result = bare(argv[1], int(argv[2]))
    else:
        result = app(argv[1], "--measure" in argv)
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
