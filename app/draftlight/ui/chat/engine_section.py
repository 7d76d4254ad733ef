"""The Settings dialog's Engine section: which engine answers, and that engine's own fields
(llama-server's binary and --spec-type; a remote server's address and key). Only the chosen
engine's fields are shown."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QComboBox, QFormLayout, QGroupBox, QLabel, QLineEdit

from draftlight.modes import SPEC_TYPE_HELP, SPEC_TYPES, Mode
from draftlight.settings import Settings
from draftlight.ui.chat.path_field import PathField
from draftlight.ui.engine.model_bar import ENGINE_LABELS
from draftlight.engine_kind import EngineKind


class EngineSection(QGroupBox):
    def __init__(self, settings: Settings) -> None:
        super().__init__("Engine")
        self.form = form = QFormLayout(self)
        self.engine = QComboBox()
        for kind, label in ENGINE_LABELS.items():
            self.engine.addItem(label, kind)
        self.engine.setCurrentIndex(max(self.engine.findData(settings.engine), 0))
        self.engine.setToolTip("This computer: llama.cpp inside Draftlight, with its own drafters "
                               "and Compare. llama.cpp server: llama.cpp's llama-server, started "
                               "by Draftlight. Remote server: any OpenAI-compatible server.")
        form.addRow("Answered by:", self.engine)
        self._llama_server_fields(form, settings)
        self._remote_fields(form, settings)
        self.engine.currentIndexChanged.connect(self._show_fields)
        self._show_fields()

    def _llama_server_fields(self, form: QFormLayout, settings: Settings) -> None:
        """llama-server's binary, its --spec-type (with a line on what it does) and RPC servers."""
        self.llama_server = PathField(settings.llama_server, "found or built by Draftlight",
                                      title="Choose llama.cpp's llama-server",
                                      filters="All files (*)")
        form.addRow("llama-server:", self.llama_server)
        self.server_note = QLabel("Leave empty: Draftlight uses a llama-server on PATH, or builds "
                                  "one from the installed llama.cpp the first time (a few "
                                  "minutes; needs cmake and a C++ compiler).")
        self.server_note.setWordWrap(True)
        form.addRow(self.server_note)
        self.spec_type = QComboBox(editable=True)  # a chain is typed: draft-mtp,ngram-mod
        for spec in SPEC_TYPES:
            self.spec_type.addItem(spec, spec)
            self.spec_type.setItemData(self.spec_type.count() - 1, SPEC_TYPE_HELP[spec],
                                       Qt.ToolTipRole)
        if self.spec_type.findData(settings.spec_type) < 0:
            self.spec_type.addItem(settings.spec_type, settings.spec_type)
        self.spec_type.setCurrentIndex(max(self.spec_type.findData(settings.spec_type), 0))
        self.spec_type.setToolTip("llama-server's --spec-type: how it drafts (the toolbar's "
                                  "Speculation box switches it too). Several, comma-separated, "
                                  "are tried in turn: draft-mtp,ngram-mod")
        form.addRow("llama.cpp speculation:", self.spec_type)
        self.spec_help = QLabel()  # what the chosen type does, in a line
        self.spec_help.setWordWrap(True)
        self.spec_help.setStyleSheet("color: palette(mid);")
        form.addRow(self.spec_help)
        self.spec_type.currentTextChanged.connect(self._explain_spec_type)
        self._explain_spec_type(self.spec_type.currentText())
        self.rpc_servers = QLineEdit(settings.rpc_servers,
                                     placeholderText="none: this machine only")
        self.rpc_servers.setToolTip(
            "Split the model over other machines: their addresses, HOST:PORT, comma-separated. "
            "On each, run `draftlight engine rpc-server --host ADDRESS`. llama.cpp's RPC has no "
            "authentication: use it on a private network only.")
        form.addRow("Use other machines:", self.rpc_servers)

    def _remote_fields(self, form: QFormLayout, settings: Settings) -> None:
        """A remote OpenAI-compatible server's address, API key and model."""
        self.server_url = QLineEdit(settings.server_url, placeholderText="http://127.0.0.1:8080")
        form.addRow("Server address:", self.server_url)
        self.server_api_key = QLineEdit(settings.server_api_key, placeholderText="none")
        self.server_api_key.setEchoMode(QLineEdit.PasswordEchoOnEdit)
        form.addRow("API key:", self.server_api_key)
        self.server_model = QLineEdit(settings.server_model,
                                      placeholderText="the server's only model")
        self.server_model.setToolTip("The model to ask the server for; empty: the one it lists "
                                     "at /v1/models (a server with several says which)")
        form.addRow("Model:", self.server_model)

    def _show_fields(self) -> None:
        kind = self.engine.currentData()
        for widget, used in ((self.llama_server, kind == EngineKind.LLAMA_SERVER),
                             (self.server_note, kind == EngineKind.LLAMA_SERVER),
                             (self.spec_type, kind == EngineKind.LLAMA_SERVER),
                             (self.spec_help, kind == EngineKind.LLAMA_SERVER),
                             (self.rpc_servers, kind == EngineKind.LLAMA_SERVER),
                             (self.server_url, kind == EngineKind.REMOTE),
                             (self.server_api_key, kind == EngineKind.REMOTE),
                             (self.server_model, kind == EngineKind.REMOTE)):
            self.form.setRowVisible(widget, used)

    def _explain_spec_type(self, text: str) -> None:
        """The chosen type's line; a chain (draft-mtp,ngram-mod) gets each of its types'."""
        types = [t.strip() for t in text.split(",") if t.strip()]
        lines = [f"{t}: {SPEC_TYPE_HELP[t]}" if len(types) > 1 else SPEC_TYPE_HELP[t]
                 for t in types if t in SPEC_TYPE_HELP]
        if len(types) > 1 and lines:
            lines.insert(0, "Tried in this order:")
        self.spec_help.setText("\n".join(lines) or "Not a llama.cpp speculation type: "
                               + ", ".join(SPEC_TYPES) + ".")

    def offer_spec_types(self, has_draft: bool) -> None:
        """Speculation types that draft with a model are offered only while a draft model is
        set; one chosen before is replaced by the default type."""
        for i in range(self.spec_type.count()):
            item = self.spec_type.model().item(i)
            needs = Mode.llama(self.spec_type.itemData(i)).needs_draft_model
            item.setEnabled(has_draft or not needs)
            spec = self.spec_type.itemData(i)
            item.setToolTip("Set a draft model below first" if needs and not has_draft
                            else SPEC_TYPE_HELP.get(spec, ""))
        current = self.spec_type.model().item(self.spec_type.currentIndex())
        if current is not None and not current.isEnabled():
            self.spec_type.setCurrentIndex(self.spec_type.findData(Settings().spec_type))

    def values(self) -> dict:
        """The Settings fields this section sets."""
        return dict(engine=self.engine.currentData(), llama_server=self.llama_server.value() or "",
                    spec_type=self.spec_type.currentText().strip().replace(" ", ""),
                    server_url=self.server_url.text().strip(),
                    server_api_key=self.server_api_key.text().strip(),
                    server_model=self.server_model.text().strip(),
                    rpc_servers=self.rpc_servers.text().strip())
