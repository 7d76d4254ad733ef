"""View ▸ Served requests: File ▸ Serve on localhost's requests listed as they arrive, each one
opened read-only with its reply's runs and origins, the user's own conversation untouched."""

from __future__ import annotations

import json
import os
import threading

from draftlight.settings import Settings
from draftlight.ui.engine.served_log import MAX_KEPT, ServedLog
from tests.support.scripted_engine import HeldScript, ScriptedEngine, ScriptedFactory
from tests.support.serve_loopback import request
from tests.support.waiting import wait_until

QUESTION = "Say: the quick brown fox."
# " quick brown fox" is copied from the request's message 1 (index 0), characters 8 to 24
SCRIPT = [("The", "target", 0),
          (" quick brown", "draft", 1, {"kind": "message", "message": 0, "start": 8, "end": 20}),
          (" fox", "draft", 1, {"kind": "message", "message": 0, "start": 20, "end": 24}),
          (".", "target", 1)]


class ServableEngine(ScriptedEngine):
    """The window's scripted engine, with what serve's run_job asks of an engine besides."""
    n_ctx = 4096

    def tokenize_chat(self, messages) -> list[int]:
        return [0] * len(messages)

    def reserve(self, params) -> int:
        return 1


class ServableFactory(ScriptedFactory):
    def load_engine(self, spec, **_):
        self.loads.append(spec)
        engine = ServableEngine(self)
        self.engines.append(engine)
        return engine


def ask(qtbot, server, body: dict, headers: dict | None = None) -> dict:
    """POST a chat completion off the GUI thread (the window answers it meanwhile)."""
    out: dict = {}
    thread = threading.Thread(target=lambda: out.update(answer=request(
        server, "POST", "/v1/chat/completions", body, headers=headers)))
    thread.start()
    qtbot.waitUntil(lambda: not thread.is_alive(), timeout=20_000)
    status, _, answer = out["answer"]
    assert status == 200, answer
    return json.loads(answer)


def test_served_requests_are_listed_by_client_and_open_read_only(qtbot, open_window):
    window = open_window(factory=ServableFactory(script=SCRIPT),
                         settings=Settings(serve_port=0))
    window.resize(800, 600)
    own = [(view.role, view.text) for view in window.chat.messages]
    window.serve_switch.action.trigger()
    server = window.serve_switch.server
    model = json.loads(request(server, "GET", "/v1/models")[2])["data"][0]["id"]
    body = {"model": model, "temperature": 0,
            "messages": [{"role": "user", "content": QUESTION}]}
    window.served_dock.show()
    answer = ask(qtbot, server, {**body, "user": "test-agent"})
    assert answer["choices"][0]["message"]["content"] == "The quick brown fox."
    ask(qtbot, server, body, headers={"User-Agent": "probe/1.0"})

    rows = window.served_dock.widget().rows
    wait_until(qtbot, lambda: rows.count() == 2 and "done" in rows.item(1).text(),
               "both requests listed", 5_000, lambda: [rows.item(i).text()
                                                       for i in range(rows.count())])
    newest, first = rows.item(0).text(), rows.item(1).text()
    assert newest.startswith("#2 probe/1.0")  # no `user`: its User-Agent names it
    assert first.startswith("#1 test-agent") and "4 tokens" in first
    assert "50% drafted" in first  # 2 of its 4 pieces were accepted drafts

    if os.environ.get("DRAFTLIGHT_SCREENSHOTS"):
        window.served_dock.grab().save("/tmp/served-rows-800x600.png")
    rows.setCurrentRow(1)
    rows.itemActivated.emit(rows.item(1))
    chat = window.served_dock.widget().chat
    assert chat.isVisible()
    assert [v.text for v in chat.messages] == [QUESTION, "The quick brown fox."]
    reply = chat.reply
    assert not reply.streaming and reply.runs == [[3, 19, 2]]  # " quick brown fox", one run
    tip = reply.run_origins.tip(0)
    assert "copied from the request's message 1 (user)" in tip and "quick brown fox" in tip
    assert "copied from the request's messages" in reply.footer.text()
    assert [(view.role, view.text) for view in window.chat.messages] == own  # untouched
    if os.environ.get("DRAFTLIGHT_SCREENSHOTS"):
        qtbot.wait(300)  # the cards' fitted heights settle
        window.grab().save("/tmp/served-window-800x600.png")
        window.served_dock.grab().save("/tmp/served-dock-800x600.png")
    window.served_dock.widget().back.click()
    assert rows.isVisible()


