"""A hosted model's server as users meet it: rate limits and faults asked again as the server says
(Retry-After) or with a doubling wait, a bounded number of times, each counted; tokens counted as the
server reports them, per model and summed over xdist's workers, in the run log and at the end of the
session. The server here is a loopback error source (``FakeChatServer`` with ``refusals``), not a
model; what is tested is the client's side."""

from __future__ import annotations

import email.utils
from contextlib import nullcontext
import html
import json
import tempfile
import time
from pathlib import Path

import pytest
import yaml
from conftest import ROOT
from test_hostile_input import portfolio_request

from pytest_gaamas import cassettes, inert
from pytest_gaamas.errors import ModelUnavailable
from pytest_gaamas.models import openai_compatible
from pytest_gaamas.models.openai_compatible import OpenAICompatibleModel

USAGE = {"prompt_tokens": 120, "completion_tokens": 9, "total_tokens": 129, "completion_tokens_details": {"reasoning_tokens": 4}}


@pytest.fixture
def quick_backoff(monkeypatch):
    """The doubling wait, in milliseconds: the waits are counted, not sat through."""
    monkeypatch.setattr(openai_compatible, "BACKOFF_S", 0.001)


def model_of(server, retries: int = 4) -> OpenAICompatibleModel:
    model = OpenAICompatibleModel("openai:m", "m", base_url=server.url, api_key="k")
    model.retries = retries
    return model


def test_a_rate_limit_is_waited_out_as_the_server_asks_and_only_the_answer_is_recorded(fake_chat_server, tmp_path):
    server = fake_chat_server(refusals=[(429, {"Retry-After": "0"}), (429, {"retry-after-ms": "50"})], usage=USAGE)
    model = model_of(server)
    path = tmp_path / "cassette.yaml"
    started = time.monotonic()
    with cassettes.cassette(path, "all"):
        reply = model.reply(portfolio_request())
    assert reply.text and time.monotonic() - started >= 0.05  # the 50 ms it asked for were waited
    assert server.refused == 2 and len(server.requests) == 1
    assert model.usage.to_json() == {"requests": 1, "prompt_tokens": 120, "completion_tokens": 9, "reasoning_tokens": 4,
                                     "retries": {"HTTP 429": 2}}  # fmt: skip
    (interaction,) = yaml.safe_load(path.read_text())["interactions"]
    assert interaction["response"]["status"]["code"] == 200


def test_a_server_that_keeps_failing_is_asked_a_bounded_number_of_times_then_one_line(fake_chat_server, quick_backoff):
    server = fake_chat_server(refusals=[(503, {})] * 10)
    model = model_of(server, retries=3)
    with pytest.raises(ModelUnavailable) as raised:
        model.reply(portfolio_request())
    message = str(raised.value)
    assert server.refused == 4 and "\n" not in message
    assert "HTTP 503" in message and "4 times" in message and "--gaamas-concurrency" in message and "what was answered is kept" in message
    assert model.usage.to_json()["retries"] == {"HTTP 503": 3} and model.usage.requests == 0


def test_a_request_that_fails_gives_its_hold_back_to_the_budget(fake_chat_server, quick_backoff, tmp_path):
    """A request holds the most it may cost until its answer is charged; one the server keeps refusing
    ends with no answer, and its hold goes back at once: another worker's request, with no patience
    to wait, finds the room (a budget worth one and a half holds)."""
    from pytest_gaamas.usage import Price, RequestBudget

    server = fake_chat_server(refusals=[(503, {})] * 10)
    model = model_of(server, retries=0)
    budget = RequestBudget(None, tmp_path / "requests", 1.5)
    model.request_budget = budget.priced("openai:fake", Price(prompt=0.0, completion=10_000.0), lambda request: 100, patience=0.0,
                                         say=lambda line: None)  # fmt: skip
    with pytest.raises(ModelUnavailable, match="HTTP 503"):
        model.reply(portfolio_request())
    other = budget.priced("openai:other", Price(prompt=0.0, completion=10_000.0), lambda request: 100, patience=0.0, say=lambda line: None)
    other.take()  # a hold of $1 beside the failed one's would pass $1.50


def test_a_wait_longer_than_the_bound_is_said_not_waited(fake_chat_server):
    server = fake_chat_server(refusals=[(429, {"Retry-After": "3600"})])
    started = time.monotonic()
    with pytest.raises(ModelUnavailable, match=r"asks to wait more than 120 s \(Retry-After\); run again later"):
        model_of(server).reply(portfolio_request())
    assert server.refused == 1 and time.monotonic() - started < 5


