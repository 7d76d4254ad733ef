"""The picker's drafts for the shown target, each with why it qualifies, a "Download pair"
button, and the row that shows a pair's download: one bar for both files, cancel, resume."""

from __future__ import annotations

import html

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (QGridLayout, QHBoxLayout, QLabel, QProgressBar, QPushButton,
                               QVBoxLayout, QWidget)

from draftlight.store.downloads import JobState
from draftlight.store.draft_options import DraftOption
from draftlight.store.errors import describe_error
from draftlight.store.pair_download import PairDownload
from draftlight.ui.picker.rows import PAYLOAD_ROLE, chip, row_item, row_list
from draftlight.units import format_bytes, format_duration
from draftlight.ui.widgets.plain_text import plain_label


class DraftsPanel(QWidget):
    draft_chosen = Signal(object)  # a DraftOption, or None
    pair_requested = Signal(object)  # the DraftOption to download with the target

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        heading = QLabel("<b>Drafts for this target</b>")
        self.hint = QLabel("A small model that guesses tokens for the target to check")
        self.hint.setStyleSheet("color: palette(mid);")
        self.hint.setWordWrap(True)  # beside the heading: the picker must fit an 800-px screen
        self.list = row_list()
        self.list.setMinimumHeight(120)
        self.pair_button = QPushButton("Download pair")
        self.pair_button.setToolTip("Download the chosen target file and this draft together")
        self.pair_button.setEnabled(False)
        self.pair_button.clicked.connect(self._pair)
        self.list.currentItemChanged.connect(self._chosen)
        self.target_ready = False  # a target file is chosen: a pair can be downloaded
        top = QHBoxLayout()
        top.addWidget(heading)
        top.addWidget(self.hint, 1)
        top.addWidget(self.pair_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(top)
        layout.addWidget(self.list, 1)

    def show_options(self, options: list[DraftOption], *, keep: str | None = None) -> None:
        """List `options`, choosing the one named `keep` (else the first)."""
        keep = keep or (self.selected().name if self.selected() else None)
        self.list.blockSignals(True)
        self.list.clear()
        for option in options:
            facts = [option.why]
            if option.size:
                facts.append(format_bytes(option.size))
            if option.repo and option.repo != option.name:
                facts.append(option.repo)
            chips = [chip(option.kind)] + ([chip("installed")] if option.installed else [])
            self.list.addItem(row_item(option.name, "  ·  ".join(facts), chips, option,
                                       option.why))
        self.list.blockSignals(False)
        names = [o.name for o in options]
        self.list.setCurrentRow(names.index(keep) if keep in names else 0 if names else -1)
        if not names:
            self._chosen(None, None)

    def options_shown(self) -> list[DraftOption]:
        return [self.list.item(i).data(PAYLOAD_ROLE) for i in range(self.list.count())]

    def selected(self) -> DraftOption | None:
        item = self.list.currentItem()
        return item.data(PAYLOAD_ROLE) if item is not None else None

    def select(self, name: str) -> None:
        names = [o.name for o in self.options_shown()]
        if name in names:
            self.list.setCurrentRow(names.index(name))

    def set_target_ready(self, ready: bool) -> None:
        """Whether a target file is chosen (without one, a pair has no target)."""
        self.target_ready = ready
        self._update_pair_button()

    def _update_pair_button(self) -> None:
        ok = self.list.currentItem() is not None and self.target_ready
        self.pair_button.setEnabled(ok)
        self.pair_button.setToolTip("Download the chosen target file and this draft together"
                                    if ok or self.list.currentItem() is None
                                    else "Choose the target's file above first")

    def _chosen(self, item, _old) -> None:
        self._update_pair_button()
        self.draft_chosen.emit(item.data(PAYLOAD_ROLE) if item is not None else None)

    def _pair(self) -> None:
        option = self.selected()
        if option is not None:
            self.pair_requested.emit(option)


class PairRow(QWidget):
    """A pair's download: both files on one bar; cancel keeps the partial files, resume goes
    on from them."""

    resume_requested = Signal(object)  # this row

    def __init__(self, pair: PairDownload, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.pair = pair
        self.shown_state = JobState.QUEUED  # the state the row last showed
        self.label = QLabel(f"<b>{html.escape(pair.label)}</b>")  # bold: the hub's names escaped
        self.bar = QProgressBar()
        self.bar.setRange(0, 1000)
        self.detail = plain_label("queued")  # an error names files
        self.detail.setStyleSheet("color: palette(mid);")
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.clicked.connect(lambda: self.pair.cancel())
        self.resume_button = QPushButton("Resume")
        self.resume_button.hide()
        self.resume_button.clicked.connect(lambda: self.resume_requested.emit(self))
        layout = QGridLayout(self)
        layout.setContentsMargins(0, 2, 0, 2)
        layout.addWidget(self.label, 0, 0, 1, 3)
        layout.addWidget(self.bar, 1, 0)
        layout.addWidget(self.cancel_button, 1, 1)
        layout.addWidget(self.resume_button, 1, 2)
        layout.addWidget(self.detail, 2, 0, 1, 3)

    def set_pair(self, pair: PairDownload) -> None:
        self.pair = pair
        self.refresh()

    def refresh(self) -> None:
        progress = self.pair.progress
        if progress.fraction is not None:
            self.bar.setValue(int(progress.fraction * 1000))
        state = self.shown_state = progress.state
        files = f"{len(self.pair.jobs)} file{'s' if len(self.pair.jobs) > 1 else ''}"
        if state in (JobState.DOWNLOADING, JobState.CHECKING) and progress.total:
            eta = format_duration(progress.eta) if progress.eta is not None else "--:--"
            self.detail.setText(f"{files}: {format_bytes(progress.downloaded)} of "
                                f"{format_bytes(progress.total)}, "
                                f"{format_bytes(progress.speed)}/s, ETA {eta}")
        elif state == JobState.FAILED:
            error = next((j.error for j in self.pair.jobs if j.error), None)
            self.detail.setText(describe_error(error) if error else "failed")
        elif state == JobState.CANCELLED:
            self.detail.setText("cancelled: the partial files are kept, Resume goes on")
        elif state == JobState.DONE:
            self.detail.setText(f"done: {files} installed")
        else:
            self.detail.setText(state.value)
        self.cancel_button.setVisible(not state.finished)
        self.resume_button.setVisible(state in (JobState.CANCELLED, JobState.FAILED))
