"""llama-server's --spec-type draft-mtp, on the tiny MTP models of
tests/support/synthetic_models.py.

The random model's MTP block drafts tokens the target nearly always rejects, and greedy text
stays token for token that of plain decoding. The agreeing model's MTP block drafts exactly what
the target says, so (nearly) every draft is accepted, and `draftlight chat --json` labels those
tokens "draft". Together: the drafts come from the file's own MTP block, are counted, are
verified (rejections change nothing), and accepted ones reach the user as drafted. Nothing here
measures a trained MTP head's acceptance or speed-up.
"""

from __future__ import annotations

import json

import pytest

from draftlight.cli import main
from draftlight.engine.reply.events import Done, TextPiece
from draftlight.engine.core.sampling import SamplingParams
from draftlight.engine.server.server_engine import ServerEngine
from draftlight.engine.server.process import ServerOptions
from draftlight.settings import Settings, save_settings
from draftlight.store.gguf_info import has_mtp
from tests.support.synthetic_models import write_model
from draftlight.modes import Mode

pytestmark = pytest.mark.slow
PROMPTS = ["Tell me about the sea.", "Write a short poem about a cat."]
PARAMS = SamplingParams(max_tokens=40)


@pytest.fixture(scope="module")
def random_model(tmp_path_factory):
    return write_model("glm4moe-mtp", tmp_path_factory.mktemp("mtp") / "random.gguf")


@pytest.fixture(scope="module")
def agreeing_model(tmp_path_factory):
    return write_model("glm4moe-mtp-agreeing", tmp_path_factory.mktemp("mtp") / "agreeing.gguf")


def answers(binary, model, mode):
    """(Done, pieces) for each prompt, from one llama-server on `model` in `mode`."""
    # One thread: two llama.cpp threads on shared cores wait on each other at every op.
    options = ServerOptions(target=model, spec_type=mode.spec_type_argument, threads=1, n_ctx=512)
    engine = ServerEngine.managed(binary, options)
    try:
        results = []
        for prompt in PROMPTS:
            events = list(engine.generate([{"role": "user", "content": prompt}], PARAMS, mode))
            assert isinstance(events[-1], Done)
            results.append((events[-1], [e for e in events if isinstance(e, TextPiece)]))
        return results
    finally:
        engine.close()


def test_has_mtp_reads_the_nextn_layer_count(random_model, agreeing_model, bundled_model):
    assert has_mtp(random_model) == has_mtp(agreeing_model) == 1
    assert has_mtp(bundled_model) == 0


def test_random_mtp_drafts_are_rejected_and_change_no_token(llama_server_binary, random_model):
    plain = answers(llama_server_binary, random_model, Mode.parse("llama:none"))
    drafted = answers(llama_server_binary, random_model, Mode.parse("llama:draft-mtp"))
    for (base, _), (done, pieces) in zip(plain, drafted):
        assert base.stats.new_tokens == done.stats.new_tokens == 40
        assert done.text == base.text and "".join(p.text for p in pieces) == done.text
        assert base.stats.drafted == 0 and done.stats.mode == Mode.parse("llama:draft-mtp")
        # drafts were made, and mostly rejected (measured: 0 of ~110 accepted)
        assert done.stats.drafted >= 20
        assert done.stats.accepted <= done.stats.drafted / 4


def test_agreeing_mtp_drafts_are_accepted(llama_server_binary, agreeing_model):
    plain = answers(llama_server_binary, agreeing_model, Mode.parse("llama:none"))
    drafted = answers(llama_server_binary, agreeing_model, Mode.parse("llama:draft-mtp"))
    for (base, _), (done, pieces) in zip(plain, drafted):
        stats = done.stats
        assert done.text == base.text and stats.new_tokens == 40
        assert stats.drafted >= 20 and stats.accepted / stats.drafted > 0.9  # measured: 1.0
        # every accepted token is streamed (no control token ever follows, so no EOS), one
        # piece each, save where a piece holds a few tokens (an unfinished UTF-8 character)
        assert stats.accepted - 2 <= sum(p.source == "draft" for p in pieces) <= stats.accepted
        assert stats.target_passes < stats.new_tokens / 2


def test_chat_json_shows_accepted_mtp_drafts(capsys, llama_server_binary, agreeing_model):
    save_settings(Settings(n_threads=1))  # in this test's own DRAFTLIGHT_HOME
    code = main(["chat", "--mode", "llama:draft-mtp", "--target", str(agreeing_model),
                 "--server-binary", str(llama_server_binary), "--json", "--max-tokens", "40",
                 "--ctx", "512", "Tell me about the sea."])
    assert code == 0
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()
             if line.startswith("{")]
    sources = [line["source"] for line in lines if line["type"] == "token"]
    stats = lines[-1]["stats"]
    assert stats["mode"] == "llama:draft-mtp" and stats["draft_kind"] == "llama-server"
    assert stats["accepted"] / stats["drafted"] > 0.9
    assert stats["accepted"] - 2 <= sources.count("draft") <= stats["accepted"]
    assert stats["accepted"] >= 20
    assert set(sources) == {"draft", "target"}
