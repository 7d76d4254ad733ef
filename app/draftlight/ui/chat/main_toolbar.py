"""The main window's toolbar: New chat, the model bar, the speculation mode, the highlight switch
and its colour key, Compare with the speed meter, and Settings. Its actions also fill the
window's menus; the window connects them."""

from __future__ import annotations

from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QLabel, QSizePolicy, QToolBar, QWidget

from draftlight.ui.flash.legend import Legend
from draftlight.ui.chat.mode_box import ModeBox
from draftlight.ui.flash.palette import Scheme
from draftlight.ui.chat.speed_meter import SpeedMeter


class MainToolbar(QToolBar):
    def __init__(self, window: QWidget, model_bar: QWidget, scheme: Scheme,
                 show_highlights: bool) -> None:
        super().__init__("Main", window)
        self.setObjectName("main-toolbar")
        self.setMovable(False)
        # The actions belong to the window, so their shortcuts work wherever the focus is.
        self.new_action = QAction("New chat", window, shortcut=QKeySequence.New)
        self.addAction(self.new_action)
        self.addSeparator()
        self.addWidget(model_bar)
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
        spacer = QWidget()
        spacer.setSizePolicy(QSizePolicy.Expanding, QSizePolicy.Preferred)
        self.addWidget(spacer)
        self.settings_action = QAction("Settings…", window, shortcut=QKeySequence.Preferences)
        self.addAction(self.settings_action)
