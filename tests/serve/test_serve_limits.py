"""What one request may take of `draftlight serve`: a client that leaves while its request waits
lets go of its body at once, not when the engine reaches it; `max_tokens` defaults to a cap,
not the whole context; a reply is cut at the server's time limit with finish_reason "length".
Real sockets on 127.0.0.1, scripted engines (tests/support/serve_loopback.py)."""

from __future__ import annotations

import json
import threading
import weakref

import pytest
from draftlight.cli import main
from draftlight.serve.schema import ApiError, parse_chat_request

from tests.support.serve_loopback import (
    MODEL,
    all_released,
    ScriptedServeEngine,
    chat_body,
    request,
    send_without_reading,
    serving,
    wait_for,
    worker_over,
)

LARGE = 3 * 2**20  # characters in each waiting request: most of the 4 MiB a body may have


def test_clients_that_leave_while_waiting_let_go_of_their_bodies_at_once():
    engine = ScriptedServeEngine(held=True)
    worker = worker_over(engine, queue_size=8)
    with serving(worker) as server:
        busy = {}
        first = threading.Thread(target=lambda: busy.update(
            answer=request(server, "POST", "/v1/chat/completions", chat_body())))
        first.start()
        assert engine.started.wait(10)  # the engine is busy with the first request
        big = chat_body(messages=[{"role": "user", "content": "y" * LARGE}])
        clients = [send_without_reading(server, big) for _ in range(4)]
        wait_for(lambda: worker.waiting() == 4, "the 4 large requests to be queued")
        with worker.jobs.mutex:
            bodies = [weakref.ref(job.request) for job in worker.jobs.queue]
        for client in clients:
            client.close()

        wait_for(all_released(bodies), "the bodies of the requests whose clients left to be let go")
        assert worker.waiting() == 0
        engine.release()  # the engine was still busy all along: nothing waited for it
        first.join(10)
        status, _, answer = busy["answer"]
        assert status == 200 and json.loads(answer)["choices"][0]["message"]["content"]
    worker.stop()


def test_max_tokens_defaults_to_the_cap_and_more_than_the_context_is_refused():
    def parse(n_ctx: int, **fields):
        body = {"model": MODEL, "messages": [{"role": "user", "content": "hi"}], **fields}
        return parse_chat_request(json.dumps(body).encode(), model_id=MODEL, n_ctx=n_ctx)

    assert parse(32768).params.max_tokens == 2048  # the cap, not the whole context
    assert parse(512).params.max_tokens == 512  # a smaller context: all of it
    assert parse(32768, max_tokens=8000).params.max_tokens == 8000  # asked for: granted
    with pytest.raises(ApiError) as caught:
        parse(4096, max_tokens=4097)
    assert caught.value.status == 400 and "context window" in caught.value.message


@pytest.mark.parametrize("stream", [False, True])
def test_a_reply_past_the_time_limit_ends_with_finish_reason_length(stream):
    # Without the limit this engine would write for about 10 s and then stop ("stop").
    engine = ScriptedServeEngine(pieces=2000, delay=0.005)
    worker = worker_over(engine, time_limit=0.05)
    with serving(worker) as server:
        status, _, answer = request(server, "POST", "/v1/chat/completions",
                                    chat_body(stream=stream))
    worker.stop()
    assert status == 200
    if stream:
        chunks = [json.loads(line.removeprefix(b"data: ")) for line in answer.splitlines()
                  if line.startswith(b"data: {")]
        finish = [c["choices"][0]["finish_reason"] for c in chunks if c["choices"]]
        assert finish[-1] == "length" and finish[:-1] == [None] * (len(finish) - 1)
        assert answer.rstrip().endswith(b"data: [DONE]")
        text = "".join(c["choices"][0]["delta"].get("content", "") for c in chunks
                       if c["choices"])
        usage = chunks[-1]["usage"]
    else:
        reply = json.loads(answer)
        assert reply["choices"][0]["finish_reason"] == "length"
        text, usage = reply["choices"][0]["message"]["content"], reply["usage"]
    assert 0 < len(text) < 2000 and set(text) == {"x"}  # cut, with what was written so far
    assert usage["completion_tokens"] == len(text)


@pytest.mark.parametrize("value", ["-1", "nan", "soon"])
def test_the_time_limit_option_is_checked(capsys, value):
    try:
        code = main(["serve", "--time-limit", value, "--port", "0"])
    except SystemExit as exc:  # argparse's own refusal of a value that is not a number
        code = exc.code
    assert code == 2
    assert "--time-limit" in capsys.readouterr().err
