"""The published JSON Schema is generated from the record models."""

from __future__ import annotations

import json

from server.records.schema import SCHEMA_PATH, match_record_json_schema, render_schema


def test_the_committed_schema_file_matches_the_models() -> None:
    committed = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    assert committed == match_record_json_schema(), (
        "regenerate with: python -m server.records.schema --write"
    )
    assert SCHEMA_PATH.read_text(encoding="utf-8") == render_schema()


def test_the_schema_names_ggp_base_keys_and_requires_only_the_match_id() -> None:
    schema = match_record_json_schema()
    assert schema["required"] == ["matchId"]
    for key in ("matchId", "states", "moves", "stateTimes", "errors", "goalValues",
                "gameMetaURL", "matchHostPK", "playerNamesFromHost", "errorDetails"):  # fmt: skip
        assert key in schema["properties"]
    assert schema["additionalProperties"] is True
