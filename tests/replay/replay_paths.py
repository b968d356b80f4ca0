"""Paths shared by the replay tests."""

from __future__ import annotations

from pathlib import Path

FIXTURES = Path(__file__).parent / "fixtures"
OTHER_SERVER_LOG = FIXTURES / "ttt-other-server.json"
"""A ticTacToe match as another GGP server writes it: ggp.org format, rules embedded."""
