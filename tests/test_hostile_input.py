"""Every parser is total: a reply, a strategy's code, a journal or a cassette of any size, depth or
content gives a decision, an invalid answer with its reason, or one line naming the file, and never
another exception. Fuzzed with hypothesis, and with the inputs that broke the parsers before."""

import copy
import gzip
import json
import math
import os
import string
import subprocess
import sys
import threading
import unicodedata
from pathlib import Path

import pytest
import yaml
from conftest import gaamas_command
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from pytest_gaamas import answers, compare, inert, runlog, safejson
from pytest_gaamas.errors import UnreadableFile
from pytest_gaamas.games import bos_agents, commons, dictator, portfolio, prisoners, repeated, ring
from pytest_gaamas.play import Answer, play_trial
from pytest_gaamas.strategy import extract_code

FAST = settings(max_examples=150, suppress_health_check=[HealthCheck.too_slow])

#: Inputs that made the parsers raise or take seconds before they were made total and linear.
KNOWN_BREAKERS = {
    "deep nesting": "[" * 1000,
    "deep object": '{"a":' * 1000 + "1" + "}" * 1000,
    "309-digit number": '{"dollars": ' + "9" * 309 + "}",
    "4,301-digit number": '{"dollars": ' + "9" * 4301 + "}",
    "1e400": '{"dollars": 1e400}',
    "NaN": '{"dollars": NaN}',
    "-Infinity": '{"dollars": -Infinity}',
    "conflicting duplicate keys": '{"dollars": 500, "my_share": 5}',
    "many open fences": "```\n" * 4000,
    "fence and spaces": "```" + " " * 30000,
    "fences with no newline": "```json" * 5000,
    "lone surrogate": '{"action": "\\ud800"}',
    "NUL bytes": "\x00" * 1000,
    "a 1 MB reply": "x" * (1 << 20),
}

JSON_SCALARS = st.one_of(
    st.none(), st.booleans(), st.integers(), st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=20)
)
JSON_VALUES = st.recursive(
    JSON_SCALARS, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)  # fmt: skip
FIELD_NAMES = st.sampled_from(
    ["dollars", "my_share", "option", "decision", "action", "reasoning", "prediction", "move", "message", "asset_a", "asset_b", "code"]
)
LIKELY_VALUES = st.one_of(
    JSON_VALUES,
    st.sampled_from(["accept", "Reject", " Cooperate ", "Rock", "Paper", "Head", "A", "B", "X", "Y", "Foo", "Bar", ""]),
    st.integers(-(10**40), 10**40),
)
ANSWER_OBJECTS = st.dictionaries(FIELD_NAMES, LIKELY_VALUES, max_size=4)


def _render(obj) -> str:
    return json.dumps(obj, allow_nan=True)


REPLIES = st.one_of(
    st.text(max_size=300),
    ANSWER_OBJECTS.map(_render),
    ANSWER_OBJECTS.map(lambda o: f"Here is my answer:\n```json\n{_render(o)}\n```\nThanks."),
    ANSWER_OBJECTS.map(lambda o: f"```\n{_render(o)}\n``` and ```{_render(o)}```"),
    st.tuples(st.sampled_from(["[", "{", "```", '"', "\\", "9", "{\"a\":"]), st.integers(1, 3000)).map(lambda t: t[0] * t[1]),
    st.sampled_from(list(KNOWN_BREAKERS.values())),
)  # fmt: skip


@given(REPLIES)
@FAST
def test_reading_any_reply_gives_an_object_or_a_reason(reply):
    try:
        obj = answers.json_object(reply)
    except answers.InvalidAnswer as error:
        assert str(error).split(":", 1)[0] in {"empty reply", "not JSON", "not a JSON object"}
    else:
        assert isinstance(obj, dict)


@pytest.mark.parametrize("name", KNOWN_BREAKERS)
def test_the_inputs_that_broke_the_parsers_are_invalid_answers_now(name):
    answer = answers.reader(dictator.read_share)(KNOWN_BREAKERS[name])
    assert isinstance(answer, Answer) and not answer.valid and answer.reason


def test_conflicting_duplicate_keys_are_invalid_and_agreeing_ones_are_not():
    assert not answers.reader(dictator.read_share)('{"dollars": 500, "dollars": 5}').valid
    assert answers.reader(dictator.read_share)('{"dollars": 5, "dollars": 5}').value == 5


class Fuzzed:
    """An agent whose every reply is drawn by hypothesis."""

    spec = "fuzzed"

    def __init__(self, data):
        self.data = data

    def reply(self, request):
        return self.data.draw(REPLIES)


GAMES = {
    "portfolio": lambda: portfolio.PortfolioGame(portfolio.sample_subjects(1, 0)),
    "dictator": lambda: dictator.DictatorGame("human"),
    "alignment": lambda: dictator.AlignmentGame(next(iter(dictator.PREFERENCES))),
    "ultimatum proposer": lambda: dictator.UltimatumGame("proposer"),
    "ultimatum responder": lambda: dictator.UltimatumGame("responder"),
    "ring, player 2": lambda: ring.RingGame(player=2, belief="implicit"),
    "ring, player 1, CR": lambda: ring.RingGame(player=1, belief="given", version="b", conditional_reasoning=True),
    "prisoner's dilemma": lambda: prisoners.PrisonersDilemma("Classic", "Rational", "named"),
    "rock-paper-scissors": lambda: repeated.HiddenPatternGame(repeated.RPS_WIN_DRAW_LOSS, (("Rock",),)),
    "matching pennies": lambda: repeated.HiddenPatternGame(repeated.MATCHING_PENNIES, (("Head", "Tail"),)),
    "battle of the sexes": lambda: repeated.HiddenPatternGame(repeated.BATTLE_OF_THE_SEXES, (("A", "B"), ("B", "A"))),
    "two agents talking": lambda: bos_agents.AgentCoordinationGame(2),
    "two agents, an omniscient script": lambda: bos_agents.AgentCoordinationGame(2, simulation="script"),
    "the commons, an omniscient script": lambda: commons.Commons(simulation="script"),
}


