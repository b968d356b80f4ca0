"""The JSON Schema of match records, generated from the pydantic models.

``match-record.schema.json`` next to this module is the published copy; regenerate
it with ``python -m server.records.schema --write`` after changing the models (a
test checks that it matches).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from .model import MatchRecord

SCHEMA_PATH = Path(__file__).with_name("match-record.schema.json")
"""The committed schema file."""


def match_record_json_schema() -> dict[str, Any]:
    """The JSON Schema that match record files (as read) satisfy."""
    schema = MatchRecord.model_json_schema(by_alias=True, mode="validation")
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        **schema,
    }


def render_schema() -> str:
    """The schema as the text of the committed file."""
    return json.dumps(match_record_json_schema(), indent=2, sort_keys=True) + "\n"


def main(argv: list[str] | None = None) -> int:
    """Print the schema, or rewrite the committed file with ``--write``."""
    args = sys.argv[1:] if argv is None else argv
    if args == ["--write"]:
        SCHEMA_PATH.write_text(render_schema(), encoding="utf-8")
        print(SCHEMA_PATH)
    else:
        sys.stdout.write(render_schema())
    return 0


if __name__ == "__main__":
    sys.exit(main())
