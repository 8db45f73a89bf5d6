"""What an xdist worker would say while it runs (the heartbeat, the trials' progress, a wait for
another run's lock) reaches the controller's terminal (pytest_gaamas.heartbeat.Relay): workers
have none, and a silent model sends xdist no event that would carry the line."""

from pytest_gaamas.heartbeat import Relay


def test_workers_lines_are_said_whole_once_each_and_the_file_goes_with_the_run():
    said = []
    controller = Relay(None, said.append)
    controller.open()
    assert controller.path is not None and controller.path.is_file()
    first, second = Relay(controller.path), Relay(controller.path)
    first.send("[gw0] test_x[openai-fake]: openai:fake: still waiting for an answer, 30 s since the last one")
    second.send("[gw1] test_y: waits while another item or run writes cassettes/y.yaml\nsecond line of it")
    with open(controller.path, "ab") as relayed:
        relayed.write(b"[gw0] half a line")  # still being written: said once whole, not before
    controller.drain()
    controller.drain()
    assert said == ["[gw0] test_x[openai-fake]: openai:fake: still waiting for an answer, 30 s since the last one",
                    "[gw1] test_y: waits while another item or run writes cassettes/y.yaml second line of it"]  # fmt: skip
    with open(controller.path, "ab") as relayed:
        relayed.write(b", ended\n")
    path = controller.path
    controller.close()
    assert said[-1] == "[gw0] half a line, ended" and not path.exists()


def test_under_two_workers_a_slow_server_is_said_to_be_waited_for_against_a_slow_loopback_stand_in(behaviour_project, fake_chat_server,
                                                                                                   monkeypatch):  # fmt: skip
    """The loopback stand-in (conftest.FakeChatServer, not a model) answers each request after 0.4 s,
    and stops answering after the first, as an error source (the cell then stops: what is looked at is the
    wait); with a line due after 0.1 s of silence in each worker, the controller's terminal says that
    the cell waits, naming the worker, the cell and the model."""
    server = fake_chat_server(delay=0.4, die_after=1)
    monkeypatch.setenv("OPENAI_BASE_URL", server.url)
    behaviour_project.makeconftest("import pytest_gaamas.heartbeat\npytest_gaamas.heartbeat.HEARTBEAT_EVERY_S = 0.1\n")
    result = behaviour_project.runpytest_subprocess("-n", "2", "--gaamas-model=openai:fake", "--gaamas-trials=1",
                                                    "--gaamas-record=new_episodes", "-p", "no:cacheprovider")  # fmt: skip
    waiting = [line for line in result.stdout.lines if "still waiting for an answer" in line]
    assert waiting, result.stdout.str()[-3000:]
    assert all("gaamas: [gw" in line and "test_garp_consistency[openai-fake]: openai:fake" in line for line in waiting)
