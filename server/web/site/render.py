"""Jinja2 templates of the pages (package data), with autoescaping and a GDL highlighter."""

from __future__ import annotations

import re
import time
from typing import Any

from jinja2 import Environment, PackageLoader, select_autoescape
from markupsafe import Markup, escape

_GDL = re.compile(
    r"(?P<comment>;[^\n]*)|(?P<variable>\?[\w-]+)|"
    r"(?P<keyword>\b(?:role|init|true|next|legal|does|goal|terminal|distinct|not|or|base|input)\b|<=)"
)


def highlight_gdl(text: str) -> Markup:
    """GDL as HTML: comments, variables and keywords in spans of their own class."""
    parts: list[str] = []
    position = 0
    for found in _GDL.finditer(text):
        parts.append(str(escape(text[position : found.start()])))
        kind = found.lastgroup or "keyword"
        parts.append(f'<span class="gdl-{kind}">{escape(found.group())}</span>')
        position = found.end()
    parts.append(str(escape(text[position:])))
    return Markup("".join(parts))


def when(milliseconds: int | None) -> str:
    """A time in milliseconds since the epoch as UTC text."""
    if milliseconds is None:
        return "never"
    return time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(milliseconds / 1000))


class Pages:
    """Renders the templates of this package."""

    def __init__(self) -> None:
        self.environment = Environment(
            loader=PackageLoader("server.web.site", "templates"),
            autoescape=select_autoescape(["html"]),
        )
        self.environment.filters["gdl"] = highlight_gdl
        self.environment.filters["when"] = when

    def render(self, name: str, **context: Any) -> str:
        return self.environment.get_template(name).render(**context)