@pytest.mark.parametrize("name", GAMES)
@given(data=st.data())
@settings(max_examples=25, suppress_health_check=[HealthCheck.too_slow])
def test_every_game_plays_through_any_replies_and_checks_budget_range_and_type(name, data):
    """Whatever the agent says, a trial ends with an outcome; every answer the game accepted lies
    within its rules (checked here against the game's own schema), every other has a reason."""
    game = GAMES[name]()
    record = play_trial(game, Fuzzed(data), 0, seed=1, temperature=0.7)
    assert isinstance(record.outcome, dict)
    for answered in record.rounds:
        assert answered.valid or answered.reason
        if answered.valid:
            assert_within_rules(name, answered.value)


def assert_within_rules(name: str, value) -> None:
    if name == "portfolio":
        a, b = value
        assert a >= 0 and b >= 0 and abs(a + b - portfolio.POINTS) <= portfolio.BUDGET_TOLERANCE_POINTS
    elif name in ("dictator", "ultimatum proposer"):
        assert 0 <= value <= dictator.PIE
    elif name == "ultimatum responder":
        assert value in ("accept", "reject")
    elif isinstance(value, str):
        assert value.strip() == value and value


@given(st.one_of(st.text(max_size=400), REPLIES, st.text(alphabet="`pyth \n\tdef():{}\"code", max_size=400)))
@FAST
def test_extracting_code_from_any_reply_gives_code_or_a_reason(reply):
    answer = extract_code(reply, "f")
    assert answer.valid and isinstance(answer.value, str) or not answer.valid and answer.reason.startswith("no code")


def test_code_is_found_in_the_shapes_small_models_write():
    assert extract_code("```python\ndef f(x):\n    return 1\n```", "f").value == "def f(x):\n    return 1\n"
    assert extract_code("Sure!\n```py\ndef f(x):\n    return 2", "f").value == "def f(x):\n    return 2\n"
    assert extract_code('{"code": "def f(x): return 3"}', "f").value == "def f(x): return 3\n"
    assert extract_code("```java\nint f;\n```\n```\ndef f(x): return 4\n```", "f").value == "def f(x): return 4\n"
    prose_then_code = "```text\nMy plan.\n```\nThe code:\n```python\ndef f(x): return 5\n```"
    assert extract_code(prose_then_code, "f").value == "def f(x): return 5\n"
    assert not extract_code("```" + " " * 30000, "f").valid


# -- JSON itself ----------------------------------------------------------------------------------

FINITE_JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-(10**20), 10**20) | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(alphabet=st.characters(blacklist_categories=["Cs"]), max_size=10),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4),
    max_leaves=20,
)  # fmt: skip


@given(FINITE_JSON)
@FAST
def test_safe_json_reads_back_what_json_writes(value):
    assert safejson.loads(json.dumps(value)) == value


@given(st.text(alphabet=string.printable + "\x00\ud7ff", max_size=500))
@FAST
def test_safe_json_is_total(text):
    try:
        safejson.loads(text)
    except safejson.JSONError as error:
        assert str(error)


# -- files ----------------------------------------------------------------------------------------


@given(st.binary(max_size=400))
@FAST
def test_a_damaged_file_read_as_json_is_one_line_naming_it(tmp_path_factory, content):
    path = tmp_path_factory.mktemp("files") / "model.json"
    path.write_bytes(content)
    try:
        safejson.read_file(path, what="model description", remedy="restore it")
    except UnreadableFile as error:
        assert str(path) in str(error) and "restore it" in str(error) and "\n" not in str(error)


# -- cassettes ------------------------------------------------------------------------------------

RECORDED = Path(__file__).resolve().parents[1] / "cassettes" / "embedded-smollm2"
RECORDED_CASSETTE = RECORDED / "first_order_rationality" / "test_first_order_rationality-given-actions.yaml"
ONE_EXCHANGE = """interactions:
- request:
    body: '{"seed": 1}'
    headers: {content-type: [application/json]}
    method: POST
    uri: http://127.0.0.1:1/v1/chat/completions
  response:
    body: {string: '{"choices": []}'}
    headers: {content-type: [application/json]}
    status: {code: 200, message: OK}
version: 1
"""
#: Cassettes anyone could write, each of which once crashed, hung or misled the replay.
HOSTILE_CASSETTES = {
    "80 KB of nested brackets": "interactions: " + "[" * 80_000,
    "nested mappings": "interactions: " + "{a: " * 80_000,
    "nested block sequences": "interactions:\n" + "- " * 40_000 + "x\n",
    "an alias bomb": "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(f"{c}: &{c} [*{p}, *{p}, *{p}, *{p}, *{p}, *{p}]\n"
                                                                      for p, c in zip("abcdefgh", "bcdefghi")),
    "a Python object": "interactions: !!python/object/apply:os.system ['echo pwned']\n",
    "a set": "interactions: !!set {a: null}\n",
    "interactions that are a mapping": "interactions: {a: 1}\n",
    "an exchange without its request": ONE_EXCHANGE.replace("- request:", "- requesd:"),
    "a request that is a list": ONE_EXCHANGE.replace("- request:\n", "- request: [1, 2]\n  other:\n"),
    "a status that is text": ONE_EXCHANGE.replace("code: 200", "code: two hundred"),
    "a status code that is not HTTP's": ONE_EXCHANGE.replace("code: 200", "code: 7"),
    "a response without its body": ONE_EXCHANGE.replace("body: {string:", "bodi: {string:"),
    "a body that is a number": ONE_EXCHANGE.replace("string: '{\"choices\": []}'", "string: 12"),
    "headers that are a list": ONE_EXCHANGE.replace("headers: {content-type: [application/json]}\n    method", "headers: [1]\n    method"),
    "a 5,000-digit status": ONE_EXCHANGE.replace("code: 200", "code: " + "9" * 5000),
    "two documents": ONE_EXCHANGE + "---\n" + ONE_EXCHANGE,
    "a URL that cannot be parsed": ONE_EXCHANGE.replace("http://127.0.0.1:1/", "http://[::1/"),
}


