"""The bar's story as a small SVG a GM can post afterwards: the position over the throws as
a step line between the ends, a dot for each move (who moved it on hover), a rout marked."""

from __future__ import annotations

from xml.sax.saxutils import escape, quoteattr

from tidetower.engine.barline import Barline, Step

WIDTH, HEIGHT, PAD, LEFT = 640, 240, 28, 110


def _x(line: Barline, i: float) -> float:
    """The x of throw `i` (0: before the first)."""
    return LEFT + (WIDTH - LEFT - PAD) * i / max(len(line.steps), 1)


def _y(line: Barline, position: int) -> float:
    """The y of a bar position: the low end (side A's) at the bottom."""
    span = max(line.high - line.low, 1)
    return HEIGHT - PAD - (HEIGHT - 2 * PAD) * (position - line.low) / span


def _path(line: Barline) -> str:
    """The step line: each throw holds the position, then moves it."""
    first = line.steps[0].before
    points = [f"M{_x(line, 0):.1f},{_y(line, first):.1f}"]
    for i, step in enumerate(line.steps):
        points.append(f"V{_y(line, step.before):.1f}H{_x(line, i + 1):.1f}")
        points.append(f"V{_y(line, step.after):.1f}")
    return "".join(points)


def _hover(step: Step) -> str:
    """What a dot says on hover: who, the move and its cause."""
    who = step.who.name
    causes = "; ".join(step.causes) or "moved"
    return escape(f"{who} ({step.who.id}): {step.before}→{step.after}, {causes}")


def _dots(line: Barline) -> list[str]:
    """A dot for each throw that moved the bar; a rout marked where a side routed."""
    out = []
    for i, step in enumerate(line.steps):
        x, y = _x(line, i + 1), _y(line, step.after)
        if step.moved:
            out.append(
                f'<circle class="move" cx="{x:.1f}" cy="{y:.1f}" r="3">'
                f"<title>{_hover(step)}</title></circle>"
            )
        if step.routed:
            label = line.label_a if step.routed == "a" else line.label_b
            out.append(
                f'<g class="rout"><line x1="{x:.1f}" y1="{PAD}" x2="{x:.1f}"'
                f' y2="{HEIGHT - PAD}" stroke="#000" stroke-dasharray="4 3"/>'
                f'<text x="{x + 3:.1f}" y="{PAD - 6}" font-size="11">'
                f"{escape(label)} routed</text></g>"
            )
    return out


def _ends(line: Barline, end: str) -> list[str]:
    """The ends' words in the sides' colours: side A's at the low end, B's at the high."""
    out = []
    for label, colour, position in (
        (line.label_a, line.colour_a, line.low),
        (line.label_b, line.colour_b, line.high),
    ):
        y = _y(line, position)
        words = escape(end.format(side=label))
        out.append(
            f'<rect x="4" y="{y - 9:.1f}" width="10" height="10" fill={quoteattr(colour)}/>'
            f'<text x="18" y="{y:.1f}" font-size="11" fill={quoteattr(colour)}>{words}</text>'
        )
    return out


def svg(line: Barline, end: str, title: str) -> str:
    """The bar's story as SVG text; `end` the system's words for a side's end ("{side}")."""
    frame = (
        f'<rect x="{LEFT}" y="{PAD}" width="{WIDTH - LEFT - PAD}" height="{HEIGHT - 2 * PAD}"'
        ' fill="none" stroke="#bbb"/>'
    )
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}"'
        f' viewBox="0 0 {WIDTH} {HEIGHT}" font-family="sans-serif">',
        f"<title>{escape(title)}</title>",
        '<rect width="100%" height="100%" fill="#fff"/>',
        frame,
        *_ends(line, end),
        f'<path class="bar" d="{_path(line)}" fill="none" stroke="#333" stroke-width="1.5"/>',
        *_dots(line),
        f'<text x="{LEFT}" y="{HEIGHT - 8}" font-size="11">{len(line.steps)} throws,'
        f" {sum(s.moved for s in line.steps)} moves</text>",
        "</svg>",
    ]
    return "\n".join(parts) + "\n"
