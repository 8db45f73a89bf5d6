"""The figures of a run, drawn with matplotlib from the figures its scores declare (``figures``).

Every score that names a figure title is drawn in that figure: a panel per ``panel``, a series per
model (with its generation where the figure has several), the reference values and people's data
beside them. A figure none of whose scores holds a valid observation is not drawn: its caption says
so instead.

Drawn for the report's column, at the size it is shown there: a figure of one panel 800 px wide, one
of several as wide as the column (1,120 px), its smallest text 9.5 pt at 100 dpi (13 px). Nothing
is drawn over anything: the layout is constrained (titles, ticks, axis labels and the legend under
the panels each have their own room), and a cell with no valid answer is said in a strip added
under the panel's data, never over a line; a series with no valid answer anywhere takes no room
and is named in the caption. Every series is told apart: a colour each (a colour per variant where
there are more series than colours), and a line style and a marker per model; reference lines are
dark grey and dashed, people's data brown, and no model's series is either. A note's part about
people is shown only where people's data was drawn. The PNG is reduced to a palette of 256 colours,
which keeps the whole suite's report light, and holds no date, so a replay draws the same bytes.
"""

from __future__ import annotations

import io
import math
import re
import textwrap
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from . import people
from .figures import CURVE, INTERVAL, LINE, VIOLIN, Figure
from .report import Score, generation_rank

DPI = 100
#: Inches at DPI: the widest image the report's column shows at its own size (1,200 px less the
#: figure's frame), wider ones being shrunk, and their text with them; and a figure of one panel.
COLUMN_WIDTH = 11.2
ONE_PANEL_WIDTH = 8.0
#: Height of a row of panels, with its title, ticks and axis label: one panel alone, and one of several.
ROW_HEIGHT = (4.3, 3.5)
TITLE_HEIGHT = 0.5
MAX_COLUMNS = 3
#: Points: the smallest text (ticks, the legend, what a panel says is missing) is 13 px at DPI.
FONT = {"font.size": 10, "axes.titlesize": 10.5, "axes.labelsize": 10, "xtick.labelsize": 9.5,
        "ytick.labelsize": 9.5, "legend.fontsize": 9.5, "figure.titlesize": 12}  # fmt: skip
SMALL = 9.5
MISSING_COLOUR = "0.25"
#: Model series: tab10 without its brown (people's) and its grey (the reference lines').
PALETTE = ("C0", "C1", "C2", "C3", "C4", "C6", "C8", "C9")
SERIES_LINES = ("-", (0, (5, 2)), (0, (1, 1.5)), (0, (6, 2, 1, 2)), (0, (3, 1, 1, 1, 1, 1)), (0, (9, 3)), (0, (2, 3)), (0, (7, 2, 2, 2, 2, 2)))
SERIES_MARKERS = ("o", "s", "^", "D", "v", "P", "X", "p")
REFERENCE_COLOUR = "#404040"
REFERENCE_LINES = ("--", ":", "-.", (0, (8, 2, 2, 2, 2, 2)), (0, (12, 4)), (0, (1, 3)))
PEOPLE_COLOUR = "#8c564b"
#: People's distribution (a violin, a curve) is solid; people's figures as lines are dashed.
PEOPLE_LINES = ((0, (6, 2)), (0, (2, 1.5)), (0, (6, 2, 1, 2)), (0, (10, 3)))
#: The artists' gid, by which a note and a test know what a figure holds.
PEOPLE, REFERENCE, SERIES, MISSING = "people", "reference", "series", "missing"
#: A note's part about people: from "people:" at its start or after "; ", to its end.
PEOPLE_PART = re.compile(r"(?:^|;\s+)people:")


@dataclass
class Drawn:
    """One figure of the report: its PNG, or None with the reason when there was nothing to draw.
    ``figure`` is the matplotlib figure itself, kept only when ``draw_run`` is asked to keep it."""

    behaviour: str
    title: str
    png: bytes | None
    caption: str
    notes: list[str] = field(default_factory=list)
    figure: object = None


@dataclass
class _Point:
    figure: Figure
    score: Score
    series: str
    #: What the series' colour stands for: its variant (the model's when it has none).
    variant: str