def refused_cassette(path: Path) -> str:
    from pytest_gaamas import cassettes

    with pytest.raises(UnreadableFile) as refused:
        cassettes.read_interactions(path)
    message = str(refused.value)
    assert message.startswith(str(path)) and f"git checkout -- {path}" in message and "\n" not in message
    return message


@pytest.mark.parametrize("name", HOSTILE_CASSETTES)
def test_a_hostile_cassette_is_one_line_naming_it(tmp_path, name):
    path = tmp_path / "test_item.yaml"
    path.write_text(HOSTILE_CASSETTES[name])
    refused_cassette(path)


def test_deep_nesting_does_not_kill_the_process_that_reads_the_cassette(tmp_path):
    """PyYAML's C loader recursed on the C stack: these cassettes ended the process with SIGSEGV,
    so they are read in a child process here, which must live to say why it refused them."""
    paths = []
    for nested in (" " + "[" * 200_000, " " + "{a: " * 200_000, "\n" + "- " * 200_000 + "x"):
        paths.append(tmp_path / f"{len(paths)}.yaml")
        paths[-1].write_text("interactions:" + nested)
    child = (
        "import sys\nfrom pathlib import Path\nfrom pytest_gaamas import cassettes\nfrom pytest_gaamas.errors import UnreadableFile\n"
        "for name in sys.argv[1:]:\n"
        "    try:\n        cassettes.read_interactions(Path(name))\n    except UnreadableFile as error:\n        print(error)\n"
    )  # fmt: skip
    done = subprocess.run([sys.executable, "-c", child, *map(str, paths)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.count("nested more than 64 levels deep") == 3


def test_a_compressed_cassette_is_never_inflated_past_its_bound(tmp_path):
    from pytest_gaamas import cassettes

    path = tmp_path / "test_item.yaml.gz"
    path.write_bytes(gzip.compress(b"interactions: [" + b" " * (cassettes.MAX_CASSETTE_BYTES + 1)))
    assert path.stat().st_size < 100_000
    assert "more than 33,554,432 bytes once decompressed" in refused_cassette(path)


def test_a_cassette_past_its_size_bound_is_refused_before_it_is_read(tmp_path):
    from pytest_gaamas import cassettes

    path = tmp_path / "test_item.yaml"
    with path.open("wb") as sparse:
        sparse.truncate(cassettes.MAX_CASSETTE_BYTES + 1)
    assert "more than the 33,554,432 a cassette may hold" in refused_cassette(path)


def test_a_fifo_where_a_cassette_should_be_is_refused_without_waiting(tmp_path):
    path = tmp_path / "test_item.yaml"
    os.mkfifo(path)
    child = f"from pathlib import Path\nfrom pytest_gaamas import cassettes\ncassettes.read_interactions(Path({str(path)!r}))"
    done = subprocess.run([sys.executable, "-c", child], capture_output=True, text=True, timeout=60)  # a hang fails here
    assert f"{path}: a FIFO, not a cassette; restore it with `git checkout -- {path}`" in done.stderr


@pytest.mark.parametrize("path", sorted(p for p in RECORDED.glob("*/*.yaml*") if p.suffix != ".lock")[::9], ids=lambda p: p.name)
def test_the_cassette_reader_reads_recorded_cassettes_as_yamls_safe_loader_does(path):
    from pytest_gaamas import cassettes, safeyaml

    raw = path.read_bytes()
    text = (gzip.decompress(raw) if path.name.endswith(".gz") else raw).decode()
    assert safeyaml.load(text) == yaml.load(text, Loader=yaml.SafeLoader)
    requests, responses = cassettes.read_interactions(path)
    assert len(requests) == len(responses) == len(yaml.load(text, Loader=yaml.CSafeLoader)["interactions"]) > 0


def test_a_cassette_holding_a_key_twice_a_bad_merge_is_refused_not_read_in_part(tmp_path):
    """Two ``interactions`` lists, as a merge of two recordings leaves them: reading one and dropping
    the other would replay a different sample from the one recorded."""
    one = RECORDED_CASSETTE.read_text()
    body = one.split("interactions:", 1)[1]
    path = tmp_path / "test_item.yaml"
    path.write_text(f"interactions:{body}interactions:{body}")
    assert "the key 'interactions' twice in one mapping" in refused_cassette(path)


YAML_DATA = st.recursive(
    st.none() | st.booleans() | st.integers(-(10**20), 10**20) | st.floats(allow_nan=False) | st.binary(max_size=8)
    | st.text(alphabet=st.characters(blacklist_categories=["Cs"]), max_size=10),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6) | st.integers(), inner, max_size=4),
    max_leaves=20,
)  # fmt: skip


@given(YAML_DATA, st.sampled_from([False, True, None]))
@FAST
def test_safe_yaml_reads_back_what_yaml_writes(value, flow):
    from pytest_gaamas import safeyaml

    assert safeyaml.load(yaml.safe_dump(value, default_flow_style=flow)) == value


