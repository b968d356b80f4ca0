"""The one error of the protocol layer."""

from __future__ import annotations


class ProtocolError(ValueError):
    """A message or reply that cannot be read as the GGP protocol, with the reason why."""