@dataclass(frozen=True)
class _Style:
    """A series' colour (its variant), line style and marker (its model, and which round of the
    palette its variant is in): no two series of a figure share all three."""

    color: str
    linestyle: object
    marker: str


def _style():
    """Matplotlib's settings for the figures, for the time they are drawn; no pyplot, so nothing is
    left open and nothing global is changed."""
    import matplotlib

    # "$100" is dollars here, not mathematics
    settings: dict[Any, Any] = {**FONT, "text.parse_math": False, "figure.dpi": DPI, "savefig.dpi": DPI}
    return matplotlib.rc_context(settings)


def _new_figure(size: tuple[float, float], rows: int, columns: int, **grid):
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure as Canvas

    fig = Canvas(figsize=size, dpi=DPI, layout="constrained")
    FigureCanvasAgg(fig)
    return fig, fig.subplots(rows, columns, squeeze=False, **grid)


def draw_run(scores: Sequence[Score], model_order: Sequence[str] = (), *, keep: bool = False) -> list[Drawn]:
    """Every figure the scores declare, in the order the behaviours first declare them; ``keep``
    keeps each matplotlib figure in its ``Drawn``, to be looked into."""
    groups: dict[tuple[str, str], list[tuple[Figure, Score]]] = {}
    for score in sorted(scores, key=lambda s: (s.behaviour, s.test_id)):
        for figure in score.figures:
            groups.setdefault((score.behaviour, figure.title), []).append((figure, score))
    return [_draw(behaviour, title, members, model_order, keep) for (behaviour, title), members in groups.items()]


def _series_names(members: Sequence[tuple[Figure, Score]], model_order: Sequence[str]) -> list[_Point]:
    """A series per model and variant: the figure's ``series`` label (or the generation, where the
    figure has several), after the model's name where the figure has several models."""
    generations = {s.generation for _, s in members}
    models = {s.model for _, s in members}
    points = []
    for figure, score in members:
        label = figure.series or (score.generation if len(generations) > 1 else "")
        name = ", ".join(part for part in (score.model if len(models) > 1 or not label else "", label) if part)
        points.append(_Point(figure, score, name, label or score.model))
    rank = {m: i for i, m in enumerate(model_order)}
    points.sort(key=lambda p: (rank.get(p.score.model, len(rank)), generation_rank(p.score.generation), p.score.row_rank))
    return points


