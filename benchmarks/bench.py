"""Speed figures of pytest-gaamas. Prints numbers; asserts nothing (targets are read, not tested).

    python benchmarks/bench.py            # everything
    python benchmarks/bench.py sandbox    # the strategy sandbox's figures alone (seconds, not minutes)
    python benchmarks/bench.py replay     # the main job's replay, 5 times serially and 5 on two workers
    python benchmarks/bench.py tests      # the project's own tests, with the README's command (minutes)

- plugin overhead per trial: one GARP trial (25 decisions, parsing, CCEI, journal line) played by
  reference:rational, which answers instantly, so what is timed is the plugin itself (target < 1 ms);
- replay of one recorded exchange through the openai client and vcrpy;
- every behaviour replayed from the shipped cassettes for embedded:smollm2, as one pytest run,
  serially and on two workers (target < 15 s on 2 cores with -n 2), and how many lines it prints;
- the cassettes' size on disk, per model (target: under 30 MB for the whole suite);
- the CCEI for T = 25 and T = 1,000 observations (targets < 1 ms and < 1 s);
- the strategy sandbox: starting its confined supervisor, starting a further trial (a fresh forked
  process), one call of an honest strategy once the process is up (target < 5 ms), the same three as
  CPU time of all its processes, and a whole 30-trial, 10-round game played by a strategy;
- the slowest of the hostile replies that once made the parsers quadratic, at 32 KB (target < 50 ms);
- the HTML report of the whole SmolLM2 suite, built from its run log (target < 10 s, < 5 MB).
"""

from __future__ import annotations

import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from pytest_gaamas import cassettes  # noqa: E402
from pytest_gaamas.games.portfolio import PortfolioGame, sample_subjects  # noqa: E402
from pytest_gaamas.journal import Journal  # noqa: E402
from pytest_gaamas.metrics import ccei  # noqa: E402
from pytest_gaamas.models import resolve  # noqa: E402
from pytest_gaamas.play import play_trial  # noqa: E402
from pytest_gaamas.games.repeated import RPS_WIN_DRAW_LOSS, HiddenPatternGame  # noqa: E402
from pytest_gaamas.sandbox import Sandbox  # noqa: E402
from pytest_gaamas.strategy import run_strategy  # noqa: E402

PR_SET_CHILD_SUBREAPER = 36
#: The opponent's moves so far, as a strategy's call receives them.
HISTORY = ["Rock", "Paper", "Rock", "Scissors", "Rock", "Rock", "Paper", "Rock", "Rock"]
HONEST_STRATEGY = """
import collections

def play(opponent_moves):
    counts = collections.Counter(opponent_moves)
    guess = counts.most_common(1)[0][0] if counts else "Rock"
    return [guess, {"Rock": "Paper", "Paper": "Scissors", "Scissors": "Rock"}[guess]]
"""


def best_of(repeats: int, action) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        action()
        times.append(time.perf_counter() - start)
    return min(times)


def plugin_overhead_per_trial() -> float:
    trials = 30
    game = PortfolioGame(sample_subjects(trials, 0))
    agent = resolve("reference:rational")

    def run():
        with tempfile.TemporaryDirectory() as tmp:
            journal = Journal(Path(tmp) / "j", "bench")
            for trial in range(trials):
                journal.write(play_trial(game, agent, trial, seed=0, temperature=0.0), [])
            journal.close(complete=True)

    return best_of(5, run) / trials


def replay_per_exchange(*, through_client: bool) -> float:
    """A recorded exchange replayed: read from the cassette (``cassettes.Replayer``, what a replay
    does), or built by the openai client and matched by vcrpy (what it did before)."""
    cassette = ROOT / "cassettes" / "embedded-smollm2" / "garp_consistency" / "test_garp_consistency.yaml"
    game = PortfolioGame(sample_subjects(30, 0))
    model = resolve("embedded:smollm2")
    exchanges = 0

    def run():
        nonlocal exchanges
        with cassettes.cassette(cassette, "none") as tape:
            agent = model if through_client else cassettes.replayer(model, tape)
            exchanges = sum(len(play_trial(game, agent, trial, seed=0, temperature=0.0).rounds) for trial in range(30))

    return best_of(5, run) / exchanges


