"""The picker's file list for one repository: files grouped by quantisation, each with its size,
its memory badge (target + draft + KV cache at the chosen context), whether it verifies drafts
fast on this machine, and the recommended file highlighted with its reason. Where there are no
files to list, the table's place says why (files_notice.py): offline, which the hub's answer
shows, with Retry."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QBrush, QColor, QFont
from PySide6.QtWidgets import (QAbstractItemView, QComboBox, QHBoxLayout, QHeaderView,
                               QPushButton, QStackedWidget, QTreeWidget, QTreeWidgetItem,
                               QVBoxLayout, QWidget)

from draftlight.engine.auto.verify_speed import verify_speed
from draftlight.store.errors import HubOfflineError, describe_error
from draftlight.store.file_choice import FileOption, Recommendation, file_options, recommend
from draftlight.store.hub import HubFile
from draftlight.store.memory import Fit
from draftlight.ui.picker.files_notice import FilesNotice
from draftlight.ui.widgets.elided_label import ElidedLabel
from draftlight.units import format_bytes
from draftlight.ui.widgets.plain_text import plain_label, plain_tip

BADGE_COLOURS = {Fit.FITS: "#2e7d32", Fit.TIGHT: "#ef6c00", Fit.TOO_BIG: "#c62828"}
RECOMMENDED_BACKGROUND = "#fff4c2"
CONTEXTS = (2048, 4096, 8192, 16384, 32768)
COLUMNS = ("File", "Quant", "Size", "Memory", "Drafts")
FILE, QUANT, SIZE, MEMORY, VERIFY = range(5)


class FilesPanel(QWidget):
    context_changed = Signal(int)
    download_requested = Signal(object)  # a HubFile

    def __init__(self, *, n_ctx: int = 4096, gpu_offload: bool = False,
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.gpu_offload = gpu_offload
        self.repo_id: str | None = None
        self.draft_bytes = 0
        self._files: list[HubFile] = []
        self.here: dict[str, str] = {}  # file -> the model on this computer that it is
        self.options: list[FileOption] = []
        self.recommendation = Recommendation(None, "")
        self._build_heading(n_ctx)
        self.reason = plain_label(wordWrap=True)  # it names files
        self.reason.setStyleSheet(f"background: {RECOMMENDED_BACKGROUND}; color: #4a3b00; "
                                  "border-radius: 4px; padding: 4px 8px;")
        self.reason.hide()
        self._build_tree()
        self.notice = FilesNotice()
        self._retry = None  # what the notice's Retry asks again
        self.notice.retry_clicked.connect(lambda: self._retry and self._retry())
        self.stack = QStackedWidget()  # the files, or the notice in their place
        self.stack.addWidget(self.tree)
        self.stack.addWidget(self.notice)
        self.show_notice("No model chosen yet", "Choose a curated pair or a search result: "
                         "its GGUF files are listed here.")
        self.download_button = QPushButton("Download")
        self.download_button.setEnabled(False)
        self.download_button.clicked.connect(self._download)
        self.tree.itemDoubleClicked.connect(lambda item, _c: self._download())
        self.tree.currentItemChanged.connect(lambda item, _old: self._offer_download(item))
        self._build_layout()

    def _build_heading(self, n_ctx: int) -> None:
        """The repository's name, its facts, and the context the memory badges are for."""
        # cut with "…", not widening the picker past its screen: repository names run long
        self.title = ElidedLabel("Choose a model", elide=Qt.ElideMiddle)
        title_font = QFont(self.title.font())
        title_font.setPointSizeF(max(title_font.pointSizeF() * 1.35, 11))
        title_font.setBold(True)
        self.title.setFont(title_font)
        self.title.setTextInteractionFlags(Qt.TextSelectableByMouse)
        self.facts = ElidedLabel()
        self.facts.setStyleSheet("color: palette(mid);")
        self.context_box = QComboBox()
        for n in CONTEXTS:
            self.context_box.addItem(f"{n // 1024}k context", n)
        self.context_box.setCurrentIndex(max(self.context_box.findData(n_ctx), 0))
        self.context_box.setToolTip("The context length the memory badges are for: the KV "
                                    "cache grows with it")
        self.context_box.currentIndexChanged.connect(self._context_chosen)

    def _build_tree(self) -> None:
        """The files, grouped by quantisation, in the columns of COLUMNS."""
        self.tree = QTreeWidget()
        self.tree.setHeaderLabels(COLUMNS)
        self.tree.headerItem().setToolTip(VERIFY, (
            "Whether this machine checks a batch of drafted tokens cheaply with this weight "
            "type: speculation gains more with a fast-verify file"))
        self.tree.setSelectionBehavior(QAbstractItemView.SelectRows)
        self.tree.setRootIsDecorated(True)
        self.tree.setUniformRowHeights(True)
        header = self.tree.header()
        header.setSectionResizeMode(FILE, QHeaderView.Stretch)
        for column in (QUANT, SIZE, MEMORY, VERIFY):
            header.setSectionResizeMode(column, QHeaderView.ResizeToContents)

    def _build_layout(self) -> None:
        """The heading, the recommendation's reason, the files, Download below them."""
        heading = QHBoxLayout()
        titles = QVBoxLayout()
        titles.addWidget(self.title)
        titles.addWidget(self.facts)
        heading.addLayout(titles, 1)
        heading.addWidget(self.context_box, 0, Qt.AlignTop)
        bottom = QHBoxLayout()
        bottom.addStretch()
        bottom.addWidget(self.download_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(heading)
        layout.addWidget(self.reason)
        layout.addWidget(self.stack, 1)
        layout.addLayout(bottom)

    @property
    def n_ctx(self) -> int:
        return self.context_box.currentData()

    @property
    def files_shown(self) -> list[HubFile]:
        return [o.file for o in self.options]

    def show_repo(self, repo_id: str, facts: str = "") -> None:
        """A new repository: its title now, its files once the hub answers."""
        self.repo_id = repo_id
        self.title.setText(repo_id.split("/")[-1])
        self.title.setToolTip(plain_tip(repo_id))
        self.facts.setText(facts or repo_id.split("/")[0])
        self._files, self.options = [], []
        self.tree.clear()
        self.reason.hide()
        self._offer_download(None)
        self.show_notice(f"Asking Hugging Face for the files of {repo_id}…")

    def show_files(self, files: list[HubFile], here: dict[str, str] | None = None) -> None:
        """`here`: the files on this computer already (Draftlight's downloads, other apps'
        copies: store/curated_copies.py), each with the name it is listed by in Installed."""
        self._files = list(files)
        self.here = dict(here or {})
        self._render()
        if self.options:
            self.stack.setCurrentWidget(self.tree)
        else:
            skipped = len(self._files)
            self.show_notice(f"No single-file GGUF model in {self.repo_id}",
                             f"{skipped} split or vision-projector file"
                             f"{'s are' if skipped != 1 else ' is'} not listed" if skipped
                             else "")

    def show_notice(self, heading: str, detail: str = "") -> None:
        """In the table's place: `heading` and `detail`, no buttons."""
        self.notice.say(heading, detail)
        self.stack.setCurrentWidget(self.notice)

    def show_failure(self, exc: BaseException, retry) -> None:
        """The hub's answer failed: said in the table's place, with Retry (`retry()`), and
        offline the way to the models already here."""
        self._retry = retry
        offline = isinstance(exc, HubOfflineError)
        heading = "Can't reach Hugging Face" if offline else "No files listed"
        detail = describe_error(exc) + (
            ".\nModels already on this computer are listed under Installed." if offline else "")
        self.notice.say(heading, detail, retry=True, installed=offline)
        self.stack.setCurrentWidget(self.notice)
        self._offer_download(None)

    def set_draft_bytes(self, size: int) -> None:
        """The chosen draft's size counts in every badge."""
        if size != self.draft_bytes:
            self.draft_bytes = size
            self._render()

    def select_file(self, path: str) -> bool:
        item = self._item_for(path)
        if item is not None:
            self.tree.setCurrentItem(item)
        return item is not None

    def selected_file(self) -> HubFile | None:
        """The file chosen in the list, else the recommended one."""
        return self._file_of(self.tree.currentItem()) or self.recommendation.file

    def row_texts(self, path: str) -> dict[str, str]:
        """{column name: text} of a file's row (for tests and screenshots)."""
        item = self._item_for(path)
        return {name: item.text(i) for i, name in enumerate(COLUMNS)} if item else {}

    def _context_chosen(self) -> None:
        self._render()
        self.context_changed.emit(self.n_ctx)

    def _render(self) -> None:
        current = self._file_of(self.tree.currentItem())
        self.options = file_options(self._files, n_ctx=self.n_ctx, draft_bytes=self.draft_bytes)
        self.recommendation = recommend(
            self.options, n_ctx=self.n_ctx, with_draft=self.draft_bytes > 0,
            fast=lambda f: bool(verify_speed(f.quant, on_gpu=self.gpu_offload).fast))
        self.tree.clear()
        groups: dict[str, QTreeWidgetItem] = {}
        for option in self.options:
            if option.group not in groups:
                groups[option.group] = QTreeWidgetItem(self.tree, [option.group])
                groups[option.group].setFirstColumnSpanned(True)
                groups[option.group].setFlags(Qt.ItemIsEnabled)
            self._add_row(groups[option.group], option)
        self.tree.expandAll()
        if self.recommendation.reason and self._files:
            self.reason.setText("★ " + self.recommendation.reason)
            self.reason.show()
        skipped = len([f for f in self._files if not f.is_single_model])
        if skipped:
            self.reason.setToolTip(f"{skipped} split or vision-projector files are not listed")
        chosen = current or self.recommendation.file
        if chosen is not None:
            self.select_file(chosen.path)

    def _add_row(self, group: QTreeWidgetItem, option: FileOption) -> None:
        file = option.file
        speed = verify_speed(file.quant, on_gpu=self.gpu_offload)
        fit = option.fit
        item = QTreeWidgetItem(group, [file.path, file.quant or "?",
                                       format_bytes(file.size) if file.size else "?",
                                       fit.value if fit else "?", speed.label])
        item.setData(FILE, Qt.UserRole, file)
        item.setToolTip(VERIFY, speed.describe())
        item.setTextAlignment(SIZE, Qt.AlignRight | Qt.AlignVCenter)
        if fit is not None:
            item.setForeground(MEMORY, QBrush(QColor(BADGE_COLOURS[fit])))
            bold = QFont(item.font(MEMORY))
            bold.setBold(True)
            item.setFont(MEMORY, bold)
            item.setToolTip(MEMORY, (
                f"needs about {format_bytes(option.estimate.needed)}: weights "
                f"{format_bytes(option.estimate.weights)}"
                + (" (with the draft)" if self.draft_bytes else "")
                + f", KV cache at {self.n_ctx:,} tokens {format_bytes(option.estimate.kv_cache)}"))
        if file.path in self.here:  # no download needed: say so where the file is chosen
            item.setText(FILE, f"✓ {file.path}")
            item.setToolTip(FILE, plain_tip(f"On this computer already: {self.here[file.path]} "
                                            "(Installed)"))
        if file == self.recommendation.file:
            item.setText(FILE, f"★ {item.text(FILE)}")
            for column in range(len(COLUMNS)):
                item.setBackground(column, QBrush(QColor(RECOMMENDED_BACKGROUND)))
                item.setForeground(column, item.foreground(column) if column == MEMORY
                                   else QBrush(QColor("#222222")))
            item.setToolTip(FILE, plain_tip(self.recommendation.reason))

    def _item_for(self, path: str) -> QTreeWidgetItem | None:
        for i in range(self.tree.topLevelItemCount()):
            group = self.tree.topLevelItem(i)
            for j in range(group.childCount()):
                file = self._file_of(group.child(j))
                if file is not None and file.path == path:
                    return group.child(j)
        return None

    @staticmethod
    def _file_of(item: QTreeWidgetItem | None) -> HubFile | None:
        return item.data(FILE, Qt.UserRole) if item is not None else None

    def _offer_download(self, item: QTreeWidgetItem | None) -> None:
        """Download for a file not here yet; one here already says where instead."""
        file = self._file_of(item)
        here = self.here.get(file.path) if file is not None else None
        self.download_button.setText("Installed" if here else "Download")
        self.download_button.setToolTip(plain_tip(f"On this computer already: {here}; use it "
                                                  "from Installed") if here else "")
        self.download_button.setEnabled(file is not None and not here)

    def _download(self) -> None:
        file = self._file_of(self.tree.currentItem())
        if file is not None and file.path not in self.here:
            self.download_requested.emit(file)
