"""The model picker: search the hub, choose a file and a draft, download them, manage what is
installed. Discover (search, a repository's files, its drafts) and Installed are two tabs; the
downloads run below them.

All hub calls run on a small thread pool and come back through a signal (LatestRequests);
downloads run on the store's DownloadQueue and are shown by polling each job's progress on a
timer (coalesced updates, and no callback into a dialog that may already be closed).
"""

from __future__ import annotations

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtWidgets import QDialog, QSplitter, QTabWidget, QVBoxLayout, QWidget

from draftlight.store.catalog import Catalog, CuratedPair, load_catalog
from draftlight.store.download_queue import DownloadQueue
from draftlight.store.draft_options import DraftOption, draft_options
from draftlight.store.errors import StoreError, describe_error
from draftlight.store.hub import HubClient, HubFile, HubRepo
from draftlight.settings import added_model_folders
from draftlight.store.found_models import every_model
from draftlight.store.curated_copies import files_here, pair_copies
from draftlight.store.memory import assess
from draftlight.ui.widgets.banner import Banner
from draftlight.ui.widgets.elided_label import ElidedLabel
from draftlight.ui.widgets.latest_request import LatestRequests
from draftlight.ui.widgets.screen_fit import fit_to_screen
from draftlight.ui.widgets.wheel_guard import value_controls, wheel_needs_focus
from draftlight.ui.picker.download_requests import DownloadRequests
from draftlight.ui.picker.drafts import DraftsPanel
from draftlight.ui.picker.downloads_panel import DownloadsPanel
from draftlight.ui.picker.files import FilesPanel
from draftlight.ui.picker.installed_panel import InstalledPanel
from draftlight.ui.picker.rows import chip
from draftlight.ui.picker.search import SearchPanel, repo_facts
from draftlight.units import format_bytes

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