@given(st.text(alphabet="[]{}-:,&*!?|>'\" \nab1#%@`", max_size=300))
@FAST
def test_safe_yaml_is_total(text):
    from pytest_gaamas import safeyaml

    try:
        safeyaml.load(text)
    except safeyaml.YAMLRefused as error:
        assert str(error) and "\n" not in str(error)


def test_no_vcrpy_that_loads_cassettes_with_an_unsafe_yaml_loader_is_admitted():
    """vcrpy before 8.2.1 read cassettes with PyYAML's full loader, which builds any Python object a
    cassette names (GHSA-rpj2-4hq8-938g). The suite reads them itself, but vcrpy is there too."""
    from importlib.metadata import version

    from packaging.requirements import Requirement

    tomllib = pytest.importorskip("tomllib")  # Python 3.11 on
    pyproject = tomllib.loads((Path(__file__).resolve().parents[1] / "pyproject.toml").read_text())
    (vcrpy,) = [Requirement(r) for r in pyproject["project"]["dependencies"] if Requirement(r).name == "vcrpy"]
    assert not any(vcrpy.specifier.contains(unsafe) for unsafe in ("7.0.0", "8.0.0", "8.2.0"))
    assert vcrpy.specifier.contains("8.2.1") and vcrpy.specifier.contains(version("vcrpy"))


# -- run logs read back ---------------------------------------------------------------------------


def _a_few_cells_of_every_kind(document: dict) -> dict:
    """A real run log cut down to a few cells: one score per figure kind and a descriptive one, the
    plays of their items (two trials each), a strategy and a conversation that shares its messages,
    and a comparison of the run with itself, so every kind of record is there, small enough to
    write, read and draw many times over."""
    chosen, kinds = [], set()
    for score in document["scores"]:
        kind = {f["kind"] for f in score["figures"]} - kinds or ({"descriptive"} - kinds if score["passed"] is None else set())
        if kind:
            chosen.append(score)
            kinds |= kind
    wanted = {s["test_id"] for s in chosen}
    plays = document["plays"]
    strategy = next(i for i in document["items"] if any(plays[p]["strategy"] for p in i["plays"]))
    shared = next(i for i in document["items"] if any("shared" in r for p in i["plays"] for t in plays[p]["trials"] for r in t["rounds"]))
    items = [i for i in document["items"] if i["test_id"] in wanted][:4] + [strategy, shared]
    kept = dict.fromkeys(p for item in items for p in item["plays"])  # in order: the same run log every time
    small = {
        **document,
        "scores": chosen,
        "references": document["references"][:2],
        "tables": document["tables"][:1],
        "plays": {key: {**plays[key], "trials": plays[key]["trials"][:2]} for key in kept},
        "items": items,
        "findings": [f for f in document["findings"] if f["test_id"] in wanted][:3] or document["findings"][:1],
    }
    scores = runlog.parse(json.dumps(small)).scores
    small["comparison"] = {"with": "itself", "notes": ["a note"], "cells": [c.to_json() for c in compare.compare(scores, scores, {})]}
    return small


@pytest.fixture(scope="module")
def small_run_log(smollm2_replay) -> dict:
    return _a_few_cells_of_every_kind(smollm2_replay.document)


def _shapes(document: dict) -> list[list[tuple]]:
    """Every place in ``document``, grouped by the field it is (an index or a play's id is any):
    a field of which a run log holds thousands (a message) is drawn no more often than one it holds once."""
    places: dict[tuple, list[tuple]] = {}

    def walk(value, here: tuple) -> None:
        if here:
            shape = tuple("*" if isinstance(k, int) or (here[0] == "plays" and i == 1) else k for i, k in enumerate(here))
            places.setdefault(shape, []).append(here)
        children = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
        for key, child in children:
            walk(child, (*here, key))

    walk(document, ())
    return [places[shape] for shape in sorted(places, key=str)]


DAMAGE_VALUES = st.one_of(
    JSON_VALUES.filter(lambda v: not (isinstance(v, float) and not math.isfinite(v))),
    st.sampled_from(["", "paper", "30", "0.5", "rate", "violin", "\x1b]52;c;aGk=\x07", [], {}, 0, -1, 10**29, 1e308, -1e308, 5e-324]),
)


def _damaged(document: dict, damage: list) -> dict:
    """``document`` with each (place, how, value) of ``damage`` done to it: the value replaced, the
    field or item removed, or a field no record has added beside it."""
    damaged = copy.deepcopy(document)
    for place, how, value in damage:
        parent = damaged
        try:
            for key in place[:-1]:
                parent = parent[key]
            if how == "replace":
                parent[place[-1]] = value
            elif how == "remove":
                del parent[place[-1]]
            elif isinstance(parent, dict):
                parent["unheard_of"] = value
            else:
                parent.append(value)
        except (KeyError, IndexError, TypeError):
            continue  # an earlier damage took the place away
    return damaged


def _report_or_one_line(path: Path, out: Path) -> tuple[int, str]:
    code, _, errors = gaamas_command("report", str(path), "-o", str(out / "report.html"), "--markdown", str(out / "summary.md"))
    return code, errors


