"""List rows of the model picker: a bold title, a muted line of facts under it, and coloured
chips on the right ("gated", "cross-vocabulary", "installed"), as desktop model browsers show
them. Items carry their text in roles; one delegate paints every list of the picker."""

from __future__ import annotations

from PySide6.QtCore import QRect, QSize, Qt
from PySide6.QtGui import QColor, QFont, QFontMetrics, QIcon, QPalette
from PySide6.QtWidgets import (QListWidget, QListWidgetItem, QStyle, QStyledItemDelegate,
                               QStyleOptionViewItem)

from draftlight.ui.widgets.plain_text import plain_tip

SECONDARY_ROLE = Qt.UserRole + 1  # the line of facts
CHIPS_ROLE = Qt.UserRole + 2  # [(text, colour), …]
PAYLOAD_ROLE = Qt.UserRole  # what the row stands for (a HubRepo, a DraftOption, …)

CHIP_COLOURS = {"gated": "#b26a00", "installed": "#546e7a", "curated": "#2e7d32",
                "same tokenizer": "#1565c0", "cross-vocabulary": "#6a1b9a",
                "bundled": "#00796b", "hub": "#546e7a", "converted": "#5d4037",
                "local": "#546e7a", "pair": "#2e7d32"}
PADDING = 8


class TwoLineDelegate(QStyledItemDelegate):
    def paint(self, painter, option, index) -> None:
        panel = QStyleOptionViewItem(option)
        self.initStyleOption(panel, index)
        panel.text, panel.icon = "", QIcon()
        widget = option.widget
        widget.style().drawControl(QStyle.CE_ItemViewItem, panel, painter, widget)
        selected = bool(option.state & QStyle.State_Selected)
        rect = option.rect.adjusted(PADDING + 2, PADDING - 2, -PADDING, -PADDING + 2)
        painter.save()
        small = _small_font(option.font)
        right = self._paint_chips(painter, index.data(CHIPS_ROLE) or [], rect, small)
        title_font = QFont(option.font)
        title_font.setBold(True)
        title_metrics = QFontMetrics(title_font)
        group = QPalette.Active if option.state & QStyle.State_Active else QPalette.Inactive
        text_colour = option.palette.color(
            group, QPalette.HighlightedText if selected else QPalette.Text)
        painter.setFont(title_font)
        painter.setPen(text_colour)
        title_rect = QRect(rect.left(), rect.top(), right - rect.left(), title_metrics.height())
        painter.drawText(title_rect, Qt.AlignLeft | Qt.AlignVCenter, title_metrics.elidedText(
            index.data(Qt.DisplayRole) or "", Qt.ElideMiddle, title_rect.width()))
        secondary = index.data(SECONDARY_ROLE) or ""
        if secondary:
            muted = QColor(text_colour)
            muted.setAlphaF(0.85 if selected else 0.62)
            painter.setFont(small)
            painter.setPen(muted)
            metrics = QFontMetrics(small)
            line = QRect(rect.left(), title_rect.bottom() + 3, rect.width(), metrics.height())
            painter.drawText(line, Qt.AlignLeft | Qt.AlignVCenter,
                             metrics.elidedText(secondary, Qt.ElideRight, line.width()))
        painter.restore()

    def _paint_chips(self, painter, chips, rect: QRect, font: QFont) -> int:
        """Chips from the right edge leftwards; returns where the title must stop."""
        metrics = QFontMetrics(font)
        x = rect.right()
        painter.setFont(font)
        for text, colour in reversed(chips):
            width, height = metrics.horizontalAdvance(text) + 14, metrics.height() + 2
            chip = QRect(x - width, rect.top(), width, height)
            painter.setPen(Qt.NoPen)
            painter.setBrush(QColor(colour))
            painter.drawRoundedRect(chip, height / 2, height / 2)
            painter.setPen(QColor("#ffffff"))
            painter.drawText(chip, Qt.AlignCenter, text)
            x -= width + 6
        return x - 4

    def sizeHint(self, option, index) -> QSize:
        bold = QFont(option.font)
        bold.setBold(True)
        height = QFontMetrics(bold).height() + 2 * PADDING + 2
        if index.data(SECONDARY_ROLE):
            height += QFontMetrics(_small_font(option.font)).height() + 3
        return QSize(200, height)


def _small_font(font: QFont) -> QFont:
    small = QFont(font)
    if font.pointSizeF() > 0:
        small.setPointSizeF(font.pointSizeF() * 0.9)
    return small


def row_list() -> QListWidget:
    """A list that paints its items as two-line rows."""
    view = QListWidget()
    view.setItemDelegate(TwoLineDelegate(view))
    view.setUniformItemSizes(False)
    view.setAlternatingRowColors(False)
    view.setSpacing(1)
    return view


def row_item(title: str, secondary: str = "", chips: list[tuple[str, str]] = (),
             payload=None, tooltip: str = "") -> QListWidgetItem:
    item = QListWidgetItem(title)
    item.setData(SECONDARY_ROLE, secondary)
    item.setData(CHIPS_ROLE, list(chips))
    item.setData(PAYLOAD_ROLE, payload)
    if tooltip:
        item.setToolTip(plain_tip(tooltip))  # hub descriptions, file names
    return item


def chip(text: str) -> tuple[str, str]:
    return text, CHIP_COLOURS.get(text, "#546e7a")


FIT_COLOURS = {"fits": "#2e7d32", "tight": "#ef6c00", "too big": "#c62828"}


def fit_chip(fit) -> tuple[str, str]:
    """A store.memory.Fit as a chip: the weights and a 4k context's KV cache against RAM."""
    return fit.value, FIT_COLOURS[fit.value]
