"""The roles a game declares, read from its rules without building an engine."""

from __future__ import annotations

from server.gdl import GdlError, Rule, parse_gdl


def declared_roles(rules: list[Rule]) -> list[str]:
    """The constants of the ``(role ...)`` facts, in declaration order, each once."""
    roles: list[str] = []
    for rule in rules:
        head = rule.head
        if rule.body or not isinstance(head, tuple) or len(head) != 2 or head[0] != "role":
            continue
        if isinstance(head[1], str) and head[1] not in roles:
            roles.append(head[1])
    return roles


def roles_in_text(text: str) -> list[str]:
    """:func:`declared_roles` of GDL text; empty when the text does not parse."""
    try:
        return declared_roles(parse_gdl(text))
    except GdlError:
        return []