class PickerDialog(DownloadRequests, QDialog):
    installed_changed = Signal()  # a download, deletion or conversion finished
    target_chosen = Signal(str)  # "Use as target": a path or a found model's reference to load
    draft_chosen = Signal(str)  # "Use as draft"

    def __init__(self, parent: QWidget | None = None, *, hub: HubClient | None = None,
                 queue: DownloadQueue | None = None, catalog: Catalog | None = None,
                 n_ctx: int = 4096, gpu_offload: bool = False) -> None:
        super().__init__(parent)
        self.setWindowTitle("Models")
        self.hub = hub
        self.queue = queue or shared_download_queue()
        self.catalog, catalog_error = self._load_catalog(catalog)
        self._requests = LatestRequests(self, thread_name_prefix="picker")
        self._requests.failed.connect(lambda exc: self.report(exc))
        self._hub_drafts: list[HubRepo] = []
        self._preferred: CuratedPair | None = None
        self.current_repo: str | None = None  # the repository whose files are shown
        self._build(n_ctx, gpu_offload)
        fit_to_screen(self, 1100, 760)
        # the sort and the context change what is listed: a scroll over the lists must not
        wheel_needs_focus(*value_controls(self))
        for job in self.queue.jobs:
            self.downloads.add_job(job)
        if catalog_error:
            self.banner.show_message(catalog_error)
        self._timer = QTimer(self, interval=POLL_MS, timeout=self._poll)
        self._timer.start()
        self.check_hub()

    def check_hub(self, retry: bool = False) -> None:
        """Whether the hub answers, asked once as the dialog opens: offline, the banner says
        so at once (with Retry), not after the first click. A failure already in the banner
        (a search that went out first) is not replaced; a Retry that finds the hub back runs
        the search in the box again."""
        hub = self._client()
        if hub is None:
            return

        def answered(_none) -> None:
            if retry:
                self.banner.hide()
                if self.search_panel.search_edit.text().strip():
                    self.search_panel.search_now()
                if self.current_repo and not self.files_shown:
                    self.show_repo(self.current_repo)  # the files the table said it lacked

        def failed(exc: BaseException) -> None:
            if retry or not self.banner.isVisible():
                self.report(exc, lambda: self.check_hub(retry=True))
            if not self.files_shown:  # the empty table says why too, not only the banner
                self.files_panel.show_failure(exc, lambda: self.check_hub(retry=True))

        self._requests.run("reachable", hub.check_reachable, answered, failed)

    # --- layout ---------------------------------------------------------------------------
    def _build(self, n_ctx: int, gpu_offload: bool) -> None:
        self.banner = Banner(self)
        self.files_panel = FilesPanel(n_ctx=n_ctx, gpu_offload=gpu_offload)
        self.search_panel = SearchPanel(self._requests, self._client, self.catalog,
                                        report=self.report, pair_facts=self._pair_facts)
        self.drafts_panel = DraftsPanel()
        self.installed_panel = InstalledPanel(gpu_offload=gpu_offload)
        self.search_panel.chosen.connect(self.show_choice)
        self.files_panel.download_requested.connect(self.download_file)
        self.files_panel.notice.installed_clicked.connect(
            lambda: self.tabs.setCurrentWidget(self.installed_panel))
        self.files_panel.tree.currentItemChanged.connect(  # a pair needs the target's file
            lambda *_: self.drafts_panel.set_target_ready(
                self.files_panel.selected_file() is not None))
        self.drafts_panel.draft_chosen.connect(self._draft_chosen)
        self.drafts_panel.pair_requested.connect(self.download_pair)
        self.installed_panel.target_chosen.connect(self.target_chosen)
        self.installed_panel.draft_chosen.connect(self.draft_chosen)
        self.installed_panel.changed.connect(self.installed_changed)
        self.installed_panel.message.connect(self.status_message)
        self.installed_panel.listed.connect(
            lambda n: self.tabs.setTabText(self.tabs.indexOf(self.installed_panel),
                                           f"Installed ({n})"))

        details = QSplitter(Qt.Vertical)
        details.addWidget(self.files_panel)
        details.addWidget(self.drafts_panel)
        details.setStretchFactor(0, 3)
        details.setStretchFactor(1, 2)
        discover = QSplitter(Qt.Horizontal)
        discover.addWidget(self.search_panel)
        discover.addWidget(details)
        discover.setStretchFactor(0, 2)
        discover.setStretchFactor(1, 3)
        discover.setSizes([470, 630])
        self.tabs = QTabWidget()
        self.tabs.addTab(discover, "Discover")
        self.tabs.addTab(self.installed_panel, f"Installed ({self.installed_panel.list.count()})")
        self.downloads = DownloadsPanel(self.queue)
        self.status = ElidedLabel(elide=Qt.ElideMiddle)  # it names the repository
        self.status.setStyleSheet("color: palette(mid);")
        layout = QVBoxLayout(self)
        layout.addWidget(self.banner)
        layout.addWidget(self.tabs, 1)
        layout.addWidget(self.downloads)
        layout.addWidget(self.status)

    def _load_catalog(self, catalog: Catalog | None):
        if catalog is not None:
            return catalog, None
        try:
            return load_catalog(), None
        except StoreError as exc:
            return None, str(exc)

    def _pair_facts(self, pair: CuratedPair) -> tuple[str, list]:
        size = sum(m.approx_size or 0 for m in (pair.target, pair.draft))
        estimate = assess(size, n_ctx=self.files_panel.n_ctx) if size else None
        facts = f"drafted by {pair.draft.name}  ·  ~{format_bytes(size)} together" + (
            f"  ·  {estimate.fit.value}" if estimate else "")
        # Draftlight's download or another app's copy (Ollama's, …): store/curated_copies.py
        target, draft = pair_copies(pair, every_model(added_model_folders()))
        here = ("installed" if target and draft else "target installed" if target
                else "draft installed" if draft else "")
        return facts, [chip(here)] if here else []

    # --- the hub --------------------------------------------------------------------------
    def _client(self) -> HubClient | None:
        if self.hub is None:
            try:
                self.hub = HubClient()
            except StoreError as exc:
                self.report(exc)
        return self.hub

    def report(self, exc: BaseException, retry=None) -> None:
        """A failed hub call: the banner, with Retry when there is something to retry."""
        self.banner.hide()  # one problem at a time: the newest replaces the last
        self.banner.show_message(describe_error(exc), "Retry" if retry else None, retry)

    def status_message(self, text: str) -> None:
        self.status.setText(text)

    # --- choosing -------------------------------------------------------------------------
    def show_choice(self, choice) -> None:
        """A search result (HubRepo) or a curated pair was chosen."""
        if isinstance(choice, CuratedPair):
            self._preferred = choice
            self.show_repo(choice.target.repo)
        elif isinstance(choice, HubRepo):
            self._preferred = None
            self.show_repo(choice.id, repo_facts(choice, _now()))

    def show_repo(self, repo_id: str, facts: str = "") -> None:
        hub = self._client()
        if hub is None or not repo_id:
            return
        self.banner.hide()
        self.current_repo = repo_id
        self.files_panel.show_repo(repo_id, facts)
        self._hub_drafts = []
        self._refresh_drafts()
        self._requests.run("files", lambda: hub.list_files(repo_id), self._show_files,
                           lambda exc: self._files_failed(exc, repo_id, facts))
        self._requests.run("drafts", lambda: hub.drafts_for(repo_id), self._show_hub_drafts,
                           lambda exc: None)  # the files' request reports the hub's trouble

    def _files_failed(self, exc: BaseException, repo_id: str, facts: str) -> None:
        """Said in the banner and in the file table's place, each with Retry."""
        def retry() -> None:
            self.show_repo(repo_id, facts)
        self.report(exc, retry)
        self.files_panel.show_failure(exc, retry)

    def _show_files(self, files: list[HubFile]) -> None:
        self.files_panel.show_files(files, files_here(  # those here already say so
            self.current_repo, files, self.catalog, every_model(added_model_folders())))
        if self._preferred is not None:
            self.files_panel.select_file(self._preferred.target.file)
        self._refresh_drafts()
        shown = len(self.files_panel.files_shown)
        self.status.setText(f"{shown} GGUF file{'s' if shown != 1 else ''} in "
                            f"{self.current_repo}")

    def _show_hub_drafts(self, repos: list[HubRepo]) -> None:
        self._hub_drafts = repos
        self._refresh_drafts()

    def _refresh_drafts(self) -> None:
        target = self.files_panel.selected_file()
        options = draft_options(self.current_repo,
                                target_size=target.size if target else None,
                                # Draftlight's and other apps' models (Ollama's, …)
                                catalog=self.catalog,
                                installed=every_model(added_model_folders()),
                                hub_repos=self._hub_drafts)
        keep = self._preferred.draft.name if self._preferred else None
        self.drafts_panel.show_options(options, keep=keep)
        self.drafts_panel.set_target_ready(target is not None)

    def _draft_chosen(self, option: DraftOption | None) -> None:
        self.files_panel.set_draft_bytes(option.size or 0 if option else 0)

    @property
    def files_shown(self) -> list[HubFile]:
        return self.files_panel.files_shown

    # --- downloads ------------------------------------------------------------------------
    @property
    def rows(self):  # a row per file download
        return self.downloads.rows

    @property
    def pair_rows(self):  # a row per pair
        return self.downloads.pair_rows

    def _poll(self) -> None:
        finished_now = self.downloads.poll()
        self.installed_panel.poll()
        if finished_now:
            self.installed_panel.refresh()
            if self.current_repo:
                self._refresh_drafts()  # an installed draft gets its chip
            self.installed_changed.emit()

    def done(self, result: int) -> None:  # closing: stop listening, downloads go on
        self._timer.stop()
        self._requests.shutdown()
        super().done(result)


def _now():
    from datetime import datetime, timezone
    return datetime.now(timezone.utc)