def test_an_opened_request_streams_its_reply_while_it_is_written(qtbot, open_window):
    script = HeldScript(SCRIPT[:3], SCRIPT[3])
    window = open_window(factory=ServableFactory(script=script), settings=Settings(serve_port=0))
    window.serve_switch.action.trigger()
    server = window.serve_switch.server
    model = json.loads(request(server, "GET", "/v1/models")[2])["data"][0]["id"]
    window.served_dock.show()
    served = window.served_dock.widget()
    out: dict = {}
    body = {"model": model, "messages": [{"role": "user", "content": QUESTION}], "user": "live"}
    thread = threading.Thread(target=lambda: out.update(answer=request(
        server, "POST", "/v1/chat/completions", body)))
    thread.start()
    try:
        wait_until(qtbot, lambda: served.rows.count() == 1
                   and "3 tokens" in served.rows.item(0).text(), "the request listed, live",
                   5_000, lambda: served.rows.item(0).text() if served.rows.count() else "")
        assert "writing" in served.rows.item(0).text()
        served.open_request(1)
        reply = served.chat.reply
        assert reply.streaming and reply.text == "The quick brown fox"
        assert reply.runs == [[3, 19, 2]]
        assert "copied from the request's message 1" in reply.run_origins.tip(0)
    finally:
        script.release()
        qtbot.waitUntil(lambda: not thread.is_alive(), timeout=10_000)
    assert out["answer"][0] == 200
    wait_until(qtbot, lambda: not reply.streaming, "the reply's end", 5_000)
    assert reply.text == "The quick brown fox." and "done" in served.heading.text()


def test_runs_copied_from_a_tool_result_or_the_prediction_say_so(qtbot, open_window):
    script = [("It is", "target", 0),
              (" 21 C", "draft", 1, {"kind": "message", "message": 3, "start": 0, "end": 4}),
              (" in Paris", "draft", 2, {"kind": "prediction", "start": 10, "end": 19}),
              (".", "target", 2)]
    window = open_window(factory=ServableFactory(script=script), settings=Settings(serve_port=0))
    window.serve_switch.action.trigger()
    server = window.serve_switch.server
    model = json.loads(request(server, "GET", "/v1/models")[2])["data"][0]["id"]
    call = {"id": "call_1", "type": "function",
            "function": {"name": "weather", "arguments": "{\"city\": \"Paris\"}"}}
    ask(qtbot, server, {"model": model, "user": "agent", "messages": [
        {"role": "system", "content": "Be brief."}, {"role": "user", "content": "Weather?"},
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "call_1", "content": "21 C in Paris"}],
        "prediction": {"type": "content", "content": "It is 21 C in Paris."}})
    window.served_dock.show()
    served = window.served_dock.widget()
    served.refresh()
    served.open_request(1)
    reply = served.chat.reply
    assert reply.text == "It is 21 C in Paris." and reply.runs == [[5, 10, 1], [10, 19, 1]]
    assert reply.run_origins.tip(0) == "copied from the tool result in message 4: '21 C in Paris'"
    assert reply.run_origins.tip(1) == "copied from the request's prediction"
    assert [v.title.text() for v in served.chat.messages[:4]] == [
        "Message 1 · system", "Message 2 · user", "Message 3 · assistant", "Message 4 · tool"]


def test_the_log_keeps_the_latest_requests_and_a_bounded_share_of_their_text():
    class Sent:
        messages = [{"role": "user", "content": "x" * 300_000}]
        prediction = "p" * 10

    log = ServedLog()
    for _ in range(MAX_KEPT + 5):
        log.add(Sent(), "agent", "auto")
    kept = log.latest()
    assert len(kept) == MAX_KEPT and kept[0].number == 6 and kept[-1].number == MAX_KEPT + 5
    text = kept[0].messages[0][1]
    assert len(text) < 300_000 and text.endswith("more characters not kept]")
    assert kept[0].prediction.startswith("\n\n[…")  # nothing left for it
