"""Downloads against the loopback hub: real bytes over real HTTP, counted by the server."""

from __future__ import annotations

import errno
import hashlib
import io
import shutil
from collections import namedtuple

import pytest

from draftlight.store import downloads as downloads_module
from draftlight.store.download_queue import DownloadQueue
from draftlight.store.downloads import DownloadJob, JobState
from draftlight.store.errors import (ChecksumMismatchError, DownloadCancelledError,
                              DownloadInterruptedError, HubOfflineError, InsecureRedirectError,
                              InsufficientSpaceError, UnsafeFileNameError)
from draftlight.store.http_client import check_redirect
from draftlight.store.hub import HubClient
from draftlight.store.installed import list_installed
from tests.support.hub_fixtures import (OTHER_FILE, SMALL_FILE, SMALL_REPO, SMALL_SIZE,
                                        TARGET_FILE, TARGET_REPO)


def served(fake_hub, repo=SMALL_REPO, name=SMALL_FILE) -> bytes:
    return fake_hub.repos[repo].files[name]


def installed_names() -> set[str]:
    return {m.name for m in list_installed() if m.source != "bundled"}


def test_full_download_reports_progress_and_installs(fake_hub, hub_client):
    fake_hub.delay_per_chunk = 0.005  # a few tenths of a second, so throttled events show up
    events = []
    job = DownloadJob(hub_client, SMALL_REPO, SMALL_FILE,
                      on_progress=lambda j, p: events.append(p))
    model = job.run()

    data = served(fake_hub)
    assert model.path.read_bytes() == data
    assert model.sha256 == hashlib.sha256(data).hexdigest()
    assert model.commit == fake_hub.repos[SMALL_REPO].commit
    assert installed_names() == {"qwen2.5-0.5b-instruct-q8_0"}
    assert not job.part_path.exists() and not job.sidecar_path.exists()

    states = [e.state for e in events]
    assert states[0] == JobState.CHECKING and states[-2:] == [JobState.VERIFYING, JobState.DONE]
    progress = [e for e in events if e.state == JobState.DOWNLOADING]
    assert len(progress) >= 2
    assert all(e.total == SMALL_SIZE for e in progress)
    assert [e.downloaded for e in progress] == sorted(e.downloaded for e in progress)
    assert any(e.speed > 0 and e.eta is not None for e in progress)
    assert events[-1].downloaded == SMALL_SIZE and events[-1].fraction == 1.0
    assert fake_hub.bytes_sent(SMALL_FILE) == SMALL_SIZE


def test_cancel_then_resume_after_restart_fetches_only_the_missing_bytes(fake_hub, hub_client):
    fake_hub.delay_per_chunk = 0.01

    def cancel_after_a_megabyte(job, progress):
        if progress.downloaded >= 1 << 20:
            job.cancel()

    first = DownloadJob(hub_client, SMALL_REPO, SMALL_FILE, on_progress=cancel_after_a_megabyte)
    with pytest.raises(DownloadCancelledError, match="bytes kept to resume"):
        first.run()
    assert first.state == JobState.CANCELLED
    on_disk = first.part_path.stat().st_size
    assert 1 << 20 <= on_disk < SMALL_SIZE
    assert not first.destination.exists() and installed_names() == set()

    # A new job and a new client, as after an app restart.
    fake_hub.delay_per_chunk = 0.0
    second = DownloadJob(HubClient(fake_hub.url), SMALL_REPO, SMALL_FILE)
    model = second.run()

    resumed = fake_hub.file_requests(SMALL_FILE)[-1]
    assert resumed.range_start == on_disk
    assert resumed.body_bytes == SMALL_SIZE - on_disk  # nothing on disk was sent again
    assert second.progress.resumed_from == on_disk
    assert model.path.read_bytes() == served(fake_hub)


def test_wrong_sha256_is_rejected_and_nothing_installed(fake_hub, hub_client):
    fake_hub.wrong_sha.add(SMALL_FILE)
    job = DownloadJob(hub_client, SMALL_REPO, SMALL_FILE)
    with pytest.raises(ChecksumMismatchError, match="sha256 mismatch"):
        job.run()
    assert not job.destination.exists()
    assert not job.part_path.exists() and not job.sidecar_path.exists()
    assert installed_names() == set()


