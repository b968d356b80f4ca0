"""Match logs from store rows: the ggp.org JSON rebuilt from the header and one row per step."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from server.records import MatchRecord, dump_record
from server.records.archive import record_header
from server.records.json_text import indented_json
from server.records.signing import sign_record
from server.store import StepRow


def record_json(record: MatchRecord) -> dict[str, Any]:
    """The record as the JSON object the log writer would write."""
    data: dict[str, Any] = json.loads(dump_record(record, indent=None))
    return data


def header_of(record: MatchRecord) -> dict[str, Any]:
    """The record without its per-step lists (kept once per match)."""
    return record_header(record_json(record))


def details_json(details: Sequence[Any]) -> list[dict[str, Any] | None]:
    """Error details (models or ``None``) as JSON objects, as the record writes them."""
    return [
        None if detail is None else detail.model_dump(mode="json", exclude_none=True)
        for detail in details
    ]


def rebuild_record(header: Mapping[str, Any], steps: Sequence[StepRow]) -> dict[str, Any]:
    """The ggp.org JSON of a match from its header and its step rows."""
    data = dict(header)
    data["states"] = [step.state for step in steps]
    data["moves"] = [step.moves or [] for step in steps[1:]]
    data["stateTimes"] = [step.state_time for step in steps]
    data["errors"] = [step.errors for step in steps]
    data["responseTimes"] = [step.response_times for step in steps]
    data["rawReplies"] = [step.raw_replies for step in steps]
    data["errorDetails"] = [step.details for step in steps]
    return data


def signed_text(record: Mapping[str, Any] | MatchRecord, key: Ed25519PrivateKey) -> str:
    """The signed record as served and exported: the text ``ggp verify`` reads from a file."""
    signed = sign_record(record, key)
    return indented_json(signed)
