"""One download in the picker: name, progress bar, size/speed/ETA and a cancel button.

It reads the job's progress when told to refresh (the picker polls on a timer), so a download
thread never calls into a widget that may already be closed.
"""

from __future__ import annotations

from PySide6.QtWidgets import QGridLayout, QProgressBar, QPushButton, QWidget

from draftlight.store.downloads import DownloadJob, JobState
from draftlight.store.errors import describe_error
from draftlight.units import format_bytes, format_duration
from draftlight.ui.widgets.plain_text import plain_label


class DownloadRow(QWidget):
    def __init__(self, job: DownloadJob, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.job = job
        self.label = plain_label(f"{job.repo_id} / {job.filename}")
        self.bar = QProgressBar()
        self.bar.setRange(0, 1000)
        self.detail = plain_label("queued")  # an error names files
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.clicked.connect(job.cancel)
        layout = QGridLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.label, 0, 0, 1, 2)
        layout.addWidget(self.bar, 1, 0)
        layout.addWidget(self.cancel_button, 1, 1)
        layout.addWidget(self.detail, 2, 0, 1, 2)

    def refresh(self) -> None:
        progress = self.job.progress
        if progress.fraction is not None:
            self.bar.setValue(int(progress.fraction * 1000))
        if progress.state == JobState.DOWNLOADING and progress.total:
            eta = format_duration(progress.eta) if progress.eta is not None else "--:--"
            self.detail.setText(f"{format_bytes(progress.downloaded)} of "
                                f"{format_bytes(progress.total)}, "
                                f"{format_bytes(progress.speed)}/s, ETA {eta}")
        elif progress.state in (JobState.FAILED, JobState.CANCELLED) and self.job.error:
            self.detail.setText(describe_error(self.job.error))
        else:
            self.detail.setText(progress.state.value)
        self.cancel_button.setEnabled(not progress.state.finished)