def test_explicit_sha256_overrides_the_hub(fake_hub, hub_client):
    job = DownloadJob(hub_client, SMALL_REPO, SMALL_FILE, sha256="0" * 64)
    with pytest.raises(ChecksumMismatchError):
        job.run()
    assert installed_names() == set()


def test_connection_dropped_midway_keeps_bytes_then_resumes(fake_hub, hub_client):
    fake_hub.drop_after[SMALL_FILE] = 1_000_000
    job = DownloadJob(hub_client, SMALL_REPO, SMALL_FILE, retries=0)
    with pytest.raises(DownloadInterruptedError, match="connection was lost.*resume"):
        job.run()
    assert job.part_path.stat().st_size == 1_000_000  # every byte received was kept
    assert installed_names() == set()

    model = DownloadJob(hub_client, SMALL_REPO, SMALL_FILE).run()
    assert fake_hub.file_requests(SMALL_FILE)[-1].range_start == 1_000_000
    assert fake_hub.bytes_sent(SMALL_FILE) == SMALL_SIZE
    assert model.path.read_bytes() == served(fake_hub)


def test_connection_dropped_midway_is_retried_automatically(fake_hub, hub_client):
    fake_hub.drop_after[SMALL_FILE] = 700_000
    model = DownloadJob(hub_client, SMALL_REPO, SMALL_FILE).run()
    requests = fake_hub.file_requests(SMALL_FILE)
    assert [r.range_start for r in requests] == [None, 700_000]
    assert fake_hub.bytes_sent(SMALL_FILE) == SMALL_SIZE
    assert model.path.read_bytes() == served(fake_hub)


def test_not_enough_free_space_is_refused_before_downloading(fake_hub, hub_client, monkeypatch):
    Usage = namedtuple("Usage", "total used free")
    monkeypatch.setattr(shutil, "disk_usage", lambda path: Usage(10 << 30, 10 << 30, 1 << 20))
    job = DownloadJob(hub_client, SMALL_REPO, SMALL_FILE)
    with pytest.raises(InsufficientSpaceError, match="needs .* MB free"):
        job.run()
    assert fake_hub.file_requests(SMALL_FILE) == []  # refused before any byte was fetched
    assert not job.destination.exists() and installed_names() == set()
    assert not job.destination.parent.exists()  # not even an empty folder is left


def test_disk_filling_up_while_writing_leaves_nothing_half_installed(fake_hub, hub_client,
                                                                     monkeypatch):
    class FullDisk(io.FileIO):
        written = 0

        def write(self, data):
            FullDisk.written += len(data)
            if FullDisk.written > 1 << 20:
                raise OSError(errno.ENOSPC, "No space left on device")
            return super().write(data)

    monkeypatch.setattr(downloads_module, "open", lambda path, mode: FullDisk(path, mode),
                        raising=False)
    job = DownloadJob(hub_client, SMALL_REPO, SMALL_FILE)
    with pytest.raises(InsufficientSpaceError, match="disk filled up"):
        job.run()
    assert FullDisk.written > 1 << 20  # the fake disk really filled up mid-download
    assert not job.destination.exists() and not job.part_path.exists()
    assert not job.sidecar_path.exists() and installed_names() == set()


@pytest.mark.parametrize("repo_id, filename", [
    (SMALL_REPO, "../../evil.gguf"),
    (SMALL_REPO, "sub/../../../evil.gguf"),
    (SMALL_REPO, "/etc/evil.gguf"),
    (SMALL_REPO, "..\\evil.gguf"),
    (SMALL_REPO, "C:\\evil.gguf"),
    ("../org", SMALL_FILE),
    ("org/..", SMALL_FILE),
    ("/abs", SMALL_FILE),
])
def test_path_traversal_is_refused(fake_hub, hub_client, repo_id, filename):
    with pytest.raises(UnsafeFileNameError, match="refused"):
        DownloadJob(hub_client, repo_id, filename)
    assert fake_hub.requests == []


