"""The main window's toolbars. The first row is the model bar (engine, target and draft) with
Settings: it is wide, and beside the controls it pushed them into the toolbar's
overflow menu at the default size. The second row: New chat, the speculation mode, the
highlight switch and its colour key, Compare with the speed meter. Its actions
also fill the window's menus; the window connects them."""

from __future__ import annotations

from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QLabel, QToolBar, QWidget

from draftlight.ui.flash.legend import Legend
from draftlight.ui.chat.mode_box import ModeBox
from draftlight.ui.flash.palette import Scheme
from draftlight.ui.chat.speed_meter import SpeedMeter


def model_toolbar(window: QWidget, model_bar: QWidget, settings_action: QAction) -> QToolBar:
    """The first row: the model bar, and Settings at its right end."""
    bar = QToolBar("Models", window)
    bar.setObjectName("model-toolbar")
    bar.setMovable(False)
    bar.addWidget(model_bar)  # it takes the row's room, so Settings sits at the right end
    bar.addAction(settings_action)
    return bar


class MainToolbar(QToolBar):
    def __init__(self, window: QWidget, scheme: Scheme, show_highlights: bool) -> None:
        super().__init__("Main", window)
        self.setObjectName("main-toolbar")
        self.setMovable(False)
        # The actions belong to the window, so their shortcuts work wherever the focus is.
        self.new_action = QAction("New chat", window, shortcut=QKeySequence.New)
        self.addAction(self.new_action)
        self.addSeparator()
        self.addWidget(QLabel(" Speculation: "))
        self.mode_box = ModeBox()
        self.addWidget(self.mode_box)
        self.addSeparator()
        self.highlight_action = QAction("Highlights", window, checkable=True)
        self.highlight_action.setChecked(show_highlights)
        self.highlight_action.setToolTip("Colour the tokens that came from accepted drafts")
        self.addAction(self.highlight_action)
        self.legend = Legend()
        self.legend.set_scheme(scheme)
        self.addWidget(self.legend)
        self.addSeparator()
        self.compare_action = QAction("Compare", window)
        self.compare_action.setToolTip("Answer the last message again, greedily, with speculation "
                                       "off and on, side by side")
        self.addAction(self.compare_action)
        self.speed_meter = SpeedMeter()
        self.addWidget(self.speed_meter)
        # on the first row (model_toolbar), made here with the others the menus list
        self.settings_action = QAction("Settings…", window, shortcut=QKeySequence.Preferences)