def test_a_run_log_whose_rounds_each_share_the_last_is_refused_in_one_line_not_expanded(small_run_log, tmp_path):
    """15,000 rounds, each sharing every message of the one before: a few hundred kilobytes on disk,
    a billion messages once expanded."""
    document = copy.deepcopy(small_run_log)
    play = next(iter(document["plays"].values()))
    rounds = [{"seed": 1, "messages": [{"role": "user", "content": "x"}], "reply": "", "valid": False, "value": None, "reason": "r"}]
    rounds += [{**rounds[0], "messages": [{"role": "user", "content": "x"}], "shared": [i, i + 1]} for i in range(15_000)]
    play["trials"][0]["rounds"] = rounds
    path = tmp_path / "shared.json"
    path.write_text(json.dumps(document))
    code, said = _report_or_one_line(path, tmp_path)
    assert code == 2 and said.startswith(f"gaamas: {path}: ") and said.count("\n") == 1 and "share messages" in said, said
    with pytest.raises(compare.CompareError, match="share messages"):
        compare.load_run(str(path), tmp_path)


def test_a_run_log_whose_figure_a_renderer_cannot_draw_is_one_line_not_a_crash(small_run_log, tmp_path):
    """Limits of +-1.7e308 (or a reference line at 1e300) are numbers JSON holds and no plot can draw."""
    where = next((i, j) for i, score in enumerate(small_run_log["scores"]) for j, figure in enumerate(score.get("figures") or [])
                 if figure.get("limits"))  # fmt: skip
    for field, value in (("limits", [-1.7e308, 1.7e308]), ("references", {"rational": 1e300})):
        path = tmp_path / f"{field}.json"
        path.write_text(json.dumps(_damaged(small_run_log, [(("scores", *where[:1], "figures", where[1], field), "replace", value)])))
        code, said = _report_or_one_line(path, tmp_path)
        assert code == 2 and said.startswith(f"gaamas: {path}: ") and said.count("\n") == 1 and field in said, said


def test_any_damage_to_a_run_log_is_a_report_or_one_line_naming_the_field(small_run_log, tmp_path_factory):
    """The values and types of a real run log changed, fields removed and added, anywhere: making its
    report, and comparing a run with it as --gaamas-compare does, either works or says in one line
    which file and what to do (exit 2), and never raises."""
    folder = tmp_path_factory.mktemp("damaged")
    this_run = runlog.parse(json.dumps(small_run_log))
    places = st.sampled_from(_shapes(small_run_log)).flatmap(st.sampled_from)
    damages = st.lists(st.tuples(places, st.sampled_from(["replace", "remove", "add"]), DAMAGE_VALUES), min_size=1, max_size=3)
    outcomes = []

    # Two damages named, one the schema allows and one it refuses, so both outcomes are seen whatever
    # is drawn; 30 drawn besides, each making a report (half a second of drawing), anew in every run.
    @settings(max_examples=30, suppress_health_check=list(HealthCheck), database=None)
    @given(damages)
    @example([(("scores", 0, "criterion"), "replace", "paper")])
    @example([(("format",), "replace", [])])
    def check(damage):
        path = folder / "saved.json"
        path.write_text(json.dumps(_damaged(small_run_log, damage)))
        code, said = _report_or_one_line(path, folder)
        outcomes.append(code)
        assert code in (0, 2), said
        if code == 2:
            assert said.startswith(f"gaamas: {path}: ") and said.count("\n") == 1 and "write it again" in said, said
        try:
            _, saved = compare.load_run(str(path), folder)
        except compare.CompareError as error:
            assert str(error).startswith(str(path)) and "\n" not in str(error)
            return
        changes = compare.compare(saved.scores, this_run.scores, {"rate": 0.1, "dollars": 10, "CCEI": 0.05, "points": 0.3})
        compare.render(changes)
        compare.unpaired(saved.scores, this_run.scores)
        compare.digest_changes(saved.run, this_run.run)

    check()
    assert outcomes[:2] == [0, 2] and len(outcomes) > 2  # the named damages first, then those drawn


def _first_play(document: dict) -> dict:
    """The first play whose first trial asked something (an invalid strategy's trials asked nothing)."""
    return next(p for p in document["plays"].values() if p["trials"] and p["trials"][0]["rounds"])


TYPE_DAMAGE = {  # what broke `report` and `--gaamas-compare` with a traceback, and the field each names
    "findings[0].finding": lambda d: d["findings"][0].update(finding=5),
    "findings[0]": lambda d: d["findings"].insert(0, 5),
    ".temperature": lambda d: _first_play(d).update(temperature="hot"),
    "scores[0].n": lambda d: d["scores"][0].update(n="30"),
    "scores[0].score": lambda d: d["scores"][0].update(score="0.5"),
    "scores[0] has no metric": lambda d: d["scores"][0].pop("metric"),
    "scores[0].variant": lambda d: d["scores"][0].update(variant=["actions"]),
    "scores[0].sample": lambda d: d["scores"][0].update(sample="abc"),
    "run.models[0]": lambda d: d["run"]["models"].insert(0, 1),
    "comparison.cells[0] has no behaviour": lambda d: d["comparison"]["cells"][0].pop("behaviour"),
    "comparison": lambda d: d.update(comparison=[1]),
    ".trials[0].outcome": lambda d: _first_play(d)["trials"][0].update(outcome=["valid"]),
    ".trials[0].rounds[0].messages": lambda d: _first_play(d)["trials"][0]["rounds"][0].update(messages="hi"),
    ".strategy": lambda d: _first_play(d).update(strategy=[1]),
    "items": lambda d: d.update(items={"nested": d["items"]}),
    ".figures[0].limits": lambda d: next(s for s in d["scores"] if s["figures"])["figures"][0].update(limits=[1]),
    "scores[0] has a field \"unheard_of\"": lambda d: d["scores"][0].update(unheard_of="pass"),
    "format": lambda d: d.update(format="2"),
}


