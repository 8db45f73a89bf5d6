"""Models that think before they answer: the thinking is kept apart and never parsed as the answer,
whether it comes in the text (<think> blocks) or in a field of its own (vLLM's and DeepSeek's
``reasoning_content``, Ollama's ``thinking``); a reply cut off by the token limit says so; the
budgets leave room to think. No vLLM, DeepSeek, OpenAI or Ollama server can run here: the wire
formats are spoken by loopback stand-ins, as the tests' names say."""

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_gaamas import answers
from pytest_gaamas.games.dictator import DictatorGame
from pytest_gaamas.games.portfolio import PortfolioGame, sample_subjects
from pytest_gaamas.models import resolve
from pytest_gaamas.models.base import MAX_REPLY_TOKENS, THINKING_TOKENS
from pytest_gaamas.play import Reply, play_trial
from test_models import FakeOllama


class Saying:
    """An agent that says the same thing to every request."""

    spec = "saying"

    def __init__(self, said):
        self.said = said

    def reply(self, request):
        return self.said


def first_round(said, game=None):
    game = game or DictatorGame("human")
    return play_trial(game, Saying(said), 0, seed=1, temperature=0.7).rounds[0]


ANSWER = '{"dollars": 60}'


@pytest.mark.parametrize(
    "said",
    [
        f'<think>Keep it all? {{"dollars": 100}} would be greedy.</think>\n{ANSWER}',  # DeepSeek-R1
        f'Keep it all? {{"dollars": 100}} would be greedy.\n</think>\n\n{ANSWER}',  # Qwen3: the template opened it
        f'<think>first</think><think>second {{"dollars": 1}}</think>```json\n{ANSWER}\n```',
        Reply(ANSWER, thinking='Keep it all? {"dollars": 100}'),  # reasoning_content, thinking
    ],
)  # fmt: skip
def test_thinking_is_kept_apart_and_never_parsed_as_the_answer(said):
    played = first_round(said)
    assert played.valid and played.value == 60
    assert played.thinking and "greedy" in played.thinking or "first" in played.thinking or "Keep it all" in played.thinking
    assert "<think>" not in played.reply and "</think>" not in played.reply


def test_a_thought_cut_off_by_the_token_limit_is_its_own_invalid_reason():
    played = first_round(Reply('<think>Let me weigh fairness against', truncated=True))
    assert not played.valid and played.reason.startswith("truncated: ")
    assert played.thinking == "Let me weigh fairness against"
    answered = first_round(Reply(ANSWER + " and then I went on", truncated=True))
    assert not answered.valid and answered.reason.startswith("truncated: ") and "not JSON" in answered.reason
    complete = first_round(Reply(ANSWER, truncated=True))  # a whole answer before the cut stands
    assert complete.valid and complete.value == 60


def no_tags(text: str) -> bool:
    return "</think>" not in text and "<think>" not in text


@given(
    thought=st.text(max_size=200).filter(no_tags),
    after=st.text(alphabet=" \n\t", max_size=5),
    reply=st.one_of(st.just(ANSWER), st.just(f"```json\n{ANSWER}\n```"), st.text(max_size=60).filter(no_tags)),
)
@settings(max_examples=200)
def test_thinking_never_changes_what_the_answer_is_read_as(thought, after, reply):
    """Whatever is thought, in a block before the reply, the reply is read as it would be alone."""
    parse = answers.reader(lambda obj: answers.number(obj, "my_share"))
    alone = parse(reply.strip())
    with_thinking = parse(answers.split_thinking(f"<think>{thought}</think>{after}{reply}")[0])
    assert (alone.valid, alone.value, alone.reason) == (with_thinking.valid, with_thinking.value, with_thinking.reason)


@given(st.lists(st.sampled_from(["<think>", "</think>", "{", "}", "```", "x", " ", "\n"]), max_size=120).map("".join))
@settings(max_examples=200)
def test_splitting_thinking_is_total_on_any_mix_of_tags(text):
    answer, thinking = answers.split_thinking(text)
    assert "<think>" not in answer and isinstance(thinking, str)


# -- the servers' wire formats ----------------------------------------------------------------------


@pytest.mark.parametrize("field", ["reasoning_content", "reasoning"])
def test_reasoning_content_as_vllm_and_deepseek_send_it_from_a_loopback_stand_in_not_a_vllm_server(fake_chat_server, monkeypatch, field):
    server = fake_chat_server('{"asset_a": 60, "asset_b": 40}', message_extra={field: "Cobb-Douglas says half; I lean to A."})
    monkeypatch.setenv("OPENAI_BASE_URL", server.url)
    record = play_trial(PortfolioGame(sample_subjects(1, 0)), resolve("openai:deepseek-r1"), 0, seed=3, temperature=0.6)
    assert record.valid and record.rounds[0].thinking == "Cobb-Douglas says half; I lean to A."


def test_a_length_finish_from_a_loopback_openai_compatible_stand_in_is_truncated(fake_chat_server, monkeypatch):
    server = fake_chat_server('{"asset_a": 6', finish_reason="length")
    monkeypatch.setenv("OPENAI_BASE_URL", server.url)
    record = play_trial(PortfolioGame(sample_subjects(1, 0)), resolve("openai:qwen3"), 0, seed=3, temperature=0.6)
    assert all(r.reason.startswith("truncated: ") for r in record.rounds)