def whole_suite_replay(workers: int) -> float:
    """Wall time of the README's main job, replayed, from the command to its last line."""
    return main_job(workers)[0]


def main_job(workers: int) -> tuple[float, int]:
    """The README's main job replayed as a new user runs it (no -q): its wall time from the command
    to its last line, and how many lines it prints at the width of a CI log."""
    with tempfile.TemporaryDirectory() as journal:
        command = [sys.executable, "-m", "pytest", "behaviours", "-p", "no:cacheprovider", "-n", str(workers),
                   "--gaamas-model=embedded:smollm2", "--gaamas-record=none", f"--gaamas-journal-dir={journal}"]  # fmt: skip
        start = time.perf_counter()
        done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=False, env={**os.environ, "COLUMNS": "120"})
        return time.perf_counter() - start, len(done.stdout.splitlines())


def replay_rows(repeats: int = 5) -> list[tuple[str, float, str, str]]:
    """The main job's replay, serially and on two workers: the fastest and the median of ``repeats``
    runs (the machine's other work shows in the median), and what it prints."""
    rows = []
    for workers, target in ((0, ""), (2, "< 15 s")):
        times, lines = zip(*(main_job(workers) for _ in range(repeats)))
        label = f"the main job replayed for embedded:smollm2, pytest -n {workers}"
        rows += [(f"{label}: fastest of {repeats}", min(times), "s", target), (f"{label}: median of {repeats}", statistics.median(times), "s", "")]
    rows.append(("the main job's lines in a CI log (120 columns)", float(lines[0]), "lines", ""))
    return rows


def project_tests() -> float:
    """Wall time of the project's own tests, run with the README's test command."""
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "pytest", "-n", "2", "-q", "-p", "no:cacheprovider"], cwd=ROOT, capture_output=True, check=False)
    return time.perf_counter() - start


def report_build() -> tuple[float, float, float]:
    """The HTML report of the whole SmolLM2 suite, built later from its saved run log, as a user
    would (``python -m pytest_gaamas report``, from the command to its last line): seconds, and the
    report's and the run log's size in MB."""
    with tempfile.TemporaryDirectory() as folder:
        run_log, report = Path(folder) / "run.json", Path(folder) / "report.html"
        subprocess.run([sys.executable, "-m", "pytest", "behaviours", "-q", "-p", "no:cacheprovider", "-n", "2",
                        "--gaamas-model=embedded:smollm2", "--gaamas-record=none", f"--gaamas-journal-dir={folder}",
                        f"--gaamas-json={run_log}"], cwd=ROOT, capture_output=True, check=False)  # fmt: skip
        start = time.perf_counter()
        subprocess.run([sys.executable, "-m", "pytest_gaamas", "report", str(run_log), "-o", str(report)], cwd=ROOT, capture_output=True, check=True)
        seconds = time.perf_counter() - start
        return seconds, report.stat().st_size / 1e6, run_log.stat().st_size / 1e6


def cassette_megabytes() -> dict[str, float]:
    sizes = {}
    for model in sorted(p for p in (ROOT / "cassettes").iterdir() if p.is_dir()):
        sizes[model.name] = sum(f.stat().st_size for f in model.rglob("*") if f.is_file()) / 1e6
    return sizes


def ccei_time(t: int) -> float:
    rng = np.random.default_rng(t)
    prices = rng.uniform(0.01, 0.1, (t, 2))
    share = rng.uniform(0, 1, t)
    choices = np.column_stack([share / prices[:, 0], (1 - share) / prices[:, 1]])
    return best_of(5 if t > 100 else 200, lambda: ccei(prices, choices))


def sandbox_start() -> float:
    def start():
        with Sandbox(HONEST_STRATEGY, "play", ("opponent_moves",)) as box:
            box.start(seed=1)

    return best_of(5, start)


