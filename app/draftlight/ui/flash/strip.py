"""The acceptance strip under a reply: one cell per target pass, as wide as the tokens it
produced, coloured like the text of its accepted run (plain passes are grey). Hovering a cell
tells what the pass wrote and drafted; clicking selects it in the reply."""

from __future__ import annotations

from PySide6.QtCore import QEvent, QRectF, Qt, Signal
from PySide6.QtGui import QColor, QPainter, QPalette
from PySide6.QtWidgets import QSizePolicy, QToolTip, QWidget

from draftlight.ui.flash.palette import DEFAULT, Scheme
from draftlight.ui.flash.passes import Pass, describe
from draftlight.ui.widgets.plain_text import plain_tip

HEIGHT = 8
GAP = 1  # pixels between cells, when cells are wide enough to show it


class AcceptanceStrip(QWidget):
    cell_clicked = Signal(int)  # index of the pass

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.passes: list[Pass] = []
        self.text = ""
        self.scheme: Scheme = DEFAULT
        self.tip_extra = None  # pass index -> one more line for its hover text ("" for none)
        self.setFixedHeight(HEIGHT)
        self.setSizePolicy(QSizePolicy.Expanding, QSizePolicy.Fixed)
        self.setMouseTracking(True)
        self.setCursor(Qt.PointingHandCursor)

    def set_passes(self, passes: list[Pass], text: str) -> None:
        self.passes, self.text = passes, text
        self.setVisible(bool(passes))
        self.update()

    def set_scheme(self, scheme: Scheme) -> None:
        self.scheme = scheme
        self.update()

    def cell_rects(self) -> list[QRectF]:
        total = sum(max(p.tokens, 1) for p in self.passes)
        if not total:
            return []
        scale = self.width() / total
        rects, x = [], 0.0
        for p in self.passes:
            width = max(p.tokens, 1) * scale
            rects.append(QRectF(x, 0, width, self.height()))
            x += width
        return rects

    def cell_colour(self, p: Pass) -> QColor:
        if p.accepted:
            tint = self.scheme.tint(p.accepted)
            tint.setAlpha(min(255, tint.alpha() + 60))  # a thin strip needs more than text
            return tint
        grey = self.palette().color(QPalette.Mid)
        grey.setAlpha(90)
        return grey

    def paintEvent(self, _event) -> None:
        painter = QPainter(self)
        rects = self.cell_rects()
        gap = GAP if rects and min(r.width() for r in rects) >= 3 else 0
        for p, rect in zip(self.passes, rects):
            painter.fillRect(rect.adjusted(0, 0, -gap, 0), self.cell_colour(p))
        painter.end()

    def index_at(self, x: float) -> int:
        for index, rect in enumerate(self.cell_rects()):
            if rect.left() <= x < rect.right():
                return index
        return -1

    def event(self, event) -> bool:
        """Hovering a cell (Qt's tooltip event) tells its pass: text, drafted and accepted."""
        if event.type() == QEvent.ToolTip:
            self.show_tip(event.pos().x(), event.globalPos())
            return True
        return super().event(event)

    def mouseMoveEvent(self, event) -> None:
        self.show_tip(event.position().x(), event.globalPosition().toPoint())

    def show_tip(self, x: float, global_pos) -> None:
        index = self.index_at(x)
        if index >= 0:
            tip = describe(self.passes[index], self.text)
            extra = self.tip_extra(index) if self.tip_extra else ""
            # a pass's text is the model's, or an imported table's
            QToolTip.showText(global_pos, plain_tip(f"{tip}\n{extra}" if extra else tip), self)
        else:
            QToolTip.hideText()

    def mousePressEvent(self, event) -> None:
        index = self.index_at(event.position().x())
        if event.button() == Qt.LeftButton and index >= 0:
            self.cell_clicked.emit(index)
