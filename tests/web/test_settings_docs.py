"""The README documents every setting of `ggp serve`, and `ggp serve` has an option for each."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from server.cli import build_parser
from server.web import SETTINGS, ServiceSettings

README = Path(__file__).resolve().parents[2] / "README.md"


def configuration_section() -> str:
    text = README.read_text(encoding="utf-8")
    found = re.search(r"^## Configuration\n(.*?)(?=^## )", text, re.M | re.S)
    assert found
    return found.group(1)


@pytest.mark.parametrize("setting", SETTINGS, ids=lambda setting: setting.name)
def test_every_setting_is_documented_and_has_an_option(setting: object) -> None:
    from server.web.settings import Setting

    assert isinstance(setting, Setting)
    rows = [line for line in configuration_section().splitlines() if f"`{setting.option}`" in line]
    assert rows, f"{setting.option} is not in the README's configuration table"
    if setting.variable:
        assert f"`{setting.variable}`" in rows[0]
    assert setting.name in ServiceSettings.model_fields
    serve = build_parser().parse_args(["serve"])
    assert setting.option.lstrip("-").replace("-", "_") in vars(serve) or setting.option == "--data"
