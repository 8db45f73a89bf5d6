"""A run log the schema accepts whose values the report could not draw or read (an interval of
±1e308, a malformed ``adjusted``): refused on reading, in one line naming the field, by the report
command and by the comparison alike; the same run log with sane values still makes its report."""

import copy
import json

import pytest
from conftest import gaamas_command

from pytest_gaamas import compare, figures, runlog
from pytest_gaamas.errors import UnreadableFile
from pytest_gaamas.report import Score


def _score(index: int, figure: figures.Figure) -> dict:
    return Score(
        behaviour="b", test_id=f"behaviours/test_b.py::test_b[openai-m-{index}]", model="openai:m", variant={"generation": "actions", "x": index},
        metric="rate", score=0.5, ci=(0.4, 0.6), n=4, invalid=0, passed=True, criterion="lower bound >= 0.3", table="T", columns=(str(index),),
        cells={str(index): "0.50 [0.40, 0.60]"}, kind="rate", sample=(0.0, 1.0, 0.0, 1.0), unit="rate", figures=(figure,),
        adjusted={"family": 3, "ci": [0.3, 0.7], "confidence": 0.983, "chance": 0.5, "chance_margin": 0.1, "chance_ci": [0.35, 0.65]},
    ).to_json()  # fmt: skip


#: A score drawn each way the report draws one.
RUN_LOG = {
    "format": runlog.FORMAT, "run": {"models": [{"model": "openai:m"}]},
    "scores": [_score(0, figures.Figure(title="F", kind=figures.INTERVAL, axis="rate", x="a", limits=figures.RATE)),
               _score(1, figures.Figure(title="G", kind=figures.LINE, axis="rate", x=1.0, limits=figures.RATE)),
               _score(2, figures.Figure(title="H", kind=figures.VIOLIN, axis="rate", x="a"))],
}  # fmt: skip

#: Values the schema takes (a number, an object) that the report could not draw or read, and the field each names.
UNDRAWABLE = {
    "scores[0].ci[0]": lambda s: s[0].update(ci=[-1e308, 1e308]),
    "scores[1].ci[1]": lambda s: s[1].update(ci=[0.4, 1e308]),
    "scores[1].score": lambda s: s[1].update(score=-1e308),
    "scores[2].sample[1]": lambda s: s[2].update(sample=[0.0, 1e308, 0.0, 1.0]),
    "scores[0].adjusted.family": lambda s: s[0]["adjusted"].update(family="x"),
    "scores[0].adjusted.confidence": lambda s: s[0]["adjusted"].update(confidence="99%"),
    "scores[1].adjusted.chance": lambda s: s[1]["adjusted"].update(chance=[0.5]),
    "scores[1].adjusted.chance_ci": lambda s: s[1]["adjusted"].update(chance_ci=[0.1]),
    "scores[2].adjusted": lambda s: s[2].update(adjusted=["family", 3]),
}


def test_the_run_log_of_sane_values_makes_its_report(tmp_path):
    path = tmp_path / "run.json"
    path.write_text(json.dumps(RUN_LOG))
    code, _, errors = gaamas_command("report", str(path), "-o", str(tmp_path / "report.html"))
    assert code == 0, errors


@pytest.mark.parametrize("field", UNDRAWABLE)
def test_a_run_log_the_report_cannot_draw_or_read_is_refused_in_one_line_naming_the_field(tmp_path, field):
    document = copy.deepcopy(RUN_LOG)
    UNDRAWABLE[field](document["scores"])
    path = tmp_path / "run.json"
    path.write_text(json.dumps(document))
    code, _, said = gaamas_command("report", str(path), "-o", str(tmp_path / "report.html"))
    assert code == 2 and said.count("\n") == 1, said
    assert said.startswith(f"gaamas: {path}: a damaged run log ({field} is ") and "write it again with" in said, said
    with pytest.raises(compare.CompareError, match=field.replace("[", r"\[").replace("]", r"\]")):
        compare.load_run(str(path), tmp_path)


def test_a_live_sessions_record_is_checked_as_a_saved_one():
    document = copy.deepcopy(RUN_LOG)
    UNDRAWABLE["scores[0].ci[0]"](document["scores"])
    with pytest.raises(UnreadableFile, match=r"scores\[0\]\.ci\[0\] is -1e\+308, where a number within ±1e\+12 belongs"):
        runlog.record(document)
