"""``python -m pytest_gaamas report RUN -o report.html``: the report of a run saved earlier.
``python -m pytest_gaamas null-rates [FILES] [--update]``: the "met" verdicts agents that never read the game earn, per table.
``python -m pytest_gaamas thresholds [PATHS]``: the thresholds each behaviour reads, for --gaamas-threshold.
``python -m pytest_gaamas cue-audit [FILES]``: the cues of the prompts that pick the right answer more often than chance.
``python -m pytest_gaamas options-table``: the table of options in docs/options.md, from what --help says."""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from .cassettes import write_atomically
from .compare import CompareError, load_run
from .errors import GaamasError
from .inert import terminal


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m pytest_gaamas", description="pytest-gaamas tools, outside a pytest run.")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    report = commands.add_parser(
        "report", help="the HTML report (and Markdown summary) of a saved run",
        description="Write the self-contained HTML report of a run log: --gaamas-save's NAME, or the path of "
        "a --gaamas-json file (.json or .json.gz).",
    )  # fmt: skip
    report.add_argument("run", metavar="RUN", help="a saved run's NAME (under --runs-dir) or a run log's path")
    report.add_argument("-o", "--output", type=Path, default=Path("report.html"), metavar="PATH", help="the HTML file to write (default: report.html)")
    report.add_argument("--markdown", type=Path, metavar="PATH", help="also write the Markdown summary to PATH")
    report.add_argument("--runs-dir", type=Path, default=Path("gaamas-runs"), metavar="DIR", help="where saved runs live (default: gaamas-runs)")
    null = commands.add_parser(
        "null-rates", help="measure the 'met' verdicts agents that never read the game earn in each table",
        description="Play behaviour files with null agents (reference:random and blind agents) once per seed, offline, "
        "and write how many of each table's cells each earned 'met' per run, and in how many runs any did.",
    )  # fmt: skip
    null.add_argument("files", nargs="*", type=Path, metavar="FILE", help="behaviour files (default: behaviours/test_*.py)")
    null.add_argument("--agent", action="append", metavar="SPEC",
                      help="a null agent, played at seeds 1..N (repeatable; default: the shipped figures' plan: reference:random "
                      "at 20 seeds, blind coins at 5, the other blind agents at 3)")  # fmt: skip
    null.add_argument("--readers", action="store_true",
                      help="measure the positive controls instead: readers that err (reference:reader-0, -0.1, -0.3) at seeds 1..3, "
                      "whose figures the package keeps in data/reader_met.json")  # fmt: skip
    null.add_argument("--seeds", type=int, default=20, metavar="N", help="with --agent: seeded runs, seeds 1..N (default: 20)")
    null.add_argument("--workers", type=int, default=2, metavar="N", help="pytest-xdist workers per run (default: 2)")
    null.add_argument("-o", "--output", type=Path, default=Path("null_met.json"), metavar="PATH", help="where to write them")
    null.add_argument("--update", action="store_true",
                      help="measure only FILES, at the plan the figures in --output were measured with, and merge them into "
                      "that file: those behaviours' tables, digests and verdicts per run are replaced, every other "
                      "behaviour's stay as measured (a behaviour that shares a table with one given must be given too)")  # fmt: skip
    listing = commands.add_parser(
        "thresholds", help="list the thresholds each behaviour reads, for --gaamas-threshold BEHAVIOUR.NAME=VALUE",
        description="The thresholds each behaviour file reads (gaamas.threshold), with their defaults as written.",
    )  # fmt: skip
    listing.add_argument("files", nargs="*", default=["behaviours"], metavar="PATH", help="behaviour files or folders (default: behaviours)")
    audit = commands.add_parser(
        "cue-audit", help="find cues on the prompts' surface that pick the right answer more often than chance",
        description="Play behaviour files offline with reference:random, keeping every prompt with its answer form and the "
        "answer that reads the game, and count, in every judged unit (a test item's actions), how often each cue of the bank "
        "(a place in the listing, a label's spelling, what a message, line, sentence or clause names first, last, most or "
        "least recently, the k-th name from either end, the option beside the largest or smallest number) picks that "
        "answer. Exits 1 when a cue agrees more than the tolerance above chance somewhere.",
    )  # fmt: skip
    audit.add_argument("files", nargs="*", type=Path, metavar="FILE", help="behaviour files (default: those of behaviours/ that hold a judged test)")
    audit.add_argument("--all", action="store_true", help="audit every option an actions cell asks, not only those its criterion judges")
    audit.add_argument("--words", action="store_true",
                       help="also try every pair of cues a word or word pair of the prompt switches between (slower; a search over "
                       "many rules, so some agreement above chance is expected of it)")  # fmt: skip
    audit.add_argument("--tolerance", type=float, default=None, metavar="T", help="how far above chance a cue may agree (default: 0.1)")
    audit.add_argument("--json", type=Path, metavar="PATH", help="also write every finding to PATH")
    audit.add_argument("--list", action="store_true", help="list the bank's cues, numbered as reference:blind-cue-K plays them, and stop")
    table = commands.add_parser(
        "options-table", help="print the Markdown table of the --gaamas options that docs/options.md holds",
        description="The table of every --gaamas option, from the definitions --help reads (pytest_gaamas/settings.py); "
        "docs/options.md holds it between its options-table markers.",
    )  # fmt: skip
    table.add_argument("--update", type=Path, metavar="PATH", help="write it into PATH, between its markers, instead")
    arguments = parser.parse_args(argv)
    if arguments.command == "options-table":
        return _options_table(arguments.update)
    if arguments.command == "null-rates":
        return _null_rates(arguments)
    if arguments.command == "cue-audit":
        return _cue_audit(arguments)
    if arguments.command == "thresholds":
        return _thresholds(arguments.files)

    started = time.perf_counter()
    try:
        path, log = load_run(arguments.run, arguments.runs_dir)
        from . import report_html, report_markdown  # matplotlib, only now

        write_atomically(arguments.output, report_html.render(log), what="report")
        if arguments.markdown:
            write_atomically(arguments.markdown, report_markdown.render(log), what="summary")
    except (CompareError, GaamasError) as error:
        print(terminal(f"gaamas: {error}"), file=sys.stderr)
        return 2
    size = arguments.output.stat().st_size
    print(terminal(f"gaamas: wrote {arguments.output} ({size / 1e6:.1f} MB) from {path} in {time.perf_counter() - started:.1f} s"))
    return 0


