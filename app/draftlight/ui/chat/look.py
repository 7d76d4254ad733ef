"""The window's look: rounded message cards with room around them, the user's on a tint, the
reply on the window's base colour; a rounded composer with Send as the one coloured button; a
flat conversation list. Colours come from the palette (palette(...)), so a dark system theme
(or --dark) gets the same look in its own colours. Selectors name the window's own widgets by
object name only: dialogs opened from the window keep Qt's plain style."""

from __future__ import annotations

STYLE = """
QScrollArea#chat-view, QWidget#chat-column { background: palette(base); }
QFrame#message-user, QFrame#message-assistant {
    background: palette(window); border: 1px solid palette(midlight); border-radius: 12px;
}
QFrame#welcome-card {
    background: palette(alternate-base); border: 1px solid palette(midlight);
    border-radius: 14px;
}
QPlainTextEdit#composer {
    background: palette(base); border: 1px solid palette(mid); border-radius: 10px;
    padding: 6px 8px;
}
QPlainTextEdit#composer:focus { border: 1px solid palette(highlight); }
QPushButton#send-button {
    background: palette(highlight); color: palette(highlighted-text); border: none;
    border-radius: 8px; padding: 6px 16px; font-weight: 600;
}
QPushButton#send-button:disabled { background: palette(midlight); color: palette(mid); }
QListWidget#conversation-rows { border: none; background: palette(window); }
QListWidget#conversation-rows::item { border-radius: 6px; margin: 1px 2px; }
QListWidget#conversation-rows::item:selected {
    background: palette(highlight); color: palette(highlighted-text);
}
QFrame#attachment-chip {
    background: palette(alternate-base); border: 1px solid palette(midlight);
    border-radius: 10px;
}
QScrollArea#attachment-tray { background: transparent; border: none; }
QLineEdit#conversation-search { border: 1px solid palette(mid); border-radius: 8px;
                                padding: 4px 8px; }
"""
