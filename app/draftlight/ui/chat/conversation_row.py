"""How a row of the conversation list is drawn: the title (cut with … where it does not fit),
under it a second line, small and grey (its time, or a search's matching line with the match in
bold), and its tip worked out on hover. The item data roles the list fills for it are here."""

from __future__ import annotations

from PySide6.QtCore import QEvent, QSize, Qt
from PySide6.QtGui import QFont, QFontMetrics, QPalette
from PySide6.QtWidgets import QApplication, QStyle, QStyledItemDelegate, QToolTip

from draftlight.ui.chat.conversation_time import when
from draftlight.ui.widgets.plain_text import plain_tip

WHEN_ROLE = Qt.UserRole + 1  # an item's time, as when() says it
MATCH_ROLE = Qt.UserRole + 2  # a search hit's (start, end) in its line, the WHEN_ROLE text
MESSAGE_ROLE = Qt.UserRole + 3  # the message a search found: the conversation opens there
UPDATED_ROLE = Qt.UserRole + 4  # when it was last written to: the tip says it on hover


class ConversationRow(QStyledItemDelegate):
    """A row: the title (cut with … where it does not fit), under it its time, small and grey."""

    PAD = 5

    def sizeHint(self, option, index) -> QSize:
        title = QFontMetrics(option.font)
        small = QFontMetrics(_small_font(option.font))
        return QSize(option.rect.width(), title.height() + small.height() + 2 * self.PAD + 1)

    def helpEvent(self, event, view, option, index) -> bool:
        """The tip of a conversation's row, worked out when it is hovered (not for each of
        thousands of rows when the list is built): its title and when it was last written to."""
        updated = index.data(UPDATED_ROLE)
        if event.type() == QEvent.ToolTip and updated is not None:
            title = index.data(Qt.DisplayRole)
            QToolTip.showText(event.globalPos(), plain_tip(
                f"{title}\nlast message {when(updated, long=True)}"), view)
            return True
        return super().helpEvent(event, view, option, index)

    def paint(self, painter, option, index) -> None:
        self.initStyleOption(option, index)
        text, option.text = option.text, ""
        style = option.widget.style() if option.widget else QApplication.style()
        style.drawControl(QStyle.CE_ItemViewItem, option, painter, option.widget)
        selected = bool(option.state & QStyle.State_Selected)
        palette = option.palette
        area = option.rect.adjusted(self.PAD + 2, self.PAD, -self.PAD, -self.PAD)
        title = QFontMetrics(option.font)
        painter.save()
        painter.setFont(option.font)
        painter.setPen(palette.color(QPalette.HighlightedText if selected else QPalette.Text))
        painter.drawText(area.x(), area.y() + title.ascent(),
                         title.elidedText(text, Qt.ElideRight, area.width()))
        font = _small_font(option.font)
        small = QFontMetrics(font)
        painter.setPen(palette.color(QPalette.HighlightedText if selected else QPalette.Mid))
        line = small.elidedText(str(index.data(WHEN_ROLE) or ""), Qt.ElideRight, area.width())
        match = index.data(MATCH_ROLE)
        x, y = area.x(), area.y() + title.height() + small.ascent()
        start, end = match if match and match[1] <= len(line) else (len(line), len(line))
        bold = QFont(font)
        bold.setBold(True)
        for part, part_font in ((line[:start], font), (line[start:end], bold),
                                (line[end:], font)):  # the match in bold
            painter.setFont(part_font)
            painter.drawText(x, y, part)
            x += QFontMetrics(part_font).horizontalAdvance(part)
        painter.restore()


SMALL = 0.85  # the time's size, of the title's


def _small_font(font: QFont) -> QFont:
    small = QFont(font)
    small.setPointSizeF(font.pointSizeF() * SMALL)
    return small
