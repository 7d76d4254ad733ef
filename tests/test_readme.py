"""The README's two set-up commands stay true: CI runs the test command verbatim."""

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_ci_runs_the_readme_test_command():
    readme = (ROOT / "README.md").read_text()
    ci = (ROOT / ".ci" / "run").read_text()
    command = ci.strip().splitlines()[-1]
    assert "pytest" in command
    assert command in readme


def test_readme_has_exactly_two_setup_commands():
    readme = (ROOT / "README.md").read_text()
    setup = readme.split("## Set up on a fresh machine")[1].split("\n## ")[0]
    blocks = [b for i, b in enumerate(setup.split("```")) if i % 2 == 1]
    commands = [b.strip().splitlines()[-1] for b in blocks if "python3 -m venv" in b
                and len(b.strip().splitlines()) == 2]
    assert len(commands) == 2
    assert commands[0].endswith(".venv/bin/draftlight")