def test_retry_after_as_a_date_and_as_nonsense_are_both_read(fake_chat_server, quick_backoff):
    past = email.utils.formatdate(time.time() - 60, usegmt=True)
    server = fake_chat_server(refusals=[(429, {"Retry-After": past}), (502, {"Retry-After": "soon, maybe"}), (500, {"Retry-After": "nan"})])
    model = model_of(server)
    assert model.reply(portfolio_request()).text
    assert model.usage.to_json()["retries"] == {"HTTP 429": 1, "HTTP 500": 1, "HTTP 502": 1}


@pytest.mark.parametrize("status", [400, 401, 403, 404, 422])
def test_what_would_answer_the_same_is_asked_once(fake_chat_server, quick_backoff, status):
    server = fake_chat_server(refusals=[(status, {"Retry-After": "0"})] * 3)
    with pytest.raises(ModelUnavailable):
        model_of(server).reply(portfolio_request())
    assert server.refused == 1


def test_no_retries_when_asked_for_none(fake_chat_server):
    server = fake_chat_server(refusals=[(429, {"Retry-After": "0"})] * 3)
    with pytest.raises(ModelUnavailable) as raised:
        model_of(server, retries=0).reply(portfolio_request())
    assert server.refused == 1 and "times" not in str(raised.value)


def test_a_timeout_is_asked_again(fake_chat_server, quick_backoff):
    server = fake_chat_server(delay=0.5)
    model = model_of(server, retries=1)
    model.client = model.client.with_options(timeout=0.1)
    with pytest.raises(ModelUnavailable, match="did not answer in time, 2 times; it may be overloaded"):
        model.reply(portfolio_request())
    assert model.usage.to_json()["retries"] == {"timeout": 1}


def test_a_server_s_nonsense_usage_counts_nothing_and_breaks_nothing(fake_chat_server):
    for usage in ({"prompt_tokens": "many", "completion_tokens": -3}, {"completion_tokens_details": [1]}, {"prompt_tokens": True},
                  {"prompt_tokens": 10**40, "completion_tokens": 2**64}):  # fmt: skip
        model = model_of(fake_chat_server(usage=usage))
        assert model.reply(portfolio_request()).text
        assert model.usage.to_json() == {"requests": 1, "prompt_tokens": 0, "completion_tokens": 0, "reasoning_tokens": 0, "retries": {}}


def test_a_run_s_tokens_and_retries_are_summed_over_workers_logged_and_said(pytester, fake_chat_server, monkeypatch):
    """Four items on two xdist workers, through a rate limit: the run log's model says what the whole
    run asked, every request the server answered and no other, and the session's last lines say it;
    a replay of it asks nothing and says nothing."""
    server = fake_chat_server(refusals=[(429, {"Retry-After": "0"})] * 2, usage=USAGE)
    monkeypatch.setenv("OPENAI_BASE_URL", server.url)
    for behaviour in ("garp_consistency", "first_order_rationality"):
        pytester.makepyfile(**{f"test_{behaviour}": (ROOT / "behaviours" / f"test_{behaviour}.py").read_text()})
    args = ["--gaamas-model=openai:fake", "--gaamas-trials=2", "-p", "no:cacheprovider", "-k", "not fidelity and not strategy"]
    live = pytester.runpytest_subprocess(*args, "-n", "2", "--gaamas-record=all", "--gaamas-json=live.json", "--gaamas-markdown=live.md",
                                         "--gaamas-report=live.html")  # fmt: skip
    answered = len(server.requests)
    assert answered > 2 * 25 and server.refused == 2, live.stdout.str()[-2000:]
    (model,) = json.loads((pytester.path / "live.json").read_text())["run"]["models"]
    assert model["usage"] == {"requests": answered, "prompt_tokens": answered * 120, "completion_tokens": answered * 9,
                              "reasoning_tokens": answered * 4, "retries": {"HTTP 429": 2}}  # fmt: skip
    live.stdout.fnmatch_lines([f"gaamas: openai:fake: {answered} requests answered live: {answered * 120:,} prompt and {answered * 9:,} "
                               f"completion tokens ({answered * 4:,} reasoning); 2 sent again (HTTP 429 x2)"])  # fmt: skip
    said = f"{answered} requests answered live: {answered * 120:,} prompt and {answered * 9:,} completion tokens"
    assert f"asked of openai\\:fake: {inert.markdown(said)}" in (pytester.path / "live.md").read_text()
    assert html.escape(said) in (pytester.path / "live.html").read_text()
    assert "nothing went live" not in (pytester.path / "live.md").read_text()
    # Run again (on one worker: what it counts is nothing) in the mode that may go live: everything
    # is recorded, so nothing does, and it says so.
    replay = pytester.runpytest_subprocess(*args, "--gaamas-record=new_episodes", "--gaamas-json=replay.json", "--gaamas-markdown=replay.md")
    assert len(server.requests) == answered and "answered live" not in replay.stdout.str()
    run = json.loads((pytester.path / "replay.json").read_text())["run"]
    assert "usage" not in run["models"][0] and run["live_requests"] == 0
    assert inert.markdown("record mode new_episodes (nothing went live: every answer was replayed") in (pytester.path / "replay.md").read_text()