def _options_table(update: Path | None) -> int:
    from .settings import options_table, with_options_table

    if update is None:
        print(options_table(), end="")
        return 0
    try:
        write_atomically(update, with_options_table(update.read_text(encoding="utf-8")), what="document")
    except (OSError, ValueError, GaamasError) as error:
        print(terminal(f"gaamas: options-table --update {update}: {error}"), file=sys.stderr)
        return 2
    print(terminal(f"gaamas: wrote the options table into {update}"))
    return 0


def _thresholds(paths: list[str]) -> int:
    from .settings import threshold_names

    found = threshold_names(paths)
    if not found:
        print(f"gaamas: no behaviour file (test_*.py) in {', '.join(paths)}", file=sys.stderr)
        return 2
    for behaviour, names in sorted(found.items()):
        if names is None:
            print(terminal(f"{behaviour}: names a threshold by a variable; its source says which"))
        for name, default in sorted((names or {}).items()):
            print(terminal(f"{behaviour}.{name}  (default {default})"))
    return 0


def _cue_audit(arguments: argparse.Namespace) -> int:
    import tempfile

    from . import cue_capture, cues

    if arguments.list:
        for index, name in enumerate(cues.bank_names()):
            print(f"{index:4d}  {name}")
        return 0
    files = arguments.files or (sorted(Path("behaviours").glob("test_*.py")) if arguments.all else cue_capture.judged_files())
    if not files:
        print("gaamas: cue-audit needs behaviour files (or a behaviours/ folder here)", file=sys.stderr)
        return 2
    tolerance = cues.TOLERANCE if arguments.tolerance is None else arguments.tolerance
    if not 0 <= tolerance < 1:
        print(f"gaamas: cue-audit --tolerance is a share between 0 and 1, not {tolerance}", file=sys.stderr)
        return 2
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="gaamas-cues-") as folder:
        try:
            units, found = cue_capture.audit_files(files, Path(folder), every=arguments.all, words=arguments.words, tolerance=tolerance)
        except RuntimeError as error:
            print(terminal(f"gaamas: cue-audit: {error}"), file=sys.stderr)
            return 2
    for line in cues.summary(found):
        print(terminal(line))
    if arguments.json:
        write_atomically(arguments.json, (json.dumps([f.as_json() for f in found], indent=1) + "\n").encode(), what="findings")
    flagged = len({(f.unit, f.field) for f in found})
    print(terminal(f"gaamas: cue-audit: {len(units)} units, {flagged} fields with a cue over {tolerance:g} above chance, "
                   f"{time.perf_counter() - started:.0f} s"))
    return 1 if found else 0


def _null_rates(arguments: argparse.Namespace) -> int:
    from . import null_runs

    files = arguments.files or sorted(Path("behaviours").glob("test_*.py"))
    if not files or not 1 <= arguments.seeds <= 1000:
        print("gaamas: null-rates needs behaviour files (or a behaviours/ folder here) and 1 to 1000 seeds", file=sys.stderr)
        return 2
    started = time.perf_counter()
    if arguments.agent and arguments.readers:
        print("gaamas: null-rates takes --agent or --readers, not both", file=sys.stderr)
        return 2
    shipped_plan = null_runs.READERS_PLAN if arguments.readers else null_runs.SHIPPED_PLAN
    plan = {agent: tuple(range(1, arguments.seeds + 1)) for agent in arguments.agent} if arguments.agent else shipped_plan
    before = None
    if arguments.update:
        try:
            before = null_runs.NullRates.from_json(json.loads(arguments.output.read_text()))
        except (OSError, ValueError, KeyError) as error:
            print(terminal(f"gaamas: null-rates --update merges into the figures at {arguments.output}, which cannot be read: {error}"),
                  file=sys.stderr)  # fmt: skip
            return 2
        given = set(null_runs.behaviour_digests(files))
        if missing := before.sharing(given) - given:
            print(terminal(f"gaamas: null-rates --update: {', '.join(sorted(given))} share tables with {', '.join(sorted(missing))}; "
                           "give their files too"), file=sys.stderr)  # fmt: skip
            return 2
        if set(plan) != set(before.agents) or sorted({s for seeds in plan.values() for s in seeds}) != list(before.seeds):
            print(terminal(f"gaamas: null-rates --update plays the plan {arguments.output} was measured with: agents "
                           f"{', '.join(before.agents)}, seeds {before.seeds[0]}..{before.seeds[-1]}"), file=sys.stderr)  # fmt: skip
            return 2
    rates = null_runs.measure(files, plan, workers=arguments.workers, progress=lambda line: print(terminal(f"gaamas: null-rates: {line}")))
    if before is not None:
        rates = before.updated(rates)
    write_atomically(arguments.output, (json.dumps(rates.to_json(), indent=1) + "\n").encode(), what="null rates")
    print(terminal(f"gaamas: wrote {arguments.output}: {len(rates.tables)} tables, {len(rates.seeds)} seeds, "
                   f"{time.perf_counter() - started:.0f} s"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
