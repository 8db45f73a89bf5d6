"""A figure's arguments are checked where a behaviour declares it: one error naming the argument and
what it takes, at the behaviour's own line, never a report that cannot be drawn at the session's end."""

import numpy as np
import pytest

from pytest_gaamas.figures import CURVE, INTERVAL, LINE, RATE, VIOLIN, Figure, FigureError
from pytest_gaamas.people import SOURCES

#: An argument given wrong -> the words the error must say (the argument's name and what it takes).
WRONG = {
    "a kind no figure has": ({"kind": "bars"}, "kind is one of 'violin', 'interval', 'line', 'curve'"),
    "no title": ({"title": " "}, "title is needed"),
    "no axis": ({"axis": ""}, "axis is needed"),
    "an axis that is no text": ({"axis": 1.0}, "axis is text, got float"),
    "a category on a line": ({"kind": LINE, "x": "round 3"}, "x is a number for a 'line' figure"),
    "a line with no x": ({"kind": LINE}, "x is a number for a 'line' figure"),
    "an x that cannot be drawn": ({"x": float("nan")}, "x is a category (text) or a number"),
    "references as pairs": ({"references": [("rational", 1.0)]}, "references map labels (text) to numbers"),
    "a reference that is no number": ({"references": {"rational": "1"}}, "references map labels (text) to numbers"),
    "limits upside down": ({"limits": (1.0, 0.0)}, "limits are (low, high)"),
    "one limit": ({"limits": (0.0,)}, "limits are (low, high)"),
    "a curve on an interval": ({"curve": ((10, 1),)}, "curve is drawn by a 'curve' figure only"),
    "a curve of triples": ({"kind": CURVE, "curve": ((10, 1, 2),)}, "curve is (x, y) pairs"),
    "people on an interval": ({"people": "MobLab dictators: $ kept of $100"}, "people is drawn by a 'violin' or 'curve' figure only"),
    "people no source holds": ({"kind": VIOLIN, "people": "MobLab dictator"}, "people names one of pytest_gaamas.people.SOURCES"),
}  # fmt: skip


def declared(**changes) -> Figure:
    return Figure(**{"title": "Dictator", "kind": INTERVAL, "axis": "$ kept of $100", "x": "assistant"} | changes)


@pytest.mark.parametrize("case", list(WRONG))
def test_a_wrong_argument_is_one_error_naming_it(case):
    changes, said = WRONG[case]
    with pytest.raises(FigureError) as error:
        declared(**changes)
    message = str(error.value)
    assert said in message and message.startswith("Figure(") and "\n" not in message


def test_an_unknown_people_source_lists_the_known_ones():
    with pytest.raises(FigureError) as error:
        declared(kind=VIOLIN, people="people")
    assert all(repr(name) in str(error.value) for name in SOURCES)


def test_every_kind_declared_as_the_shipped_behaviours_do_is_accepted():
    people = next(iter(SOURCES))
    figures = [
        declared(kind=VIOLIN, people=people, limits=(0, 100), references={"half": 50}),
        declared(kind=INTERVAL, limits=RATE, references={"rational": 1.0, "people (Kneeland 2015)": 0.9}),
        declared(kind=LINE, x=3, x_axis="round", series="2 messages"),
        declared(kind=CURVE, x="", curve=((0, 0), (50, 1)), people=people),
        declared(kind=CURVE, x="", curve=()),  # a strategy that could not play draws no curve
    ]
    assert [Figure.from_json(f.to_json()) for f in figures] == figures


def test_numpy_numbers_are_the_numbers_they_mean():
    figure = declared(kind=LINE, x=np.int64(3), references={"rational": np.float32(0.5)}, limits=(np.float64(0), np.int32(1)))
    assert figure.x == 3 and type(figure.x) is int
    assert figure.references == {"rational": 0.5} and type(figure.references["rational"]) is float
    assert figure.limits == (0.0, 1) and Figure.from_json(figure.to_json()) == figure


def test_a_behaviour_that_declares_a_wrong_figure_fails_at_its_own_line(pytester):
    """The item fails with the one line, pointing at the behaviour's own line; the session draws its
    report and exits as for any failed item."""
    pytester.makepyfile(test_wrong_figure="""
        from pytest_gaamas import stats, verdicts
        from pytest_gaamas.figures import LINE, Figure

        def test_wrong_figure(gaamas):
            rate = stats.wilson(3, 4)
            figure = Figure(title="Rounds", kind=LINE, axis="rate", x="round 1")  # the author's line
            gaamas.score(table="T", metric="rate", estimate=rate, invalid=0, verdict=verdicts.at_least(rate, 0.1, chance=0.5),
                         criterion="x", columns=("r",), cells={"r": "x"}, figures=(figure,))
        """)
    report = pytester.path / "report.html"
    result = pytester.runpytest("--gaamas-model=reference:rational", "-p", "no:cacheprovider", f"--gaamas-report={report}")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines([
        '>*figure = Figure(title="Rounds", kind=LINE, axis="rate", x="round 1")  # the author\'s line',
        "E*FigureError: Figure('Rounds'): x is a number for a 'line' figure (a round, a temperature)*, got 'round 1'",
    ])  # fmt: skip
    said = result.stdout.str()
    assert "figures.py" not in said and "damaged" not in said and "INTERNALERROR" not in said
