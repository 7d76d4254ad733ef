"""Several downloads, run one (or a few) at a time on worker threads, in the order queued."""

from __future__ import annotations

import logging
import queue
import threading

from draftlight.store.downloads import DownloadJob, JobState

log = logging.getLogger(__name__)


class DownloadQueue:
    """Runs submitted DownloadJobs on `workers` background threads.

    A job's outcome is on the job itself (`state`, `result`, `error`) and reaches its
    `on_progress` callback, which is called on the worker thread.
    """

    def __init__(self, *, workers: int = 1) -> None:
        self._pending: queue.Queue[DownloadJob | None] = queue.Queue()
        self._jobs: list[DownloadJob] = []
        self._threads = [threading.Thread(target=self._work, name=f"download-{i}", daemon=True)
                         for i in range(workers)]
        self._started = False
        self._lock = threading.Lock()

    @property
    def jobs(self) -> list[DownloadJob]:
        with self._lock:
            return list(self._jobs)

    def submit(self, job: DownloadJob) -> DownloadJob:
        with self._lock:
            if any(j.destination == job.destination and not j.state.finished for j in self._jobs):
                return next(j for j in self._jobs if j.destination == job.destination
                            and not j.state.finished)  # already queued: one writer per file
            self._jobs.append(job)
            if not self._started:
                for thread in self._threads:
                    thread.start()
                self._started = True
        self._pending.put(job)
        return job

    def cancel_all(self) -> None:
        for job in self.jobs:
            job.cancel()

    def wait(self, timeout: float | None = None) -> bool:
        """Block until every job submitted so far has finished; False on timeout."""
        done = threading.Event()
        waiter = threading.Thread(target=lambda: (self._pending.join(), done.set()), daemon=True)
        waiter.start()
        return done.wait(timeout)

    def close(self, *, cancel: bool = True, timeout: float = 10.0) -> None:
        """Stop the workers (cancelling running jobs unless `cancel` is False)."""
        if cancel:
            self.cancel_all()
        for _ in self._threads:
            self._pending.put(None)
        if self._started:
            for thread in self._threads:
                thread.join(timeout)

    def _work(self) -> None:
        while True:
            job = self._pending.get()
            try:
                if job is None:
                    return
                try:
                    job.run()  # a job cancelled while queued stops at once, as CANCELLED
                except Exception as exc:  # noqa: BLE001 - the job keeps its error
                    if job.state not in (JobState.FAILED, JobState.CANCELLED):
                        log.exception("download of %s failed unexpectedly", job.filename)
                    log.info("download of %s ended: %s", job.filename, exc)
            finally:
                self._pending.task_done()
