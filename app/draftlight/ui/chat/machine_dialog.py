"""View ▸ This machine: what checking k drafted tokens costs here, v(k) in single steps, beside a
GPU's nearly flat curve and the line where drafting can never pay, and one sentence saying where
speculation pays on this machine. The curve is the latest reply's (Stats.pass_costs: auto's, as
its passes corrected it, or the one timed when the model loaded)."""

from __future__ import annotations

from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QColor, QPainter, QPainterPath, QPen
from PySide6.QtWidgets import QDialog, QDialogButtonBox, QLabel, QVBoxLayout, QWidget

from draftlight.ui.widgets.screen_fit import fit_to_screen

TOP_K = 16  # the chart's k axis: auto drafts up to 16 tokens, a pass checks 17


def curve_of(pass_costs: dict) -> dict[int, float]:
    """{k: v(k)} from Stats.pass_costs (k as text), v(1) = 1 added; {} if it holds none."""
    curve = {}
    for k, v in (pass_costs or {}).items():
        try:
            k, v = int(k), float(v)
        except (TypeError, ValueError):
            continue
        if 2 <= k <= TOP_K and 1.0 <= v < 1e6:
            curve[k] = v
    return {1: 1.0, **dict(sorted(curve.items()))} if curve else {}


def where_it_pays(curve: dict[int, float]) -> str:
    """One sentence: where speculation pays on a machine with this curve."""
    if not curve:
        return ("Not measured yet: once a reply has run (in Auto, the first minute or so of "
                "use times it in the background), this shows what checking drafted tokens "
                "costs here.")
    best_k = max(curve, key=lambda k: k / curve[k])
    best = best_k / curve[best_k]
    v8 = curve.get(8)
    cost = (f"Checking 8 drafted tokens costs {v8:.1f} single steps on this machine "
            f"(on a GPU about 1). " if v8 else "")
    if best < 1.1:
        return (cost + "Checking drafts costs about as much as writing the tokens one by one "
                "here, so speculation can barely pay: Auto mostly leaves it off.")
    if best < 2.0:
        return (cost + f"Speculation pays here only on text the model copies nearly whole "
                f"(quotes, attached files, edits, a retried answer): even with every drafted "
                f"token right it is at most {best:.1f}x faster ({best_k} tokens a pass). On "
                f"free writing Auto drafts nothing.")
    return (cost + f"Speculation pays here wherever drafts are mostly right: up to {best:.1f}x "
            f"faster ({best_k} tokens a pass), and on free writing too when the guesses are "
            f"good.")


class CostCurveChart(QWidget):
    """v(k) for k = 1..16: this machine's (solid), a GPU's (flat, v = 1) and k itself (dashed:
    a draft of k tokens checked at that cost saves nothing even when all of it is right)."""

    def __init__(self, curve: dict[int, float], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.curve = curve
        self.setMinimumSize(320, 200)

    def paintEvent(self, _event) -> None:  # noqa: N802 (Qt's name)
        painter = QPainter(self)
        painter.setRenderHint(QPainter.Antialiasing)
        text = self.palette().windowText().color()
        metrics = painter.fontMetrics()
        left, bottom = metrics.horizontalAdvance("16") + 10, metrics.height() + 8
        area = QRectF(left, 8, self.width() - left - 10, self.height() - bottom - 8)
        top_v = max([TOP_K] + list(self.curve.values()))

        def at(k: float, v: float) -> QPointF:
            return QPointF(area.left() + (k - 1) / (TOP_K - 1) * area.width(),
                           area.bottom() - v / top_v * area.height())

        painter.setPen(QPen(text, 1))
        painter.drawLine(area.bottomLeft(), area.bottomRight())
        painter.drawLine(area.bottomLeft(), area.topLeft())
        for k in (1, 4, 8, 12, 16):
            x = at(k, 0).x()
            painter.drawText(QRectF(x - 12, area.bottom() + 2, 24, bottom), Qt.AlignHCenter,
                             str(k))
        marks = (1, 8, 16) + ((round(top_v),) if top_v >= 20 else ())  # a busy machine's top
        for v in marks:
            y = at(1, v).y()
            painter.drawText(QRectF(0, y - metrics.height() / 2, left - 4, metrics.height()),
                             Qt.AlignRight | Qt.AlignVCenter, str(v))
        self._line(painter, [at(1, 1), at(TOP_K, TOP_K)], QColor(text), Qt.DashLine)
        self._line(painter, [at(1, 1), at(TOP_K, 1)], QColor(46, 139, 87), Qt.SolidLine)
        if self.curve:
            points = [at(k, v) for k, v in self.curve.items()]
            self._line(painter, points, QColor(30, 110, 220), Qt.SolidLine, width=2.5)
        painter.end()

    @staticmethod
    def _line(painter: QPainter, points: list[QPointF], colour: QColor, style,
              width: float = 1.5) -> None:
        path = QPainterPath(points[0])
        for point in points[1:]:
            path.lineTo(point)
        painter.setPen(QPen(colour, width, style))
        painter.drawPath(path)


class MachineDialog(QDialog):
    def __init__(self, pass_costs: dict, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("This machine")
        self.curve = curve_of(pass_costs)
        layout = QVBoxLayout(self)
        title = QLabel("What checking k drafted tokens in one pass costs, in single steps")
        title.setWordWrap(True)
        layout.addWidget(title)
        self.chart = CostCurveChart(self.curve)
        layout.addWidget(self.chart, 1)
        legend = QLabel('<span style="color:#1e6edc">━ this machine</span> &nbsp; '
                        '<span style="color:#2e8b57">━ a GPU (about 1 whatever k)</span> &nbsp; '
                        '╌ k steps: drafting never pays above it')
        legend.setWordWrap(True)
        layout.addWidget(legend)
        self.sentence = QLabel(where_it_pays(self.curve))
        self.sentence.setWordWrap(True)
        self.sentence.setTextInteractionFlags(Qt.TextSelectableByMouse)
        layout.addWidget(self.sentence)
        buttons = QDialogButtonBox(QDialogButtonBox.Close)
        buttons.rejected.connect(self.reject)
        layout.addWidget(buttons)
        fit_to_screen(self, 460, 400)


def latest_pass_costs(views) -> dict:
    """The newest reply's Stats.pass_costs among message views (newest last); {} if none."""
    for view in reversed(views):
        figures = getattr(view, "figures", None)
        stats = getattr(figures, "stats", None)
        if stats is not None and stats.pass_costs:
            return stats.pass_costs
    return {}
