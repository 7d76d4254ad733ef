"""File ▸ Serve on localhost: the window's own model over the OpenAI API, through the real
`openai` client, on the real bundled model (the window's engine thread answers)."""

from __future__ import annotations

import dataclasses
import json
import socket
import threading

import openai
import pytest

from draftlight.settings import Settings
from tests.support.real_window import real_window, shared_cost_cache, cost_cache_file  # noqa: F401
from tests.support.waiting import wait_until, window_state
from draftlight.modes import NGRAM, OFF

QUESTION = "Repeat after me: the United States of America."


def in_thread(qtbot, call, timeout=120_000):
    """Run `call` off the GUI thread (the window keeps handling events) and return its result."""
    out: dict = {}

    def run() -> None:
        try:
            out["value"] = call()
        except BaseException as exc:  # noqa: BLE001 - re-raised on the test's thread
            out["error"] = exc

    thread = threading.Thread(target=run)
    thread.start()
    qtbot.waitUntil(lambda: not thread.is_alive(), timeout=timeout)
    if "error" in out:
        raise out["error"]
    return out["value"]


@pytest.fixture
def serving_window(qtbot, real_window, bundled_model):
    window = real_window(Settings(target_path=str(bundled_model), serve_port=0, max_tokens=24))
    wait_until(qtbot, lambda: window.ready and not window.loading, "the models to load", 120_000,
               lambda: window_state(window))
    window.serve_switch.action.trigger()
    assert window.serve_switch.serving
    return window


def ask(window, mode_hint: str = "", **extra):
    client = openai.OpenAI(base_url=window.serve_switch.url, api_key="any", max_retries=0,
                           timeout=120)
    return client.chat.completions.create(
        model=client.models.list().data[0].id, temperature=0, max_tokens=24,
        messages=[{"role": "user", "content": QUESTION}], **extra)


def test_the_window_serves_its_model_losslessly_in_the_toolbar_mode(qtbot, serving_window):
    window = serving_window
    assert window.serve_switch.label.isVisible()
    assert window.serve_switch.url in window.serve_switch.label.text()
    window.set_mode(OFF)
    plain = in_thread(qtbot, lambda: ask(window))
    window.set_mode(NGRAM)
    speculative = in_thread(qtbot, lambda: ask(window))
    assert plain.model == "SmolLM2-135M-Instruct.Q4_1"
    assert plain.choices[0].message.content  # the model said something
    assert speculative.choices[0].message.content == plain.choices[0].message.content
    extra = speculative.usage.model_extra["draftlight"]
    assert extra["mode"] == "ngram" and plain.usage.model_extra["draftlight"]["mode"] == "off"
    qtbot.waitUntil(lambda: "2 answered" in window.serve_switch.label.text())

    # Streamed: the same text, each piece saying where it came from.
    def stream():
        chunks = list(ask(window, stream=True))
        return chunks
    chunks = in_thread(qtbot, stream)
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text == plain.choices[0].message.content
    sources = {c.model_extra["draftlight"]["source"] for c in chunks
               if c.choices and c.choices[0].delta.content}
    assert sources <= {"draft", "target"} and "target" in sources


def test_the_window_still_chats_while_serving(qtbot, serving_window):
    window = serving_window
    with qtbot.waitSignal(window.session.reply_finished, timeout=120_000):
        window.send("Hello")
    served = in_thread(qtbot, lambda: ask(window))
    assert served.choices[0].finish_reason in ("stop", "length")
    assert window.session.can_regenerate()


def test_switching_off_closes_the_port_and_closing_the_window_stops_the_server(
        qtbot, serving_window):
    window = serving_window
    host, port = window.serve_switch.url.removeprefix("http://").split("/")[0].split(":")
    window.serve_switch.action.trigger()
    assert not window.serve_switch.serving and not window.serve_switch.label.isVisible()
    with pytest.raises(OSError):
        socket.create_connection((host, int(port)), timeout=2).close()
    window.serve_switch.action.trigger()  # on again, then the window closes while serving
    server = window.serve_switch.server
    assert server.running
    window.close()
    assert not server.running


