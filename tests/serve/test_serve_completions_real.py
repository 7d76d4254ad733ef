"""POST /v1/completions on the bundled SmolLM2-135M: one `draftlight serve` process (its engine
in a host process, as users run it) and the `openai` client; fill in the middle on a copy of
the model whose metadata names FIM tokens (llama.cpp reads them from there)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time

import openai
import pytest

from draftlight.engine.core.load_options import LoadOptions
from draftlight.engine.core.sampling import SamplingParams
from draftlight.engine.reply.events import Done
from draftlight.engine.reply.generator import Engine
from draftlight.engine.text.raw_prompt import RawPrompt
from draftlight.modes import NGRAM, OFF
from tests.support.gguf_rewrite import rewrite_gguf

pytestmark = pytest.mark.slow

# A hand-written ChatML turn: the completion's prompt is read as given, special tokens included
PROMPT = ("<|im_start|>user\nRepeat after me: the United States of America.<|im_end|>\n"
          "<|im_start|>assistant\n")
GREEDY = SamplingParams(temperature=0.0, max_tokens=32)


@pytest.fixture(scope="module")
def client(tmp_path_factory, bundled_model):
    """`draftlight serve` in n-gram mode on a free port, and an `openai` client of it."""
    home = tmp_path_factory.mktemp("serve-home")
    log = home / "server.log"
    with log.open("w") as stderr:
        process = subprocess.Popen(
            [sys.executable, "-P", "-m", "draftlight", "serve", "--port", "0", "--target",
             str(bundled_model), "--mode", "ngram", "--ctx", "1024"],
            stdout=subprocess.DEVNULL, stderr=stderr,
            env={**os.environ, "DRAFTLIGHT_HOME": str(home)})
    try:
        deadline = time.monotonic() + 180
        while not (found := re.search(r"serving (\S+) at (http://\S+/v1)", log.read_text())):
            assert process.poll() is None and time.monotonic() < deadline, log.read_text()
            time.sleep(0.1)
        yield openai.OpenAI(base_url=found.group(2), api_key="none", max_retries=0,
                            timeout=120)
    finally:
        process.kill()
        process.wait()


def completion(engine: Engine, prompt: RawPrompt, mode) -> Done:
    return list(engine.generate([], GREEDY, mode, raw_prompt=prompt))[-1]


def test_served_completions_are_plain_decodings_text(client, bundled_model):
    engine = Engine.load(bundled_model, options=LoadOptions(n_ctx=1024))
    try:
        plain = completion(engine, RawPrompt(PROMPT), OFF)
        assert completion(engine, RawPrompt(PROMPT), NGRAM).text == plain.text
    finally:
        engine.close()
    model = client.models.list().data[0].id
    request = dict(model=model, prompt=PROMPT, temperature=0, max_tokens=32)
    reply = client.completions.create(**request)
    assert reply.choices[0].text == plain.text
    assert reply.usage.prompt_tokens == plain.stats.prompt_tokens
    assert reply.usage.model_extra["draftlight"]["mode"] == "ngram"
    streamed = client.completions.create(**request, stream=True)
    assert "".join(c.choices[0].text for c in streamed if c.choices) == plain.text


def test_a_suffix_for_a_model_without_fim_tokens_is_a_400_saying_why(client):
    model = client.models.list().data[0].id
    with pytest.raises(openai.BadRequestError, match="no FIM tokens") as caught:
        client.completions.create(model=model, prompt="def add(a, b):\n", suffix="\n",
                                  max_tokens=8)
    assert caught.value.body["param"] == "suffix"


def test_fill_in_the_middle_through_the_models_own_fim_tokens(bundled_model, tmp_path):
    # SmolLM2's vocabulary has no FIM set; three of its own special tokens stand in
    fim = {"tokenizer.ggml.fim_pre_token_id": 3, "tokenizer.ggml.fim_suf_token_id": 4,
           "tokenizer.ggml.fim_mid_token_id": 5}
    engine = Engine.load(rewrite_gguf(bundled_model, tmp_path / "fim.gguf", fim),
                         options=LoadOptions(n_ctx=1024))
    try:
        prompt = RawPrompt("def add(a, b):\n", suffix="\n\nprint(add(1, 2))\n")
        tokens = engine.tokenize_raw(prompt)
        target = engine.target
        assert tokens == ([3] + target.tokenize(prompt.text, add_bos=False) + [4]
                          + target.tokenize(prompt.suffix, add_bos=False) + [5])
        plain = completion(engine, prompt, OFF)
        assert plain.stats.prompt_tokens == len(tokens) and plain.stats.new_tokens > 0
        assert completion(engine, prompt, NGRAM).text == plain.text
    finally:
        engine.close()
