"""Resumable, verified downloads of hub files into the models folder.

A file is fetched into `<name>.part` next to where it will live, with a `<name>.part.json`
sidecar recording which remote version (etag, size) the bytes belong to. A cancel, a dropped
connection or an app restart keeps both, and the next attempt asks only for the missing bytes
with an HTTP Range request. The complete file is checked against its sha256, then moved into
place with os.replace, then registered: at no point is a half-written file "installed".
"""

from __future__ import annotations

import errno
import hashlib
import json
import shutil
import threading
import time
from pathlib import Path
from typing import Callable

from draftlight.shared_files import WaitCancelled, lock_path, once
from draftlight.store import http_client
from draftlight.store.download_progress import (PROGRESS_INTERVAL_S, DownloadProgress, JobState,
                                                SpeedMeter)
from draftlight.store.errors import (ChecksumMismatchError, DownloadCancelledError, DownloadError,
                              DownloadInterruptedError, HubError, InsufficientSpaceError)
from draftlight.store.hub import HubClient, RemoteFile
from draftlight.store.installed import (InstalledModel, hub_file_path, register_download,
                                 remove_empty_folders)
from draftlight.units import format_bytes

CHUNK_BYTES = 1 << 20
SPACE_MARGIN_BYTES = 16 << 20  # keep a little free beyond the file itself


ProgressCallback = Callable[["DownloadJob", DownloadProgress], None]


