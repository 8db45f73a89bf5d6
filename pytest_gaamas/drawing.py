"""The figures of a run, drawn with matplotlib from the figures its scores declare (``figures``).

Every score that names a figure title is drawn in that figure: a panel per ``panel``, a series per
model (with its generation where the figure has several), the reference values and people's data
beside them. A figure none of whose scores holds a valid observation is not drawn: its caption says
so instead. PNG, at a resolution that keeps the whole suite's report light.
"""

from __future__ import annotations

import io
import math
from collections.abc import Sequence
from dataclasses import dataclass, field

from . import people
from .figures import CURVE, INTERVAL, LINE, VIOLIN, Figure
from .report import Score, generation_rank

DPI = 90
PANEL_SIZE = (4.8, 3.3)
MAX_COLUMNS = 3
PEOPLE_COLOUR = "0.45"
REFERENCE_STYLES = ("--", ":", "-.", (0, (5, 1, 1, 1)))
MODEL_LINES = ("-", (0, (4, 2)), (0, (1, 1.5)), (0, (6, 2, 1, 2)))
MODEL_MARKERS = ("o", "s", "^", "D")


@dataclass
class Drawn:
    """One figure of the report: its PNG, or None with the reason when there was nothing to draw."""

    behaviour: str
    title: str
    png: bytes | None
    caption: str
    notes: list[str] = field(default_factory=list)


@dataclass
class _Point:
    figure: Figure
    score: Score
    series: str
    #: What the series' colour stands for: its variant (the model's when it has none).
    variant: str


@dataclass(frozen=True)
class _Style:
    """A series' colour (its variant) and line style (its model): eight variants of three models
    stay apart where ten colours could not."""

    color: str
    linestyle: str
    marker: str


def _pyplot():
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    # "$100" is dollars here, not mathematics
    plt.rcParams.update({"font.size": 8, "axes.titlesize": 9, "legend.fontsize": 7, "text.parse_math": False})
    return plt


def draw_run(scores: Sequence[Score], model_order: Sequence[str] = ()) -> list[Drawn]:
    """Every figure the scores declare, in the order the behaviours first declare them."""
    groups: dict[tuple[str, str], list[tuple[Figure, Score]]] = {}
    for score in sorted(scores, key=lambda s: (s.behaviour, s.test_id)):
        for figure in score.figures:
            groups.setdefault((score.behaviour, figure.title), []).append((figure, score))
    return [_draw(behaviour, title, members, model_order) for (behaviour, title), members in groups.items()]


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