@pytest.mark.parametrize("field", TYPE_DAMAGE)
def test_a_run_log_damaged_in_its_types_is_one_line_naming_the_field(small_run_log, tmp_path, field):
    document = copy.deepcopy(small_run_log)
    TYPE_DAMAGE[field](document)
    path = tmp_path / "run.json"
    path.write_text(json.dumps(document))
    code, said = _report_or_one_line(path, tmp_path)
    assert code == 2 and said.count("\n") == 1, said
    assert said.startswith(f"gaamas: {path}: a damaged run log (") and field in said and "write it again with" in said, said


def test_a_gzip_run_log_is_read_no_further_than_its_bound(small_run_log, tmp_path, monkeypatch):
    """A small file inflating to far more than a run log may be is refused once the bound is read,
    not decompressed whole; a run log within the bound reads as before."""
    monkeypatch.setattr(runlog, "MAX_BYTES", 1 << 20)
    bomb = tmp_path / "bomb.json.gz"
    with gzip.open(bomb, "wb") as packed:
        packed.write(b'{"scores": [' + b" " * (64 << 20) + b"]}")
    assert bomb.stat().st_size < 200_000
    with pytest.raises(UnreadableFile, match=r"bomb.json.gz: larger than the 1 MiB a run log may be once decompressed; "):
        runlog.read(bomb)
    fine = tmp_path / "run.json.gz"
    fine.write_bytes(runlog.dumps(small_run_log, fine))
    assert runlog.read(fine).scores


def test_the_run_log_bound_holds_the_whole_suite_many_times_over(smollm2_replay):
    assert len(json.dumps(smollm2_replay.document).encode()) * 10 < runlog.MAX_BYTES


def test_a_fifo_where_a_run_log_should_be_is_one_line_not_a_hang(tmp_path):
    fifo = tmp_path / "run.json"
    os.mkfifo(fifo)
    said: list[str] = []
    reader = threading.Thread(target=lambda: said.append(_report_or_one_line(fifo, tmp_path)[1]), daemon=True)
    reader.start()
    reader.join(30)
    assert said and "not a run log, not even a regular file" in said[0], "reading a FIFO hung"


# -- what the suite prints ------------------------------------------------------------------------

#: Clipboard write (OSC 52), clear screen, a forged green summary line after a line break, a
#: carriage return over it, a bidirectional override and an 8-bit CSI.
HOSTILE = "\x1b]52;c;aGFja2Vk\x07\x1b[2J\x1b[1;32m\n=== 40 passed in 0.01s ===\x1b[0m\r\u202e\x9b2J"


def _obeyable(text: str) -> list[str]:
    """The characters of ``text`` a terminal would act on or hide, rather than show."""
    return [c for c in text if not (c.isprintable() or unicodedata.category(c) == "Zs")]


@given(st.text())
@FAST
def test_text_made_inert_shows_every_character_and_obeys_none(text):
    shown = inert.terminal(text)
    assert not _obeyable(shown) and "\n" not in shown
    shown_as_is = all(c.isprintable() or unicodedata.category(c) == "Zs" for c in text)  # spaces a reader sees, NBSP among them
    assert shown == text if shown_as_is else len(shown) > len(text)
    assert inert.terminal(shown) == shown  # made inert twice, shown the same


def test_escape_sequences_are_shown_as_python_writes_them():
    assert inert.terminal(HOSTILE + "\ud800") == (
        "\\x1b]52;c;aGFja2Vk\\x07\\x1b[2J\\x1b[1;32m\\n=== 40 passed in 0.01s ===\\x1b[0m\\r\\u202e\\x9b2J\\ud800"
    )
    assert inert.terminal("ça coûte 5\u00a0€ 🙂") == "ça coûte 5\u00a0€ 🙂"  # what a person reads is kept


def test_a_strategy_whose_exception_carries_escape_sequences_is_shown_not_obeyed(pytester, fake_chat_server, monkeypatch):
    """The case that wrote to the clipboard, cleared the screen and printed a green summary line
    through the MISSED line, and again as a failure line under --gaamas-verdicts=fail."""
    code = f"def my_share(pie: int) -> float:\n    raise ValueError({HOSTILE!r})\n"
    monkeypatch.setenv("OPENAI_BASE_URL", fake_chat_server(content=f"```python\n{code}```").url)
    pytester.makepyfile(test_ultimatum=(Path(__file__).parents[1] / "behaviours" / "test_ultimatum.py").read_text())
    args = ("--gaamas-model=openai:fake", "--gaamas-trials=2", "--gaamas-record=new_episodes", "-k", "test_ultimatum and proposer-strategy", "-rA")
    for verdicts in ("report", "fail"):
        result = pytester.runpytest(*args, f"--gaamas-verdicts={verdicts}")
        output = result.stdout.str() + result.stderr.str()
        assert not _obeyable(output.replace("\n", "")), sorted(set(_obeyable(output.replace("\n", ""))))
        assert "\\x1b]52;c;aGFja2Vk\\x07" in output  # the reason is there, to be read
        assert not any(line.startswith("=== 40 passed") for line in output.splitlines())
        assert result.ret == (pytest.ExitCode.OK if verdicts == "report" else pytest.ExitCode.TESTS_FAILED)


def test_failure_and_skip_lines_that_quote_a_model_are_shown_not_obeyed(pytester):
    """A server's error body or a strategy's output may be quoted in an item's failure or skip line."""
    pytester.makepyfile(f"""
        import pytest
        def test_fails(gaamas):
            pytest.fail({HOSTILE!r}, pytrace=False)
        def test_skips(gaamas):
            pytest.skip({HOSTILE!r})
        """)  # fmt: skip
    result = pytester.runpytest("--gaamas-model=reference:rational", "-rA")
    output = result.stdout.str()
    assert not _obeyable(output.replace("\n", "")) and output.count("\\x1b]52;c;aGFja2Vk\\x07") >= 2  # the failure, the skip
    assert not any(line.startswith("=== 40 passed") for line in output.splitlines())
    result.assert_outcomes(failed=1, skipped=1)


