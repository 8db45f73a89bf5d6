"""The run's budget in dollars (pytest_gaamas.usage.RequestBudget) as a user who trusts it, and a
server that does not help, would put it to the test: requests sent at once, answers without token
counts, prices past any server's, and a ledger other processes keep writing."""

import threading

import pytest

from pytest_gaamas.errors import ModelUnavailable
from pytest_gaamas.usage import Price, RequestBudget, Usage, read_prices

#: A cent a reply token, nothing for the prompt: a reply of 100 tokens costs $1.
CENT_A_TOKEN = Price(prompt=0.0, completion=10_000.0)


def priced(path, dollars, *, reply_tokens=100, patience=0.0, said=None, spec="openai:fake"):
    """One model's view of a run's budget, as the session makes it."""
    budget = RequestBudget(None, path, dollars)
    return budget.priced(spec, CENT_A_TOKEN, lambda request: reply_tokens, patience=patience,
                         say=(said.append if said is not None else lambda line: None))  # fmt: skip


def test_eight_requests_sent_at_once_never_pass_a_budget_worth_three_answers(tmp_path):
    """Eight trials at once (--gaamas-concurrency=8), each answer $1, a budget of $3: every request
    is sent before any answer comes, as on a slow server. Three go, the others stop in one line."""
    budget = priced(tmp_path / "requests", 3.0)
    usage = Usage()
    usage.meter = budget.charged
    all_sent = threading.Barrier(8, timeout=10)
    refused = []

    def trial():
        try:
            budget.take()
        except ModelUnavailable as error:
            refused.append(str(error))
            all_sent.wait()
            return
        all_sent.wait()  # the server answers once every request of the eight is in
        usage.answered({"prompt_tokens": 20, "completion_tokens": 100})

    threads = [threading.Thread(target=trial) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert usage.requests == 3 and budget.spent == pytest.approx(3.0)
    assert len(refused) == 5 and "this run's budget of $3.00 (--gaamas-budget) is spent" in refused[0]


def test_a_request_waits_for_the_answers_in_flight_rather_than_stopping_the_run(tmp_path):
    """A budget of $1.50 and requests that may cost $1 but cost $0.25: the second, sent while the
    first is in flight, waits for its answer and then goes, instead of ending the model's run."""
    budget = priced(tmp_path / "requests", 1.5, patience=60)
    budget.take()
    second = []
    waiting = threading.Thread(target=lambda: (budget.take(), second.append("sent"), budget.charged({"prompt_tokens": 0, "completion_tokens": 25})))
    waiting.start()
    budget.charged({"prompt_tokens": 0, "completion_tokens": 25})
    waiting.join(timeout=30)
    assert second == ["sent"] and budget.spent == pytest.approx(0.5)


def test_a_request_that_ends_without_an_answer_holds_nothing_once_sent_again(tmp_path):
    """Refused by a rate limit and sent again in the same thread, or failed: what it held is free."""
    budget = priced(tmp_path / "requests", 1.0)
    budget.take()
    budget.take()  # the first was refused (HTTP 429) and this is it, sent again: it fits alone
    budget.charged({"prompt_tokens": 0, "completion_tokens": 100})
    assert budget.spent == pytest.approx(1.0)


def test_an_answer_without_token_counts_is_charged_its_ceiling_and_the_run_says_so_once(tmp_path):
    """A server that sends no ``usage`` (or only part of it) is charged every reply token the
    request allowed, never $0; two workers sharing the budget say it once for the run."""
    said = []
    first, second = priced(tmp_path / "requests", 100.0, said=said), priced(tmp_path / "requests", 100.0, said=said)
    for budget, sent in ((first, None), (second, {"prompt_tokens": 7}), (first, "nonsense"), (second, {"completion_tokens": -5})):
        usage = Usage()
        usage.meter = budget.charged
        budget.take()
        usage.answered(sent)
    assert first.spent == pytest.approx(4.0)  # four answers, each charged its 100 reply tokens at a cent
    assert len(said) == 1 and "openai:fake: its server answers without token counts (usage)" in said[0]
    assert "charged its ceiling" in said[0] and "$1.00 for this one" in said[0]


@pytest.mark.parametrize("price", [1e308, 10_001])
def test_a_price_past_any_server_s_is_refused_in_one_line(tmp_path, price):
    table = tmp_path / "prices.json"
    table.write_text('{"openai:fake": {"prompt": 1, "completion": %s}}' % repr(price))
    with pytest.raises(ValueError, match=r"'openai:fake' completion should be a number of dollars per million tokens, from 0 to 10,000") as raised:
        read_prices(table)
    assert "\n" not in str(raised.value)


def test_the_dearest_price_and_the_most_tokens_cost_a_number_not_inf(tmp_path):
    (tmp_path / "prices.json").write_text('{"openai:fake": {"prompt": 10000, "completion": 10000}}')
    price = read_prices(tmp_path / "prices.json")["openai:fake"]
    usage = Usage()
    usage.answered({"prompt_tokens": 2**53 - 1, "completion_tokens": 2**53 - 1})
    assert price.of(usage.tokens) < float("inf")


def test_the_ledger_is_read_only_where_it_grew(tmp_path):
    """Another process's answers are counted, and a line once counted is never read again: at
    24,000 requests, reading the ledger whole at each took 10 ms a request. Overwriting a counted
    line in place (which no writer does) shows that it is not read again."""
    here, other = priced(tmp_path / "requests", 100.0), priced(tmp_path / "requests", 100.0)
    other.take()
    other.charged({"prompt_tokens": 0, "completion_tokens": 100})
    assert here.spent == pytest.approx(1.0)
    ledger = here.ledger.read_bytes()
    here.ledger.write_bytes(b"x" * (len(ledger) - 1) + b"\n")
    other.take()
    other.charged({"prompt_tokens": 0, "completion_tokens": 50})
    here.take()
    here.charged({"prompt_tokens": 0, "completion_tokens": 50})
    assert here.spent == pytest.approx(2.0)
