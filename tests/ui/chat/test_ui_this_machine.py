"""View ▸ This machine (issue 74, item 5): the measured v(k) beside a GPU's flat curve, and one
sentence saying where speculation pays here, from the newest reply's figures."""

from __future__ import annotations

from draftlight.engine.auto.costs import BatchCosts
from draftlight.engine.reply.generator import Engine
from draftlight.ui.chat.machine_dialog import (MachineDialog, curve_of, latest_pass_costs,
                                               where_it_pays)
from tests.support.fake_backend import FakeChatModel
from tests.support.scripted_engine import ScriptedFactory
from tests.support.window import send_and_wait
from draftlight.modes import AUTO, NGRAM, OFF

EPYC = BatchCosts({1: 1.0, 2: 1.96, 4: 3.39, 8: 6.92, 16: 8.68}, 0.038)


def epyc_costs(model, probe, role):
    return EPYC, EPYC.token_seconds


class TimedMachineFactory(ScriptedFactory):
    def __init__(self) -> None:
        super().__init__(modes=(OFF, NGRAM, AUTO))

    def load_engine(self, spec, **_):
        self.loads.append(spec)
        return Engine(FakeChatModel(lambda conversation: b"Red, yellow, blue."),
                      cost_source=epyc_costs)


def test_the_sentence_says_where_speculation_pays_for_each_kind_of_curve():
    cpu = curve_of({"2": 1.96, "4": 3.39, "8": 6.92, "16": 8.68})
    assert cpu[1] == 1.0 and cpu[8] == 6.92
    said = where_it_pays(cpu)
    assert said.startswith("Checking 8 drafted tokens costs 6.9 single steps on this machine")
    assert "only on text the model copies nearly whole" in said and "1.8x" in said
    gpu = where_it_pays(curve_of({"2": 1.02, "4": 1.05, "8": 1.1, "16": 1.3}))
    assert "wherever drafts are mostly right: up to 12.3x" in gpu
    dear = where_it_pays(curve_of({"2": 2.0, "4": 4.0, "8": 8.0, "16": 16.0}))
    assert "can barely pay" in dear
    assert where_it_pays(curve_of({})).startswith("Not measured yet")
    # what comes from outside (an imported conversation's figures) is checked
    assert curve_of({"x": 1, "4": "nan?", "8": -3, "99": 2.0}) == {}


def test_the_view_shows_the_newest_replys_measured_curve(qtbot, open_window):
    window = open_window(TimedMachineFactory())
    window.set_mode(AUTO)
    reply = send_and_wait(qtbot, window, "Name three primary colours.")
    costs = reply.figures.stats.pass_costs
    assert costs["8"] == 6.92 and costs["2"] == 1.96
    assert latest_pass_costs(window.chat.messages) == costs
    dialog = MachineDialog(latest_pass_costs(window.chat.messages), window)
    qtbot.addWidget(dialog)
    dialog.show()
    assert dialog.chart.curve[16] == 8.68
    assert "costs 6.9 single steps" in dialog.sentence.text()
    image = dialog.chart.grab().toImage()
    blue = sum(1 for x in range(0, image.width(), 2) for y in range(0, image.height(), 2)
               if image.pixelColor(x, y).blue() > 180 and image.pixelColor(x, y).red() < 90)
    assert blue > 20  # the machine's line is drawn
    # the menu holds it
    assert any(a.text() == "This machine…" for a in window.menuBar().actions()[1].menu().actions())


def test_before_any_reply_the_view_says_not_measured_yet(qtbot, open_window):
    window = open_window(TimedMachineFactory())
    dialog = MachineDialog(latest_pass_costs(window.chat.messages), window)
    qtbot.addWidget(dialog)
    assert dialog.sentence.text().startswith("Not measured yet")
