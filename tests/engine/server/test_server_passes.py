"""The bench's account of llama-server passes (app/draftlight/bench/server_curve.py) and the names of the
machines a split lost (app/draftlight/engine/server/rpc.py), on made-up figures: exact and fast. The real
measurement over two rpc-servers is in tests/engine/server/test_server_rpc.py."""

from __future__ import annotations

from draftlight.bench.server_curve import cost_curve, passes_markdown, passes_report, rpc_shares
from draftlight.engine.server.rpc import machines_gone, no_longer_answer

ALONE = {1: 20.0, 2: 36.0, 4: 60.0, 8: 100.0}
# RPC adds 10 ms a pass, whatever its size: relative to one token, long passes get cheaper
SPLIT = {k: ms + 10.0 for k, ms in ALONE.items()}


def test_the_curve_is_each_pass_over_a_one_token_pass():
    assert cost_curve(ALONE) == {1: 1.0, 2: 1.8, 4: 3.0, 8: 5.0}
    assert cost_curve({1: 0.0, 2: 1.0}) == {}


def test_rpcs_share_is_what_the_split_adds_to_a_pass():
    assert rpc_shares(SPLIT, ALONE) == {1: 0.333, 2: 0.217, 4: 0.143, 8: 0.091}
    # a split no slower than this machine alone adds nothing
    assert rpc_shares(ALONE, SPLIT) == {1: 0.0, 2: 0.0, 4: 0.0, 8: 0.0}


def test_a_fixed_round_trip_per_pass_makes_drafting_pay_more_over_the_split():
    report = passes_report({"machines": ["127.0.0.1:1", "127.0.0.1:2"], "split": SPLIT,
                            "local": ALONE})
    assert report["split"]["v"] == {1: 1.0, 2: 1.53, 4: 2.33, 8: 3.67}
    assert report["v_split_over_local"] < 0.95
    text = "\n".join(passes_markdown(report))
    assert "| ms, split over 127.0.0.1:1, 127.0.0.1:2 | 30.0 | 46.0 | 70.0 | 110.0 |" in text
    assert "| RPC's share of the pass | 33% | 22% | 14% | 9% |" in text
    assert "drafting pays more over the split" in text
    # the same cost curve on both sides: no more, no less
    same = passes_report({"machines": ["a:1"], "split": ALONE, "local": ALONE})
    assert "within 5%" in "\n".join(passes_markdown(same))


def test_a_split_that_cannot_be_compared_says_why():
    report = passes_report({"machines": ["a:1"], "split": SPLIT,
                            "local_error": "it does not fit"})
    text = "\n".join(passes_markdown(report))
    assert "This machine alone was not timed: it does not fit" in text
    assert "RPC's share" not in text and "v_split_over_local" not in report
    assert "not timed: refused" in "\n".join(passes_markdown(
        passes_report({"machines": [], "error": "refused"})))
    assert passes_markdown(passes_report({})) == []
    remote = "\n".join(passes_markdown(passes_report({
        "remote_url": "http://h:8000", "remote_error": "the server has no such endpoint"})))
    assert "The server at http://h:8000 was not timed: the server has no such endpoint" in remote


def test_the_machines_a_reply_lost_are_read_back_from_its_error():
    one = f"llama-server stopped mid-reply: x {no_longer_answer(['127.0.0.1:5'])}"
    assert one.endswith("(127.0.0.1:5 no longer answers)")
    assert machines_gone(one) == ("127.0.0.1:5",)
    two = f"llama-server stopped mid-reply: x {no_longer_answer(['h:1', '[::1]:2'])}"
    assert two.endswith("(h:1, [::1]:2 no longer answer)")
    assert machines_gone(two) == ("h:1", "[::1]:2")
    assert machines_gone("the server failed (HTTP 500)") == ()
    assert machines_gone("(not an address no longer answers)") == ()


def test_placement_says_per_machine_its_layers_and_memory_from_the_latest_start():
    from draftlight.engine.server.rpc import placement
    run = ["0.00.611.676 I print_info: n_layer               = 30",
           "0.00.639.678 I load_tensors:   CPU_Mapped model buffer size =    28.69 MiB",
           "0.00.639.681 I load_tensors: RPC0[127.0.0.1:50161] model buffer size =    33.82 MiB",
           "0.00.639.682 I load_tensors: RPC0[127.0.0.1:50162] model buffer size =    58.28 MiB",
           "0.00.829.443 I llama_context:        CPU  output buffer size =     0.19 MiB",
           "0.00.829.692 I llama_kv_cache: RPC0[127.0.0.1:50161] KV buffer size =    12.00 MiB",
           "0.00.834.669 I llama_kv_cache: RPC0[127.0.0.1:50162] KV buffer size =    10.50 MiB",
           "0.00.854.350 I sched_reserve: RPC0[127.0.0.1:50161] compute buffer size =    13.38 MiB",
           "0.00.854.403 I sched_reserve: RPC0[127.0.0.1:50162] compute buffer size =    13.38 MiB",
           "0.00.854.422 I sched_reserve:        CPU compute buffer size =     3.26 MiB"]
    assert placement(["$ llama-server --rpc 127.0.0.1:50161,127.0.0.1:50162", *run]) == (
        "127.0.0.1:50161: 16 of 30 layers, 59 MiB · 127.0.0.1:50162: 14 of 30 layers, 82 MiB"
        " · this machine: 32 MiB")
    # an earlier start's lines do not count; a start on this machine alone places nothing
    alone = [line for line in run if "RPC0" not in line]
    assert placement(["$ first", *run, "$ again", *alone]) == ""