def test_the_run_s_request_cap_holds_over_workers_and_the_next_run_goes_on(pytester, fake_chat_server, monkeypatch):
    """A cap of 30 live requests over a run of two workers: the server is asked 30 times, no more; the
    items past it stop in one line each, the finished trials wait in the journal, and a second run
    with room left finishes what the first began without asking again for what it had."""
    server = fake_chat_server(usage=USAGE)
    monkeypatch.setenv("OPENAI_BASE_URL", server.url)
    for behaviour in ("garp_consistency", "first_order_rationality"):
        pytester.makepyfile(**{f"test_{behaviour}": (ROOT / "behaviours" / f"test_{behaviour}.py").read_text()})
    args = ["--gaamas-model=openai:fake", "--gaamas-trials=2", "-p", "no:cacheprovider", "-k", "not fidelity and not strategy",
            "--gaamas-record=new_episodes", "--gaamas-concurrency=1"]  # fmt: skip
    counters = set(Path(tempfile.gettempdir()).glob("gaamas-requests-*"))
    capped = pytester.runpytest_subprocess(*args, "-n", "2", "--gaamas-max-requests=30")
    output = capped.stdout.str()
    assert len(server.requests) == 30 and capped.ret == pytest.ExitCode.TESTS_FAILED, output[-2000:]
    assert "this run's cap of 30 live requests (--gaamas-max-requests) is reached" in output and "Traceback" not in output
    capped.stdout.fnmatch_lines(["gaamas: 30 of the run's 30 live requests (--gaamas-max-requests) sent"])
    whole = pytester.runpytest_subprocess(*args, "-n", "2", "--gaamas-max-requests=1000")
    assert whole.ret == pytest.ExitCode.OK, whole.stdout.str()[-2000:]
    uncapped = fake_chat_server()
    monkeypatch.setenv("OPENAI_BASE_URL", uncapped.url)
    assert pytester.runpytest_subprocess(*args[:-2], "--gaamas-record=none").ret == pytest.ExitCode.OK
    assert not uncapped.requests
    assert set(Path(tempfile.gettempdir()).glob("gaamas-requests-*")) == counters  # each run removed its counter


def test_the_run_s_budget_in_dollars_stops_it_cleanly_and_the_next_run_goes_on(pytester, fake_chat_server, monkeypatch):
    """At $50 per million prompt tokens and $400 per million completion tokens, each answer (120 and
    9 tokens) costs $0.0096, and a request holds the most it could cost (its prompt and a whole
    reply of --gaamas-max-tokens) until its answer is charged: over two workers the run stops once
    the room left cannot hold one more request, never past $0.2875 (30 answers' worth, where an
    answer still uncharged let one more through). Nothing recorded is lost, and a second run with a
    larger budget finishes what the first began."""
    server = fake_chat_server(usage=USAGE)
    monkeypatch.setenv("OPENAI_BASE_URL", server.url)
    for behaviour in ("garp_consistency", "first_order_rationality"):
        pytester.makepyfile(**{f"test_{behaviour}": (ROOT / "behaviours" / f"test_{behaviour}.py").read_text()})
    (pytester.path / "prices.json").write_text(json.dumps({"openai:fake": {"prompt": 50, "completion": 400}}))
    args = ["--gaamas-model=openai:fake", "--gaamas-trials=2", "-p", "no:cacheprovider", "-k", "not fidelity and not strategy",
            "--gaamas-record=new_episodes", "--gaamas-concurrency=1", "--gaamas-prices=prices.json"]  # fmt: skip
    spent = pytester.runpytest_subprocess(*args, "-n", "2", "--gaamas-budget=0.2875")
    output = spent.stdout.str()
    assert 1 <= len(server.requests) < 30 and spent.ret == pytest.ExitCode.TESTS_FAILED, output[-2000:]
    assert "this run's budget of $0.2875 (--gaamas-budget) is spent" in output and "Traceback" not in output
    spent.stdout.fnmatch_lines(["gaamas: openai:fake: * answered live: *; $0.* at --gaamas-prices",
                                "gaamas: $0.* of the run's budget of $0.2875 (--gaamas-budget) spent"])  # fmt: skip
    assert len(server.requests) * 0.0096 <= 0.2875
    whole = pytester.runpytest_subprocess(*args, "-n", "2", "--gaamas-budget=10")
    assert whole.ret == pytest.ExitCode.OK, whole.stdout.str()[-2000:]
    recorded = sum(len(yaml.safe_load(path.read_text())["interactions"]) for path in (pytester.path / "cassettes").rglob("*.yaml"))
    assert len(server.requests) == recorded  # every answer the first run paid for was kept, and none was asked twice