# -- what a server answers: read, or one line, never a traceback; never recorded as an answer -------


class RawServer:
    """A loopback stand-in for a chat server (not a model) that answers every request with the same
    status and body, as a broken proxy or a misconfigured URL does, and keeps the paths it was asked."""

    def __init__(self, status: int, body: bytes, content_type: str = "application/json"):
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

        self.paths: list[str] = []
        stand_in = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):
                self.rfile.read(int(self.headers.get("Content-Length", 0)))
                stand_in.paths.append(self.path)
                self.send_response(status)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def raw_server():
    servers = []

    def start(status: int, body: bytes, content_type: str = "application/json") -> RawServer:
        servers.append(RawServer(status, body, content_type))
        return servers[-1]

    yield start
    for server in servers:
        server.close()


def portfolio_request(seed: int = 0):
    from pytest_gaamas.play import Request

    game = portfolio.PortfolioGame(portfolio.sample_subjects(1, 0))
    return Request(next(game.play(0)), game, seed, 0.7)


COMPLETION = {"id": "x", "object": "chat.completion", "created": 0, "model": "m"}
NOT_A_COMPLETION = {
    "body not JSON": (200, b"this is not JSON", "application/json"),
    "an HTML page with status 200": (200, b"<html><body>Welcome to nginx!</body></html>", "text/html"),
    "JSON that is not a chat completion": (200, b'{"status": "ok"}', "application/json"),
    "a JSON list": (200, b"[1, 2, 3]", "application/json"),
    "a null body": (200, b"null", "application/json"),
    "no choices": (200, json.dumps({**COMPLETION, "choices": []}).encode(), "application/json"),
    "a null message": (200, json.dumps({**COMPLETION, "choices": [{"index": 0, "message": None, "finish_reason": "stop"}]}).encode(), "application/json"),
    "content that is a number": (200, json.dumps({**COMPLETION, "choices": [{"index": 0, "message": {"role": "assistant", "content": 7}, "finish_reason": "stop"}]}).encode(), "application/json"),
}


@pytest.mark.parametrize("case", NOT_A_COMPLETION)
def test_an_answer_that_is_not_a_chat_completion_is_one_line_that_says_what_to_do(raw_server, case):
    from pytest_gaamas.errors import ModelUnavailable
    from pytest_gaamas.models.openai_compatible import OpenAICompatibleModel

    server = raw_server(*NOT_A_COMPLETION[case])
    model = OpenAICompatibleModel("openai:m", "m", base_url=f"{server.url}/v1", api_key="k")
    with pytest.raises(ModelUnavailable) as raised:
        model.reply(portfolio_request())
    message = str(raised.value)
    assert "\n" not in message and "not a chat completion" in message and "--gaamas-record=all" in message and "OPENAI_BASE_URL" in message


@pytest.mark.parametrize("case", ["body not JSON", "an HTML page with status 200", "a JSON list", "a null message"])
def test_an_ollama_answer_that_is_not_a_chat_answer_is_one_line(raw_server, case):
    from pytest_gaamas.errors import ModelUnavailable
    from pytest_gaamas.models.ollama_server import OllamaModel

    status, body, kind = NOT_A_COMPLETION[case]
    if case == "a null message":
        body = json.dumps({"model": "m", "created_at": "2025-01-01T00:00:00Z", "message": None, "done": True}).encode()
    server = raw_server(status, body, kind)
    model = OllamaModel("m", host=server.url)
    with pytest.raises(ModelUnavailable) as raised:
        model.reply(portfolio_request())
    assert "\n" not in str(raised.value) and "OLLAMA_HOST" in str(raised.value)


SECRET = "sk-live-0123456789abcdefSECRET"


def test_a_proxys_error_that_echoes_the_key_is_shown_without_it_and_recorded_nowhere(raw_server, tmp_path):
    from pytest_gaamas import cassettes
    from pytest_gaamas.errors import ModelUnavailable
    from pytest_gaamas.models.openai_compatible import OpenAICompatibleModel

    echo = json.dumps({"error": {"message": f"Forbidden. Your request: POST /v1/chat/completions, Authorization: Bearer {SECRET}, "
                                            f"api-key: {SECRET}"}}).encode()  # fmt: skip
    server = raw_server(403, echo)
    model = OpenAICompatibleModel("openai:m", "m", base_url=f"{server.url}/v1", api_key=SECRET)
    path = tmp_path / "cassette.yaml"
    with pytest.raises(ModelUnavailable) as raised, cassettes.cassette(path, "new_episodes"):
        model.reply(portfolio_request())
    assert "HTTP 403" in str(raised.value) and "SECRET" not in str(raised.value) and "0123456789" not in str(raised.value)
    assert not path.exists() or "SECRET" not in path.read_text()
    assert not path.exists() or not yaml.safe_load(path.read_text()).get("interactions")


@pytest.mark.parametrize("status", [401, 404, 429, 500, 503])
def test_an_error_is_recorded_nowhere_and_never_replayed(raw_server, tmp_path, status, monkeypatch):
    """Against a server that refused (a bad key, a missing model, a rate limit, a fault), the run
    says so; once the key is set and the server gone, replaying asks for a recording instead of
    replaying the refusal. A rate limit and a fault are asked again first (waits of a millisecond
    here), and none of the refusals is recorded either."""
    from pytest_gaamas import cassettes
    from pytest_gaamas.errors import MissingCassette, ModelUnavailable
    from pytest_gaamas.models import openai_compatible
    from pytest_gaamas.models.openai_compatible import OpenAICompatibleModel

    monkeypatch.setattr(openai_compatible, "BACKOFF_S", 0.001)

    server = raw_server(status, b'{"error": {"message": "no"}}')
    model = OpenAICompatibleModel("openai:m", "m", base_url=f"{server.url}/v1", api_key="k")
    path = tmp_path / "cassette.yaml"
    with pytest.raises(ModelUnavailable), cassettes.cassette(path, "new_episodes"):
        model.reply(portfolio_request())
    server.close()
    with pytest.raises(MissingCassette), cassettes.cassette(path, "none") as tape:
        cassettes.replayer(model, tape).reply(portfolio_request())


