"""The suite keeps out of the user's folders (tests/support/user_folders.py): HOME and XDG_*
point at an empty folder, and a write there, even one the code swallows, is reported."""

from __future__ import annotations

import os
from pathlib import Path

import platformdirs

from draftlight import paths
from tests.support.user_folders import NOT_HOME, writes_to_not_home


def test_the_user_folders_point_at_an_empty_place_and_each_test_has_its_own_home(isolated_home):
    for name in ("HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME"):
        assert os.environ[name] == str(NOT_HOME)
    assert Path.home() == NOT_HOME and not any(NOT_HOME.iterdir())
    assert platformdirs.user_cache_path("draftlight").is_relative_to(NOT_HOME)
    assert paths.cache_dir().is_relative_to(isolated_home)


def test_a_write_to_the_user_folders_is_reported_even_if_it_is_swallowed():
    try:  # as root the mode does not stop it; otherwise it raises and code may catch that
        (NOT_HOME / "batch_costs.json").write_text("{}")
    except OSError:
        pass
    try:
        os.mkdir(NOT_HOME / "vocab-maps")
    except OSError:
        pass
    found = writes_to_not_home()  # reported here, so the home fixture does not fail this test
    assert any("batch_costs.json" in line for line in found)
    assert any("vocab-maps" in line for line in found)
    assert not any(NOT_HOME.iterdir()) and writes_to_not_home() == []
