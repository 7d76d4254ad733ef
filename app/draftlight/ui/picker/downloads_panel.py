"""The picker's downloads, under its tabs: a row per file and a row per pair (both files on one
bar). Rows read their jobs' progress when polled (the dialog's timer), so a download thread
never calls into a widget that may already be closed."""

from __future__ import annotations

from PySide6.QtWidgets import QFrame, QVBoxLayout, QWidget

from draftlight.store.download_queue import DownloadQueue
from draftlight.store.downloads import DownloadJob, JobState
from draftlight.store.pair_download import PairDownload
from draftlight.ui.picker.download_row import DownloadRow
from draftlight.ui.picker.drafts import PairRow


class DownloadsPanel(QFrame):
    def __init__(self, queue: DownloadQueue, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.queue = queue
        self.rows: dict[DownloadJob, DownloadRow] = {}
        self.pair_rows: list[PairRow] = []
        self._layout = QVBoxLayout(self)
        self._layout.setContentsMargins(0, 0, 0, 0)
        self.hide()  # until there is something to show

    def add_job(self, job: DownloadJob) -> None:
        if job not in self.rows:
            self.rows[job] = DownloadRow(job)
            self._layout.addWidget(self.rows[job])
            self.show()

    def add_pair(self, pair: PairDownload) -> PairRow:
        row = PairRow(pair)
        row.resume_requested.connect(self._resume)
        self.pair_rows.append(row)
        self._layout.addWidget(row)
        self.show()
        return row

    def _resume(self, row: PairRow) -> None:
        pair = row.pair.resumed()  # each job goes on from its partial file
        for job in pair.jobs:
            self.queue.submit(job)
        row.set_pair(pair)

    def poll(self) -> bool:
        """Refresh every row; True if a file or a pair has finished since the last poll."""
        finished_now = False
        for job, row in self.rows.items():
            before = row.detail.text()
            row.refresh()
            finished_now |= job.state == JobState.DONE and before != JobState.DONE.value
        for row in self.pair_rows:
            before = row.shown_state
            row.refresh()
            finished_now |= row.shown_state == JobState.DONE and before != JobState.DONE
        return finished_now
