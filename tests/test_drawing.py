"""The report's figures as a reader sees them in the report's column: legible at the size shown,
nothing drawn over anything, every series told apart, and notes that say only what is drawn."""


import pytest
from matplotlib.colors import to_hex
from matplotlib.container import Container
from matplotlib.lines import Line2D
from matplotlib.text import Text

from pytest_gaamas import drawing, report_html
from pytest_gaamas.figures import CURVE, INTERVAL, LINE, VIOLIN, Figure
from pytest_gaamas.report import Score

#: The widest image the report's column (1,200 px, less the figure's frame, and some room) shows at
#: its own size, and the narrowest a figure may be drawn.
COLUMN_PIXELS = 1134
NARROWEST = 700
#: The smallest text, in pixels at the size shown.
SMALLEST_TEXT_PIXELS = 12.0


def score(model="m", value=0.5, sample=(), figure=None, generation="actions", test_id="t", invalid=0) -> Score:
    return Score(
        behaviour="b", test_id=test_id, model=model, variant={"generation": generation}, metric="x", score=value,
        ci=(None, None) if value is None else (value - 0.1, value + 0.1), n=30, invalid=invalid, passed=None,
        criterion="", table="T", columns=("A", "B", "C"), cells={}, sample=tuple(sample), figures=(figure,) if figure else (),
    )  # fmt: skip


def tick_labels(fig) -> tuple[set, set]:
    """Every tick label the figure holds, and those of ticks within their axis's view, which are drawn."""
    every, drawn = set(), set()
    for ax in fig.axes:
        for axis in (ax.xaxis, ax.yaxis):
            low, high = sorted(axis.get_view_interval())
            for tick in axis.get_major_ticks():
                every |= {tick.label1, tick.label2}
                if tick.get_loc() is not None and low - 1e-9 <= tick.get_loc() <= high + 1e-9:
                    drawn |= {tick.label1, tick.label2}
    return every, drawn


def texts(fig) -> list[Text]:
    """Every piece of text the figure shows."""
    every, drawn = tick_labels(fig)
    return [t for t in fig.findobj(Text) if t.get_visible() and t.get_text().strip() and (t not in every or t in drawn)
            and (t.axes is None or t.axes.get_visible())]  # fmt: skip


def _overlap(a, b, slack: float = 1.0) -> bool:
    return a.x0 + slack < b.x1 and b.x0 + slack < a.x1 and a.y0 + slack < b.y1 and b.y0 + slack < a.y1


def data_artists(ax) -> list:
    """What a panel draws from the data and the reference values: lines, bodies, points, bands, bars."""
    found = [line for line in ax.lines if len(line.get_xdata()) and line.get_visible()]
    found += [c for c in ax.collections if c.get_visible()]
    return found + [p for p in ax.patches if p.get_visible()]


def style_of(handle) -> tuple:
    """What tells a legend entry apart: its colour, its line's dash pattern and its marker."""
    line = handle[0] if isinstance(handle, Container) else handle  # an error bar's: its markers' line
    if not isinstance(line, Line2D):
        return to_hex(line.get_facecolor()[0]), None, None
    shown = line.get_linestyle() not in ("None", "none", " ", "")
    return to_hex(line.get_color()), line._unscaled_dash_pattern if shown else None, line.get_marker()


def problems(drawn: drawing.Drawn) -> list[str]:
    """What a reader of the report would trip on in ``drawn`` (kept open by ``draw_run(keep=True)``)."""
    fig, found = drawn.figure, []
    if fig is None:
        return found
    width, height = report_html._png_size(drawn.png)
    if not NARROWEST <= width <= COLUMN_PIXELS:
        found.append(f"{width} px wide: shown at another size than drawn, or too small")
    renderer = fig.canvas.get_renderer()
    scale = fig.dpi / 72
    shown = texts(fig)
    every_tick_label = tick_labels(fig)[0]
    boxes = {t: t.get_window_extent(renderer) for t in shown}
    for t in shown:
        if t.get_fontsize() * scale < SMALLEST_TEXT_PIXELS:
            found.append(f"text {t.get_text()!r} is {t.get_fontsize() * scale:.1f} px")
        box = boxes[t]
        if box.x0 < -1 or box.y0 < -1 or box.x1 > width + 1 or box.y1 > height + 1:
            found.append(f"text {t.get_text()!r} runs off the figure")
    for i, a in enumerate(shown):
        for b in shown[i + 1:]:
            rotated = a.get_rotation() and b.get_rotation() and a in every_tick_label and b in every_tick_label
            if not rotated and _overlap(boxes[a], boxes[b]):
                found.append(f"text {a.get_text()!r} over text {b.get_text()!r}")
    legends = [legend for legend in (*fig.legends, *(ax.get_legend() for ax in fig.axes)) if legend]
    panels = [ax for ax in fig.axes if ax.get_visible()]
    for legend in legends:
        box = legend.get_window_extent(renderer)
        for ax in panels:
            if _overlap(box, ax.get_tightbbox(renderer)):
                found.append(f"the legend is over the panel {ax.get_title()!r}")
        drawn_as = {label: handle for ax in fig.axes for handle, label in zip(*ax.get_legend_handles_labels())}
        seen = {}
        for label in (t.get_text() for t in legend.get_texts()):
            key = style_of(drawn_as[label])
            if key in seen:
                found.append(f"{label!r} and {seen[key]!r} share a colour, a line and a marker: {key}")
            seen[key] = label
    for ax in panels:
        for text in ax.texts:
            for artist in data_artists(ax):
                if _overlap(boxes[text], artist.get_window_extent(renderer), slack=0):
                    found.append(f"{text.get_text()!r} over {artist.get_label() or type(artist).__name__} in {ax.get_title()!r}")
    drawn_people = any(a.get_gid() == drawing.PEOPLE for ax in panels for a in (*ax.lines, *ax.collections))
    if not drawn_people and any("people:" in note for note in drawn.notes):
        found.append(f"a note speaks of people's data, none drawn: {drawn.notes}")
    return found


