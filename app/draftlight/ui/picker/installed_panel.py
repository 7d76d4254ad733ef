"""The picker's installed models: name, size, weight type and where the file is, with buttons
to use one as the target or the draft, open its folder, convert it to another weight type (on a
worker thread, with progress) and delete it (after asking; never the bundled model). What each
row says is worked out in installed_rows.py."""

from __future__ import annotations

import threading

from PySide6.QtCore import QUrl, Signal
from PySide6.QtGui import QDesktopServices
from PySide6.QtWidgets import (QFileDialog, QHBoxLayout, QInputDialog, QLabel, QMessageBox,
                               QProgressBar, QPushButton, QVBoxLayout, QWidget)

from draftlight.store.convert import ConversionCancelled
from draftlight.store.convert_installed import OFFERED_TYPES, convert_installed
from draftlight.store.errors import StoreError, describe_error
from draftlight.settings import added_model_folders
from draftlight.store.found_models import OWN_SOURCES, every_model, forget_found, kept_as
from draftlight.store.model_facts import shared_facts
from draftlight.store.installed import (InstalledModel, add_local, list_installed, remove,
                                        take_notices)
from draftlight.store.memory import system_memory
from draftlight.ui.picker.installed_rows import (  # noqa: F401 - also_apps: tests read it here
    also_apps, installed_row, without_replaced_original)
from draftlight.ui.picker.rows import PAYLOAD_ROLE, row_list
from draftlight.ui.widgets.plain_text import plain_tip


