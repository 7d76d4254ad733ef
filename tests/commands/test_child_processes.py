"""Child processes never import from the current folder: a conversion and the CPU check, run
from a folder holding hostile `app/` and `draftlight/` packages, run Draftlight's own code."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from draftlight.engine.llama import cpu_check

HOSTILE = "from pathlib import Path\nPath(__file__).parents[1].joinpath('{name}-ran').touch()\n"


@pytest.fixture
def hostile_folder(tmp_path, monkeypatch):
    for name in ("app", "draftlight"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "__init__.py").write_text(HOSTILE.format(name=name))
    monkeypatch.chdir(tmp_path)
    return tmp_path


def ran(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.glob("*-ran"))


def test_the_cpu_check_child_runs_the_installed_package(hostile_folder, bundled_model,
                                                        monkeypatch):
    monkeypatch.delenv(cpu_check.SIMULATE_VARIABLE, raising=False)  # a real child
    assert cpu_check.runs(bundled_model, True)
    assert ran(hostile_folder) == []
    # negative control: started as before (without -P), the child imports the folder's package
    subprocess.run([sys.executable, "-m", "draftlight.engine.llama.cpu_check_child",
                    str(bundled_model), "1"], capture_output=True, timeout=120)
    assert ran(hostile_folder) == ["draftlight-ran"]


@pytest.mark.slow
def test_a_conversion_from_a_hostile_folder_runs_the_installed_package(hostile_folder,
                                                                       bundled_model):
    draftlight = Path(sys.executable).with_name("draftlight")
    done = subprocess.run([str(draftlight), "models", "convert", str(bundled_model), "--type",
                           "Q8_0"], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "converted" in done.stdout
    assert ran(hostile_folder) == []


def test_nothing_named_app_is_installed(tmp_path):
    # run outside the checkout, whose app/ folder would otherwise be found as a namespace package
    found = subprocess.run([sys.executable, "-c", "import app"], cwd=tmp_path,
                           capture_output=True, text=True)
    assert found.returncode != 0 and "No module named 'app'" in found.stderr
    where = subprocess.run([sys.executable, "-c", "import draftlight; print(draftlight.__file__)"],
                           cwd=tmp_path, capture_output=True, text=True, check=True)
    assert Path(where.stdout.strip()).parts[-3:] == ("app", "draftlight", "__init__.py")
