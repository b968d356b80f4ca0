"""Charts drawn on the server as inline SVG: no script, no external asset."""

from __future__ import annotations

from collections.abc import Sequence

from markupsafe import Markup, escape

MAX_POINTS = 300
"""A long history is thinned to at most this many points (the last one always kept)."""


def thin(values: Sequence[float], limit: int = MAX_POINTS) -> list[tuple[int, float]]:
    """(index, value) pairs, evenly spaced over ``values``, at most ``limit`` of them."""
    if len(values) <= limit:
        return list(enumerate(values))
    step = (len(values) - 1) / (limit - 1)
    picked = sorted({round(i * step) for i in range(limit)})
    return [(i, values[i]) for i in picked]


def line_chart(
    values: Sequence[float],
    *,
    label: str,
    width: int = 640,
    height: int = 200,
) -> Markup:
    """A line of ``values`` against their index, with the range written on the axes."""
    if not values:
        return Markup("")
    left, right, top, bottom = 48, 8, 10, 24
    points = thin(values)
    low, high = min(values), max(values)
    if high - low < 1e-9:
        low, high = low - 1, high + 1
    last = max(len(values) - 1, 1)

    def x(index: int) -> float:
        return left + (width - left - right) * index / last

    def y(value: float) -> float:
        return top + (height - top - bottom) * (high - value) / (high - low)

    path = " ".join(f"{x(i):.1f},{y(v):.1f}" for i, v in points)
    zero = ""
    if low < 0 < high:
        zero = (
            f'<line class="zero" x1="{left}" x2="{width - right}" y1="{y(0):.1f}" y2="{y(0):.1f}"/>'
        )
    text = escape(label)
    return Markup(
        f'<svg class="chart" viewBox="0 0 {width} {height}" role="img" '
        f'aria-label="{text}" data-points="{len(points)}">'
        f"<title>{text}</title>"
        f'<line class="axis" x1="{left}" x2="{left}" y1="{top}" y2="{height - bottom}"/>'
        f'<line class="axis" x1="{left}" x2="{width - right}" '
        f'y1="{height - bottom}" y2="{height - bottom}"/>{zero}'
        f'<text x="{left - 4}" y="{top + 8}" text-anchor="end">{high:.1f}</text>'
        f'<text x="{left - 4}" y="{height - bottom}" text-anchor="end">{low:.1f}</text>'
        f'<text x="{left}" y="{height - 6}">1</text>'
        f'<text x="{width - right}" y="{height - 6}" text-anchor="end">{len(values)}</text>'
        f'<polyline class="line" points="{path}"/></svg>'
    )
