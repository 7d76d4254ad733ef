"""The model picker: curated pairs, hub search, a repo's files with a memory badge, drafts
for a chosen target, and downloads with progress, speed, ETA and cancel.

All hub calls run on a small thread pool and come back through a signal (LatestRequests);
downloads run on the store's DownloadQueue and are shown by polling each job's progress on a
timer (coalesced updates, and no callback into a dialog that may already be closed).
"""

from __future__ import annotations

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QColor
from PySide6.QtWidgets import (QAbstractItemView, QDialog, QGridLayout, QGroupBox, QHBoxLayout,
                               QHeaderView, QLabel, QLineEdit, QListWidget, QListWidgetItem,
                               QPushButton, QTableWidget, QTableWidgetItem, QVBoxLayout, QWidget)

from app.engine.verify_speed import verify_speed
from app.store.catalog import Catalog, load_catalog
from app.store.download_queue import DownloadQueue
from app.store.downloads import DownloadJob, JobState
from app.store.errors import StoreError, describe_error
from app.store.gguf_info import weight_type_of
from app.store.hub import HubClient
from app.store.installed import list_installed, take_notices
from app.store.memory import Fit, assess
from app.store.model_names import could_draft_for
from app.ui.download_row import DownloadRow
from app.ui.latest_request import LatestRequests
from app.units import format_bytes

BADGE_COLOURS = {Fit.FITS: "#2e7d32", Fit.TIGHT: "#ef6c00", Fit.TOO_BIG: "#c62828"}
POLL_MS = 200
_shared_queue: DownloadQueue | None = None


def shared_download_queue() -> DownloadQueue:
    """The app-wide queue: downloads go on when the dialog closes (close it at app exit)."""
    global _shared_queue
    if _shared_queue is None:
        _shared_queue = DownloadQueue()
    return _shared_queue


def close_shared_download_queue(timeout: float = 10.0) -> None:
    """At app exit: cancel running downloads (their .part files stay, to resume) and join
    the download threads, so none is killed in the middle of a write."""
    global _shared_queue
    if _shared_queue is not None:
        queue, _shared_queue = _shared_queue, None
        queue.close(cancel=True, timeout=timeout)