def test_a_port_in_use_is_one_line_in_the_banner_and_the_switch_stays_off(
        qtbot, real_window, bundled_model):
    busy = socket.create_server(("127.0.0.1", 0))
    try:
        port = busy.getsockname()[1]
        window = real_window(Settings(target_path=str(bundled_model), serve_port=port))
        window.serve_switch.action.trigger()
        assert not window.serve_switch.serving
        assert not window.serve_switch.action.isChecked()
        assert window.banner.isVisible()
        assert f"cannot listen on 127.0.0.1:{port}" in window.banner.label.text()
    finally:
        busy.close()


def test_the_server_port_is_a_setting_with_a_range(tmp_path):
    with pytest.raises(ValueError, match="port"):
        Settings(serve_port=70000).check()
    Settings(serve_port=0).check()
    with pytest.raises(ValueError, match="API key"):
        Settings(serve_api_key="two words").check()  # from a hand-edited file


def test_requests_beyond_the_queue_are_refused_and_ended_ones_make_room(qtbot):
    import queue

    from PySide6.QtCore import QObject, Signal

    from draftlight.serve.schema import parse_chat_request
    from draftlight.serve.serve_worker import Job
    from draftlight.ui.engine.serve_switch import QUEUE_SIZE, WindowRunner

    class Worker(QObject):
        served = Signal(object)

    class Engine:  # the window's engine thread, holding every job it is given
        def __init__(self):
            self.worker, self.jobs = Worker(), []

        def serve(self, job, mode):
            self.jobs.append((job, mode))

    engine = Engine()
    runner = WindowRunner(engine)
    runner.mode = NGRAM
    chat = parse_chat_request(b'{"model": "m", "messages": [{"role": "user", "content": "x"}]}',
                              model_id="m", n_ctx=16)
    for _ in range(QUEUE_SIZE + 1):  # one running, QUEUE_SIZE waiting
        runner.submit(Job(chat, lambda item: None))
    with pytest.raises(queue.Full):
        runner.submit(Job(chat, lambda item: None))
    assert runner.active == QUEUE_SIZE + 1 and {m for _, m in engine.jobs} == {NGRAM}
    engine.worker.served.emit(engine.jobs[0][0])  # the engine finished one
    qtbot.waitUntil(lambda: runner.active == QUEUE_SIZE)
    runner.submit(Job(chat, lambda item: None))
    delivered = []
    waiting = Job(chat, delivered.append)
    engine.jobs.clear()
    with pytest.raises(queue.Full):
        runner.submit(waiting)
    runner.cancel_all()  # switching off: every job still held is told, once
    assert all(job.cancelled.is_set() for job in runner._jobs)
    assert delivered == []  # the refused one was never held


def test_the_window_server_refuses_web_pages_except_the_origins_set_in_settings(qtbot):
    from PySide6.QtCore import QObject, Signal

    from draftlight.ui.chat.settings_dialog import SettingsDialog
    from draftlight.ui.engine.serve_switch import ServeSwitch
    from tests.support.serve_loopback import request

    dialog = SettingsDialog(Settings(), gpu_offload=False)
    qtbot.addWidget(dialog)
    dialog.serve_origins.setText("http://localhost:3000,  https://tool.example ")
    origins = dialog.result_settings().serve_origins
    assert origins == "http://localhost:3000 https://tool.example"

    class Worker(QObject):
        served = Signal(object)

    class Engine:  # the window's engine thread: /v1/models needs none of it
        worker = Worker()

    switch = ServeSwitch(Engine(), 0, allow_origins=tuple(origins.split()))
    switch.set_model("smol", 512)
    switch.set_serving(True)
    try:
        port = switch.server.listener.getsockname()[1]
        assert request(switch.server, "GET", "/v1/models")[0] == 200
        assert request(switch.server, "GET", "/v1/models",
                       headers={"Host": f"attacker.example:{port}"})[0] == 421
        status, headers, _ = request(switch.server, "GET", "/v1/models",
                                     headers={"Origin": "https://tool.example"})
        assert status == 200 and headers["access-control-allow-origin"] == "https://tool.example"
        assert request(switch.server, "GET", "/v1/models",
                       headers={"Origin": "http://attacker.example"})[0] == 403
    finally:
        switch.shutdown()
    switch.allow_origins = ("not an origin",)
    problems = []
    switch.problem.connect(problems.append)
    switch.set_serving(True)
    assert not switch.serving and "not a web origin" in problems[0]