def checked(drawn_figures: list[drawing.Drawn]) -> list[str]:
    """``problems`` of each figure, named."""
    return [f"{drawn.title}: {p}" for drawn in drawn_figures for p in problems(drawn)]


# -- the checks themselves can fail --------------------------------------------------------------------


def test_the_checks_catch_small_text_text_over_a_line_and_two_series_drawn_alike():
    """A figure drawn as the report drew them before: 432 px wide, 7 pt text at 90 dpi, "no valid
    answer" across the $50 line, and two series in one black dashed line."""
    fig, axes = drawing._new_figure((4.8, 3.3), 1, 1)
    fig.set_dpi(90)
    ax = axes[0][0]
    ax.axhline(50, color="0.3", linestyle="--", label="equal split")
    ax.plot([0, 1], [20, 30], color="0.3", linestyle="--", label="people")
    ax.text(0.5, 50, "no valid\nanswer", ha="center", va="center", fontsize=6)
    ax.set_xlim(0, 1), ax.set_ylim(0, 100)
    fig.legend(fontsize=7)
    fig.canvas.draw()
    png = drawing._png(fig)
    found = problems(drawing.Drawn("b", "old", png, "old", ["people: MobLab"], fig))
    said = "\n".join(found)
    assert "432 px wide" in said and "is 7.5 px" in said
    assert "'no valid\\nanswer' over equal split" in said
    assert "'people' and 'equal split' share a colour, a line and a marker" in said
    assert "a note speaks of people's data, none drawn" in said


# -- figures made to be hard ---------------------------------------------------------------------------


def violin(x):
    return Figure("Dictator", VIOLIN, "$ kept of $100", x=x, limits=(0.0, 100.0), people="MobLab dictators: $ kept of $100",
                  references={"self-interest ($100)": 100, "equal split ($50)": 50}, note="people: MobLab (verified)")


HARD = {
    "a violin with a cell of no valid answer, people and two reference lines": [
        score(value=50, sample=[0, 0, 10, 50, 50, 90, 100], figure=violin("A")),
        score(model="n", value=None, test_id="u", figure=violin("A")),
        score(model="n", value=50, sample=[50, 50, 60], test_id="v", figure=violin("B")),
    ],
    "intervals with no valid answer beside a reference line at the bottom, in three panels": [
        score(model=m, value=None if (m, c) in (("m", "A"), ("n", "A"), ("o", "C")) else 0.4, test_id=f"{m}{c}{p}",
              figure=Figure("PD", INTERVAL, "cooperation rate [95% CI]", panel=f"version {p}", x=c, x_axis="prompt", limits=(0.0, 1.0),
                            references={"rational (defect)": 0.0, "people, low (0.3)": 0.3, "people, high (0.6)": 0.6},
                            note="people: Sally (1995), 0.30-0.60 (unverified)"))
        for m in "mno" for c in "ABC" for p in (1, 2, 3)
    ],
    "lines of three models and eight variants, reference and people curves": [
        score(model=f"model {m}", value=0.1 * v, test_id=f"{m}-{v}-{x}",
              figure=Figure("many", LINE, "rate [95% CI]", x=x, x_axis="round", series=f"variant {v}", limits=(0.0, 1.0),
                            references={"reference:rational": 1.0, "reference:random": 0.5, f"people, variant {v % 2}": 0.3 + 0.1 * (v % 2)}))
        for m in range(3) for v in range(10) for x in range(1, 4)
    ],
    "a strategy with no valid answer beside people's curve": [
        score(figure=Figure("curves", CURVE, "accepts (1) or rejects (0)", x_axis="offer", limits=(0.0, 1.0),
                            people="MobLab ultimatum responders: smallest offer accepted", note="people: MobLab (verified)")),
        score(model="n", test_id="u", figure=Figure("curves", CURVE, "accepts (1) or rejects (0)", x_axis="offer", limits=(0.0, 1.0),
                                                    curve=((0.0, 0.0), (40.0, 1.0), (100.0, 1.0)), people="MobLab ultimatum responders: smallest offer accepted")),
    ],
    "a long axis label, long categories and a note on people not drawn": [
        score(value=0.1 * i, test_id=f"t{i}", figure=Figure(
            "The commons: the omniscient script minus separate villagers", INTERVAL, "share of a game's acts: script - agents [95% CI]",
            x=name, x_axis="modules", references={"no difference": 0.0},
            note="the group's outcome is in the survival figure; people: over-appropriation (Ostrom 1992, unverified)"))
        for i, name in enumerate(["all modules", "light punishment", "no punishment", "no social learning", "no group decision", "neither"])
    ],
}


