"""`draftlight models pull|list|rm|search|files` end to end against the loopback hub."""

from __future__ import annotations

from app.cli import main
from tests.conftest_hub import (GATED_REPO, SMALL_FILE, SMALL_REPO, SMALL_SIZE,  # noqa: F401
                                clean_env, closed_port_url, fake_hub)


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


def test_search_and_files(fake_hub, capsys):
    assert main(["models", "search", "qwen", "--endpoint", fake_hub.url]) == 0
    assert SMALL_REPO in capsys.readouterr().out
    assert main(["models", "files", SMALL_REPO, "--endpoint", fake_hub.url]) == 0
    assert f"{SMALL_FILE}  Q8_0  3.1 MB" in capsys.readouterr().out


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