def test_https_to_http_redirect_is_refused():
    with pytest.raises(InsecureRedirectError, match="from https to http"):
        check_redirect("https://huggingface.co/a/resolve/main/x.gguf", "http://cdn.example/x")
    check_redirect("https://huggingface.co/x", "https://cdn.example/x")  # allowed
    check_redirect("http://127.0.0.1:1/x", "http://127.0.0.1:2/x")  # plain http stays plain


def test_token_is_not_forwarded_to_another_host(fake_hub, monkeypatch):
    from tests.support.hub_server import FakeHub
    mirror = FakeHub()
    mirror.add_repo(SMALL_REPO, dict(fake_hub.repos[SMALL_REPO].files))
    mirror.start()
    try:
        fake_hub.redirects[SMALL_FILE] = f"{mirror.url}/{SMALL_REPO}/resolve/main/{SMALL_FILE}"
        hub = HubClient(fake_hub.url, token="hf_secret_token_123")
        DownloadJob(hub, SMALL_REPO, SMALL_FILE).run()
    finally:
        mirror.stop()
    assert fake_hub.file_requests(SMALL_FILE)[0].authorization == "Bearer hf_secret_token_123"
    assert mirror.file_requests(SMALL_FILE)[0].authorization is None
    assert mirror.bytes_sent(SMALL_FILE) == SMALL_SIZE


def test_offline_hub_fails_with_one_clear_message(closed_port_url, clean_env):
    job = DownloadJob(HubClient(closed_port_url), SMALL_REPO, SMALL_FILE)
    with pytest.raises(HubOfflineError, match="cannot reach the hub.*Bundled and local"):
        job.run()
    assert job.state == JobState.FAILED


def test_queue_runs_several_downloads_in_order(fake_hub, hub_client):
    started = []

    def record(job, progress):
        if progress.state == JobState.CHECKING:
            started.append(job.filename)

    queue = DownloadQueue()
    jobs = [queue.submit(DownloadJob(hub_client, repo, name, on_progress=record))
            for repo, name in [(SMALL_REPO, SMALL_FILE), (TARGET_REPO, TARGET_FILE),
                               (SMALL_REPO, OTHER_FILE)]]
    skipped = DownloadJob(hub_client, SMALL_REPO, "README.md")
    skipped.cancel()  # cancelled while still queued: never fetched
    queue.submit(skipped)
    try:
        assert queue.wait(timeout=60)
    finally:
        queue.close()
    assert [job.state for job in jobs] == [JobState.DONE] * 3
    assert skipped.state == JobState.CANCELLED
    assert started == [SMALL_FILE, TARGET_FILE, OTHER_FILE]
    assert installed_names() == {"qwen2.5-0.5b-instruct-q8_0", "qwen2.5-7b-instruct-q4_k_m",
                                 "qwen2.5-0.5b-instruct-q4_k_m"}
    assert fake_hub.file_requests("README.md", "HEAD") == []


def test_pulling_an_installed_file_again_fetches_nothing(fake_hub, hub_client):
    DownloadJob(hub_client, SMALL_REPO, SMALL_FILE).run()
    again = DownloadJob(hub_client, SMALL_REPO, SMALL_FILE).run()
    assert len(fake_hub.file_requests(SMALL_FILE)) == 1  # only the first download's GET
    assert fake_hub.bytes_sent(SMALL_FILE) == SMALL_SIZE
    assert again.path.read_bytes() == served(fake_hub)
    assert installed_names() == {"qwen2.5-0.5b-instruct-q8_0"}


def test_a_damaged_installed_file_is_fetched_again(fake_hub, hub_client):
    model = DownloadJob(hub_client, SMALL_REPO, SMALL_FILE).run()
    model.path.write_bytes(b"\0" * SMALL_SIZE)  # same size, wrong bytes
    DownloadJob(hub_client, SMALL_REPO, SMALL_FILE).run()
    assert model.path.read_bytes() == served(fake_hub)
    assert fake_hub.bytes_sent(SMALL_FILE) == 2 * SMALL_SIZE