class DownloadJob:
    """One file from the hub. `run()` blocks; `cancel()` may be called from any thread.

    Raises (at construction):
        UnsafeFileNameError: the repo id or file name would leave the models folder.
    """

    def __init__(self, hub: HubClient, repo_id: str, filename: str, *, revision: str = "main",
                 sha256: str | None = None, name: str | None = None, retries: int = 2,
                 on_progress: ProgressCallback | None = None) -> None:
        self.hub, self.repo_id, self.filename, self.revision = hub, repo_id, filename, revision
        self.expected_sha256 = sha256.lower() if sha256 else None
        self.name, self.retries, self.on_progress = name, retries, on_progress
        self.destination = hub_file_path(repo_id, filename)
        self.part_path = self.destination.with_name(self.destination.name + ".part")
        self.sidecar_path = self.destination.with_name(self.destination.name + ".part.json")
        self.progress = DownloadProgress(JobState.QUEUED)
        self.result: InstalledModel | None = None
        self.error: Exception | None = None
        self._cancel = threading.Event()
        self._last_emit = 0.0
        self._downloaded = self._total = None  # bytes on disk / remote size, once known
        self._resumed_from = 0
        self._meter = SpeedMeter()

    @property
    def state(self) -> JobState:
        return self.progress.state

    def cancel(self) -> None:
        """Stop at the next chunk; the partial file is kept for a later resume."""
        self._cancel.set()

    def run(self) -> InstalledModel:
        """Download, verify, move into place and register.

        Raises:
            DownloadCancelledError, DownloadInterruptedError (partial kept for a resume);
            ChecksumMismatchError, InsufficientSpaceError (nothing kept); InsecureRedirectError;
            HubOfflineError, RepoNotFoundError, GatedRepoError, RemoteFileNotFoundError, HubError.
        """
        try:
            self.result = self._run()
        except BaseException as exc:
            self.error = exc
            remove_empty_folders(self.destination.parent)  # nothing is left behind for nothing
            cancelled = isinstance(exc, DownloadCancelledError)
            state = JobState.CANCELLED if cancelled else JobState.FAILED
            self._emit(state, force=True)
            raise
        self._emit(JobState.DONE, force=True)
        return self.result

    def _run(self) -> InstalledModel:
        self._emit(JobState.CHECKING, force=True)
        self._check_cancel()
        remote = self.hub.file_metadata(self.repo_id, self.filename, revision=self.revision)
        expected = self.expected_sha256 or remote.sha256
        self._total = remote.size
        self.destination.parent.mkdir(parents=True, exist_ok=True)
        try:  # one process fetches a file at a time; the next finds it complete
            with once(lock_path(self.destination), should_cancel=self._cancel.is_set,
                      on_wait=lambda: self._emit(JobState.WAITING, force=True)):
                return self._fetch_alone(remote, expected)
        except WaitCancelled:
            raise DownloadCancelledError(f"{self.filename}: cancelled") from None

    def _fetch_alone(self, remote: RemoteFile, expected: str | None) -> InstalledModel:
        """The rest of _run(), once this process holds the destination's lock."""
        if self._already_complete(remote, expected):
            self._downloaded = remote.size
            return self._register(remote, expected)
        offset = self._resumable_offset(remote)
        self._check_space(remote, offset)  # before a byte is fetched or a sidecar written
        self._write_sidecar(remote)
        self._resumed_from = self._downloaded = offset
        for attempt in range(self.retries + 1):
            try:
                self._fetch(remote)
                break
            except http_client.TRANSPORT_ERRORS as exc:
                if attempt == self.retries:
                    have = self._part_size()
                    raise DownloadInterruptedError(
                        f"{self.filename}: the connection was lost after {have:,} of "
                        f"{remote.size or 0:,} bytes ({type(exc).__name__}); run it again to "
                        f"resume") from None
                self._check_cancel()
                time.sleep(0.5 * (attempt + 1))
        self._downloaded = self._part_size()
        self._emit(JobState.VERIFYING, force=True)
        self._verify(remote, expected)
        self.part_path.replace(self.destination)
        self.sidecar_path.unlink(missing_ok=True)
        return self._register(remote, expected)

    def _register(self, remote: RemoteFile, expected: str | None) -> InstalledModel:
        return register_download(repo=self.repo_id, file=self.filename, path=self.destination,
                                 sha256=expected, commit=remote.commit, name=self.name)

    def _already_complete(self, remote: RemoteFile, expected: str | None) -> bool:
        """The file is already in place with the right size and hash: nothing to fetch."""
        if not self.destination.is_file() or remote.size is None or expected is None:
            return False
        if self.destination.stat().st_size != remote.size:
            return False
        self._emit(JobState.VERIFYING, force=True)
        return _sha256_of(self.destination, self._check_cancel) == expected

    def _sidecar(self, remote: RemoteFile) -> dict:
        return {"etag": remote.etag, "size": remote.size, "repo": self.repo_id,
                "file": self.filename}

    def _resumable_offset(self, remote: RemoteFile) -> int:
        """Bytes already on disk for this exact remote version; anything else is discarded."""
        try:
            recorded = json.loads(self.sidecar_path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            recorded = None
        size = self._part_size()
        if (recorded != self._sidecar(remote) or remote.etag is None
                or (remote.size and size > remote.size)):
            self._discard()
            size = 0
        return size

    def _write_sidecar(self, remote: RemoteFile) -> None:
        self.sidecar_path.write_text(json.dumps(self._sidecar(remote)), encoding="utf-8")

    def _check_space(self, remote: RemoteFile, offset: int) -> None:
        if remote.size is None:
            return
        needed = remote.size - offset
        free = shutil.disk_usage(self.destination.parent).free
        if needed + SPACE_MARGIN_BYTES > free:
            raise InsufficientSpaceError(
                f"{self.filename}: needs {format_bytes(needed)} free in "
                f"{self.destination.parent}, only {format_bytes(free)} available")

    def _fetch(self, remote: RemoteFile) -> None:
        offset = self._part_size()
        if remote.size is not None and offset == remote.size:
            return  # everything is on disk already
        headers = {"Accept-Encoding": "identity"}
        if offset:
            headers["Range"] = f"bytes={offset}-"
        hub_origin = http_client.origin(self.hub.endpoint)
        with http_client.stream_get(remote.url, headers=headers, auth_header=self.hub.auth_header,
                                    trusted_origin=hub_origin) as response:
            if response.status_code == 200 and offset:
                offset = 0  # the server ignored Range: start over
            elif response.status_code == 206:
                start = _content_range_start(response.headers.get("Content-Range", ""))
                if start != offset:
                    raise HubError(f"{self.filename}: the server resumed at the wrong place")
            elif response.status_code >= 400:
                raise HubError(f"{self.filename}: the download answered "
                               f"HTTP {response.status_code}")
            mode = "ab" if offset else "wb"
            self._write_stream(response, mode, offset)

    def _write_stream(self, response, mode: str, offset: int) -> None:
        downloaded = offset
        try:
            with open(self.part_path, mode) as out:
                for chunk in response.iter_bytes():  # as received: a drop loses nothing
                    self._check_cancel()
                    out.write(chunk)
                    downloaded += len(chunk)
                    self._downloaded = downloaded
                    self._emit(JobState.DOWNLOADING)
            self._emit(JobState.DOWNLOADING, force=True)  # the last bytes always show
        except OSError as exc:
            if exc.errno != errno.ENOSPC:
                raise
            self._discard()
            raise InsufficientSpaceError(
                f"{self.filename}: the disk filled up during the download; nothing was "
                f"installed and the partial file was removed") from None

    def _verify(self, remote: RemoteFile, expected: str | None) -> None:
        size = self._part_size()
        if remote.size is not None and size != remote.size:
            self._discard()
            raise DownloadError(f"{self.filename}: got {size:,} bytes, expected "
                                f"{remote.size:,}; nothing was installed")
        if expected is None:
            return  # the hub published no sha256 (a non-LFS file); the size matched
        actual = _sha256_of(self.part_path, self._check_cancel)
        if actual != expected:
            self._discard()
            raise ChecksumMismatchError(
                f"{self.filename}: sha256 mismatch (expected {expected[:12]}…, got "
                f"{actual[:12]}…); the file was deleted and nothing installed")

    def _check_cancel(self) -> None:
        if self._cancel.is_set():
            raise DownloadCancelledError(
                f"{self.filename}: download cancelled; {self._part_size():,} bytes kept to resume")

    def _discard(self) -> None:
        self.part_path.unlink(missing_ok=True)
        self.sidecar_path.unlink(missing_ok=True)

    def _part_size(self) -> int:
        try:
            return self.part_path.stat().st_size
        except FileNotFoundError:
            return 0

    def _emit(self, state: JobState, *, force: bool = False) -> None:
        now = time.monotonic()
        downloaded = self._downloaded or 0
        if state == JobState.DOWNLOADING:
            self._meter.add(now, downloaded)
        force = force or state != self.progress.state
        if not force and now - self._last_emit < PROGRESS_INTERVAL_S:
            return
        self._last_emit = now
        speed, eta = self._meter.speed(), None
        total = self._total
        if speed and total:
            eta = max(total - downloaded, 0) / speed
        self.progress = DownloadProgress(state, downloaded, total, speed or 0.0, eta,
                                         self._resumed_from)
        if self.on_progress is not None:
            self.on_progress(self, self.progress)


def _sha256_of(path: Path, check_cancel: Callable[[], None]) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as stream:
        while block := stream.read(CHUNK_BYTES * 4):
            check_cancel()
            digest.update(block)
    return digest.hexdigest()


def _content_range_start(value: str) -> int | None:
    """'bytes 100-199/200' -> 100."""
    try:
        return int(value.split()[1].split("-")[0])
    except (IndexError, ValueError):
        return None
