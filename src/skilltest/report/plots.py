"""The report's plots as inline SVG: a forest plot of the deltas and bar charts of scores.

Written here by hand rather than drawn by a plotting library: a forest plot and bar charts are
a few lines and rectangles, the page stays small and identical run to run, every label goes
through the same escaping as the rest of the page, and the toolkit gains no heavy dependency
(matplotlib would pull numpy and a font cache) for what two functions do. Each plot has a
``viewBox``, so a narrow screen shrinks it rather than cutting it off. Sizes and colours are
classes the page's stylesheet draws (:mod:`skilltest.report.style`), not attributes repeated on
every label and bar: a plot of a thousand rows stays a thousand short rows.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from skilltest.report.markup import e as _e
from skilltest.report.rows import Row


def forest_plot(rows: Sequence[Row], *, title: str) -> str:
    """A forest plot as inline SVG: per row its delta (or, without one, its with-skill figure)
    as a dot with its interval as a line, against a zero line."""
    use_delta = any(not row.delta.empty for row in rows)
    shown = [(row.name, row.delta if use_delta else row.with_skill) for row in rows]
    shown = [(name, interval) for name, interval in shown if not interval.empty]
    if not shown:
        return ""
    low = -1.0 if use_delta else 0.0
    label_w, plot_w, row_h, top = 300, 360, 22, 28
    height = top + row_h * len(shown) + 24

    def x(value: float) -> float:
        return label_w + (max(low, min(1.0, value)) - low) / (1.0 - low) * plot_w

    width = label_w + plot_w + 20
    percent = all(row.percent for row in rows)
    parts = [
        f'<svg class="forest" xmlns="http://www.w3.org/2000/svg" width="{width}" '
        f'height="{height}" viewBox="0 0 {width} {height}" role="img" '
        f'aria-label="{_e(title)}">',
        f'<text x="{label_w}" y="16" class="plot-title">{_e(title)}</text>',
    ]
    for tick in [-1.0, -0.5, 0.0, 0.5, 1.0] if use_delta else [0.0, 0.25, 0.5, 0.75, 1.0]:
        line = "zero" if tick == 0 else "grid"
        if percent:
            label = f"{100 * tick:+.0f}%" if use_delta and tick else f"{100 * tick:.0f}%"
        else:
            label = f"{tick:+.1f}" if use_delta else f"{tick:.2f}"
        parts.append(
            f'<line x1="{x(tick):.1f}" y1="{top - 4}" x2="{x(tick):.1f}" '
            f'y2="{height - 20}" class="{line}"/>'
            f'<text x="{x(tick):.1f}" y="{height - 6}" class="tick">{label}</text>'
        )
    for index, (name, interval) in enumerate(shown):
        y = top + row_h * index + row_h / 2
        assert interval.low is not None and interval.high is not None
        side = "up" if interval.low > 0 else "down" if interval.high < 0 else "flat"
        parts.append(
            f'<text x="{label_w - 8}" y="{y + 4:.1f}" class="label">{_e(name[-48:])}</text>'
            f'<line x1="{x(interval.low):.1f}" y1="{y:.1f}" x2="{x(interval.high):.1f}" '
            f'y2="{y:.1f}" class="{side}"/>'
            f'<circle cx="{x(interval.value or 0.0):.1f}" cy="{y:.1f}" r="4" class="{side}"/>'
        )
    parts.append("</svg>")
    return "".join(parts)


def bar_chart(values: Mapping[str, float | None], *, title: str) -> str:
    """Horizontal bars on a 0..1 scale as inline SVG (component scores, split scores, rates);
    a value of ``None`` is drawn as ``n/a``."""
    if not values:
        return ""
    label_w, bar_w, row_h = 180, 240, 18
    height = 20 + row_h * len(values)
    width = label_w + bar_w + 60
    parts = [
        f'<svg class="bars" xmlns="http://www.w3.org/2000/svg" width="{width}" '
        f'height="{height}" viewBox="0 0 {width} {height}" role="img" '
        f'aria-label="{_e(title)}">',
        f'<text x="0" y="13" class="plot-title">{_e(title)}</text>',
    ]
    for index, (name, value) in enumerate(values.items()):
        y = 20 + row_h * index
        parts.append(
            f'<text x="{label_w - 6}" y="{y + 12}" class="label">{_e(name)}</text>'
            f'<rect x="{label_w}" y="{y + 2}" width="{bar_w}" height="{row_h - 5}" class="track"/>'
        )
        if value is None:
            parts.append(f'<text x="{label_w + 4}" y="{y + 12}" class="value">n/a</text>')
            continue
        filled = max(0.0, min(1.0, float(value))) * bar_w
        parts.append(
            f'<rect x="{label_w}" y="{y + 2}" width="{filled:.1f}" height="{row_h - 5}" '
            f'class="bar"/><text x="{label_w + bar_w + 6}" y="{y + 12}" class="value">'
            f"{float(value):.2f}</text>"
        )
    parts.append("</svg>")
    return "".join(parts)
