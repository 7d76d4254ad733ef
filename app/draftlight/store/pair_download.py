"""A target and its draft downloaded together: one progress, one cancel, one resume.

Each file is its own DownloadJob (resumable, verified); this only adds them up. Before a job has
asked the hub for its size, the size hint stands in for it, so the bar does not jump back when
the second file starts.
"""

from __future__ import annotations

from dataclasses import dataclass

from draftlight.store.downloads import DownloadJob, JobState


@dataclass(frozen=True)
class PairProgress:
    state: JobState
    downloaded: int
    total: int | None
    speed: float  # bytes per second, both files together

    @property
    def fraction(self) -> float | None:
        return min(self.downloaded / self.total, 1.0) if self.total else None

    @property
    def eta(self) -> float | None:
        if not self.total or self.speed <= 0:
            return None
        return max(self.total - self.downloaded, 0) / self.speed


class PairDownload:
    """`jobs`: the files still to fetch (one or two); `size_hints`: bytes per job, where known
    before the hub answers."""

    def __init__(self, jobs: list[DownloadJob], size_hints: list[int | None] | None = None,
                 *, label: str = "") -> None:
        self.jobs = list(jobs)
        self.size_hints = list(size_hints or [None] * len(self.jobs))
        self.label = label

    @property
    def progress(self) -> PairProgress:
        downloaded, total, speed, states = 0, 0, 0.0, []
        for job, hint in zip(self.jobs, self.size_hints):
            p = job.progress
            states.append(p.state)
            size = p.total or hint
            total = total + size if size is not None and total is not None else None
            downloaded += size if p.state == JobState.DONE and size else p.downloaded
            speed += p.speed if p.state == JobState.DOWNLOADING else 0.0
        return PairProgress(_combined(states), downloaded, total or None, speed)

    @property
    def state(self) -> JobState:
        return self.progress.state

    def cancel(self) -> None:
        """Stop both; partial files stay for `resumed()`."""
        for job in self.jobs:
            job.cancel()

    def resumed(self) -> "PairDownload":
        """New jobs for the files not yet done; each goes on from its partial file."""
        left = [(job, hint) for job, hint in zip(self.jobs, self.size_hints)
                if job.state != JobState.DONE]
        jobs = [DownloadJob(job.hub, job.repo_id, job.filename, revision=job.revision,
                            sha256=job.expected_sha256, name=job.name) for job, _ in left]
        return PairDownload(jobs, [hint for _, hint in left], label=self.label)


def _combined(states: list[JobState]) -> JobState:
    """FAILED or CANCELLED if any is; DONE when all are; else the furthest along of the rest."""
    for final in (JobState.FAILED, JobState.CANCELLED):
        if final in states and all(s.finished for s in states):
            return final
    if states and all(s == JobState.DONE for s in states):
        return JobState.DONE
    for busy in (JobState.DOWNLOADING, JobState.VERIFYING, JobState.WAITING, JobState.CHECKING):
        if busy in states:
            return busy
    return JobState.QUEUED