class HoldingEngine:
    """The window's engine thread, holding every job it is given (as its queue does while the
    window replies), or answering each with `engine` on a thread of its own."""

    def __init__(self, engine=None) -> None:
        from PySide6.QtCore import QObject, Signal

        class Worker(QObject):
            served = Signal(object)

        self.worker, self.jobs, self.engine = Worker(), [], engine

    def serve(self, job, mode):
        from draftlight.serve.serve_worker import run_job
        self.jobs.append(job)
        if self.engine is not None:
            def answer() -> None:
                run_job(self.engine, job, mode)
                self.worker.served.emit(job)
            threading.Thread(target=answer, daemon=True).start()


def test_a_window_request_whose_client_left_lets_go_of_its_body(qtbot):
    import weakref

    from draftlight.ui.engine.serve_switch import ServeSwitch

    from tests.support.serve_loopback import (all_released, chat_body, send_without_reading,
                                             wait_for)

    engine = HoldingEngine()  # busy with the window's own reply: every served job waits
    switch = ServeSwitch(engine, 0)
    switch.set_model("smol", 512)
    switch.set_serving(True)
    try:
        big = chat_body(messages=[{"role": "user", "content": "y" * 3 * 2**20}])
        clients = [send_without_reading(switch.server, big) for _ in range(3)]
        wait_for(lambda: len(engine.jobs) == 3, "the 3 large requests to reach the engine")
        bodies = [weakref.ref(job.request) for job in engine.jobs]
        for client in clients:
            client.close()

        wait_for(all_released(bodies), "the bodies the engine thread's queue holds to be let go")
    finally:
        switch.shutdown()


def test_the_window_server_requires_the_key_set_in_settings(qtbot):
    from draftlight.ui.chat.settings_dialog import SettingsDialog
    from draftlight.ui.engine.serve_switch import ServeSwitch
    from PySide6.QtGui import QGuiApplication

    from tests.support.serve_loopback import ScriptedServeEngine, chat_body, request

    dialog = SettingsDialog(Settings(), gpu_offload=False)
    qtbot.addWidget(dialog)
    field = dialog.serve_key
    assert not field.required.isChecked() and dialog.result_settings().serve_api_key == ""
    field.required.setChecked(True)  # a key is made for the user, shown with Copy
    key = field.key.text()
    assert len(key) >= 32 and dialog.result_settings().serve_api_key == key
    field.copy.click()
    assert QGuiApplication.clipboard().text() == key
    field.renew.click()
    assert field.key.text() != key
    key = dialog.result_settings().serve_api_key
    assert key == field.key.text()

    switch = ServeSwitch(HoldingEngine(ScriptedServeEngine()), 0, api_key=key)
    switch.set_model("smol", 512)
    switch.set_serving(True)
    try:
        for headers in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": key}):
            for method, path, body in (("GET", "/v1/models", None),
                                       ("POST", "/v1/chat/completions", chat_body())):
                status, _, answer = request(switch.server, method, path, body, headers=headers)
                assert status == 401, (headers, path)
                assert json.loads(answer)["error"]["code"] == "invalid_api_key"
        with_key = {"Authorization": f"Bearer {key}"}
        assert request(switch.server, "GET", "/v1/models", headers=with_key)[0] == 200
        status, _, answer = request(switch.server, "POST", "/v1/chat/completions", chat_body(),
                                    headers=with_key)
        assert status == 200 and json.loads(answer)["choices"][0]["message"]["content"] == "xxx"
    finally:
        switch.shutdown()


def test_the_window_applies_a_new_key_to_the_running_server(qtbot, open_window):
    from tests.support.serve_loopback import request

    window = open_window(settings=Settings(serve_port=0, serve_api_key="first-key"))
    window.serve_switch.action.trigger()
    switch = window.serve_switch
    assert request(switch.server, "GET", "/v1/models")[0] == 401
    assert request(switch.server, "GET", "/v1/models",
                   headers={"Authorization": "Bearer first-key"})[0] == 200
    window.apply_settings(dataclasses.replace(window.settings, serve_api_key="second-key"))
    assert switch.serving  # started again with the new key: the old one no longer works
    assert request(switch.server, "GET", "/v1/models",
                   headers={"Authorization": "Bearer first-key"})[0] == 401
    assert request(switch.server, "GET", "/v1/models",
                   headers={"Authorization": "Bearer second-key"})[0] == 200
    window.apply_settings(dataclasses.replace(window.settings, serve_api_key=""))
    assert request(switch.server, "GET", "/v1/models")[0] == 200