def _draw(behaviour: str, title: str, members: Sequence[tuple[Figure, Score]], model_order: Sequence[str]) -> Drawn:
    points = _series_names(members, model_order)
    kind = points[0].figure.kind
    notes = sorted({p.figure.note for p in points if p.figure.note})
    valid = [p for p in points if (p.figure.curve if kind == CURVE else p.score.score is not None) or p.figure.people]
    if not valid:
        models = ", ".join(dict.fromkeys(p.score.model for p in points))
        invalid = sum(p.score.invalid for p in points)
        caption = f"{title}: nothing to draw: no valid answer from {models} in any cell ({invalid} invalid)"
        return Drawn(behaviour, title, None, caption, notes)
    plt = _pyplot()
    panels = list(dict.fromkeys(p.figure.panel for p in points))
    columns = min(MAX_COLUMNS, len(panels))
    rows = math.ceil(len(panels) / columns)
    fig, axes = plt.subplots(rows, columns, figsize=(PANEL_SIZE[0] * columns, PANEL_SIZE[1] * rows), squeeze=False)
    variants = list(dict.fromkeys(p.variant for p in points))
    models = list(dict.fromkeys(p.score.model for p in points))
    colours = {p.series: _Style(f"C{variants.index(p.variant) % 10}", MODEL_LINES[models.index(p.score.model) % len(MODEL_LINES)],
                                MODEL_MARKERS[models.index(p.score.model) % len(MODEL_MARKERS)]) for p in points}  # fmt: skip
    draw = {VIOLIN: _violins, INTERVAL: _intervals, LINE: _lines, CURVE: _curves}[kind]
    missing: list[str] = []
    for index, panel in enumerate(panels):
        ax = axes[index // columns][index % columns]
        in_panel = [p for p in points if p.figure.panel == panel]
        missing += draw(ax, in_panel, colours)
        ax.set_title(panel or title if len(panels) > 1 else "")
        ax.set_ylabel(in_panel[0].figure.axis)
        ax.set_xlabel(in_panel[0].figure.x_axis)
        if in_panel[0].figure.limits:
            low, high = in_panel[0].figure.limits
            pad = (high - low) * 0.05
            ax.set_ylim(low - pad, high + pad)
        ax.grid(axis="y", alpha=0.3)
    for index in range(len(panels), rows * columns):
        axes[index // columns][index % columns].set_visible(False)
    legend: dict[str, object] = {}
    for ax in axes.flat:
        for handle, label in zip(*ax.get_legend_handles_labels()):
            legend.setdefault(label, handle)
    legend_columns = max(1, min(len(legend), int(fig.get_figwidth() // 2.8)))
    legend_rows = math.ceil(len(legend) / legend_columns)
    fig.legend(legend.values(), legend.keys(), loc="lower center", ncol=legend_columns, frameon=False)
    fig.suptitle(title, fontsize=10)
    legend_inches = 0.19 * legend_rows
    fig.set_figheight(fig.get_figheight() + legend_inches)  # the panels keep their size, however long the legend
    _margins(fig, bottom_inches=0.45 + legend_inches)
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=DPI, metadata={"Software": None})
    plt.close(fig)
    caption = title
    if missing:
        caption += "; no valid answer, so nothing drawn, for: " + "; ".join(dict.fromkeys(missing))
    return Drawn(behaviour, title, buffer.getvalue(), caption, notes)


def _margins(fig, *, bottom_inches: float, left_inches: float = 0.65) -> None:
    """Margins fixed in inches: matplotlib's tight layout measures every label and cost most of a
    report's build time, for panels whose sizes are known in advance."""
    width, height = fig.get_figwidth(), fig.get_figheight()
    fig.subplots_adjust(left=left_inches / width, right=1 - 0.15 / width, top=1 - 0.55 / height,
                        bottom=(bottom_inches + 0.35) / height, wspace=0.3, hspace=0.75)  # fmt: skip


def _category_ticks(ax, categories: Sequence[str]) -> None:
    """Category names under the axis, slanted where side by side they would run into each other."""
    ax.set_xticks(range(len(categories)), categories, rotation=20 if sum(map(len, categories)) > 40 else 0)


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


def _references(ax, points: Sequence[_Point]) -> None:
    seen: dict[str, float] = {}
    for p in points:
        for label, value in p.figure.references.items():
            seen.setdefault(label, value)
    for i, (label, value) in enumerate(seen.items()):
        ax.axhline(value, color="0.3", linestyle=REFERENCE_STYLES[i % len(REFERENCE_STYLES)], linewidth=1, label=label)


def _violins(ax, points: Sequence[_Point], colours) -> list[str]:
    categories = _categories(points)
    series = list(dict.fromkeys(p.series for p in points))
    people_name = next((p.figure.people for p in points if p.figure.people), "")
    slots = len(series) + (1 if people_name else 0)
    offsets = _offsets(slots)
    missing, labelled = [], set()
    for c, category in enumerate(categories):
        for s, name in enumerate(series):
            at = [p for p in points if p.series == name and str(p.figure.x) == category]
            if not at:
                continue
            sample = [v for v in at[0].score.sample if not math.isnan(v)]
            x = c + offsets[s]
            if not sample:
                ax.text(x, 0.5, "no valid\nanswer", transform=ax.get_xaxis_transform(), ha="center", va="center", fontsize=6, color="0.4")
                missing.append(f"{name} at {category}")
                continue
            _violin(ax, x, sample, colours[name].color, 0.8 / slots, name if name not in labelled else None)
            labelled.add(name)
        if people_name:
            values = people.SOURCES[people_name]()
            _violin(ax, c + offsets[-1], values, PEOPLE_COLOUR, 0.8 / slots, "people" if "people" not in labelled else None, points=False)
            labelled.add("people")
    _category_ticks(ax, categories)
    ax.set_xlim(-0.5, len(categories) - 0.5)
    _references(ax, points)
    return missing


def _violin(ax, x: float, values: Sequence[float], colour: str, width: float, label: str | None, points: bool = True) -> None:
    if len(set(values)) > 1:
        body = ax.violinplot([values], positions=[x], widths=width, showextrema=False)["bodies"][0]
        body.set_facecolor(colour)
        body.set_alpha(0.35)
    middle = sorted(values)[len(values) // 2]
    ax.plot([x - width / 3, x + width / 3], [middle, middle], color=colour, linewidth=2, label=label)
    if points:
        spread = [x + width * 0.25 * math.sin(i * 2.399) for i in range(len(values))]  # a stable jitter
        ax.scatter(spread, values, s=6, color=colour, alpha=0.7, linewidths=0)


def _intervals(ax, points: Sequence[_Point], colours) -> list[str]:
    categories = _categories(points)
    series = list(dict.fromkeys(p.series for p in points))
    offsets = _offsets(len(series))
    missing = []
    for s, name in enumerate(series):
        xs, ys, lows, highs = [], [], [], []
        for p in (p for p in points if p.series == name):
            x = categories.index(str(p.figure.x)) + offsets[s]
            if p.score.score is None:
                ax.text(x, 0.5, "no valid\nanswer", transform=ax.get_xaxis_transform(), ha="center", va="center", fontsize=6, color="0.4")
                missing.append(f"{name} at {p.figure.x}")
                continue
            low, high = (p.score.score if v is None else v for v in p.score.ci)
            xs.append(x), ys.append(p.score.score)
            lows.append(max(0.0, p.score.score - low)), highs.append(max(0.0, high - p.score.score))
        if xs:
            ax.errorbar(xs, ys, yerr=[lows, highs], fmt=colours[name].marker, color=colours[name].color, markersize=4, capsize=3, label=name)
    _category_ticks(ax, categories)
    ax.set_xlim(-0.5, len(categories) - 0.5)
    _references(ax, points)
    return missing


def _lines(ax, points: Sequence[_Point], colours) -> list[str]:
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
        style = colours[name]
        ax.plot(xs, ys, marker=style.marker, markersize=3, color=style.color, linestyle=style.linestyle, label=name)
        ax.fill_between(xs, lows, highs, color=style.color, alpha=0.12, linewidth=0)
    curves: dict[str, dict[float, float]] = {}
    for p in points:
        for label, value in p.figure.references.items():
            curves.setdefault(label, {})[float(p.figure.x)] = value
    for i, (label, curve) in enumerate(curves.items()):
        xs = sorted(curve)
        ax.plot(xs, [curve[x] for x in xs], color="0.3", linestyle=REFERENCE_STYLES[i % len(REFERENCE_STYLES)], linewidth=1, label=label)
    return missing


def _curves(ax, points: Sequence[_Point], colours) -> list[str]:
    missing = []
    for p in points:
        if not p.figure.curve:
            missing.append(p.series)
            ax.text(0.5, 0.5, f"{p.series}:\nno valid strategy", transform=ax.transAxes, ha="center", va="center", fontsize=7, color="0.4")
            continue
        xs, ys = zip(*sorted(p.figure.curve))
        ax.step(xs, ys, where="post", color=colours[p.series].color, linestyle=colours[p.series].linestyle, label=p.series)
    people_name = next((p.figure.people for p in points if p.figure.people), "")
    if people_name:
        thresholds = sorted(people.SOURCES[people_name]())
        xs = sorted(set(thresholds))
        share = [sum(t <= x for t in thresholds) / len(thresholds) for x in xs]
        ax.step(xs, share, where="post", color=PEOPLE_COLOUR, linestyle="--", label=f"people (n = {len(thresholds)})")
    return missing


#: Rows of one panel of the comparison figure; the others are in the report's table.
COMPARISON_ROWS = 30


def draw_comparison(cells: Sequence[dict]) -> Drawn:
    """Old and new of each cell with a verdict (and of each cell that dropped), with their
    intervals, a panel per behaviour and unit; a DROP is marked."""
    title = "Comparison with the saved run: old and new per cell [95% CI]"
    shown = [c for c in cells if (c.get("headline") or c.get("dropped")) and (c.get("old") is not None or c.get("new") is not None)]
    if not shown:
        return Drawn("", title, None, f"{title}: no cell with a verdict has a value in either run")
    panels: dict[tuple[str, str], list[dict]] = {}
    for c in shown:
        panels.setdefault((c["behaviour"], c.get("unit") or ""), []).append(c)
    panels = {key: sorted(rows, key=lambda c: not c.get("dropped"))[:COMPARISON_ROWS] for key, rows in panels.items()}
    plt = _pyplot()
    heights = [max(2, len(rows)) for rows in panels.values()]
    fig, axes = plt.subplots(len(panels), 1, figsize=(9, 0.9 + 0.22 * sum(heights) + 0.5 * len(panels)),
                             gridspec_kw={"height_ratios": heights}, squeeze=False)  # fmt: skip
    for ax, ((behaviour, unit), rows) in zip(axes[:, 0], panels.items()):
        for y, c in enumerate(rows):
            for which, colour, shift in (("old", "0.55", 0.15), ("new", "C0", -0.15)):
                value = c.get(which)
                if value is None:
                    continue
                low, high = (value if v is None else v for v in c.get(f"{which}_ci") or (None, None))
                ax.errorbar([value], [y + shift], xerr=[[max(0.0, value - low)], [max(0.0, high - value)]], fmt="o",
                            color="C3" if which == "new" and c.get("dropped") else colour, markersize=3, capsize=2,
                            label=which if y == 0 else None)  # fmt: skip
            if c.get("dropped"):
                ax.annotate("DROP", (1.0, y), xycoords=("axes fraction", "data"), color="C3", fontsize=7, fontweight="bold", va="center")
        ax.set_yticks(range(len(rows)), [c["cell"][:60] for c in rows], fontsize=6)
        ax.invert_yaxis()
        ax.set_title(f"{behaviour}" + (f" ({unit})" if unit else ""), fontsize=8, loc="left")
        ax.grid(axis="x", alpha=0.3)
    axes[0, 0].legend(loc="lower right", fontsize=7, frameon=False)
    fig.suptitle(title, fontsize=10)
    _margins(fig, bottom_inches=0.0, left_inches=2.6)
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=DPI, metadata={"Software": None})
    plt.close(fig)
    dropped = sum(bool(c.get("dropped")) for c in cells)
    return Drawn("", title, buffer.getvalue(), f"{title}: {len(shown)} cells with a verdict; {dropped} DROP")