def _styles(points: Sequence[_Point]) -> dict[str, _Style]:
    """A colour a series where the palette has enough, else a colour a variant (a generation, a
    number of messages) with each model's own line style and marker."""
    names = list(dict.fromkeys(p.series for p in points))
    variants = list(dict.fromkeys(p.variant for p in points))
    models = list(dict.fromkeys(p.score.model for p in points))
    styles = {}
    for p in points:
        v = names.index(p.series) if len(names) <= len(PALETTE) else variants.index(p.variant)
        m = models.index(p.score.model)
        k = m + len(models) * (v // len(PALETTE))  # a variant past the palette's end takes the next model's shapes
        styles[p.series] = _Style(PALETTE[v % len(PALETTE)], SERIES_LINES[k % len(SERIES_LINES)], SERIES_MARKERS[k % len(SERIES_MARKERS)])
    return styles


def _reference_styles(points: Sequence[_Point]) -> dict[str, dict]:
    """Each reference label's line, the same in every panel: people's brown, the others dark grey."""
    labels = list(dict.fromkeys(label for p in points for label in p.figure.references))
    theirs = [label for label in labels if _is_people(label)]
    ours = [label for label in labels if not _is_people(label)]
    styles: dict[str, dict[str, Any]] = {label: {"color": PEOPLE_COLOUR, "linestyle": PEOPLE_LINES[i % len(PEOPLE_LINES)], "linewidth": 1.8, "gid": PEOPLE}
              for i, label in enumerate(theirs)}  # fmt: skip
    styles |= {label: {"color": REFERENCE_COLOUR, "linestyle": REFERENCE_LINES[i % len(REFERENCE_LINES)], "linewidth": 1.4, "gid": REFERENCE}
               for i, label in enumerate(ours)}  # fmt: skip
    return styles


def _is_people(label: str) -> bool:
    return label.lower().startswith(("people", "humans"))


def _grid(count: int) -> tuple[int, int]:
    rows = math.ceil(count / MAX_COLUMNS)
    return rows, math.ceil(count / rows)


def _has_data(p: _Point) -> bool:
    if p.figure.kind == CURVE:
        return bool(p.figure.curve)
    if p.figure.kind == VIOLIN:
        return any(not math.isnan(v) for v in p.score.sample)
    return p.score.score is not None


def _draw(behaviour: str, title: str, members: Sequence[tuple[Figure, Score]], model_order: Sequence[str], keep: bool = False) -> Drawn:
    with _style():
        return _draw_styled(behaviour, title, members, model_order, keep)


def _draw_styled(behaviour: str, title: str, members: Sequence[tuple[Figure, Score]], model_order: Sequence[str], keep: bool) -> Drawn:
    points = _series_names(members, model_order)
    kind = points[0].figure.kind
    if not any(_has_data(p) or p.figure.people for p in points):
        models = ", ".join(dict.fromkeys(p.score.model for p in points))
        invalid = sum(p.score.invalid for p in points)
        caption = f"{title}: nothing to draw: no valid answer from {models} in any cell ({invalid} invalid)"
        return Drawn(behaviour, title, None, caption, _notes(points, people_drawn=False))
    # a series with no valid answer in any cell takes no room: the caption names it
    present = {p.series for p in points if _has_data(p)}
    absent = [_absent(name, [p for p in points if p.series == name]) for name in dict.fromkeys(p.series for p in points) if present and name not in present]
    if present:
        points = [p for p in points if p.series in present]
    panels = list(dict.fromkeys(p.figure.panel for p in points))
    rows, columns = _grid(len(panels))
    width = ONE_PANEL_WIDTH if columns == 1 else COLUMN_WIDTH
    fig, axes = _new_figure((width, TITLE_HEIGHT + ROW_HEIGHT[len(panels) > 1] * rows), rows, columns)
    fig.get_layout_engine().set(w_pad=0.08, h_pad=0.08, wspace=0.04, hspace=0.06)
    styles = _styles(points)
    lines = _reference_styles(points)
    draw = {VIOLIN: _violins, INTERVAL: _intervals, LINE: _lines, CURVE: _curves}[kind]
    missing: list[str] = []
    said: dict[object, list[tuple[float, str, str]]] = {}
    shown = [axes[i // columns][i % columns] for i in range(len(panels))]
    same_axis = len({p.figure.axis for p in points}) == 1
    same_x_axis = len({p.figure.x_axis for p in points}) == 1
    panel_height = (fig.get_figheight() - TITLE_HEIGHT) / rows * DPI * 0.8
    for index, (ax, panel) in enumerate(zip(shown, panels)):
        in_panel = [p for p in points if p.figure.panel == panel]
        gaps, labels = draw(ax, in_panel, styles, lines)
        missing += gaps
        said[ax] = labels
        if len(panels) > 1:
            ax.set_title(_wrap(panel or title, _characters(_panel_pixels(ax), FONT["axes.titlesize"])))
        if not same_axis or index % columns == 0:
            ax.set_ylabel(_wrap(in_panel[0].figure.axis, _characters(panel_height, FONT["axes.labelsize"])))
        if not (same_x_axis and index + columns < len(panels)):  # under the lowest panel of a column
            ax.set_xlabel(in_panel[0].figure.x_axis)
        if in_panel[0].figure.limits:
            low, high = in_panel[0].figure.limits
            pad = (high - low) * 0.05
            ax.set_ylim(low - pad, high + pad)
        ax.grid(axis="y", alpha=0.3)
    for index in range(len(panels), rows * columns):
        axes[index // columns][index % columns].set_visible(False)
    _legend(fig, shown, width, list(styles))
    fig.suptitle(_wrap(title, _characters(width * DPI, FONT["figure.titlesize"])))
    if any(said.values()):
        fig.get_layout_engine().execute(fig)  # the panels' sizes, for the strips that say what is missing
        for ax, labels in said.items():
            if labels:
                _strip(ax, labels)
    png = _png(fig)
    people_drawn = any(artist.get_gid() == PEOPLE for ax in shown for artist in (*ax.lines, *ax.collections))
    caption = title
    if missing or absent:
        caption += "; no valid answer, so nothing drawn, for: " + "; ".join(dict.fromkeys(absent + missing))
    return Drawn(behaviour, title, png, caption, _notes(points, people_drawn), fig if keep else None)


def _absent(name: str, points: Sequence[_Point]) -> str:
    """A series with no valid answer anywhere, named as the caption says it: with its cell, where it has one."""
    cells = list(dict.fromkeys(str(p.figure.x) for p in points))
    if points[0].figure.kind == CURVE:
        return name
    return f"{name} at {cells[0]}" if len(cells) == 1 and points[0].figure.kind != LINE else f"{name} (every cell)"


def _notes(points: Sequence[_Point], people_drawn: bool) -> list[str]:
    """The figure's notes; a note's part about people (from "people:" on) only where people's data
    was drawn, as the part says what that line or violin is."""
    notes = []
    for note in dict.fromkeys(p.figure.note for p in points if p.figure.note):
        found = PEOPLE_PART.search(note)
        if found and not people_drawn:
            note = note[: found.start()].strip()
        if note:
            notes.append(note)
    return sorted(notes)


def _wrap(text: str, width: int) -> str:
    """``text`` on lines of at most ``width`` characters; an interval's "[95% CI]" kept whole."""
    return "\n".join(textwrap.wrap(text.replace("% CI", "%\u00a0CI"), max(8, width))) if text else text


def _characters(pixels: float, points: float) -> int:
    """Characters of text at ``points`` that fit in ``pixels`` (DejaVu Sans: about 0.58 em each)."""
    return int(pixels * 0.92 / (points * DPI / 72 * 0.58))


def _legend(fig, axes, width: float, series: Sequence[str]) -> None:
    """One legend for the figure, under its panels: the models' series (in ``series``' order), then
    people's data, then the reference lines, in as many columns as fit the figure's width."""
    entries: dict[str, Any] = {}
    for ax in axes:
        for handle, label in zip(*ax.get_legend_handles_labels()):
            entries.setdefault(label, handle)
    if not entries:
        return

    def group(label):
        handle = entries[label]
        gid = (handle[0] if isinstance(handle, tuple) else handle).get_gid()
        return {PEOPLE: 1, REFERENCE: 2}.get(gid, 0)

    rank = {name: i for i, name in enumerate(series)}
    labels = sorted(entries, key=lambda label: (group(label), rank.get(label, len(rank))))
    from matplotlib.font_manager import FontProperties

    renderer = fig.canvas.get_renderer()
    font = FontProperties(size=FONT["legend.fontsize"])
    em = FONT["legend.fontsize"] * DPI / 72
    widths = [renderer.get_text_width_height_descent(label, font, ismath=False)[0] + 3.4 * em for label in labels]
    ncols = 1
    for n in range(len(labels), 0, -1):
        rows, longer = divmod(len(labels), n)  # as matplotlib fills them: the first columns one longer
        heights = [rows + 1] * longer + [rows] * (n - longer)
        starts = [sum(heights[:i]) for i in range(n)]
        columns = [widths[start: start + height] for start, height in zip(starts, heights)]
        if sum(map(max, columns)) + 2 * em * (n - 1) + 2 * em <= width * DPI * 0.97:
            ncols = n
            break
    fig.legend([entries[label] for label in labels], labels, loc="outside lower center", ncols=ncols, frameon=False)
    legend_rows = math.ceil(len(labels) / ncols)
    fig.set_figheight(fig.get_figheight() + 0.25 * legend_rows + 0.1)  # the panels keep their height, however long the legend


def _strip(ax, labels: Sequence[tuple[float, str, str]]) -> None:
    """A strip under the panel's data, as tall as its text, where each cell with no valid answer is
    said: nothing else is drawn there, so the text covers no line, point or legend. Labels that
    would touch side by side take a second row."""
    renderer = ax.get_figure().canvas.get_renderer()
    from matplotlib.font_manager import FontProperties

    font = FontProperties(size=SMALL)
    line_pixels = SMALL * DPI / 72 * 1.25
    placed: list[tuple[float, str, str, int]] = []
    ends: list[float] = []  # each row's right end, in pixels
    for x, text, colour in sorted(labels):
        half = max(renderer.get_text_width_height_descent(line, font, ismath=False)[0] for line in text.split("\n")) / 2 + 8
        centre = ax.transData.transform((x, 0))[0]
        row = next((r for r, end in enumerate(ends) if end < centre - half), len(ends))
        if row == len(ends):
            ends.append(0.0)
        ends[row] = centre + half
        placed.append((x, text, colour, row))
    lines = max(text.count("\n") + 1 for _, text, _ in labels)
    row_pixels = lines * line_pixels + 12
    low, high = ax.get_ylim()
    low = min(low, ax.dataLim.y0) if ax.dataLim.height > 0 else low
    ticks = [t for t in ax.get_yticks() if low - 1e-9 <= t <= high + 1e-9]
    needed = (row_pixels * len(ends) + 6) / max(ax.get_window_extent().height, 1.0)  # of the panel's height
    band = (high - low) * (needed / (1 - needed) if needed < 0.6 else 1.5)
    ax.set_ylim(low - band, high)
    ax.set_yticks(ticks)
    per_row = band / len(ends)
    for x, text, colour, row in placed:
        ax.text(x, low - per_row * (row + 0.5), text, ha="center", va="center", fontsize=SMALL, color=colour, gid=MISSING,
                bbox={"facecolor": "white", "edgecolor": "0.8", "boxstyle": "round,pad=0.25"})  # fmt: skip


def _png(fig) -> bytes:
    """The figure as a PNG of at most 256 colours: a third of the bytes of its RGBA, no date in it."""
    from PIL import Image

    fig.canvas.draw()
    rgba = fig.canvas.buffer_rgba()
    image = Image.frombuffer("RGBA", (int(rgba.shape[1]), int(rgba.shape[0])), bytes(rgba), "raw", "RGBA", 0, 1)
    image = image.convert("RGB").quantize(colors=256, method=Image.Quantize.FASTOCTREE, dither=Image.Dither.NONE)
    buffer = io.BytesIO()
    image.save(buffer, format="PNG")
    return buffer.getvalue()


def _category_ticks(ax, categories: Sequence[str], width_pixels: float) -> None:
    """Category names under the axis, on two lines where one would run into the next, slanted where
    even two would."""
    fits = _characters(width_pixels / max(1, len(categories)) * 0.95, FONT["xtick.labelsize"])
    names = ["\n".join(textwrap.wrap(c, max(1, fits))) or c for c in categories]
    crowded = any(len(line) > fits for name in names for line in name.split("\n")) or any(name.count("\n") > 1 for name in names)
    if crowded:
        ax.set_xticks(range(len(categories)), categories, rotation=30, ha="right", rotation_mode="anchor")
    else:
        ax.set_xticks(range(len(categories)), names)


def _panel_pixels(ax) -> float:
    """The panel's width as planned (the layout settles it later, a little narrower)."""
    fig = ax.get_figure()
    columns = ax.get_gridspec().ncols
    return fig.get_figwidth() * DPI / columns - 90


def _categories(points: Sequence[_Point]) -> list[str]:
    """The categories in the order of the table's columns where they name them, else as they come."""
    found = list(dict.fromkeys(str(p.figure.x) for p in points))
    columns = list(points[0].score.columns)
    return sorted(found, key=lambda c: (columns.index(c) if c in columns else len(columns), found.index(c)))


def _offsets(count: int, width: float = 0.7) -> list[float]:
    if count == 1:
        return [0.0]
    step = width / count
    return [-width / 2 + step * (i + 0.5) for i in range(count)]


def _references(ax, points: Sequence[_Point], lines: dict[str, dict]) -> None:
    seen: dict[str, float] = {}
    for p in points:
        for label, value in p.figure.references.items():
            seen.setdefault(label, value)
    for label, value in seen.items():
        ax.axhline(value, label=label, zorder=1.5, **lines[label])


def _missing_labels(missing_at: dict[str, list[str]], categories: Sequence[str], styles: dict[str, _Style], slot: float) -> list[tuple[float, str, str]]:
    """One label a category, naming the series with no valid answer there (in its colour, when it
    is one), or counting them where their names would not fit."""
    labels = []
    fits = max(14, _characters(slot, SMALL))
    for c, category in enumerate(categories):
        names = missing_at.get(category, [])
        if not names:
            continue
        said = textwrap.wrap(", ".join(names) + ":", fits)
        if len(said) > 2:
            said = [f"{len(names)} series:"]
        labels.append((float(c), "\n".join([*said, "no valid answer"]), MISSING_COLOUR))
    return labels


def _violins(ax, points: Sequence[_Point], styles, lines) -> tuple[list[str], list]:
    from matplotlib.lines import Line2D

    categories = _categories(points)
    series = list(dict.fromkeys(p.series for p in points))
    people_name = next((p.figure.people for p in points if p.figure.people), "")
    slots = len(series) + (1 if people_name else 0)
    offsets = _offsets(slots)
    missing: list[str] = []
    missing_at: dict[str, list[str]] = {}
    drawn = set()
    for c, category in enumerate(categories):
        for s, name in enumerate(series):
            at = [p for p in points if p.series == name and str(p.figure.x) == category]
            if not at:
                continue
            sample = [v for v in at[0].score.sample if not math.isnan(v)]
            if not sample:
                missing_at.setdefault(category, []).append(name)
                missing.append(f"{name} at {category}")
                continue
            style = styles[name]
            _violin(ax, c + offsets[s], sample, style.color, 0.8 / slots, style.marker)
            drawn.add(name)
        if people_name:
            _violin(ax, c + offsets[-1], people.SOURCES[people_name](), PEOPLE_COLOUR, 0.8 / slots, None, gid=PEOPLE)
    _category_ticks(ax, categories, _panel_pixels(ax))
    ax.set_xlim(-0.5, len(categories) - 0.5)
    for name in series:  # the legend's entry: the series' colour, its median's line and its points' marker
        if name in drawn:
            ax.add_line(Line2D([], [], color=styles[name].color, linewidth=2.2, marker=styles[name].marker, markersize=6, label=name, gid=SERIES))
    if people_name:
        ax.add_line(Line2D([], [], color=PEOPLE_COLOUR, linewidth=2.6, label=f"people: {people_name}", gid=PEOPLE))
    _references(ax, points, lines)
    return missing, _missing_labels(missing_at, categories, styles, _panel_pixels(ax) / len(categories))


def _violin(ax, x: float, values: Sequence[float], colour: str, width: float, marker: str | None, gid: str = SERIES) -> None:
    if len(set(values)) > 1:
        body = ax.violinplot([values], positions=[x], widths=width, showextrema=False)["bodies"][0]
        body.set_facecolor(colour)
        body.set_edgecolor("none")
        body.set_alpha(0.3)
        body.set_gid(gid)
    middle = sorted(values)[len(values) // 2]
    ax.plot([x - width / 3, x + width / 3], [middle, middle], color=colour, linewidth=2.6 if gid == PEOPLE else 2.2, gid=gid, zorder=3)
    if marker is not None:
        spread = [x + width * 0.25 * math.sin(i * 2.399) for i in range(len(values))]  # a stable jitter
        ax.scatter(spread, values, s=12, color=colour, alpha=0.75, linewidths=0, marker=marker, gid=gid, zorder=2.5)


def _intervals(ax, points: Sequence[_Point], styles, lines) -> tuple[list[str], list]:
    categories = _categories(points)
    series = list(dict.fromkeys(p.series for p in points))
    offsets = _offsets(len(series))
    missing: list[str] = []
    missing_at: dict[str, list[str]] = {}
    for s, name in enumerate(series):
        xs, ys, lows, highs = [], [], [], []
        for p in (p for p in points if p.series == name):
            x = categories.index(str(p.figure.x)) + offsets[s]
            if p.score.score is None:
                missing_at.setdefault(str(p.figure.x), []).append(name)
                missing.append(f"{name} at {p.figure.x}")
                continue
            low, high = (p.score.score if v is None else v for v in p.score.ci)
            xs.append(x)
            ys.append(p.score.score)
            lows.append(max(0.0, p.score.score - low))
            highs.append(max(0.0, high - p.score.score))
        if xs:
            style = styles[name]
            bars = ax.errorbar(xs, ys, yerr=[lows, highs], fmt=style.marker, color=style.color, markersize=6, capsize=4, elinewidth=1.6, label=name, zorder=3)
            bars.lines[0].set_gid(SERIES)
    _category_ticks(ax, categories, _panel_pixels(ax))
    ax.set_xlim(-0.5, len(categories) - 0.5)
    _references(ax, points, lines)
    return missing, _missing_labels(missing_at, categories, styles, _panel_pixels(ax) / len(categories))


def _lines(ax, points: Sequence[_Point], styles, lines) -> tuple[list[str], list]:
    missing = []
    for name in dict.fromkeys(p.series for p in points):
        line = sorted((p for p in points if p.series == name), key=lambda p: float(p.figure.x))
        drawn = [p for p in line if p.score.score is not None]
        if not drawn:
            missing.append(name)
            continue
        xs = [float(p.figure.x) for p in drawn]
        ys = [p.score.score for p in drawn]
        lows = [p.score.score if p.score.ci[0] is None else p.score.ci[0] for p in drawn]
        highs = [p.score.score if p.score.ci[1] is None else p.score.ci[1] for p in drawn]
        style = styles[name]
        ax.plot(xs, ys, marker=style.marker, markersize=5, color=style.color, linestyle=style.linestyle, linewidth=1.8, label=name, gid=SERIES, zorder=3)
        ax.fill_between(xs, lows, highs, color=style.color, alpha=0.1, linewidth=0)
    curves: dict[str, dict[float, float]] = {}
    for p in points:
        for label, value in p.figure.references.items():
            curves.setdefault(label, {})[float(p.figure.x)] = value
    for label, curve in curves.items():
        xs = sorted(curve)
        ax.plot(xs, [curve[x] for x in xs], label=label, zorder=2, **lines[label])
    return missing, []


def _curves(ax, points: Sequence[_Point], styles, lines) -> tuple[list[str], list]:
    missing = []
    for p in points:
        if not p.figure.curve:
            missing.append(p.series)
            continue
        xs, ys = zip(*sorted(p.figure.curve))
        style = styles[p.series]
        ax.step(xs, ys, where="post", color=style.color, linestyle=style.linestyle, linewidth=1.8, label=p.series, gid=SERIES, zorder=3)
    people_name = next((p.figure.people for p in points if p.figure.people), "")
    if people_name:
        thresholds = sorted(people.SOURCES[people_name]())
        xs = sorted(set(thresholds))
        share = [sum(t <= x for t in thresholds) / len(thresholds) for x in xs]
        ax.step(xs, share, where="post", color=PEOPLE_COLOUR, linestyle="-", linewidth=2.2, label=f"people (n = {len(thresholds)})", gid=PEOPLE, zorder=2)
    if not missing:
        return missing, []
    low, high = ax.get_xlim()
    text = _wrap("; ".join(missing) + ": no valid strategy", _characters(_panel_pixels(ax), SMALL))
    return missing, [((low + high) / 2, text, MISSING_COLOUR)]


#: Rows of one panel of the comparison figure; the others are in the report's table.
COMPARISON_ROWS = 30
#: The comparison's two runs, and the new value where it dropped: colour, marker, and the old run's
#: open marker.
COMPARED = {"old": ("#7f7f7f", "o"), "new": ("C0", "s"), "new, dropped": ("C3", "D")}


def draw_comparison(cells: Sequence[dict], *, keep: bool = False) -> Drawn:
    """Old and new of each cell with a verdict (and of each cell that dropped), with their
    intervals, a panel per behaviour and unit; a DROP is marked in the margin beside its row."""
    with _style():
        return _draw_comparison(cells, keep)


def _draw_comparison(cells: Sequence[dict], keep: bool) -> Drawn:
    title = "Comparison with the saved run: old and new per cell [95% CI]"
    # What the gate judged, and what changed: a whole suite's every cell with a verdict was a figure
    # 8,000 pixels tall that showed mostly nothing happening.
    shown = [c for c in cells if (c.get("gated") or c.get("dropped") or _changed(c)) and (c.get("old") is not None or c.get("new") is not None)]
    if not shown:
        return Drawn("", title, None, f"{title}: no cell was gated or changed; every cell is in the table above")
    panels: dict[tuple[str, str], list[dict]] = {}
    for c in shown:
        panels.setdefault((c["behaviour"], c.get("unit") or ""), []).append(c)
    panels = {key: sorted(rows, key=lambda c: not c.get("dropped"))[:COMPARISON_ROWS] for key, rows in panels.items()}
    names = {key: [_cell_name(c["cell"]) for c in rows] for key, rows in panels.items()}
    heights = [max(2, len(rows)) * (0.42 if any("\n" in n for n in names[key]) else 0.28) for key, rows in panels.items()]
    fig, axes = _new_figure((COLUMN_WIDTH, 1.2 + sum(heights) + 0.6 * len(panels)), len(panels), 1, height_ratios=heights)
    fig.get_layout_engine().set(w_pad=0.08, h_pad=0.08, hspace=0.04)
    for ax, ((behaviour, unit), rows) in zip(axes[:, 0], panels.items()):
        for y, c in enumerate(rows):
            for which, shift in (("old", -0.17), ("new", 0.17)):
                value = c.get(which)
                if value is None:
                    continue
                key = "new, dropped" if which == "new" and c.get("dropped") else which
                colour, marker = COMPARED[key]
                low, high = (value if v is None else v for v in c.get(f"{which}_ci") or (None, None))
                ax.errorbar([value], [y + shift], xerr=[[max(0.0, value - low)], [max(0.0, high - value)]], fmt=marker,
                            color=colour, markersize=5, capsize=3, elinewidth=1.4, label=key, zorder=3,
                            markerfacecolor="white" if which == "old" else colour)  # fmt: skip
            if c.get("dropped"):
                ax.annotate("DROP", (1.0, y), xytext=(6, 0), textcoords="offset points", xycoords=("axes fraction", "data"),
                            color="C3", fontsize=SMALL, fontweight="bold", va="center", ha="left", annotation_clip=False)  # fmt: skip
        ax.set_yticks(range(len(rows)), names[(behaviour, unit)])
        ax.set_ylim(len(rows) - 0.5, -0.5)
        ax.set_title(f"{behaviour}" + (f" ({unit})" if unit else ""), loc="left")
        ax.grid(axis="x", alpha=0.3)
    entries: dict[str, Any] = {}
    for ax in axes[:, 0]:
        for handle, label in zip(*ax.get_legend_handles_labels()):
            entries.setdefault(label, handle)
    order = [k for k in COMPARED if k in entries]
    fig.legend([entries[k] for k in order], order, loc="outside lower center", ncols=len(order), frameon=False)
    fig.suptitle(title)
    png = _png(fig)
    dropped = sum(bool(c.get("dropped")) for c in cells)
    gated = sum(bool(c.get("gated")) for c in shown)
    caption = f"{title}: {gated} cell{'s' if gated != 1 else ''} gated on, {len(shown) - gated} other{'s' if len(shown) - gated != 1 else ''} that changed; {dropped} DROP"
    return Drawn("", title, png, caption, figure=fig if keep else None)


def _changed(cell: dict) -> bool:
    """A cell whose verdict changed, or that changed significantly (Holm), as the comparison's table shows it."""
    verdicts = cell.get("old_verdict"), cell.get("new_verdict")
    return (all(verdicts) and verdicts[0] != verdicts[1]) or (cell.get("p_holm") is not None and cell["p_holm"] < 0.05)


def _cell_name(cell: str, width: int = 64) -> str:
    """A cell's name on at most two lines: its test without "test_", its generation without the word."""
    lines = textwrap.wrap(cell.removeprefix("test_").replace("generation ", ""), width)
    return "\n".join(lines[:2]) + ("..." if len(lines) > 2 else "")
