"""A replay reads recorded answers straight from the cassette (``cassettes.Replayer``) instead of
building each request with the official client and matching it in vcrpy: the same answers, in the
same order, and anything that is not a plain recorded answer still goes through the client.

The chat server here is the suite's loopback stand-in (``conftest.FakeChatServer``), not a model.
"""

import gzip
import json

import pytest
import yaml

from pytest_gaamas import cassettes
from pytest_gaamas.errors import ModelUnavailable
from pytest_gaamas.games.portfolio import PortfolioGame, sample_subjects
from pytest_gaamas.models.openai_compatible import OpenAICompatibleModel
from pytest_gaamas.play import Reply, Request


def requests(count: int) -> list[Request]:
    game = PortfolioGame(sample_subjects(1, 0))
    decision = next(game.play(0))
    return [Request(decision, game, seed, 0.7) for seed in range(count)]


def record(path, server, contents: list[str], asked: list[Request]) -> None:
    model = OpenAICompatibleModel("openai:fake", "fake", base_url=server.url, api_key="k")
    with cassettes.cassette(path, "all"):
        for content, request in zip(contents, asked, strict=True):
            server.content = content
            model.reply(request)


def replay(path, asked: list[Request], *, fast: bool) -> list[Reply]:
    model = OpenAICompatibleModel("openai:fake", "fake", base_url="http://127.0.0.1:9/v1", api_key="k")
    replies = []
    with cassettes.cassette(path, "none") as tape:
        agent = cassettes.replayer(model, tape) if fast else model
        for request in asked:
            try:
                replies.append(agent.reply(request))
            except ModelUnavailable as error:
                replies.append(str(error))
    return replies


def test_the_same_answers_in_the_same_order_as_through_the_client(tmp_path, fake_chat_server):
    server = fake_chat_server(message_extra={"reasoning_content": "I think."}, finish_reason="length")
    asked = requests(3)
    asked = [asked[0], asked[1], asked[0], asked[2]]  # one request asked twice: two recorded answers, in turn
    path = tmp_path / "c.yaml"
    record(path, server, ['{"x": 1}', '{"x": 2}', '{"x": 3}', '{"x": 4}'], asked)
    through_client = replay(path, asked, fast=False)
    assert [r.text for r in through_client] == ['{"x": 1}', '{"x": 2}', '{"x": 3}', '{"x": 4}']
    assert all(r.thinking == "I think." and r.truncated for r in through_client)
    assert replay(path, asked, fast=True) == through_client


def test_the_fast_path_never_builds_a_request_where_the_answer_is_recorded(tmp_path, fake_chat_server, monkeypatch):
    asked = requests(2)
    path = tmp_path / "c.yaml"
    record(path, fake_chat_server(), ['{"x": 1}', '{"x": 2}'], asked)
    monkeypatch.setattr(OpenAICompatibleModel, "_complete", lambda self, request: pytest.fail("the client was asked"))
    assert [r.text for r in replay(path, asked, fast=True)] == ['{"x": 1}', '{"x": 2}']


@pytest.mark.parametrize("damage", ["body not JSON", "no choices", "null message"])
def test_what_is_not_a_plain_answer_goes_through_the_client_and_says_what_is_wrong(tmp_path, fake_chat_server, damage):
    asked = requests(2)
    path = tmp_path / "c.yaml"
    record(path, fake_chat_server(), ['{"x": 1}', '{"x": 2}'], asked)
    document = yaml.safe_load(path.read_text())
    response = document["interactions"][1]["response"]
    body = json.loads(response["body"]["string"])
    if damage == "body not JSON":
        response["body"]["string"] = "<html>oops</html>"
    elif damage == "no choices":
        response["body"]["string"] = json.dumps({**body, "choices": []})
    else:
        response["body"]["string"] = json.dumps({**body, "choices": [{"index": 0, "message": None, "finish_reason": "stop"}]})
    path.write_text(yaml.safe_dump(document))
    through_client, fast = (replay(path, asked, fast=f) for f in (False, True))
    assert fast == through_client  # the damaged answer read as the client reads it, error or not
    assert fast[0].text == '{"x": 1}'


def test_a_compressed_cassette_replays_the_same(tmp_path, fake_chat_server):
    asked = requests(2)
    plain, packed = tmp_path / "c.yaml", tmp_path / "c.yaml.gz"
    record(plain, fake_chat_server(), ['{"x": 1}', '{"x": 2}'], asked)
    packed.write_bytes(gzip.compress(plain.read_bytes()))
    assert replay(packed, asked, fast=True) == replay(plain, asked, fast=False)


def test_the_default_record_mode_replays_a_cassette_that_answers_everything_as_replay_only_does(tmp_path):
    """The main job outside CI (``--gaamas-record=new_episodes``, the default): a criterion over a family of
    cells reads each cell once a process, as replay only does, asks nothing live and writes nothing."""
    import os
    import shutil
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    shutil.copytree(root / "cassettes" / "embedded-smollm2", tmp_path / "cassettes" / "embedded-smollm2",
                    ignore=shutil.ignore_patterns("commons", "ultimatum", "rational_vs_credible", "*garp*"))  # fmt: skip
    before = {p: p.read_bytes() for p in (tmp_path / "cassettes").rglob("*") if p.is_file() and p.suffix != ".lock"}
    env = {k: v for k, v in os.environ.items() if k != "CI"}

    def run(mode: str) -> tuple[str, str]:
        done = subprocess.run(
            [sys.executable, "-m", "pytest", str(root / "behaviours" / "test_agent_coordination.py"), "-k", "omniscience",
             "-p", "no:cacheprovider", "-q", "--gaamas-model=embedded:smollm2", f"--gaamas-record={mode}",
             f"--gaamas-cassette-dir={tmp_path / 'cassettes'}", f"--rootdir={root}"],
            capture_output=True, text=True, env=env, cwd=tmp_path, timeout=600,
        )  # fmt: skip
        return done.stdout.strip().splitlines()[-1], done.stdout

    default, said = run("new_episodes")
    assert "answered live" not in said and "does not exist" not in said
    assert default.split(" in ")[0] == run("none")[0].split(" in ")[0] and "inconclusive" in default  # the same verdicts
    assert {p: p.read_bytes() for p in (tmp_path / "cassettes").rglob("*") if p.is_file() and p.suffix != ".lock"} == before
