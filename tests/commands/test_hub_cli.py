"""`draftlight models pull|list|rm|search|files` end to end against the loopback hub."""

from __future__ import annotations

from draftlight.cli import main
from tests.support.hub_fixtures import GATED_REPO, SMALL_FILE, SMALL_REPO, SMALL_SIZE, TARGET_REPO


def test_pull_then_list_then_rm(fake_hub, capsys):
    fake_hub.delay_per_chunk = 0.003
    assert main(["models", "pull", SMALL_REPO, SMALL_FILE, "--endpoint", fake_hub.url]) == 0
    out, err = capsys.readouterr()
    assert out.startswith("installed qwen2.5-0.5b-instruct-q8_0 (3.1 MB) at ")
    assert "100%" in err and "/s" in err and "ETA" in err and "verifying sha256" in err
    assert fake_hub.bytes_sent(SMALL_FILE) == SMALL_SIZE

    assert main(["models", "list"]) == 0
    listing = capsys.readouterr().out
    assert "qwen2.5-0.5b-instruct-q8_0" in listing and SMALL_REPO in listing
    assert "bundled" in listing  # the bundled model is always there

    assert main(["models", "rm", "qwen2.5-0.5b-instruct-q8_0"]) == 0
    assert "deleted qwen2.5-0.5b-instruct-q8_0" in capsys.readouterr().out
    main(["models", "list"])
    assert "qwen2.5-0.5b-instruct-q8_0" not in capsys.readouterr().out


def test_pull_uses_the_endpoint_from_the_environment(fake_hub, capsys, monkeypatch):
    monkeypatch.setenv("DRAFTLIGHT_HF_ENDPOINT", fake_hub.url)
    assert main(["models", "pull", SMALL_REPO, SMALL_FILE]) == 0
    assert fake_hub.bytes_sent(SMALL_FILE) == SMALL_SIZE


def test_search_prints_one_line_per_repo_in_the_chosen_order(fake_hub, capsys):
    fake_hub.repos[SMALL_REPO].likes = 7
    fake_hub.repos[SMALL_REPO].licence = "apache-2.0"
    fake_hub.repos[SMALL_REPO].last_modified = "2026-11-29T00:00:00.000Z"
    assert main(["models", "search", "qwen", "--endpoint", fake_hub.url]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split()[0] for line in lines] == [TARGET_REPO, SMALL_REPO]  # most downloaded
    assert lines[1].startswith(f"{SMALL_REPO}  0.5B qwen2.5  50 downloads  7 likes  updated ")
    assert lines[1].endswith(" ago  apache-2.0")
    assert main(["models", "search", "qwen", "--sort", "likes", "--endpoint", fake_hub.url]) == 0
    assert capsys.readouterr().out.split()[0] == SMALL_REPO
    assert fake_hub.search_requests()[-1].query["sort"] == ["likes"]
    main(["models", "search", "gated", "--sort", "updated", "--endpoint", fake_hub.url])
    assert capsys.readouterr().out.rstrip().endswith("gated")
    assert fake_hub.search_requests()[-1].query["sort"] == ["lastModified"]
    main(["models", "search", "nothing-like-this", "--endpoint", fake_hub.url])
    assert capsys.readouterr().out == "no GGUF repositories match 'nothing-like-this'\n"


def test_files_is_a_table_with_fit_verify_and_the_recommended_file(fake_hub, capsys,
                                                                     monkeypatch):
    from draftlight.store import memory
    monkeypatch.setattr(memory, "system_memory",
                        lambda: memory.MemoryInfo(64 << 30, 32 << 30))
    fake_hub.add_repo("org/SmolLM2-1.7B-GGUF", {f"s-{q}.gguf": b"" for q in
                                                ("Q4_1", "Q4_0", "Q8_0")},
                      sizes={"s-Q8_0.gguf": 1_820_000_000, "s-Q4_1.gguf": 1_070_000_000,
                             "s-Q4_0.gguf": 990_000_000})
    assert main(["models", "files", "org/SmolLM2-1.7B-GGUF", "--endpoint", fake_hub.url]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["FILE", "QUANT", "SIZE", "MEMORY", "VERIFY"]
    assert lines[1].split() == ["s-Q8_0.gguf", "Q8_0", "1.8", "GB", "fits", "fast", "verify",
                                "<-", "recommended"]
    assert lines[2].split() == ["s-Q4_0.gguf", "Q4_0", "990.0", "MB", "fits", "fast", "verify"]
    assert lines[3].split() == ["s-Q4_1.gguf", "Q4_1", "1.1", "GB", "fits", "slow", "verify"]
    assert lines[4].startswith("Recommended Q8_0: the largest file that verifies drafts fast")

    monkeypatch.setattr(memory, "system_memory", lambda: memory.MemoryInfo(2 << 30, 2 << 30))
    assert main(["models", "files", "org/SmolLM2-1.7B-GGUF", "--context", "32768",
                 "--endpoint", fake_hub.url]) == 0
    out = capsys.readouterr().out
    assert "s-Q8_0.gguf  Q8_0   1.8 GB    too big" in out
    assert "32,768-token context" in out


def test_files_of_a_split_repo_says_what_it_left_out(fake_hub, capsys):
    assert main(["models", "files", "org/Big-GGUF", "--endpoint", fake_hub.url]) == 0
    assert capsys.readouterr().out.splitlines() == [
        "org/Big-GGUF has no single-file GGUF model",
        "not listed (split parts or vision projectors): 3 files"]


def test_offline_search_is_one_line(closed_port_url, capsys):
    assert main(["models", "search", "qwen", "--endpoint", closed_port_url]) == 2
    assert "cannot reach the hub" in one_line_error(capsys)


def one_line_error(capsys) -> str:
    out, err = capsys.readouterr()
    assert err.count("\n") == 1 and err.startswith("draftlight: error: "), err
    return err


def test_errors_are_one_line_with_exit_status_2(fake_hub, capsys, monkeypatch):
    monkeypatch.setenv("HF_TOKEN", "hf_do_not_print_me")
    cases = [
        (["org/Nope-GGUF", "x.gguf"], "no repository org/Nope-GGUF"),
        ([SMALL_REPO, "nope.gguf"], "has no file 'nope.gguf'"),
        ([GATED_REPO, "gated-Q4_0.gguf"], "is gated"),
        ([SMALL_REPO, "../../etc/evil.gguf"], "refused file name"),
    ]
    for args, message in cases:
        assert main(["models", "pull", *args, "--endpoint", fake_hub.url]) == 2
        err = one_line_error(capsys)
        assert message in err and "hf_do_not_print_me" not in err
    assert main(["models", "rm", "nothing-here"]) == 2
    assert "no installed model named 'nothing-here'" in one_line_error(capsys)


def test_offline_pull_is_one_line(closed_port_url, capsys):
    assert main(["models", "pull", SMALL_REPO, SMALL_FILE, "--endpoint", closed_port_url]) == 2
    assert "cannot reach the hub" in one_line_error(capsys)
    assert main(["models", "list"]) == 0  # bundled and local models keep working
    assert "bundled" in capsys.readouterr().out
