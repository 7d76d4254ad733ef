"""Terminal progress bars (tqdm) for the model store's long jobs: a conversion and a download."""

from __future__ import annotations

from tqdm import tqdm

from draftlight.units import format_bytes
from draftlight.user_messages import visible

# tqdm scales bytes with SI prefixes (unit_divisor=1000), like draftlight.units.format_bytes
BAR_FORMAT = "{percentage:3.0f}% |{bar}| {n_fmt}B/{total_fmt}B  {rate_fmt}  ETA {remaining}"


class ConvertBar:
    """A conversion's progress on stderr: a tqdm bar over the model's tensors."""

    def __init__(self, stream, description: str) -> None:
        self.stream = stream
        self.description = visible(description)  # it names a file: shown, never obeyed
        self.bar: tqdm | None = None

    def __call__(self, progress) -> None:
        if progress.stage == "verifying":
            self.finish()
            return
        if progress.stage == "waiting":  # another process holds the file's lock: said, not silent
            print(visible(f"{self.description}: waiting for another Draftlight making it"
                          + (f" ({progress.holder})" if progress.holder else "")
                          + "; Ctrl-C stops"), file=self.stream, flush=True)
            return
        if self.bar is None and progress.total:
            tty = self.stream.isatty()
            self.bar = tqdm(total=progress.total, desc=self.description, unit=" tensors",
                            file=self.stream, dynamic_ncols=tty, mininterval=0.1 if tty else 5.0,
                            leave=False)
        if self.bar is not None:
            self.bar.update(progress.done - self.bar.n)

    def finish(self) -> None:
        if self.bar is not None:
            self.bar.close()
            self.bar = None


class PullProgress:
    """`models pull` on stderr: a tqdm bar (bytes, speed, ETA) while downloading, then a line
    for the sha256 check, which takes a while on a large file."""

    def __init__(self, stream) -> None:
        self.stream = stream
        self.bar: tqdm | None = None

    def update(self, job, progress) -> None:
        from draftlight.store.downloads import JobState
        if progress.state == JobState.DOWNLOADING and progress.total:
            if self.bar is None:
                self.bar = self._start(job, progress)
            self.bar.update(progress.downloaded - self.bar.n)
        elif progress.state == JobState.VERIFYING:
            self.finish()
            print(visible(f"verifying sha256 of {job.filename} …"), file=self.stream, flush=True)
        elif progress.state == JobState.WAITING:
            print(visible(f"waiting for the download of {job.filename} that another Draftlight "
                          "is making …"), file=self.stream, flush=True)

    def _start(self, job, progress) -> tqdm:
        if progress.resumed_from:
            print(visible(f"resuming {job.filename} at {format_bytes(progress.resumed_from)}"),
                  file=self.stream, flush=True)
        tty = self.stream.isatty()
        # a log (not a terminal) gets a status every few seconds, not ten a second
        return tqdm(total=progress.total, initial=progress.resumed_from, file=self.stream,
                    unit="B", unit_scale=True, unit_divisor=1000, bar_format=BAR_FORMAT,
                    dynamic_ncols=tty, mininterval=0.1 if tty else 5.0)

    def finish(self) -> None:
        if self.bar is not None:
            self.bar.close()
            self.bar = None