def sandbox_trial_start() -> float:
    """A new trial: the supervisor forks a fresh process, which confines itself and loads the module."""
    with Sandbox(HONEST_STRATEGY, "play", ("opponent_moves",)) as box:
        box.start(seed=0)
        trials = iter(range(1, 10_000))
        return best_of(50, lambda: box.start(seed=next(trials)))


def hostile_reply_parse() -> float:
    """The slowest of the replies that broke the parsers, at 32 KB: fences, nesting, digits."""
    from pytest_gaamas import answers
    from pytest_gaamas.games.dictator import read_share
    from pytest_gaamas.strategy import extract_code

    size = 32 << 10
    replies = ["```\n" * (size // 4), "```" + " " * size, "[" * size, "9" * size, "```json" * (size // 7), "\n" * size]
    parse = answers.reader(read_share)
    return max(best_of(3, lambda r=r: (parse(r), extract_code(r, "f"))) for r in replies)


def sandbox_call() -> tuple[float, tuple[str, ...]]:
    calls = 2000
    with Sandbox(HONEST_STRATEGY, "play", ("opponent_moves",)) as box:
        box.start(seed=1)
        elapsed = best_of(3, lambda: [box.call(HISTORY) for _ in range(calls)])
        return elapsed / calls, box.layers


def cpu_seconds() -> float:
    """CPU seconds of this process and of every process it has waited for (with theirs): what the
    sandbox costs, whatever else the machine is running, as wall-clock figures on a shared machine are not."""
    own, waited = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + waited.ru_utime + waited.ru_stime


def sandbox_cpu() -> tuple[float, float, float]:
    """CPU seconds of all the sandbox's processes for its start, a further trial, and one call: whole
    sandboxes, each trial ended and every process waited for, so that each one's CPU is counted. This
    process inherits, as a subreaper, those that outlive their parent when the sandbox is killed,
    whose CPU would otherwise be counted by no one here."""
    import ctypes

    prctl = ctypes.CDLL(None).prctl
    prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    try:
        return _sandbox_cpu()
    finally:
        prctl(PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0)


def _sandbox_cpu() -> tuple[float, float, float]:

    def run(trials: int, calls: int) -> float:
        def sandbox():
            with Sandbox(HONEST_STRATEGY, "play", ("opponent_moves",)) as box:
                for trial in range(trials):
                    box.start(seed=trial)
                for _ in range(calls):
                    box.call(HISTORY)
                box.finish()

        spent = []
        for _ in range(3):
            before = cpu_seconds()
            sandbox()
            spent.append(cpu_seconds() - before)
        return min(spent)

    start = run(1, 0)
    return start, (run(101, 0) - start) / 100, (run(1, 2000) - start) / 2000


def strategy_game() -> float:
    game = HiddenPatternGame(RPS_WIN_DRAW_LOSS, (("Rock",), ("Paper",), ("Scissors",)))
    return best_of(3, lambda: run_strategy(game, game.strategy(), HONEST_STRATEGY, 30, seed=1))


def fidelity_comparison() -> float:
    """30 choices against MobLab's 13,232 dictators: distance, its bound, a 9,999-draw permutation test."""
    from pytest_gaamas import fidelity

    people = fidelity.dictator_kept()
    choices = [float(v) for v in people.values[:30]]
    return best_of(3, lambda: fidelity.compare(choices, people))


def run_comparison() -> float:
    """Pair, test and Holm-adjust 1,000 cells of two saved runs."""
    from pytest_gaamas import compare, stats
    from pytest_gaamas.report import Score

    def run(shift: int) -> list:
        return [
            Score("b", f"t[{i}]", "m", {"generation": "actions"}, "rate", 0.5, (0, 1), 30, 0, True, "", "t", ("c",), {},
                  row={"i": str(i)}, kind="rate", sample=stats.wilson((i + shift) % 31, 30).sample)
            for i in range(1000)
        ]  # fmt: skip

    old, new = run(0), run(3)
    return best_of(3, lambda: compare.compare(old, new, {"": 0.1}))


def sandbox_rows() -> tuple[list[tuple[str, float, str, str]], tuple[str, ...]]:
    per_call, layers = sandbox_call()
    start_cpu, trial_cpu, call_cpu = sandbox_cpu()
    rows = [
        ("strategy sandbox: start the confined supervisor and the first trial", sandbox_start() * 1e3, "ms", ""),
        ("strategy sandbox: start a further trial (fresh process)", sandbox_trial_start() * 1e3, "ms", ""),
        ("strategy sandbox: one call, process up", per_call * 1e3, "ms", "< 5 ms"),
        ("strategy sandbox, CPU of all its processes: start and first trial", start_cpu * 1e3, "ms", ""),
        ("strategy sandbox, CPU of all its processes: a further trial", trial_cpu * 1e3, "ms", ""),
        ("strategy sandbox, CPU of all its processes: one call", call_cpu * 1e3, "ms", ""),
        ("strategy: 30 games of 10 rounds (300 calls, 30 fresh processes)", strategy_game(), "s", ""),
    ]
    return rows, layers


def print_rows(rows: list[tuple[str, float, str, str]], layers: tuple[str, ...]) -> None:
    width = max(len(r[0]) for r in rows)
    for name, value, unit, target in rows:
        print(f"{name:<{width}}  {value:8.3f} {unit:<2}  {('target ' + target) if target else ''}")
    if layers:
        print(f"sandbox layers up on this machine: {', '.join(layers)}")


def main() -> None:
    if sys.argv[1:] == ["sandbox"]:
        print_rows(*sandbox_rows())
        return
    if sys.argv[1:] == ["replay"]:
        print_rows(replay_rows(), ())
        return
    if sys.argv[1:] == ["tests"]:
        print_rows([("the project's tests (pytest -n 2)", project_tests() / 60, "min", "< 5 min")], ())
        return
    if sys.argv[1:]:
        sys.exit("usage: python benchmarks/bench.py [sandbox | replay | tests]")
    rows = [
        ("plugin overhead per trial (reference agent, 25 decisions)", plugin_overhead_per_trial() * 1e3, "ms", "< 1 ms"),
        ("replay of one recorded exchange, read from the cassette", replay_per_exchange(through_client=False) * 1e3, "ms", ""),
        ("replay of one recorded exchange through the openai client and vcrpy", replay_per_exchange(through_client=True) * 1e3, "ms", ""),
        ("every behaviour replayed for embedded:smollm2, serially (pytest -n 0)", whole_suite_replay(0), "s", ""),
        ("every behaviour replayed for embedded:smollm2 (pytest -n 2)", whole_suite_replay(2), "s", "< 15 s"),
        ("CCEI, T = 25", ccei_time(25) * 1e3, "ms", "< 1 ms"),
        ("CCEI, T = 1,000", ccei_time(1000), "s", "< 1 s"),
    ]
    sandbox, layers = sandbox_rows()
    rows += sandbox
    rows.append(("parse the slowest hostile 32 KB reply (answer and code)", hostile_reply_parse() * 1e3, "ms", "< 50 ms"))
    rows += [
        ("fidelity: 30 choices vs 13,232 people (W1, bound, permutation test)", fidelity_comparison() * 1e3, "ms", "< 1000 ms"),
        ("compare two saved runs of 1,000 cells (tests + Holm)", run_comparison(), "s", "< 5 s"),
    ]
    seconds, report_mb, run_log_mb = report_build()
    rows += [
        ("HTML report of the whole SmolLM2 suite, built from its run log", seconds, "s", "< 10 s"),
        ("HTML report of the whole SmolLM2 suite, size", report_mb, "MB", "< 5 MB"),
        ("run log of the whole SmolLM2 suite (every trial, whole)", run_log_mb, "MB", ""),
    ]
    sizes = cassette_megabytes()
    rows += [(f"cassettes of {model}", size, "MB", "") for model, size in sizes.items()]
    rows.append(("cassettes, whole suite", sum(sizes.values()), "MB", "< 30 MB"))
    print_rows(rows, layers)


if __name__ == "__main__":
    main()
