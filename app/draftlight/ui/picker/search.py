"""The picker's search column: a search box that asks the hub once the typing pauses, a sort
menu, and the results as two-line rows. With the box empty it shows the curated pairs."""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Callable

from PySide6.QtCore import QTimer, Signal
from PySide6.QtWidgets import QComboBox, QHBoxLayout, QLineEdit, QVBoxLayout, QWidget

from draftlight.store.catalog import Catalog, CuratedPair
from draftlight.store.hub import HubRepo
from draftlight.ui.widgets.elided_label import ElidedLabel
from draftlight.ui.widgets.latest_request import LatestRequests
from draftlight.ui.picker.rows import PAYLOAD_ROLE, chip, row_item, row_list
from draftlight.units import format_age, format_bytes, format_count

DEBOUNCE_MS = 350  # one request per pause in the typing
SORTS = (("Most downloaded", "downloads"), ("Most liked", "likes"), ("Recently updated", "updated"))


def repo_facts(repo: HubRepo, now: datetime) -> str:
    """'bartowski · 7.6B · qwen2.5 · ↓ 1.2M · ♥ 340 · updated 3 days ago · apache-2.0'"""
    facts = [repo.publisher, repo.parameter_label, repo.family,
             f"↓ {format_count(repo.downloads or 0)}", f"♥ {format_count(repo.likes or 0)}",
             f"updated {format_age(repo.last_modified, now)}" if repo.last_modified else None,
             repo.licence]
    return "  ·  ".join(x for x in facts if x)


class SearchPanel(QWidget):
    chosen = Signal(object)  # a HubRepo or a CuratedPair

    def __init__(self, requests: LatestRequests, hub: Callable, catalog: Catalog | None, *,
                 report: Callable[[BaseException, Callable[[], None]], None],
                 pair_facts: Callable[[CuratedPair], tuple[str, list]] | None = None,
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._requests, self._hub, self._report = requests, hub, report
        self.catalog, self._pair_facts = catalog, pair_facts
        self.search_edit = QLineEdit(placeholderText="Search models on Hugging Face…")
        self.search_edit.setClearButtonEnabled(True)
        self.sort_box = QComboBox()
        for label, key in SORTS:
            self.sort_box.addItem(label, key)
        self.results = row_list()
        self.summary = ElidedLabel()  # it quotes the search: a long one would widen the picker
        self.summary.setStyleSheet("color: palette(mid);")
        self._debounce = QTimer(self, singleShot=True, interval=DEBOUNCE_MS)
        self._debounce.timeout.connect(self.search_now)
        self.search_edit.textChanged.connect(lambda _text: self._debounce.start())
        self.search_edit.returnPressed.connect(self.search_now)
        self.sort_box.currentIndexChanged.connect(lambda _i: self.search_now())
        self.results.currentItemChanged.connect(
            lambda item, _old: item is not None and self.chosen.emit(item.data(PAYLOAD_ROLE)))
        top = QHBoxLayout()
        top.addWidget(self.search_edit, 1)
        top.addWidget(self.sort_box)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(top)
        layout.addWidget(self.summary)
        layout.addWidget(self.results, 1)
        self.show_pairs()

    @property
    def sort(self) -> str:
        return self.sort_box.currentData()

    def set_sort(self, key: str) -> None:
        self.sort_box.setCurrentIndex(self.sort_box.findData(key))

    def search_now(self) -> None:
        self._debounce.stop()
        query = self.search_edit.text().strip()
        if not query:
            self.show_pairs()
            return
        hub = self._hub()
        if hub is None:
            return
        sort = self.sort
        self.summary.setText(f"Searching for “{query}”…")
        self._requests.run("search", lambda: hub.search(query, sort=sort), self.show_results,
                           lambda exc: self._failed(exc))

    def _failed(self, exc: BaseException) -> None:
        self.results.clear()  # not the curated pairs under it, as if they were the answer
        self.summary.setText(f"No answer from the hub for “{self.search_edit.text().strip()}”: "
                             "clear the box for the curated pairs")
        self._report(exc, self.search_now)

    def show_results(self, repos: list[HubRepo]) -> None:
        self.results.clear()
        now = datetime.now(timezone.utc)
        for repo in repos:
            chips = [chip("gated")] if repo.gated else []
            tip = f"{repo.id}\n" + ("Gated: accept its terms on the hub and set a token "
                                    "before downloading" if repo.gated else "")
            self.results.addItem(row_item(repo.name, repo_facts(repo, now), chips, repo, tip))
        label = dict((key, label) for label, key in SORTS)[self.sort].lower()
        self.summary.setText(f"{len(repos)} GGUF repositories, {label} first" if repos
                             else "No GGUF repositories match")

    def show_pairs(self) -> None:
        """The curated pairs: targets with a draft known to pair with them."""
        self.results.clear()
        for pair in self.catalog.pairs if self.catalog else ():
            facts, chips = (self._pair_facts(pair) if self._pair_facts else
                            (format_bytes(sum(m.approx_size or 0 for m in (pair.target,
                                                                          pair.draft))), []))
            self.results.addItem(row_item(pair.target.name, facts,
                                          [chip("pair"), *chips], pair,
                                          f"{pair.target.repo}\ndrafted by {pair.draft.repo}"
                                          f"\nshared tokenizer: {pair.tokenizer}"))
        self.summary.setText("Curated target + draft pairs: type to search the hub")

    def repos_shown(self) -> list:
        return [self.results.item(i).data(PAYLOAD_ROLE) for i in range(self.results.count())]
