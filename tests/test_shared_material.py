"""Missing reference material is a visible skip, or a failure under GGP_REQUIRE_SHARED=1."""

from __future__ import annotations

from pathlib import Path

import pytest
import shared_material
from _pytest.outcomes import Failed, Skipped


@pytest.fixture
def empty_shared(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setattr(shared_material, "SHARED", tmp_path)
    monkeypatch.delenv("GGP_REQUIRE_SHARED", raising=False)
    return tmp_path


def test_a_missing_file_skips_with_its_name(empty_shared: Path) -> None:
    with pytest.raises(Skipped, match="protocol/ttt-match.json is not in ../shared"):
        shared_material.shared_path("protocol", "ttt-match.json")


def test_a_missing_file_fails_when_the_material_is_required(
    empty_shared: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GGP_REQUIRE_SHARED", "1")
    with pytest.raises(Failed, match="GGP_REQUIRE_SHARED=1 but protocol/x.json is not in"):
        shared_material.shared_path("protocol", "x.json")


def test_a_present_file_is_returned(empty_shared: Path) -> None:
    (empty_shared / "protocol").mkdir()
    (empty_shared / "protocol" / "x.json").write_text("{}")
    assert shared_material.shared_path("protocol", "x.json") == empty_shared / "protocol" / "x.json"


def test_a_missing_folder_still_gives_one_case_that_says_why(empty_shared: Path) -> None:
    (case,) = shared_material.shared_files("conformance/games", "*.kif")
    assert case.id == "absent"
    assert [mark.args for mark in case.marks] == [("conformance/games/*.kif",)]


def test_a_present_folder_gives_its_files_in_order(empty_shared: Path) -> None:
    games = empty_shared / "conformance" / "games"
    games.mkdir(parents=True)
    for name in ("b.kif", "a.kif", "notes.txt"):
        (games / name).write_text("")
    assert shared_material.shared_files("conformance/games", "*.kif") == [
        games / "a.kif",
        games / "b.kif",
    ]
