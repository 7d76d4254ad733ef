"""The window on a real X server (issue 36, item 10): with the system packages the README names
(and `.ci/run` installs), Qt's xcb platform plugin loads and a window is shown under Xvfb. Every
other window test runs on Qt's offscreen platform, which needs none of them."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

README = Path(__file__).resolve().parents[3] / "README.md"
SHOW = """
from PySide6.QtWidgets import QApplication, QLabel
app = QApplication([])
label = QLabel("Draftlight"); label.show(); app.processEvents()
print(app.platformName(), label.isVisible())
"""


def test_the_xcb_platform_loads_under_xvfb_with_the_packages_the_readme_names():
    assert shutil.which("xvfb-run"), "xvfb-run is missing: install the README's packages"
    env = {k: v for k, v in os.environ.items() if k != "QT_QPA_PLATFORM"}
    env["QT_QPA_PLATFORM"] = "xcb"
    done = subprocess.run(["xvfb-run", "-a", sys.executable, "-c", SHOW], env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and done.stdout.split() == ["xcb", "True"], done.stderr[-2000:]
    packages = README.read_text()
    for package in ("libxcb-cursor0", "libxcb-icccm4", "libxcb-keysyms1", "libxkbcommon-x11-0",
                    "xvfb"):
        assert package in packages, package


def test_a_missing_x11_library_is_one_line_naming_its_package(monkeypatch, capsys):
    from draftlight.ui import desktop
    monkeypatch.setenv("DISPLAY", ":99")
    monkeypatch.delenv("QT_QPA_PLATFORM", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    assert desktop.missing_x11_libraries() == []  # all there, as the README installs them
    monkeypatch.setitem(desktop.X11_LIBRARIES, "libxcb-gone0", "libxcb-gone.so.0")
    assert desktop.run_app() == 1  # before Qt starts, so it cannot abort the process
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["draftlight: the window needs libxcb-gone0 to open on X11; on Debian/Ubuntu: "
                   "sudo apt install libxcb-gone0"]
    monkeypatch.setenv("QT_QPA_PLATFORM", "offscreen")  # not X11: nothing to check
    assert desktop.missing_x11_libraries() == []
