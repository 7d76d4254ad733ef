"""A hub token (given like the settings give it, or from HF_TOKEN) never shows up in log
records, error messages, the models registry or the chat history."""

from __future__ import annotations

import logging

from draftlight import paths
from draftlight.store.download_queue import DownloadQueue
from draftlight.store.downloads import DownloadJob, JobState
from draftlight.store.hub import HubClient
from tests.support.hub_fixtures import GATED_REPO, SMALL_FILE, SMALL_REPO

SETTINGS_TOKEN = "hf_settings_token_abc123"
ENV_TOKEN = "hf_environment_token_xyz789"


def test_tokens_stay_out_of_logs_errors_and_files(fake_hub, monkeypatch, caplog):
    monkeypatch.setenv("HF_TOKEN", ENV_TOKEN)
    caplog.set_level(logging.DEBUG)  # everything any library logs, httpx included
    queue = DownloadQueue()
    hub = HubClient(fake_hub.url, token=SETTINGS_TOKEN)
    refused = queue.submit(DownloadJob(hub, GATED_REPO, "gated-Q4_0.gguf"))  # 403: no access
    missing = queue.submit(DownloadJob(hub, SMALL_REPO, "nope.gguf"))
    fine = queue.submit(DownloadJob(hub, SMALL_REPO, SMALL_FILE))
    assert queue.wait(60)
    queue.close()
    assert refused.state == missing.state == JobState.FAILED and fine.state == JobState.DONE
    assert fake_hub.file_requests(SMALL_FILE)[-1].authorization == f"Bearer {SETTINGS_TOKEN}"

    texts = [caplog.text, str(refused.error), repr(refused.error), str(missing.error), repr(hub)]
    texts += [p.read_text(errors="replace") for p in paths.data_dir().rglob("*")
              if p.is_file() and p.stat().st_size < 1 << 20]  # registry, sidecars, history
    for text in texts:
        assert SETTINGS_TOKEN not in text and ENV_TOKEN not in text
