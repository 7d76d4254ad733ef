"""The quantizer's child process: llama.cpp's own quantizer run on one GGUF, each tensor it writes
reported on stdout as a JSON line (["progress", done, total, stage], then ["done"] or ["error",
why]), and the result loaded once to verify it. store/convert.py starts it
(`python -P -m draftlight.store.quantize_child`, or the frozen app's hidden command) and follows
its lines; a llama.cpp call cannot be interrupted from Python, while a child can be stopped."""

from __future__ import annotations

import json
import re
import sys


def quantize_child(source: str, temp: str, type_name: str, threads: int) -> int:
    """In the child process: quantise, reporting each tensor on stdout, then load the result."""
    import ctypes

    import llama_cpp

    def send(*message: object) -> None:
        sys.stdout.write(json.dumps(message) + "\n")
        sys.stdout.flush()

    tensor_line = re.compile(rb"\[\s*(\d+)/\s*(\d+)\]")
    errors: list[str] = []

    @llama_cpp.llama_log_callback
    def on_log(level: int, text: bytes, user_data) -> None:
        match = tensor_line.match(text)
        if match:
            send("progress", int(match[1]), int(match[2]), "quantizing")
        elif level in (2, 3):  # warnings and errors: the last ones explain a failure
            errors.append(text.decode("utf-8", "replace").strip())

    llama_cpp.llama_log_set(on_log, ctypes.c_void_p(0))
    params = llama_cpp.llama_model_quantize_default_params()
    params.ftype = getattr(llama_cpp, f"LLAMA_FTYPE_MOSTLY_{type_name}")
    params.allow_requantize = True
    params.nthread = threads
    status = llama_cpp.llama_model_quantize(source.encode(), temp.encode(), ctypes.byref(params))
    if status != 0:
        send("error", errors[-1] if errors else f"llama.cpp status {status}")
        return 1
    send("progress", 0, 0, "verifying")
    model_params = llama_cpp.llama_model_default_params()
    # Loaded only to be checked, never run: no repacked copy of the weights (which takes time,
    # and is where llama.cpp's AMX kernels come in, engine/llama/cpu_check.py).
    model_params.use_extra_bufts = False
    model = llama_cpp.llama_model_load_from_file(temp.encode(), model_params)
    if not model:
        send("error", "the converted file does not load")
        return 1
    loaded = llama_cpp.llama_model_n_params(model)
    llama_cpp.llama_model_free(model)
    if loaded <= 0:
        send("error", "the converted file has no weights")
        return 1
    send("done")
    return 0


if __name__ == "__main__":
    source_arg, temp_arg, type_arg, threads_arg = sys.argv[1:5]
    raise SystemExit(quantize_child(source_arg, temp_arg, type_arg, int(threads_arg)))