@pytest.mark.parametrize("case", HARD)
def test_a_hard_figure_is_legible_with_nothing_over_anything(case):
    drawn = drawing.draw_run(HARD[case], keep=True)
    assert drawn and all(d.png for d in drawn)
    assert checked(drawn) == []


def test_a_cell_with_no_valid_answer_is_said_under_the_data_not_over_it():
    (drawn,) = drawing.draw_run(HARD["a violin with a cell of no valid answer, people and two reference lines"], keep=True)
    (ax,) = [ax for ax in drawn.figure.axes if ax.get_visible()]
    (label,) = ax.texts
    assert label.get_text() == "n:\nno valid answer" and label.get_gid() == drawing.MISSING
    renderer = drawn.figure.canvas.get_renderer()
    lowest = min(a.get_window_extent(renderer).y0 for a in data_artists(ax))
    assert label.get_window_extent(renderer).y1 < lowest  # below every line, violin and point
    assert "n at A" in drawn.caption
    assert checked([drawn]) == []


def test_a_note_on_people_is_shown_only_where_people_were_drawn():
    note = "the group's outcome is in the survival figure; people: over-appropriation (Ostrom 1992, unverified)"
    drawn_people = Figure("with", VIOLIN, "x", x="A", people="MobLab dictators: $ kept of $100", note=note)
    without = Figure("without", VIOLIN, "x", x="A", note=note)
    with_people, without_people = drawing.draw_run([score(sample=[1, 2, 3], figure=drawn_people), score(sample=[1, 2, 3], figure=without, test_id="u")])
    assert with_people.notes == [note]
    assert without_people.notes == ["the group's outcome is in the survival figure"]
    nothing = drawing.draw_run([score(value=None, figure=Figure("none", INTERVAL, "x", x="A", references={"people (Kneeland 2015)": 0.9},
                                                                note="people: Kneeland (2015)"))])  # fmt: skip
    assert nothing[0].png is None and nothing[0].notes == []


def test_a_series_with_no_valid_answer_anywhere_takes_no_room_and_is_named():
    at = {x: Figure("rates", INTERVAL, "rate", x=x) for x in "AB"}
    drawn = drawing.draw_run([score(figure=at[x], test_id=f"t{x}") for x in "AB"] +
                             [score(value=None, generation="strategy", figure=at[x], test_id=f"u{x}") for x in "AB"], keep=True)  # fmt: skip
    assert drawn[0].caption == "rates; no valid answer, so nothing drawn, for: strategy (every cell)"
    ax = drawn[0].figure.axes[0]
    assert [bars.get_label() for bars in ax.containers] == ["actions"] and not ax.texts
    assert checked(drawn) == []


def test_the_comparison_is_legible_and_its_drops_are_told_from_the_new_values():
    cells = [{"behaviour": "ultimatum", "cell": f"a rather long cell name that goes on {i}", "models": "m", "old": 0.8,
              "new": 0.3 if i < 2 else 0.79, "old_ci": [0.7, 0.9], "new_ci": [0.2, 0.4] if i < 2 else [0.7, 0.88],
              "dropped": i < 2, "headline": True, "unit": "rate", "p_holm": 0.001} for i in range(6)]  # fmt: skip
    drawn = drawing.draw_comparison(cells, keep=True)
    assert [t.get_text() for t in drawn.figure.legends[0].get_texts()] == ["old", "new", "new, dropped"]
    assert sum(t.get_text() == "DROP" for t in drawn.figure.axes[0].texts) == 2
    assert checked([drawn]) == []


# Every figure of the replayed suite is checked as drawn for its report, in tests/test_report.py
# (test_a_saved_run_makes_the_same_report_later_with_every_figure_legible).