def test_openai_reasoning_models_get_the_parameters_they_accept_from_a_loopback_stand_in_not_openai(fake_chat_server, monkeypatch):
    server = fake_chat_server()
    monkeypatch.setenv("OPENAI_BASE_URL", server.url)
    play_trial(PortfolioGame(sample_subjects(1, 0)), resolve("openai:o4-mini"), 0, seed=3, temperature=0.7)
    sent = server.requests[0]
    assert "temperature" not in sent and "max_tokens" not in sent
    assert sent["max_completion_tokens"] == MAX_REPLY_TOKENS + THINKING_TOKENS
    play_trial(PortfolioGame(sample_subjects(1, 0)), resolve("openai:gpt-4.1-mini"), 0, seed=3, temperature=0.7)
    ordinary = server.requests[-1]
    assert ordinary["temperature"] == 0.7 and ordinary["max_tokens"] == MAX_REPLY_TOKENS and "max_completion_tokens" not in ordinary


@pytest.fixture
def ollama_stand_in(monkeypatch):
    """A loopback stand-in speaking Ollama's API (not a real Ollama), at OLLAMA_HOST while the test runs."""
    servers = []

    def start(models, **reply):
        server = FakeOllama(models, **reply)
        servers.append(server)
        monkeypatch.setenv("OLLAMA_HOST", server.host)
        return server

    yield start
    for server in servers:
        server.close()


def portfolio_trial(model):
    return play_trial(PortfolioGame(sample_subjects(1, 0)), model, 0, seed=0, temperature=0.6)


def test_ollama_thinking_from_a_loopback_stand_in_not_a_real_ollama(ollama_stand_in):
    server = ollama_stand_in(["qwen3:latest"], thinking="Half and half maximises log utility.")
    model = resolve("qwen3:latest")
    model.think = True
    record = portfolio_trial(model)
    assert record.valid and record.rounds[0].thinking == "Half and half maximises log utility."
    sent = server.chats[0]
    assert sent["think"] is True and sent["options"]["num_predict"] == MAX_REPLY_TOKENS + THINKING_TOKENS
    portfolio_trial(resolve("qwen3:latest"))
    assert "think" not in server.chats[-1]  # a model not asked to think is asked as it was recorded


def test_an_older_ollama_that_ignores_think_leaves_it_in_the_text_and_it_is_still_kept_apart(ollama_stand_in):
    ollama_stand_in(["deepseek-r1:latest"], content='<think>half each</think>{"asset_a": 50, "asset_b": 50}')
    model = resolve("deepseek-r1:latest")
    model.think = True
    record = portfolio_trial(model)
    assert record.valid and record.rounds[0].thinking == "half each"


def test_an_ollama_length_stop_from_a_loopback_stand_in_is_truncated(ollama_stand_in):
    ollama_stand_in(["qwen3:latest"], content="", thinking="Let me think about the budget line and", done_reason="length")
    record = portfolio_trial(resolve("qwen3:latest"))
    assert all(r.reason.startswith("truncated: ") for r in record.rounds)


# -- budgets and options ----------------------------------------------------------------------------


def test_the_token_budget_leaves_room_to_think_and_can_be_set(behaviour_project, fake_chat_server, monkeypatch):
    server = fake_chat_server()
    monkeypatch.setenv("OPENAI_BASE_URL", server.url)
    args = ["--gaamas-model=openai:qwen3", "--gaamas-trials=1", "--gaamas-record=new_episodes"]
    behaviour_project.runpytest(*args, "--gaamas-think").assert_outcomes(passed=1)
    assert server.requests[-1]["max_tokens"] == MAX_REPLY_TOKENS + THINKING_TOKENS
    assert (behaviour_project.path / "cassettes" / "openai-qwen3@think").is_dir()  # kept apart from unthinking runs
    behaviour_project.runpytest(*args, "--gaamas-max-tokens=2000").assert_outcomes(passed=1)
    assert server.requests[-1]["max_tokens"] == 2000
    assert (behaviour_project.path / "cassettes" / "openai-qwen3@max2000").is_dir()
    refused = behaviour_project.runpytest(*args, "--gaamas-max-tokens=4")
    assert refused.ret == pytest.ExitCode.USAGE_ERROR
    refused.stderr.fnmatch_lines(["*--gaamas-max-tokens must be at least 16*"])


def test_the_thinking_is_kept_in_the_journal(tmp_path):
    from pytest_gaamas.journal import Journal

    record = play_trial(DictatorGame("human"), Saying(f"<think>fairness</think>{ANSWER}"), 0, seed=1, temperature=0.7)
    journal = Journal(tmp_path / "item", "fp")
    journal.write(record, [])
    journal.close(complete=False)
    (line,) = [json.loads(text) for text in journal.path.read_text().splitlines()[1:]]
    assert line["rounds"][0]["thinking"] == "fairness"
    assert Journal(tmp_path / "item", "fp").finished[0].record.rounds[0].thinking == "fairness"
