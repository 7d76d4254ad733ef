"""One launcher (draftlight/launch.py): the command line's and the window's options become one
EngineSpec, whose validate() names every bad option; a remote engine asks the server which
model to use when none is given."""

from __future__ import annotations

import argparse
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from draftlight.engine.server.client import Endpoint, ServerError, with_model
from draftlight.engine_spec import EngineSpec, SpecError
from draftlight.settings import Settings
from draftlight.modes import AUTO, DRAFT, NGRAM, REMOTE, Mode


def arguments(**given) -> argparse.Namespace:
    fields = dict(mode=AUTO, target=None, draft=None, ctx=None, engine=None, api_key=None,
                  model=None, rpc=None, server_binary=None)
    return argparse.Namespace(**(fields | given))


def test_a_llama_mode_or_a_split_runs_on_llama_server():
    chain_mode = Mode.parse("llama:ngram-simple+ngram-mod")
    chain = EngineSpec.from_arguments(arguments(mode=chain_mode), Settings())
    assert (chain.engine, chain.spec_type, chain.mode) == \
        ("llama-server", "ngram-simple,ngram-mod", chain_mode)
    split = EngineSpec.from_arguments(arguments(mode=DRAFT, draft="d.gguf", rpc="h:1"),
                                      Settings())
    assert (split.engine, split.spec_type, split.rpc_servers) == \
        ("llama-server", "draft-simple", "h:1")
    local = EngineSpec.from_arguments(arguments(mode=NGRAM, ctx=1024), Settings(n_threads=3))
    assert (local.engine, local.n_ctx, local.n_threads, local.time_auto) == \
        ("local", 1024, 3, False)
    remote = EngineSpec.from_arguments(arguments(engine="http://h:1/v1", model="m"), Settings())
    assert (remote.engine, remote.mode, remote.server_model) == ("remote", REMOTE, "m")


@pytest.mark.parametrize("spec, words", [
    (EngineSpec(n_ctx=100), "--ctx"),
    (EngineSpec(mode=DRAFT), "--draft"),
    (EngineSpec(engine="llama-server", spec_type="draft-simple"), "--draft"),
    (EngineSpec(engine="llama-server", spec_type="ngram-mod,bogus"), "bogus"),
    (EngineSpec(engine="llama-server", rpc_servers="nohost"), "HOST:PORT"),
    (EngineSpec(engine="remote", server_url="ftp://x"), "server address"),
    (EngineSpec(n_threads=-1), "threads"),
])
def test_every_bad_option_is_one_sentence_that_names_it(spec, words):
    with pytest.raises(SpecError, match=words):
        spec.validate()


@pytest.mark.parametrize("field, value, flag", [
    ("n_ctx", 100, "--ctx"), ("n_threads", -2, "threads"),
    ("target_gpu_layers", -5, "the target's GPU layers"),
    ("draft_gpu_layers", -5, "the draft's GPU layers"),
    ("rpc_servers", "nohost", "HOST:PORT"), ("spec_type", "ngram-mod,bogus", "bogus"),
])
def test_settings_and_a_spec_refuse_a_value_by_one_rule(field, value, flag):
    """settings.RULES: the same value is refused by Settings.check and EngineSpec.validate,
    each naming the option as its reader knows it (the field; the command line's flag)."""
    with pytest.raises(ValueError) as in_settings:
        Settings(**{field: value}).check()
    with pytest.raises(SpecError) as in_spec:
        EngineSpec(engine="llama-server", **{field: value}).validate()
    assert field in str(in_settings.value) or flag in str(in_settings.value)
    assert flag in str(in_spec.value)
    Settings(**{field: Settings.__dataclass_fields__[field].default}).check()  # the default: fine


def test_a_spec_is_given_a_mode_not_its_text():
    with pytest.raises(TypeError, match="Mode"):
        EngineSpec(mode="ngram")


def test_serves_own_api_key_is_not_the_engines():
    """`draftlight serve --api-key K`: K guards serve; only `--engine URL --api-key K` (chat,
    bench) sends a key to a server."""
    served = EngineSpec.from_arguments(arguments(api_key="clients-key"), Settings())
    assert served.server_api_key == "" and served.engine == "local"
    remote = EngineSpec.from_arguments(arguments(engine="http://h:1/v1", api_key="k"), Settings())
    assert remote.server_api_key == "k"


def test_an_unknown_engine_is_refused_when_the_spec_is_made():
    with pytest.raises(SpecError, match="engine must be one of local, llama-server, remote"):
        EngineSpec(engine="elsewhere")


def test_good_specs_pass():
    for spec in (EngineSpec(), EngineSpec(mode=DRAFT, draft_path="d.gguf"),
                 EngineSpec(engine="llama-server", spec_type="draft-mtp,ngram-mod"),
                 EngineSpec(engine="remote", mode=REMOTE, server_url="http://h:1")):
        spec.validate()


def test_the_window_spec_keeps_the_settings():
    settings = Settings(target_path="t.gguf", draft_path="d.gguf", n_ctx=2048, engine="remote",
                        server_url=" http://h:1 ", server_model="big")
    spec = EngineSpec.from_settings(settings)
    assert (spec.target_path, spec.draft_path, spec.server_url, spec.server_model, spec.mode) \
        == ("t.gguf", "d.gguf", "http://h:1", "big", REMOTE)
    assert not spec.same_target(EngineSpec.from_settings(
        Settings(engine="remote", server_url="http://h:1", server_model="small")))


class ModelList(BaseHTTPRequestHandler):
    models: list[str] = []

    def do_GET(self):  # noqa: N802 - http.server's name
        body = json.dumps({"object": "list", "data": [{"id": m} for m in self.models]}).encode()
        self.send_response(200 if self.path == "/v1/models" else 404)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


@pytest.fixture
def model_server():
    server = ThreadingHTTPServer(("127.0.0.1", 0), ModelList)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    server.shutdown()
    server.server_close()


def test_a_remote_engine_without_a_model_asks_the_server(model_server, monkeypatch):
    monkeypatch.setattr(ModelList, "models", ["only-one"])
    assert with_model(Endpoint(model_server)).model == "only-one"
    assert with_model(Endpoint(model_server, model="mine")).model == "mine"
    monkeypatch.setattr(ModelList, "models", ["a", "b"])
    with pytest.raises(ServerError, match=r"2 models \(a, b\): choose one with --model"):
        with_model(Endpoint(model_server))
    monkeypatch.setattr(ModelList, "models", [])
    assert with_model(Endpoint(model_server)).model is None


def test_a_server_that_cannot_list_its_models_is_asked_without_one():
    assert with_model(Endpoint("http://127.0.0.1:9/v1", timeout=2)).model is None


def test_load_options_name_llama_cpps_q8_0_without_importing_it():
    import llama_cpp

    from draftlight.engine.core.load_options import GGML_TYPE_F16, GGML_TYPE_Q8_0
    assert GGML_TYPE_Q8_0 == llama_cpp.GGML_TYPE_Q8_0
    assert GGML_TYPE_F16 == llama_cpp.GGML_TYPE_F16


def test_starting_llama_server_does_not_load_llama_cpp():
    import subprocess
    import sys
    code = ("import sys\nfrom pathlib import Path\n"
            "from draftlight.engine.server.process import ServerOptions\n"
            "ServerOptions(target=Path('t.gguf'), spec_type='ngram-simple,ngram-mod').arguments()\n"
            "import draftlight.launch, draftlight.engine.server.server_engine\n"
            "print('llama_cpp' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-P", "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "False"