@pytest.mark.parametrize(
    ("prices", "options", "said"),
    [
        (None, ["--gaamas-budget=1"], "--gaamas-budget needs a price for openai:fake: list it in --gaamas-prices (not given)"),
        ({"openai:fake": {"prompt": 1, "completion": 1}}, ["--gaamas-budget=0"], "--gaamas-budget must be a number of dollars above 0"),
        ({"openai:fake": {"prompt": -1, "completion": 1}}, [], "'openai:fake' prompt should be a number of dollars per million tokens"),
        ({"openai:fake": {"prompt": 1}}, [], "'openai:fake' should be {\"prompt\": USD, \"completion\": USD} per million tokens"),
        ("not json", [], "not a valid price table"),
    ],
)
def test_a_price_table_or_budget_that_cannot_count_is_refused_before_anything_runs(pytester, prices, options, said):
    if prices is not None:
        (pytester.path / "prices.json").write_text(prices if isinstance(prices, str) else json.dumps(prices))
        options = [*options, "--gaamas-prices=prices.json"]
    pytester.makepyfile(test_x="def test_x(gaamas):\n    pass\n")
    result = pytester.runpytest("--gaamas-model=openai:fake", *options)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert said in result.stderr.str(), result.stderr.str()


@pytest.mark.parametrize("recording", [False, True], ids=["sent", "recorded"])
def test_a_server_s_endless_answer_is_read_no_further_than_its_bound_and_said_in_one_line(fake_chat_server, monkeypatch, tmp_path, recording):
    """Recorded too: the recorder reads a body whole inside the transport, before any caller sees it."""
    from pytest_gaamas.models import bounded

    monkeypatch.setattr(bounded, "MAX_ANSWER_BYTES", 1 << 20)
    model = model_of(fake_chat_server(endless=True))
    with pytest.raises(ModelUnavailable) as raised, cassettes.cassette(tmp_path / "c.yaml", "all") if recording else nullcontext():
        model.reply(portfolio_request())
    assert not (tmp_path / "c.yaml").exists()
    assert "larger than 1,048,576 bytes, far past any chat completion" in str(raised.value) and "\n" not in str(raised.value)


@pytest.mark.parametrize("recording", [False, True], ids=["sent", "recorded"])
def test_a_server_that_answers_a_byte_at_a_time_meets_the_whole_request_s_deadline(fake_chat_server, quick_backoff, tmp_path, recording):
    """httpx's timeout is per read: a byte every 0.2 s never trips a 0.5 s timeout, the deadline does."""
    model = model_of(fake_chat_server(trickle=0.2), retries=1)
    model.timeout = 0.5  # --gaamas-timeout=0.5
    started = time.monotonic()
    with pytest.raises(ModelUnavailable, match="did not answer in time, 2 times"), (
        cassettes.cassette(tmp_path / "c.yaml", "all") if recording else nullcontext()
    ):
        model.reply(portfolio_request())
    assert time.monotonic() - started < 5
    assert model.usage.to_json()["retries"] == {"timeout": 1}


def test_a_server_s_oversized_fingerprint_is_not_kept_as_the_model_s_digest(fake_chat_server):
    model = model_of(fake_chat_server(body_extra={"system_fingerprint": "fp_" + "x" * 2_000_000}))
    assert model.reply(portfolio_request()).text and model.digest() is None
    model = model_of(fake_chat_server(body_extra={"system_fingerprint": "fp_44709d6fcb\x1b[2J"}))
    model.reply(portfolio_request())
    assert model.digest() == "fp_44709d6fcb\\x1b[2J"


def test_the_timeout_option_cuts_a_server_that_never_finishes_its_answer(pytester, fake_chat_server, monkeypatch):
    """--gaamas-timeout is the one every request reads with: a server that trickles its answer a byte
    every half second is cut at 1 s and said in one line, where the default would wait five minutes."""
    server = fake_chat_server(trickle=0.5)
    monkeypatch.setenv("OPENAI_BASE_URL", server.url)
    pytester.makepyfile(test_first_order_rationality=(ROOT / "behaviours" / "test_first_order_rationality.py").read_text())
    started = time.monotonic()
    result = pytester.runpytest_subprocess("--gaamas-model=openai:fake", "--gaamas-trials=1", "-p", "no:cacheprovider",
                                           "--gaamas-record=all", "--gaamas-timeout=1", "--gaamas-retries=0", "-k", "given-actions")  # fmt: skip
    assert time.monotonic() - started < 60
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*did not answer in time, 1 times; it may be overloaded*"])
