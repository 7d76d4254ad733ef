"""Search, listing and errors through the real huggingface_hub client against the loopback hub."""

from __future__ import annotations

import time

import pytest
from huggingface_hub import get_token as REAL_GET_TOKEN

from draftlight.store.errors import (GatedRepoError, HubError, HubOfflineError, RemoteFileNotFoundError,
                              RepoNotFoundError)
from draftlight.store.hub import HubClient, resolve_endpoint
from tests.support.hub_fixtures import (GATED_REPO, SMALL_FILE, SMALL_REPO, SMALL_SIZE, SPLIT_REPO,
                                        TARGET_REPO)


def test_search_finds_gguf_repos_most_downloaded_first(hub_client):
    found = hub_client.search("qwen2.5")
    assert [repo.id for repo in found] == [TARGET_REPO, SMALL_REPO]
    assert found[0].downloads == 90
    assert hub_client.search("no-such-model") == []


def test_search_marks_gated_repos(hub_client):
    (gated,) = hub_client.search("gated")
    assert gated.id == GATED_REPO and gated.gated


def test_list_files_gives_quantisation_size_and_sha(fake_hub, hub_client):
    import hashlib
    files = {f.path: f for f in hub_client.list_files(SMALL_REPO)}
    assert set(files) == {SMALL_FILE, "Qwen2.5-0.5B-Instruct-Q4_K_M.gguf"}  # README left out
    small = files[SMALL_FILE]
    assert (small.quant, small.size) == ("Q8_0", SMALL_SIZE)
    assert small.sha256 == hashlib.sha256(fake_hub.repos[SMALL_REPO].files[SMALL_FILE]).hexdigest()
    assert small.is_single_model


def test_split_files_and_projectors_are_flagged(hub_client):
    files = hub_client.list_files(SPLIT_REPO)
    assert {f.path: (f.split, f.is_single_model) for f in files} == {
        "big-Q4_K_M-00001-of-00002.gguf": ((1, 2), False),
        "big-Q4_K_M-00002-of-00002.gguf": ((2, 2), False),
        "mmproj-big-f16.gguf": (None, False),
    }


def test_file_metadata_has_size_sha_and_commit(fake_hub, hub_client):
    remote = hub_client.file_metadata(SMALL_REPO, SMALL_FILE)
    assert remote.size == SMALL_SIZE
    assert remote.commit == fake_hub.repos[SMALL_REPO].commit
    assert remote.sha256 and len(remote.sha256) == 64
    assert remote.url.startswith(fake_hub.url)


def test_drafts_for_a_target_are_smaller_models_of_its_family(hub_client):
    drafts = hub_client.drafts_for(TARGET_REPO)
    assert [repo.id for repo in drafts] == [SMALL_REPO]
    assert hub_client.drafts_for("someone/Unknown-Model-GGUF") == []


def test_missing_repo_has_a_clear_message(hub_client):
    with pytest.raises(RepoNotFoundError, match=r"^no repository org/Nope-GGUF on http"):
        hub_client.list_files("org/Nope-GGUF")
    with pytest.raises(RepoNotFoundError, match="no repository org/Nope-GGUF"):
        hub_client.file_metadata("org/Nope-GGUF", "x.gguf")


def test_missing_file_and_revision_have_clear_messages(hub_client):
    with pytest.raises(RemoteFileNotFoundError, match="has no file 'nope.gguf'"):
        hub_client.file_metadata(SMALL_REPO, "nope.gguf")
    with pytest.raises(RemoteFileNotFoundError, match="has no revision 'v9'"):
        hub_client.list_files(SMALL_REPO, revision="v9")


def test_gated_repo_without_token_401(fake_hub, hub_client):
    with pytest.raises(GatedRepoError, match=f"{GATED_REPO} is gated: accept its terms"):
        hub_client.file_metadata(GATED_REPO, "gated-Q4_0.gguf")
    assert fake_hub.requests[-1].authorization is None


def test_gated_repo_with_a_token_that_lacks_access_403_never_shows_the_token(fake_hub,
                                                                             monkeypatch):
    monkeypatch.setenv("HF_TOKEN", "hf_env_secret_456")
    hub = HubClient(fake_hub.url, token="hf_settings_secret_789")
    with pytest.raises(GatedRepoError) as caught:
        hub.list_files(GATED_REPO)
    assert fake_hub.requests[-1].authorization == "Bearer hf_settings_secret_789"
    for text in (str(caught.value), repr(hub)):
        assert "hf_settings_secret_789" not in text and "hf_env_secret_456" not in text


def test_gated_repo_with_an_accepted_token_works(fake_hub):
    fake_hub.valid_tokens.add("hf_good_token")
    files = HubClient(fake_hub.url, token="hf_good_token").list_files(GATED_REPO)
    assert [f.path for f in files] == ["gated-Q4_0.gguf"]


def test_token_from_the_environment_is_used(fake_hub, monkeypatch):
    import huggingface_hub
    monkeypatch.setattr(huggingface_hub, "get_token", REAL_GET_TOKEN)  # reads HF_TOKEN
    monkeypatch.setenv("HF_TOKEN", "hf_good_env_token")
    fake_hub.valid_tokens.add("hf_good_env_token")
    assert HubClient(fake_hub.url).list_files(GATED_REPO)


def test_offline_hub_gives_one_message_fast(closed_port_url, clean_env):
    hub = HubClient(closed_port_url)
    began = time.monotonic()
    for call in (lambda: hub.search("qwen"), lambda: hub.list_files(SMALL_REPO),
                 lambda: hub.file_metadata(SMALL_REPO, SMALL_FILE)):
        with pytest.raises(HubOfflineError) as caught:
            call()
        message = str(caught.value)
        assert message.startswith("cannot reach the hub at 127.0.0.1:")
        assert "Bundled and local models still work" in message and "\n" not in message
    assert time.monotonic() - began < 5  # no 20-second retry back-off


def test_endpoint_comes_from_argument_then_environment(monkeypatch, clean_env):
    assert resolve_endpoint() == "https://huggingface.co"
    monkeypatch.setenv("DRAFTLIGHT_HF_ENDPOINT", "http://127.0.0.1:9/")
    assert resolve_endpoint() == "http://127.0.0.1:9"
    assert resolve_endpoint("https://mirror.example") == "https://mirror.example"
    with pytest.raises(HubError, match="must be an http"):
        resolve_endpoint("ftp://x")