class Conversion:
    """One conversion on a worker thread; the panel reads `done`/`total` on a timer."""

    def __init__(self, model: InstalledModel, type_name: str) -> None:
        self.model, self.type_name = model, type_name
        self.done = self.total = 0
        self.result: InstalledModel | None = None
        self.error: BaseException | None = None
        self.finished = False
        self._cancel = threading.Event()
        self._thread = threading.Thread(target=self._run, name="convert", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def cancel(self) -> None:
        self._cancel.set()

    def join(self, timeout: float | None = None) -> None:
        self._thread.join(timeout)

    def _run(self) -> None:
        def progress(p) -> None:
            self.done, self.total = p.done, p.total
        try:
            self.result = convert_installed(self.model, self.type_name, on_progress=progress,
                                            should_cancel=self._cancel.is_set)
        except BaseException as exc:  # noqa: BLE001 - shown in the panel
            self.error = exc
        finally:
            self.finished = True


class InstalledPanel(QWidget):
    # what Settings keep for the model (kept_as: another app's by its reference, as the model
    # bar keeps it, never its blob's path): load it as the window's target …
    target_chosen = Signal(str)
    draft_chosen = Signal(str)  # … as its draft
    changed = Signal()  # a model was deleted or converted
    message = Signal(str)  # something to tell the user
    listed = Signal(int)  # how many models the list shows, after each refresh

    def __init__(self, *, gpu_offload: bool = False, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.gpu_offload = gpu_offload
        self.conversion: Conversion | None = None
        self.list = row_list()
        self._build_buttons()
        self.progress = QProgressBar()
        self.progress.setRange(0, 0)
        self.progress.hide()
        self.cancel_button = QPushButton("Cancel conversion")
        self.cancel_button.hide()
        self._connect()
        self._build_layout()
        self.refresh()

    def _build_buttons(self) -> None:
        self.target_button = QPushButton("Use as target")
        self.target_button.setToolTip("Load it in the window as the model that writes the reply")
        self.draft_button = QPushButton("Use as draft")
        self.draft_button.setToolTip("Load it in the window as the draft (the target stays)")
        self.folder_button = QPushButton("Open folder")
        self.convert_button = QPushButton("Convert…")
        self.convert_button.setToolTip("Write a copy in another weight type: Q8_0 and Q4_0 "
                                       "verify drafts fast on a CPU")
        self.delete_button = QPushButton("Delete…")
        self.add_button = QPushButton("Add a GGUF…")
        self.add_button.setToolTip("A GGUF file already on this computer: listed here, used "
                                   "where it is (nothing is copied)")
        self.refresh_button = QPushButton("Refresh")
        self.refresh_button.setToolTip("Look again for models: Draftlight's, other apps' "
                                       "(Ollama, LM Studio, …) and the folders you added")

    def _connect(self) -> None:
        self.add_button.clicked.connect(self.ask_add)
        self.refresh_button.clicked.connect(self.rescan)
        self.target_button.clicked.connect(lambda: self._emit_choice(self.target_chosen))
        self.draft_button.clicked.connect(lambda: self._emit_choice(self.draft_chosen))
        self.folder_button.clicked.connect(self.open_folder)
        self.convert_button.clicked.connect(self._ask_convert)
        self.delete_button.clicked.connect(self.delete_selected)
        self.cancel_button.clicked.connect(lambda: self.conversion and self.conversion.cancel())
        self.list.currentItemChanged.connect(lambda *_: self._update_buttons())

    def _build_layout(self) -> None:
        buttons = QHBoxLayout()
        for button in (self.target_button, self.draft_button, self.folder_button,
                       self.convert_button):
            buttons.addWidget(button)
        buttons.addStretch()
        buttons.addWidget(self.refresh_button)
        buttons.addWidget(self.add_button)
        buttons.addWidget(self.delete_button)
        converting = QHBoxLayout()
        converting.addWidget(self.progress, 1)
        converting.addWidget(self.cancel_button)
        layout = QVBoxLayout(self)
        layout.addWidget(QLabel("Models on this computer"))
        layout.addWidget(self.list, 1)
        layout.addLayout(converting)
        layout.addLayout(buttons)

    def refresh(self) -> None:
        chosen = self.selected()
        self.list.clear()
        memory = system_memory()  # once for the list: each row's fits / tight / too big
        for model in without_replaced_original(every_model(added_model_folders())):
            self.list.addItem(installed_row(model, memory, self.gpu_offload))
            if chosen is not None and model.name == chosen.name:
                self.list.setCurrentRow(self.list.count() - 1)
        if self.list.currentRow() < 0 and self.list.count():
            self.list.setCurrentRow(0)
        for notice in take_notices():
            self.message.emit(notice)
        self._update_buttons()
        self.listed.emit(self.list.count())

    def rescan(self) -> None:
        """Refresh: other apps' folders are listed again (not only every 10 s), and the
        window's lists follow (`changed`)."""
        forget_found()
        self.refresh()
        self.changed.emit()

    def models_shown(self) -> list[InstalledModel]:
        return [self.list.item(i).data(PAYLOAD_ROLE) for i in range(self.list.count())]

    def select(self, name: str) -> None:
        names = [m.name for m in self.models_shown()]
        self.list.setCurrentRow(names.index(name))

    def selected(self) -> InstalledModel | None:
        item = self.list.currentItem()
        return item.data(PAYLOAD_ROLE) if item is not None else None

    def _update_buttons(self) -> None:
        model = self.selected()
        usable = model is not None and model.exists
        for button in (self.target_button, self.draft_button, self.folder_button):
            button.setEnabled(usable)
        self.convert_button.setEnabled(usable and self.conversion is None)
        bundled = model is not None and model.source == "bundled"
        other_app = model is not None and model.source not in OWN_SOURCES
        self.delete_button.setEnabled(model is not None and not bundled and not other_app)
        self.delete_button.setToolTip(
            "The bundled model ships with the app and stays" if bundled
            else "In a folder you added: Draftlight lists it and never deletes it"
            if other_app and model.source == "a folder you added"
            else plain_tip(f"{model.source} keeps this model: remove it there") if other_app
            else "Delete the file (a model you added is only forgotten; its file stays)")

    def _emit_choice(self, signal) -> None:
        model = self.selected()
        if model is not None and model.exists:
            signal.emit(kept_as(model))

    def open_folder(self) -> None:
        model = self.selected()
        if model is not None:
            QDesktopServices.openUrl(QUrl.fromLocalFile(str(model.path.parent)))

    def delete_selected(self) -> bool:
        """Ask, then delete; the bundled model is refused without asking. True if deleted."""
        model = self.selected()
        if model is None:
            return False
        if model.source == "bundled":
            self.message.emit(f"{model.name} is bundled with the app and cannot be deleted")
            return False
        what = ("delete its file" if model.source in ("hub", "converted")
                else "forget it (the file stays where it is)")
        answer = QMessageBox.question(self, "Delete model", plain_tip(
            f"Delete {model.name}?\n\nThis will {what}:\n{model.path}"))
        if answer != QMessageBox.Yes:
            return False
        try:
            remove(model.name)
        except (StoreError, OSError) as exc:
            self.message.emit(describe_error(exc))
            return False
        self.refresh()
        self.changed.emit()
        return True

    def ask_add(self) -> None:
        path, _filter = QFileDialog.getOpenFileName(self, "Add a GGUF model", "",
                                                    "GGUF models (*.gguf);;All files (*)")
        if path:
            self.add(path)

    def add(self, path: str) -> InstalledModel | None:
        """List a GGUF file that is already here; a file that is not one is refused with a
        line that says why, and nothing is listed."""
        try:
            model = add_local(path)
        except (StoreError, OSError) as exc:
            self.message.emit(f"Not added: {describe_error(exc)}")
            return None
        self.refresh()
        self.select(model.name)
        self.message.emit(f"Added {model.name} ({model.path})")
        self.changed.emit()
        return model

    def _ask_convert(self) -> None:
        model = self.selected()
        if model is None:
            return
        offered = self.types_to_offer(model)
        if not offered:
            self.message.emit(f"{model.name} is already in every type Convert offers")
            return
        type_name, ok = QInputDialog.getItem(
            self, "Convert", plain_tip(f"Convert {model.name} to (a copy is written; the "
                                       "original stays):"), offered, 0, False)
        if ok:
            self.convert(model, type_name)

    def types_to_offer(self, model: InstalledModel) -> list[str]:
        """OFFERED_TYPES less the model's own type and those it has a copy in already."""
        have = set()
        for other in [model] + [m for m in self.models_shown() + list_installed()
                                if m.converted_from == model.name and m.exists]:
            facts = shared_facts().get(other.path)
            have.add(((facts.weight_type if facts else None) or "").upper())
        return [t for t in OFFERED_TYPES if t.upper() not in have]

    def convert(self, model: InstalledModel, type_name: str) -> Conversion:
        self.conversion = Conversion(model, type_name)
        self.progress.setRange(0, 0)
        self.progress.setFormat(f"{model.name} → {type_name}: %p%")
        self.progress.show()
        self.cancel_button.show()
        self._update_buttons()
        self.conversion.start()
        return self.conversion

    def poll(self) -> None:
        """Called on the dialog's timer: the conversion's progress, and its end."""
        conversion = self.conversion
        if conversion is None:
            return
        if conversion.total:
            self.progress.setRange(0, conversion.total)
            self.progress.setValue(conversion.done)
        if not conversion.finished:
            return
        self.conversion = None
        self.progress.hide()
        self.cancel_button.hide()
        if isinstance(conversion.error, ConversionCancelled):
            self.message.emit("Conversion cancelled; nothing was written")
        elif conversion.error is not None:
            self.message.emit(describe_error(conversion.error))
        else:
            self.message.emit(f"Converted {conversion.model.name} to {conversion.type_name}: "
                              f"{conversion.result.name}")
            self.refresh()
            self.select(conversion.result.name)
            self.changed.emit()
        self._update_buttons()