def test_a_cassette_that_holds_an_error_is_reported_damaged_with_the_command_that_fixes_it(fake_chat_server, tmp_path):
    from pytest_gaamas import cassettes
    from pytest_gaamas.models.openai_compatible import OpenAICompatibleModel

    server = fake_chat_server()
    model = OpenAICompatibleModel("openai:m", "m", base_url=server.url, api_key="k")
    path = tmp_path / "cassette.yaml"
    with cassettes.cassette(path, "all"):
        model.reply(portfolio_request())
    document = yaml.safe_load(path.read_text())  # as a cassette recorded before errors were kept out
    document["interactions"][0]["response"]["status"] = {"code": 401, "message": "Unauthorized"}
    path.write_text(yaml.safe_dump(document))
    with pytest.raises(UnreadableFile) as raised, cassettes.cassette(path, "none"):
        pass
    assert "HTTP 401" in str(raised.value) and "--gaamas-record=all --gaamas-replace-recorded" in str(raised.value)


def test_a_key_in_the_urls_query_stays_a_query(raw_server):
    from pytest_gaamas.models.openai_compatible import OpenAICompatibleModel

    body = json.dumps({**COMPLETION, "choices": [{"index": 0, "message": {"role": "assistant", "content": "{}"}, "finish_reason": "stop"}]})
    server = raw_server(200, body.encode())
    model = OpenAICompatibleModel("openai:m", "m", base_url=f"{server.url}/v1?api-key=KEY123&api-version=2024", api_key="k")
    model.reply(portfolio_request())
    assert server.paths == ["/v1/chat/completions?api-key=KEY123&api-version=2024"]
    assert "KEY123" not in model.shown_url


def test_a_65_kb_value_makes_a_reason_of_a_line():
    huge = '{"my_share": "' + "x" * 65_000 + '"}'
    answer = answers.reader(lambda obj: answers.bounded(obj, "my_share", 0, 100))(huge)
    assert not answer.valid and answer.reason.startswith("not a number: field 'my_share' is 'xxx")
    assert len(answer.reason) < 260 and answer.reason.endswith(" characters)") and "65," in answer.reason[-20:]


def test_pytest_l_shows_no_credentials_of_the_servers_url(tmp_path):
    """A failing run under ``pytest -l`` (locals in tracebacks) against a credentialled URL that
    does not answer: neither the password nor the key appears in what it prints."""
    project = Path(__file__).resolve().parents[1]
    run = subprocess.run(
        [sys.executable, "-m", "pytest", str(project / "behaviours" / "test_garp_consistency.py"), "-l", "-q", "-p", "no:cacheprovider",
         "--gaamas-model=openai:fake", "--gaamas-trials=1", "--gaamas-record=new_episodes", f"--gaamas-cassette-dir={tmp_path}",
         f"--gaamas-journal-dir={tmp_path / 'journal'}", "-k", "not fidelity"],
        capture_output=True, text=True, timeout=300, cwd=tmp_path,
        env={**os.environ, "OPENAI_BASE_URL": "http://alice:hunter2pw@127.0.0.1:9/v1?api-key=QUERYKEY", "OPENAI_API_KEY": SECRET},
    )  # fmt: skip
    shown = run.stdout + run.stderr
    assert "cannot reach" in shown, shown[-2000:]
    for secret in ("hunter2pw", "QUERYKEY", SECRET, "alice"):
        assert secret not in shown


# -- rendering is linear in rounds ----------------------------------------------------------------


def conversation_ends_by_comparing_every_pair(rounds):
    """What the report shows of a trial's conversations, by the definition: a request no later one begins with."""
    def continued(i, messages):
        return any(later["messages"][: len(messages)] == messages for later in rounds[i + 1:])

    return [r for i, r in enumerate(rounds) if not continued(i, r["messages"])]


MESSAGE = st.fixed_dictionaries({"role": st.sampled_from(["user", "assistant"]), "content": st.sampled_from(["a", "b"])})
MESSAGES = st.lists(MESSAGE, max_size=4)


@given(st.lists(MESSAGES, max_size=8))
@FAST
def test_the_report_shows_the_end_of_each_conversation_as_defined(conversations):
    from pytest_gaamas import report_html

    rounds = [{"messages": messages, "reply": str(i)} for i, messages in enumerate(conversations)]
    assert report_html._conversation_ends(rounds) == conversation_ends_by_comparing_every_pair(rounds)


def test_a_trial_of_15000_rounds_renders_in_time_linear_in_its_rounds():
    import time

    from pytest_gaamas import report_html

    asked = lambda i: [{"role": "system", "content": "play"}, {"role": "user", "content": f"round {i}"}]  # noqa: E731
    rounds = [{"messages": asked(i), "reply": "{}", "valid": True, "value": i, "seed": i} for i in range(15_000)]
    trial = {"trial": 0, "rounds": rounds, "outcome": {"valid": True}}
    start = time.perf_counter()
    shown = report_html._trial(trial)
    assert time.perf_counter() - start < 3.0  # 31 s when each request was compared with every later one
    assert "The last" in shown and "of its 15000 conversations" in shown
