"""`draftlight --record`: the real app, offscreen, on the bundled model, writes an animated GIF
of the chat in which accepted runs flash in and calm down. Measured in the GIF's pixels.

It runs in the default mode, auto, on a fresh home: auto drafts the demo's certain copy from
the first reply (issue 35; it used to record in n-gram mode, as auto drafted nothing there)."""

from __future__ import annotations

import colorsys
import subprocess
import sys
from pathlib import Path

import pytest

PIL = pytest.importorskip("PIL")

from PIL import Image, ImageSequence  # noqa: E402

from draftlight.ui.flash.palette import DEFAULT  # noqa: E402

ROOT = Path(__file__).resolve().parents[3]
PROMPT = "Repeat after me: the United States of America declared independence in 1776."


def flash_pixels(frame: Image.Image) -> int:
    """Pixels strongly coloured in the hue of the default scheme's flash (a yellow): the
    resting tints are cyan, the window grey, so only a run still flashing counts."""
    flash_hue = colorsys.rgb_to_hsv(*(c / 255 for c in DEFAULT.flash))[0]
    rgb = frame.convert("RGB")
    count = 0
    for n, colour in rgb.getcolors(rgb.width * rgb.height):
        hue, saturation, value = colorsys.rgb_to_hsv(*(c / 255 for c in colour))
        if saturation >= 0.45 and value >= 0.5 and abs(hue - flash_hue) <= 25 / 360:
            count += n
    return count


@pytest.mark.slow
def test_record_writes_a_gif_in_which_runs_flash_then_calm_down(tmp_path, bundled_model):
    out = tmp_path / "flash.gif"
    done = subprocess.run([sys.executable, "-P", "-m", "draftlight", "--record", str(out), "--prompt", PROMPT,
                           "--seconds", "120"], cwd=ROOT, capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stderr
    gif = Image.open(out)
    assert gif.format == "GIF" and gif.n_frames >= 10
    assert out.stat().st_size < 2_000_000
    counts = [flash_pixels(frame) for frame in ImageSequence.Iterator(gif)]
    peak = max(counts)
    assert peak >= 100, counts  # a run arrived in the flash colour
    later = counts[counts.index(peak) + 1:]
    assert later and min(later) <= peak // 5, counts  # and faded to its resting tint
    assert counts[-1] <= peak // 5, counts
    gif.seek(gif.n_frames - 1)
    assert gif.info["duration"] >= 1000  # the finished reply stays up to be read
