"""Match records in the ggp.org match format (as GGP-Base writes them), with our additions.

The JSON Schema is in :mod:`server.records.schema`.
"""

from .io import dump_record, load_record, parse_record, write_atomically, write_record
from .model import (
    RECORD_FORMAT,
    EndReason,
    ErrorDetail,
    ErrorKind,
    MatchRecord,
    SubstitutePolicy,
    new_random_token,
)

__all__ = [
    "RECORD_FORMAT",
    "EndReason",
    "ErrorDetail",
    "ErrorKind",
    "MatchRecord",
    "SubstitutePolicy",
    "dump_record",
    "load_record",
    "new_random_token",
    "parse_record",
    "write_atomically",
    "write_record",
]
