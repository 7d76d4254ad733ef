"""settings.py: TOML round trip, defaults, and a bad file set aside (no Qt)."""

from __future__ import annotations

import tomllib

import pytest

from draftlight import paths
from draftlight.settings import Settings, from_dict, load_settings, save_settings, settings_path, to_dict
from draftlight.modes import AUTO, OFF


def test_missing_file_gives_defaults_without_message():
    settings, message = load_settings()
    assert settings == Settings() and message is None


def test_round_trip_keeps_every_field_and_omits_none():
    original = Settings(target_path="/m/t.gguf", draft_path=None, n_ctx=2048, n_threads=3,
                        target_gpu_layers=-1, draft_gpu_layers=4, temperature=0.7, top_k=40,
                        top_p=0.9, min_p=0.05, seed=None, max_tokens=99,
                        system_prompt="Be brief.\nÉtienne 😀", mode=OFF,
                        show_highlights=False)
    save_settings(original)
    path = settings_path()
    assert path.parent == paths.config_dir()
    with path.open("rb") as handle:
        raw = tomllib.load(handle)
    assert "draft_path" not in raw and "seed" not in raw  # None is written as "absent"
    loaded, message = load_settings()
    assert message is None
    assert loaded == original
    original.seed = 7
    save_settings(original)
    assert load_settings()[0].seed == 7
    assert not list(path.parent.glob(".settings-*"))  # no temp file left behind


@pytest.mark.parametrize("content, reason", [
    (b"n_ctx = [1, 2", "TOML"),  # not TOML at all
    (b'n_ctx = "big"', "wrong type"),
    (b"temperature = -1.0", "temperature"),
    (b"show_highlights = 1", "wrong type"),
    (b"n_threads = true", "wrong type"),
    (b'engine = "cloud"', "engine must be one of local, llama-server, remote"),
    (b"engine = 3", "wrong type"),
    (b"\xff\xfe garbage", ""),
])
def test_bad_file_is_set_aside_and_defaults_apply(content, reason):
    path = settings_path()
    path.write_bytes(content)
    settings, message = load_settings()
    assert settings == Settings()
    assert message and "\n" not in message and "renamed to settings.toml.bad-" in message
    assert not path.exists()
    aside = list(path.parent.glob("settings.toml.bad-*"))
    assert len(aside) == 1 and aside[0].read_bytes() == content


def test_the_engine_is_a_kind_parsed_once_and_written_as_its_word():
    from draftlight.engine_kind import EngineKind
    from draftlight.engine_spec import EngineSpec, SpecError
    settings_path().write_text('engine = "llama-server"\n')
    settings, message = load_settings()
    assert message is None and settings.engine is EngineKind.LLAMA_SERVER
    assert EngineSpec.from_settings(settings).engine is EngineKind.LLAMA_SERVER
    assert Settings(engine="remote").engine is EngineKind.REMOTE  # however it is made
    save_settings(Settings(engine=EngineKind.REMOTE))
    assert 'engine = "remote"' in settings_path().read_text()
    with pytest.raises(SpecError, match="engine must be one of"):
        EngineSpec(engine="cloud")


def test_integers_are_accepted_for_floats_and_unknown_keys_ignored():
    settings_path().write_text("temperature = 1\ntop_p = 1\nfuture_option = 'x'\n")
    settings, message = load_settings()
    assert message is None
    assert settings.temperature == 1.0 and isinstance(settings.temperature, float)


def test_the_mode_defaults_to_auto_and_is_read_as_a_mode():
    assert Settings().mode == AUTO and Settings(draft_path="/d.gguf").mode == AUTO
    assert from_dict({"mode": ""}).mode == AUTO  # older files wrote "" for auto
    assert from_dict({"mode": "off"}).mode == OFF and to_dict(Settings(mode=OFF))["mode"] == "off"
    with pytest.raises(ValueError, match="choose"):
        from_dict({"mode": "fast"})