class PickerDialog(QDialog):
    installed_changed = Signal()  # a download finished: the main window may refresh its lists

    def __init__(self, parent: QWidget | None = None, *, hub: HubClient | None = None,
                 queue: DownloadQueue | None = None, catalog: Catalog | None = None,
                 n_ctx: int = 4096, gpu_offload: bool = False) -> None:
        super().__init__(parent)
        self.setWindowTitle("Models")
        self.resize(900, 700)
        self.hub = hub
        self.queue = queue or shared_download_queue()
        self.n_ctx = n_ctx
        self.gpu_offload = gpu_offload  # every weight type verifies drafts fast on a GPU
        self.catalog, catalog_error = self._load_catalog(catalog)
        self._requests = LatestRequests(self, thread_name_prefix="picker")
        self._requests.failed.connect(lambda exc: self.status.setText(describe_error(exc)))
        self.rows: dict[DownloadJob, DownloadRow] = {}
        self._files: list = []
        self._build()
        self._fill_pairs()
        self.refresh_installed()
        for job in self.queue.jobs:
            self._add_row(job)
        if catalog_error:
            self.status.setText(catalog_error)
        self._timer = QTimer(self, interval=POLL_MS, timeout=self._poll)
        self._timer.start()

    # --- layout ---------------------------------------------------------------------------
    def _build(self) -> None:
        self.pairs = QListWidget()
        self.pair_button = QPushButton("Download pair")
        self.pair_button.clicked.connect(self.download_selected_pair)
        self.search_edit = QLineEdit(placeholderText="Search GGUF models on the hub")
        self.search_edit.returnPressed.connect(self.search)
        self.search_button = QPushButton("Search")
        self.search_button.clicked.connect(self.search)
        self.repos = QListWidget()
        self.repos.currentItemChanged.connect(lambda item, _old: item and self.show_repo(
            item.data(Qt.UserRole)))
        self.files = QTableWidget(0, 5)
        self.files.setHorizontalHeaderLabels(["File", "Quant", "Size", "Memory", "Drafts"])
        self.files.horizontalHeaderItem(4).setToolTip(
            "Whether this machine checks a batch of drafted tokens cheaply with this weight "
            "type: speculation gains more with a fast-verify file")
        self.files.setSelectionBehavior(QAbstractItemView.SelectRows)
        self.files.setEditTriggers(QAbstractItemView.NoEditTriggers)
        self.files.horizontalHeader().setSectionResizeMode(0, QHeaderView.Stretch)
        self.files.setWordWrap(False)
        self.files.verticalHeader().hide()
        self.download_button = QPushButton("Download file")
        self.download_button.clicked.connect(self.download_selected_file)
        self.drafts = QListWidget()
        self.drafts.itemDoubleClicked.connect(lambda item: self.show_repo(item.data(Qt.UserRole)))
        self.installed = QListWidget()
        self.downloads = QVBoxLayout()
        self.downloads.addStretch()
        self.status = QLabel(wordWrap=True)

        curated = QGroupBox("Recommended target + draft pairs")
        QVBoxLayout(curated).addWidget(self.pairs)
        curated.layout().addWidget(self.pair_button)
        hub_box = QGroupBox("Hugging Face hub")
        grid = QGridLayout(hub_box)
        search_row = QHBoxLayout()
        search_row.addWidget(self.search_edit)
        search_row.addWidget(self.search_button)
        grid.addLayout(search_row, 0, 0, 1, 2)
        grid.addWidget(self.repos, 1, 0)
        grid.addWidget(self.files, 1, 1)
        grid.addWidget(QLabel("Drafts for this model (guessed from the name; double-click):"), 2, 0)
        grid.addWidget(self.download_button, 2, 1)
        grid.addWidget(self.drafts, 3, 0, 1, 2)
        grid.setColumnStretch(0, 1)
        grid.setColumnStretch(1, 2)
        bottom = QHBoxLayout()
        downloads_box, installed_box = QGroupBox("Downloads"), QGroupBox("Installed")
        downloads_box.setLayout(self.downloads)
        QVBoxLayout(installed_box).addWidget(self.installed)
        bottom.addWidget(downloads_box, 2)
        bottom.addWidget(installed_box, 1)
        layout = QVBoxLayout(self)
        layout.addWidget(curated, 1)
        layout.addWidget(hub_box, 3)
        layout.addLayout(bottom, 2)
        layout.addWidget(self.status)

    def _load_catalog(self, catalog: Catalog | None):
        if catalog is not None:
            return catalog, None
        try:
            return load_catalog(), None
        except StoreError as exc:
            return None, str(exc)

    def _fill_pairs(self) -> None:
        installed = {(m.repo, m.file) for m in list_installed()}
        for pair in self.catalog.pairs if self.catalog else ():
            sizes = [m.approx_size or 0 for m in (pair.target, pair.draft)]
            badge = self._badge(sum(sizes))
            have = " (installed)" if all(m.bundled or (m.repo, m.file) in installed
                                         for m in (pair.target, pair.draft)) else ""
            item = QListWidgetItem(f"{pair.label}  ~{format_bytes(sum(sizes))}  "
                                   f"[{badge.value if badge else '?'}]{have}")
            item.setData(Qt.UserRole, pair)
            self.pairs.addItem(item)

    # --- the hub --------------------------------------------------------------------------
    def _client(self) -> HubClient | None:
        if self.hub is None:
            try:
                self.hub = HubClient()
            except StoreError as exc:
                self.status.setText(str(exc))
        return self.hub

    # --- actions --------------------------------------------------------------------------
    def search(self) -> None:
        hub = self._client()
        if hub is None:
            return
        query = self.search_edit.text().strip()
        self.status.setText(f"Searching for {query!r}…")
        self._requests.run("search", lambda: hub.search(query), self._show_repos)

    def _show_repos(self, repos) -> None:
        self.repos.clear()
        for repo in repos:
            item = QListWidgetItem(repo.id + ("  (gated)" if repo.gated else ""))
            item.setData(Qt.UserRole, repo.id)
            self.repos.addItem(item)
        self.status.setText(f"{len(repos)} repositories" if repos else "Nothing found")

    def show_repo(self, repo_id: str) -> None:
        hub = self._client()
        if hub is None or not repo_id:
            return
        self.current_repo = repo_id
        self.status.setText(f"Listing {repo_id}…")
        self._requests.run("files", lambda: hub.list_files(repo_id), self._show_files)
        self.drafts.clear()
        for model in self.catalog.models if self.catalog else ():
            if could_draft_for(repo_id, model.repo):
                self._add_draft_item(model.repo, f"{model.name} (curated)")
        self._requests.run("drafts", lambda: hub.drafts_for(repo_id), self._show_drafts)

    @property
    def files_shown(self) -> list:
        return list(self._files)

    def _show_files(self, files) -> None:
        self._files = [f for f in files if f.is_single_model]
        self.files.setRowCount(len(self._files))
        for row, file in enumerate(self._files):
            badge = self._badge(file.size) if file.size else None
            speed = verify_speed(file.quant, on_gpu=self.gpu_offload)
            cells = [file.path, file.quant or "?", format_bytes(file.size or 0),
                     badge.value if badge else "?", speed.label]
            for column, text in enumerate(cells):
                self.files.setItem(row, column, QTableWidgetItem(text))
            self.files.item(row, 4).setToolTip(speed.describe())
            if badge:
                self.files.item(row, 3).setForeground(Qt.GlobalColor.white)
                self.files.item(row, 3).setBackground(QColor(BADGE_COLOURS[badge]))
        self.status.setText(f"{len(self._files)} GGUF files")

    def _show_drafts(self, repos) -> None:
        shown = {self.drafts.item(i).data(Qt.UserRole) for i in range(self.drafts.count())}
        for repo in repos:
            if repo.id not in shown:
                self._add_draft_item(repo.id, repo.id)

    def _add_draft_item(self, repo_id: str, text: str) -> None:
        item = QListWidgetItem(text)
        item.setData(Qt.UserRole, repo_id)
        self.drafts.addItem(item)

    def download_selected_file(self) -> None:
        row = self.files.currentRow()
        if not 0 <= row < len(self._files) or self._client() is None:
            return
        file = self._files[row]
        self.start_download(file.repo_id, file.path, sha256=file.sha256)

    def download_selected_pair(self) -> None:
        item = self.pairs.currentItem()
        if item is None or self._client() is None:
            return
        pair = item.data(Qt.UserRole)
        installed = {(m.repo, m.file) for m in list_installed()}
        for model in (pair.target, pair.draft):
            if not model.bundled and (model.repo, model.file) not in installed:
                self.start_download(model.repo, model.file, sha256=model.sha256, name=model.name)

    def start_download(self, repo_id: str, filename: str, *, sha256: str | None = None,
                       name: str | None = None) -> DownloadJob | None:
        try:
            job = DownloadJob(self.hub, repo_id, filename, sha256=sha256, name=name)
        except StoreError as exc:
            self.status.setText(str(exc))
            return None
        job = self.queue.submit(job)
        self._add_row(job)
        return job

    def _add_row(self, job: DownloadJob) -> None:
        if job not in self.rows:
            self.rows[job] = DownloadRow(job)
            self.downloads.insertWidget(self.downloads.count() - 1, self.rows[job])

    def _poll(self) -> None:
        finished_now = False
        for job, row in self.rows.items():
            before = row.detail.text()
            row.refresh()
            if job.state == JobState.DONE and before != JobState.DONE.value:
                finished_now = True
        if finished_now:
            self.refresh_installed()
            self.installed_changed.emit()

    def refresh_installed(self) -> None:
        self.installed.clear()
        for model in list_installed():
            size = format_bytes(model.size) if model.size else "?"
            quant = weight_type_of(model.path)
            speed = verify_speed(quant, model.path, on_gpu=self.gpu_offload)
            details = ", ".join(x for x in (model.source, size, quant, speed.label) if x)
            self.installed.addItem(f"{model.name}  ({details})")
            self.installed.item(self.installed.count() - 1).setToolTip(speed.describe())
        notices = take_notices()
        if notices:
            self.status.setText("; ".join(notices))

    def _badge(self, size: int) -> Fit | None:
        estimate = assess(size, n_ctx=self.n_ctx) if size else None
        return estimate.fit if estimate else None

    def done(self, result: int) -> None:  # closing: stop listening, downloads go on
        self._timer.stop()
        self._requests.shutdown()
        super().done(result)
