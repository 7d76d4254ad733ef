"""The sources a llama-server build starts from: the installed llama-cpp-python's sdist,
downloaded and checked against the SHA-256 pinned here before anything in it is unpacked.

    archive = download_sdist(folder, "0.3.36", report)   # ServerBuildError if it does not match

The checksum comes from this file, not from the index that serves the archive, so a mirror or
a proxy that changes both the file and the checksum it states is caught too. A file that does
not match is deleted and the build stops: nothing of it is unpacked, and pip is not asked
for another copy. A new llama-cpp-python version gets its line in SDIST_SHA256:
`pip download --no-binary :all: --no-deps llama-cpp-python==X`, `sha256sum` of the file,
compared with the `#sha256=` of the file on https://pypi.org/simple/llama-cpp-python/.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import sys
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Callable

from draftlight.engine.core.errors import ServerBuildError

PACKAGE = "llama-cpp-python"
PYPI_JSON = f"https://pypi.org/pypi/{PACKAGE}/json"  # the index's page for the package
# version -> SHA-256 of its sdist on PyPI (llama_cpp_python-VERSION.tar.gz)
SDIST_SHA256 = {
    "0.3.36": "832db0699007f1be95a7e41ef12e88926b02ba836461e36a36372db2760c1a2e",
}
Report = Callable[[str, int], None]  # (what is happening, percent or -1)


def download_sdist(folder: Path, version: str, report: Report) -> Path:
    """`version`'s sdist in `folder`, from PyPI, else through pip where PyPI cannot be reached
    directly (pip knows the machine's mirrors; slower: it prepares the sdist's metadata,
    installing its build requirements first). Either way checked against SDIST_SHA256.

    Raises:
        ServerBuildError: no checksum is pinned for `version`, it cannot be downloaded, or
            what came does not match (then it is deleted)."""
    expected = SDIST_SHA256.get(version)
    if expected is None:
        raise ServerBuildError(f"no checksum of the {PACKAGE} {version} sources is pinned in "
                               f"this Draftlight: build from an sdist you checked, with "
                               f"`draftlight engine build-server --sources PATH`")
    spec = f"{PACKAGE}=={version}"
    report(f"downloading the sources of {spec}", -1)
    try:
        archive = _download_from_pypi(folder, version)
    except ServerBuildError as direct:  # not reached, not a mismatch: that is checked below
        if getattr(sys, "frozen", False):
            raise
        archive = _download_with_pip(folder, spec, direct)
    check_sha256(archive, expected)
    return archive


def check_sha256(path: Path, expected: str) -> None:
    """Delete `path` and raise ServerBuildError unless its SHA-256 is `expected`."""
    with open(path, "rb") as file:
        got = hashlib.file_digest(file, "sha256").hexdigest()
    if got != expected:
        path.unlink(missing_ok=True)
        raise ServerBuildError(f"{path.name} is not the genuine {PACKAGE} sources (expected "
                               f"sha256 {expected}, got {got}): deleted, nothing was built")


def _download_from_pypi(folder: Path, version: str) -> Path:
    path = None
    try:
        with urllib.request.urlopen(PYPI_JSON, timeout=30) as r:
            files = json.load(r)["releases"][version]
        [sdist] = [f for f in files if f["packagetype"] == "sdist"]
        path = folder / Path(sdist["filename"]).name
        url = urllib.parse.urljoin(PYPI_JSON, sdist["url"])  # a mirror may answer relative URLs
        with urllib.request.urlopen(url, timeout=60) as r, open(path, "wb") as out:
            shutil.copyfileobj(r, out)
    except (OSError, KeyError, ValueError) as exc:
        if path is not None:
            path.unlink(missing_ok=True)  # half a file: pip must not take it for its download
        raise ServerBuildError(f"cannot download the {PACKAGE} {version} sources: {exc}") from None
    return path


def _download_with_pip(folder: Path, spec: str, direct: ServerBuildError) -> Path:
    out = subprocess.run([sys.executable, "-P", "-m", "pip", "download", "--no-binary", ":all:",
                          "--no-deps", "-q", "-d", str(folder), spec],
                         check=False, capture_output=True, text=True, errors="replace")
    found = sorted(folder.glob("llama_cpp_python-*.tar.gz"))
    if not found:
        lines = [line for line in out.stderr.strip().splitlines() if line.strip()]
        raise ServerBuildError(f"{direct}; pip could not either: "
                               f"{lines[-1][:300] if lines else 'no output'}") from None
    return found[0]
