"""The plugin's options, each also an ini key under ``[tool.pytest.ini_options]``; the command line wins."""

from __future__ import annotations

import functools
import math
import os
import re
import sys
import tempfile
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

import pytest

from .cassettes import RECORD_MODES
from .compare import RUN_NAME, UNITS, CompareError, load_run
from .models import SpecError, canonical_spec
from .models.base import DEFAULT_RETRIES, REQUEST_TIMEOUT_S
from .usage import FREE_PREFIXES, Price, read_prices

DEFAULT_MODEL = "embedded:smollm2"
VERDICT_MODES = ("report", "fail", "fail-inconclusive")
#: Which tables the terminal prints: those with a criterion, or every one (the report has them all).
TABLE_MODES = ("criteria", "all")
#: Far more trials than any criterion needs; past it, the trials' records alone would not fit in memory.
MAX_TRIALS = 10_000
#: The seeds numpy's generators and the cassettes' requests take without a second thought.
MAX_SEED = 2**32 - 1


class OnceChanged(pytest.PytestDeprecationWarning):
    """``--gaamas-record=once`` is vcrpy's once now; what it meant before is ``new_episodes``."""


ONCE_CHANGED = (
    "--gaamas-record=once now means what vcrpy's once means: record a cassette only where there is none yet, and "
    "replay one that exists, where a request it lacks fails. What once meant before (replay what is recorded, "
    "record what is missing) is --gaamas-record=new_episodes, the default outside CI."
)


def say_once_changed(config: pytest.Config) -> None:
    try:
        config.issue_config_time_warning(OnceChanged(ONCE_CHANGED), stacklevel=3)
    except OnceChanged:  # a project's filterwarnings = error made the notice an error, and pytest an INTERNALERROR
        sys.stderr.write(f"gaamas: {ONCE_CHANGED} (ignore::pytest_gaamas.settings.OnceChanged silences it)\n")


@dataclass(frozen=True)
class Option:
    """One ``--gaamas-NAME`` option, as ``pytest --help`` and docs/options.md both say it. ``help`` and
    ``default`` are Markdown (code in backticks, links relative to docs/); --help reads them plain."""

    name: str
    ini_type: Literal["string", "linelist", "bool"]
    help: str
    metavar: str | None = None
    #: What is used when the option is not given, said in words; None where nothing needs saying.
    default: str | None = None
    #: What argparse is told besides (type, choices, action).
    arguments: dict[str, Any] = field(default_factory=dict)
    #: The module that adds it to pytest, where it is not this one's ``add_options``.
    added_by: str | None = None

    @property
    def flag(self) -> str:
        return f"--gaamas-{self.name}"

    @property
    def text(self) -> str:
        """What the option does, then its default, in Markdown."""
        return f"{self.help}. Default: {self.default}." if self.default else f"{self.help}."

    @property
    def plain(self) -> str:
        """``text`` as --help says it: no backticks or bold, a link said as its page."""
        return plain_text(self.text)


_LINK_IN_PARENTHESES = re.compile(r"\(\[[A-Z][^\]]*\]\(([\w-]+\.md)(?:#[^)]*)?\)\)")
_LINK = re.compile(r"\[([^\]]+)\]\(([\w-]+\.md)(?:#[^)]*)?\)")


def plain_text(markdown: str) -> str:
    """Markdown as a terminal shows it: a page named in parentheses, ``([Installing](installing.md#x))``,
    is ``(docs/installing.md)``, any other link, ``[the commons](behaviours.md#x)``, ``the commons
    (docs/behaviours.md)``; no backticks or bold."""
    text = _LINK_IN_PARENTHESES.sub(r"(docs/\1)", markdown)
    text = _LINK.sub(r"\1 (docs/\2)", text)
    return text.replace("`", "").replace("**", "")


#: What argparse is told of an option given several times, and of a flag.
REPEATABLE: dict[str, Any] = {"action": "append", "default": None}
FLAG: dict[str, Any] = {"action": "store_true", "default": False}
#: Every --gaamas option, in the order docs/options.md lists them: the one source of --help and of
#: the docs' table (``options_table``; ``python -m pytest_gaamas options-table`` prints it).
OPTIONS: tuple[Option, ...] = (
    Option(
        "model", "linelist", metavar="SPEC", default=f"`{DEFAULT_MODEL}`", arguments=REPEATABLE,
        help="the model to test, repeatable: `ollama:NAME` or a bare `NAME` (Ollama's `name:tag` too), `openai:NAME` "
        "(`OPENAI_BASE_URL`, `OPENAI_API_KEY`), `embedded:smollm2`, `embedded:gemma3-270m` (extra `gemma`), "
        "`embedded:qwen2.5-coder-0.5b` (extra `qwen-coder`), a reference agent: `reference:rational`, `reference:random`, "
        "`reference:human`, `reference:average` (people's mean choice, every time), `reference:sustainable` "
        "([The commons](behaviours.md#the-commons-behaviourstest_commonspy)), or a blind agent: `reference:first`, "
        "`reference:last`, `reference:constant`, `reference:blind-RULE` ([Behaviours](behaviours.md)), or a reader that errs: "
        "`reference:reader-E`, theory's answer with probability 1 - E, a random one otherwise ([Statistics](statistics.md#readers-that-err))",
    ),
    Option(
        "trials", "string", metavar="N", default="the paper's count for each experiment (30 for GARP)", arguments={"type": int},
        help=f"trials per test item, 1 to {MAX_TRIALS:,}: a fixed design, each cell decided at that count alone",
    ),
    Option(
        "max-trials", "string", metavar="N", default="four times the paper's count", arguments={"type": int},
        help="the most trials a cell plays before its verdict stands: a cell that its trials cannot decide (inconclusive) "
        "plays twice as many, then twice again, while that stays within N, its level spent across the looks "
        "([Statistics](statistics.md#a-cell-that-cannot-decide-plays-more-trials)); a replay plays what is recorded; "
        "1 to 10,000, the paper's count or less for one look alone",
    ),
    Option(
        "timeout", "string", metavar="SECONDS", default=f"{REQUEST_TIMEOUT_S:g}", arguments={"type": float},
        help="the longest one request to a model's server may take, its answer read whole, 1 to 3,600: a server that "
        "accepts and never answers, or sends a byte at a time, is cut there, asked again as `--gaamas-retries` says, "
        "then said too slow in one line; while a live cell waits, a line every 30 s says how long since its last answer",
    ),
    Option(
        "seed", "string", metavar="N", default="0", arguments={"type": int},
        help="the base seed of every request and sample, 0 to 2^32-1: each request carries its own seed derived from "
        "it, so repeated samples are distinct requests; cassettes are recorded at seed 0",
    ),
    Option(
        "temperature", "string", metavar="T", arguments={"type": float},
        help="the sampling temperature of every experiment, 0 to 2, overriding the paper's per-experiment value "
        "(GARP: 0.0); such runs keep their cassettes apart, under `<model>@T<T>/`",
    ),
    Option(
        "record", "string", metavar="MODE", arguments={"choices": list(RECORD_MODES)},
        default="`new_episodes`, or `none` where the `CI` environment variable is set (as Jest does with snapshots), "
        "so CI never reaches a model by accident",
        help="where answers come from, the modes named and meant as vcrpy's: `none`: replay only, a request no "
        "cassette holds fails and names the request; `once`: record a cassette that does not exist yet, whole, and "
        "replay one that does, where a request it lacks fails (`once` meant `new_episodes` here before); "
        "`new_episodes`: replay what is recorded, record what is missing; `all`: record everything afresh",
    ),
    Option(
        "json", "string", metavar="PATH",
        help="write the run log to PATH: provenance, every score, and every trial's requests, replies and parsed "
        "decisions (gzip-compressed if PATH ends in `.gz`); the format is `pytest_gaamas/runlog.py`'s",
    ),
    Option(
        "report", "string", metavar="PATH",
        help="write the run as one self-contained HTML file: each behaviour's table and figures, its criterion and "
        "sources, example transcripts and strategies; later, from a saved run: `python -m pytest_gaamas report RUN` "
        "([After a run](report.md))",
    ),
    Option(
        "markdown", "string", metavar="PATH",
        help="write the tables with a verdict, the findings and the comparison's verdict as Markdown to PATH, for a "
        "CI job summary",
    ),
    Option(
        "threshold", "linelist", metavar="NAME=VALUE", arguments=REPEATABLE,
        help="override a behaviour's pass threshold, repeatable, e.g. `garp_consistency.min_mean_ccei=0.85`; a name no "
        "behaviour of the run reads is refused at start, saying the names it could have meant "
        "(`python -m pytest_gaamas thresholds [PATHS]` lists them all, with their defaults)",
    ),
    Option(
        "save", "string", metavar="NAME",
        help="save this run (scores, intervals, n, provenance: the run log, as `--gaamas-json` writes it) as "
        "`NAME.json` under the saved-runs directory",
    ),
    Option(
        "compare", "string", metavar="NAME_OR_PATH",
        help="compare this run with a saved one, cell by cell: old, new, difference, p-value (Fisher's exact test "
        "for rates, a permutation test for means), Holm-adjusted over the cells the saved run met (the gated family), "
        "the others a family of their own ([Saving, comparing, gating](gating.md))",
    ),
    Option(
        "compare-fail", "linelist", metavar="UNIT_OR_BEHAVIOUR=DROP", arguments=REPEATABLE,
        help="repeatable; with `--gaamas-compare`, fail the session (exit 1) when a cell gets significantly worse by "
        "more than DROP: per unit (`rate=0.1`, `dollars=10`, `CCEI=0.05`, `points=0.3`) or per behaviour "
        "(`ultimatum=0.2`, which wins)",
    ),
    Option(
        "concurrency", "string", metavar="N", arguments={"type": int},
        default="1 for the embedded model, 4 for Ollama, 8 for an OpenAI-compatible server",
        help="trials of an item played at once, 1 to 256, each trial's rounds in order; the same results, journal "
        "lines and cassettes as one at a time",
    ),
    Option(
        "think", "bool", arguments=FLAG,
        help="the model reasons before it answers: Ollama is sent `think`, every reply gets 4,096 more tokens, its "
        "thinking is kept apart from the answer and never parsed as one, and the run's cassettes go under "
        "`<model>@think/`",
    ),
    Option(
        "max-requests", "string", metavar="N", arguments={"type": int},
        help="send at most N requests live over the whole run, all models and workers together, retries counted; past "
        "it a model's items stop in one line, the finished trials wait in the journal, and a later run goes on from "
        "there. Replayed answers are free",
    ),
    Option(
        "prices", "string", metavar="PATH",
        help="a price table, JSON: each model's dollars per million prompt and completion tokens, "
        '`{"openai:gpt-4.1-mini": {"prompt": 0.4, "completion": 1.6}}`; the session then says what each model\'s live '
        "requests cost (reasoning tokens are counted among the completion tokens, as servers bill them; `embedded:` and "
        "`reference:` models cost nothing unless listed)",
    ),
    Option(
        "budget", "string", metavar="DOLLARS", arguments={"type": float},
        help="spend at most DOLLARS on live requests over the whole run, at `--gaamas-prices`, every model that may go live "
        "priced; each request in flight holds the most it may cost until its answer is charged, so trials at once never "
        "pass it; once no room is left a model's items stop in one line, the finished trials wait in the journal and every "
        "recorded answer is kept",
    ),
    Option(
        "retries", "string", metavar="N", default=f"{DEFAULT_RETRIES}; 0: never", arguments={"type": int},
        help="how often a request refused for a while (HTTP 408, 409, 429, 5xx, a timeout) is sent again, 0 to 20, "
        "waiting as the server's `Retry-After` asks or 1, 2, 4, 8 s",
    ),
    Option(
        "max-tokens", "string", metavar="N", arguments={"type": int},
        default="256 for a decision, 512 for a strategy, plus 4,096 for a model that thinks",
        help="every reply's budget, thinking included, at least 16; such runs keep their cassettes under "
        "`<model>@max<N>/`",
    ),
    Option(
        "tables", "string", metavar="MODE", default="`criteria`", arguments={"choices": TABLE_MODES},
        help="`criteria`: the terminal prints the tables that judge a criterion and names the others (per-round "
        "curves, each player's own choices), which the report, the summary and the run log hold; where they would "
        "fill more than 150 lines, it prints a line per table instead, its cells and how many reached each verdict, "
        "and `-v` prints them whole; `all`: it prints every table whole. A table too wide for the terminal (120 columns when not on one) is printed in parts that each "
        "repeat the row labels: no value or interval is ever split over two lines",
    ),
    Option(
        "verdicts", "string", metavar="MODE", default="`report`", arguments={"choices": VERDICT_MODES},
        help="`report`: a criterion the model misses, or that its trials cannot decide, is a finding, shown as "
        "`MISSED`, `AT CHANCE` or `INCONCLUSIVE` with one line saying why, and does not fail the session; `fail`: a "
        "missed or at-chance item fails (one line, no traceback), an inconclusive one is still reported (more "
        "trials, not a worse model, may decide it); `fail-inconclusive`: an inconclusive one fails too, so only a "
        "met criterion passes. Errors (a server gone, a missing cassette, a crash) fail in any mode, as do "
        "regressions under `--gaamas-compare-fail`",
    ),
    Option("runs-dir", "string", metavar="DIR", default="`<rootdir>/gaamas-runs`", help="where saved runs live"),
    Option(
        "cassette-dir", "string", metavar="DIR", default="`<rootdir>/cassettes`",
        help="where cassettes live, and new recordings go; a folder given must exist under `--gaamas-record=none`. The "
        "shipped behaviours run by `--gaamas-suite` replay, read only, the shipped cassettes of a model the package "
        "holds, unless this folder holds a recording of that behaviour for the model "
        "([Installing](installing.md#which-cassettes-a-shipped-behaviour-reads))",
    ),
    Option(
        "suite", "bool", added_by="pytest_gaamas.suite",
        help="run the behaviours shipped with pytest-gaamas beside the project's own, from wherever the package is "
        "installed, replayed from the cassettes shipped with them for the models they hold, every other option "
        "applying to both ([Installing](installing.md))",
    ),
    Option("journal-dir", "string", metavar="DIR", default="`<rootdir>/.gaamas/journal`", help="where unfinished trials are journaled"),
    Option(
        "check-cassettes", "bool", arguments=FLAG,
        help="after the run, list every cassette of the models run that no item used (a renamed test or reordered "
        "parameters orphan their recordings) and fail the session if there is one; meant for a run of the whole suite",
    ),
    Option(
        "replace-recorded", "bool", arguments=FLAG,
        help="let `--gaamas-record=all` replace a cassette even where the new recording lacks some of its recorded "
        "requests (fewer trials, changed prompts); without it such a cassette is kept and the item fails",
    ),
)


def add_options(parser: pytest.Parser) -> None:
    group = parser.getgroup("gaamas", "behavioural economics of LLM agents (pytest-gaamas)")
    for option in OPTIONS:
        if option.added_by is None:
            dest = f"gaamas_{option.name.replace('-', '_')}"
            shown = {"metavar": option.metavar} if option.metavar else {}  # a flag takes none
            group.addoption(option.flag, dest=dest, help=option.plain.replace("%", "%%"), **shown, **option.arguments)  # "%": argparse's
            parser.addini(dest, option.plain, type=option.ini_type)


#: What docs/options.md writes around the table ``options_table`` renders.
TABLE_MARKERS = (
    "<!-- options-table: written by `python -m pytest_gaamas options-table --update docs/options.md` from "
    "pytest_gaamas/settings.py's OPTIONS; edit them there -->",
    "<!-- /options-table -->",
)


def with_options_table(document: str) -> str:
    """``document`` with the table between its ``TABLE_MARKERS`` rendered afresh; ValueError where it has none."""
    opening, closing = TABLE_MARKERS
    before, found, rest = document.partition(opening)
    _, found_closing, after = rest.partition(closing)
    if not found or not found_closing:
        raise ValueError(f"no table between {opening} and {closing}")
    return f"{before}{opening}\n\n{options_table()}\n{closing}{after}"


def options_table() -> str:
    """The Markdown table of docs/options.md: every option, what it does and its default."""
    rows = ["| option | meaning |", "|---|---|"]
    for option in OPTIONS:
        shown = f"{option.flag} {option.metavar}" if option.metavar else option.flag
        rows.append(f"| `{shown}` | {option.text.replace('|', chr(92) + '|')} |")
    return "\n".join(rows) + "\n"


def priced(path: str | None, budget: float | None, models: tuple[str, ...]) -> tuple[dict[str, Price], float | None]:
    """--gaamas-prices read, and --gaamas-budget checked against it: a budget needs a price for every
    model of the run that is not free, so that no request escapes the count."""
    prices = {}
    if path is not None:
        try:
            prices = read_prices(Path(path))
        except ValueError as error:
            raise pytest.UsageError(f"--gaamas-prices: {error}") from None
    if budget is None:
        return prices, None
    if not (math.isfinite(budget) and budget > 0):
        raise pytest.UsageError(f"--gaamas-budget must be a number of dollars above 0, got {budget}")
    unpriced = [spec for spec in models if spec not in prices and not spec.startswith(FREE_PREFIXES)]
    if unpriced:
        raise pytest.UsageError(f"--gaamas-budget needs a price for {', '.join(unpriced)}: list it in --gaamas-prices ({path or 'not given'})")
    return prices, budget


@dataclass(frozen=True)
class Settings:
    models: tuple[str, ...]
    trials: int | None
    seed: int
    temperature: float | None
    record: str
    json_path: Path | None
    cassette_dir: Path
    journal_dir: Path
    thresholds: dict[str, float] = field(default_factory=dict)
    #: --gaamas-max-trials: the most trials a cell plays across its looks; None: four times the paper's count.
    max_trials: int | None = None
    save: str | None = None
    compare: str | None = None
    #: Behaviour (or "" for every behaviour) -> the drop that fails the session.
    allowed_drops: dict[str, float] = field(default_factory=dict)
    runs_dir: Path = Path("gaamas-runs")
    replace_recorded: bool = False
    check_cassettes: bool = False
    max_tokens: int | None = None
    think: bool = False
    retries: int = DEFAULT_RETRIES
    #: --gaamas-timeout: seconds a request may take, its answer read whole.
    timeout: float = REQUEST_TIMEOUT_S
    max_requests: int | None = None
    #: --gaamas-prices: model -> what its server charges; --gaamas-budget: the most the run may spend.
    prices: dict[str, Price] = field(default_factory=dict)
    budget: float | None = None
    #: Trials played at once; None: the model's own default.
    concurrency: int | None = None
    #: "report": a missed criterion is a finding (MISSED); "fail": it fails its item.
    verdicts: str = "report"
    #: "criteria": the terminal prints the tables with a verdict; "all": every table.
    tables: str = "criteria"
    report_path: Path | None = None
    markdown_path: Path | None = None
    #: The shipped suite's behaviours and cassettes (``shipped_suite``), where they are not the run's own.
    shipped: tuple[Path, Path] | None = None

    @classmethod
    def from_config(cls, config: pytest.Config) -> Settings:
        def value(name: str):
            cli = config.getoption(f"gaamas_{name}")
            if cli == "" or (isinstance(cli, list) and "" in cli):  # an unset variable, most often: nothing would be written
                flag = f"--gaamas-{name.replace('_', '-')}"
                raise pytest.UsageError(f"{flag} is given empty (an unset variable?): give it a value, or leave the option out")
            if cli is not None and cli is not False and cli != []:  # 0 is a value, not an absence
                return cli
            ini = config.getini(f"gaamas_{name}")
            return ini if ini not in ("", [], None) else None

        def number(name: str, kind: type):
            raw = value(name)
            if raw is None:
                return None
            try:
                return kind(raw)
            except ValueError:
                raise pytest.UsageError(f"gaamas_{name} must be a {kind.__name__}, got {raw!r}") from None

        try:
            models = tuple(dict.fromkeys(canonical_spec(s) for s in (value("model") or [DEFAULT_MODEL])))
        except SpecError as error:
            raise pytest.UsageError(f"--gaamas-model: {error}") from None

        verdicts = value("verdicts") or "report"
        if verdicts not in VERDICT_MODES:
            raise pytest.UsageError(f"gaamas_verdicts must be one of {', '.join(VERDICT_MODES)}, got {verdicts!r}")
        tables = value("tables") or "criteria"
        if tables not in TABLE_MODES:
            raise pytest.UsageError(f"gaamas_tables must be one of {', '.join(TABLE_MODES)}, got {tables!r}")
        record = value("record") or ("none" if os.environ.get("CI") else "new_episodes")
        if record not in RECORD_MODES:
            raise pytest.UsageError(f"gaamas_record must be one of {', '.join(RECORD_MODES)}, got {record!r}")
        if record == "once" and not hasattr(config, "workerinput"):  # said once a session, by the controller
            say_once_changed(config)
        def bounded(name: str, kind: type, low: float, high: float | None = None):
            found = number(name, kind)
            if found is not None and not (low <= found and (high is None or found <= high)):
                flag = f"--gaamas-{name.replace('_', '-')}"
                wanted = f"at least {low}" if high is None else f"between {low} and {high}"
                raise pytest.UsageError(f"{flag} must be {wanted}, got {found}")
            return found

        trials = bounded("trials", int, 1, MAX_TRIALS)
        max_trials = bounded("max_trials", int, 1, MAX_TRIALS)
        seed = bounded("seed", int, 0, MAX_SEED)
        concurrency = bounded("concurrency", int, 1, 256)
        max_tokens = bounded("max_tokens", int, 16)
        max_requests = bounded("max_requests", int, 1)
        retries = bounded("retries", int, 0, 20)
        timeout = bounded("timeout", float, 1, 3600)
        temperature = bounded("temperature", float, 0, 2)
        prices, budget = priced(value("prices"), number("budget", float), models)

        thresholds = {}
        for entry in value("threshold") or []:
            name, equals, raw = entry.partition("=")
            try:
                thresholds[name.strip()] = float(raw)
            except ValueError:
                raise pytest.UsageError(f"--gaamas-threshold takes NAME=NUMBER, got {entry!r}") from None
            if not equals or not name.strip():
                raise pytest.UsageError(f"--gaamas-threshold takes NAME=NUMBER, got {entry!r}")
        unread = unread_thresholds(thresholds, threshold_names(behaviour_arguments(config)))
        if unread:  # a misspelt name would otherwise change nothing, silently
            raise pytest.UsageError(f"--gaamas-threshold: {unread}; `python -m pytest_gaamas thresholds` lists every name")

        allowed_drops = {}
        units = {unit.lower(): unit for unit in UNITS}
        for entry in value("compare_fail") or []:
            key, equals, raw = entry.rpartition("=")
            key = units.get(key.strip().lower(), key.strip())
            try:
                drop = float(raw)
            except ValueError:
                drop = math.nan
            if not equals or not key:
                raise pytest.UsageError(
                    f"--gaamas-compare-fail takes UNIT=DROP or BEHAVIOUR=DROP, got {entry!r}: one number cannot serve dollars "
                    f"and rates alike; say which, e.g. rate=0.1 dollars=10 CCEI=0.05 points=0.3 (units: {', '.join(UNITS)})"
                )
            if math.isnan(drop) or drop < 0:
                raise pytest.UsageError(f"--gaamas-compare-fail takes UNIT=DROP or BEHAVIOUR=DROP with DROP >= 0, got {entry!r}")
            allowed_drops[key] = drop
        unknown = sorted(set(allowed_drops) - set(UNITS) - behaviours_named_by(behaviour_arguments(config)))
        if unknown:  # a typo would otherwise gate nothing, silently
            raise pytest.UsageError(
                f"--gaamas-compare-fail: no unit or behaviour named {', '.join(map(repr, unknown))} in this run; units: "
                f"{', '.join(UNITS)}; behaviours: {', '.join(sorted(behaviours_named_by(behaviour_arguments(config)))) or 'none'}"
            )
        compare = value("compare")
        if allowed_drops and not compare:
            raise pytest.UsageError("--gaamas-compare-fail needs --gaamas-compare=NAME_OR_PATH: the run to compare with")
        if compare:  # a run that cannot be compared with is said now, not after the whole suite
            try:
                load_run(compare, root_runs_dir(config, value))
            except CompareError as error:
                raise pytest.UsageError(f"--gaamas-compare: {error}") from None
        save = value("save")
        if save is not None and not RUN_NAME.match(save):
            raise pytest.UsageError(f"--gaamas-save takes a name of letters, digits, '.', '_' and '-', got {save!r}")

        root = Path(config.rootpath)
        json_path = value("json")
        cassette_dir = root / (value("cassette_dir") or "cassettes")
        if value("cassette_dir") and record == "none" and not cassette_dir.is_dir():  # each item would fail, one by one
            raise pytest.UsageError(f"--gaamas-cassette-dir: there is no folder {cassette_dir} to replay from; give the folder "
                                    "that holds the cassettes, or leave the option out")  # fmt: skip
        settings = cls(
            models=models,
            trials=trials,
            max_trials=max_trials,
            seed=seed or 0,
            temperature=temperature,
            record=record,
            json_path=Path(json_path) if json_path else None,
            cassette_dir=cassette_dir,
            journal_dir=root / (value("journal_dir") or ".gaamas/journal"),
            thresholds=thresholds,
            save=save,
            compare=compare,
            allowed_drops=allowed_drops,
            runs_dir=root_runs_dir(config, value),
            replace_recorded=bool(value("replace_recorded")),
            check_cassettes=bool(value("check_cassettes")),
            max_tokens=max_tokens,
            think=bool(value("think")),
            retries=DEFAULT_RETRIES if retries is None else retries,
            timeout=REQUEST_TIMEOUT_S if timeout is None else timeout,
            max_requests=max_requests,
            prices=prices,
            budget=budget,
            concurrency=concurrency,
            verdicts=verdicts,
            tables=tables,
            report_path=Path(value("report")) if value("report") else None,
            markdown_path=Path(value("markdown")) if value("markdown") else None,
            shipped=shipped_beside(root),
        )
        settings.check_outputs()
        return settings

    @property
    def keeps_run_log(self) -> bool:
        """Whether the run writes its log, or something drawn from it: a run log, a saved run, a
        report or a summary, or a comparison (which the run log records)."""
        return any((self.json_path, self.save, self.compare, self.report_path, self.markdown_path))

    @property
    def cassette_suffix(self) -> str:
        """Runs that ask differently (another temperature, thinking, another token budget) keep their
        cassettes apart from the paper's: ``embedded-smollm2@T1.4``, ``ollama-qwen3@think``."""
        suffix = "" if self.temperature is None else f"@T{self.temperature:g}"
        suffix += "@think" if self.think else ""
        return suffix + ("" if self.max_tokens is None else f"@max{self.max_tokens}")

    def for_item(self, path: Path, model_dir: str) -> Settings:
        """The settings an item of the behaviour file ``path`` plays under, for the model whose cassettes
        are in ``model_dir`` (``embedded-smollm2``, with the run's suffix). A shipped behaviour run
        from another project replays the shipped cassettes of a model they hold, and only replays
        them: an installed package is no place to write, whatever the run's mode. The run's own
        cassette folder takes over where it holds a cassette of that behaviour for the model, and
        wherever the run records afresh (``all``): its recordings are the user's, in the user's
        folder. Every other item, and every item of a run in the checkout, reads and writes the run's
        own folder."""
        if self.shipped is None or self.record == "all":
            return self
        behaviours, cassettes = self.shipped
        if Path(path).resolve().parent != behaviours or cassettes == self.cassette_dir.resolve():
            return self
        behaviour = Path(path).stem.removeprefix("test_")
        if holds_cassettes(self.cassette_dir / model_dir / behaviour) or not holds_cassettes(cassettes / model_dir / behaviour):
            return self
        return replace(self, cassette_dir=cassettes, record="none")

    def behaviour_file(self, rootpath: Path, test_id: str) -> Path:
        """The behaviour file of the item ``test_id``: under the rootdir, or, for a shipped behaviour
        run from an installed package (``behaviours/test_ultimatum.py::...``), the package's own."""
        written = test_id.split("::", 1)[0]
        shipped = self.shipped[0].parent / written if self.shipped is not None else None
        if not (rootpath / written).is_file() and shipped is not None and shipped.is_file():
            return shipped
        return rootpath / written

    def model_meta(self, directory: str) -> Path:
        """Where the model whose cassettes are in ``directory`` is described (``model.json``): the
        run's own cassette folder, or, where that has none, the shipped cassettes' (see ``for_item``)."""
        own = self.cassette_dir / directory / "model.json"
        shipped = self.shipped[1] / directory / "model.json" if self.shipped is not None else None
        return shipped if not own.exists() and shipped is not None and shipped.exists() else own

    def check_outputs(self) -> None:
        """Every place this run will write, tried now: a long run must not end unable to save."""
        places = [("--gaamas-journal-dir", self.journal_dir)]
        if self.record != "none":
            places.append(("--gaamas-cassette-dir", self.cassette_dir))
        for option, path in (("--gaamas-json", self.json_path), ("--gaamas-report", self.report_path),
                             ("--gaamas-markdown", self.markdown_path)):  # fmt: skip
            if path is not None:
                if path.is_dir():
                    raise pytest.UsageError(f"{option}: {path} is a folder; give a file name")
                places.append((option, path.parent))
        if self.save is not None:
            places.append(("--gaamas-runs-dir", self.runs_dir))
        for option, directory in places:
            problem = unwritable(directory)
            if problem:
                raise pytest.UsageError(f"{option}: cannot write in {directory} ({problem}); choose another place")


@functools.cache
def shipped_suite() -> tuple[Path, Path] | None:
    """The behaviours and cassettes that ship with the plugin, resolved: in an installed package, where
    the wheel puts them (``pytest_gaamas/shipped/``), or at the top of a checkout; None where neither is."""
    package = Path(__file__).resolve().parent
    for root in (package / "shipped", package.parent):
        behaviours, cassettes = root / "behaviours", root / "cassettes"
        if behaviours.is_dir() and cassettes.is_dir() and (root != package.parent or (root / "pyproject.toml").is_file()):
            return behaviours, cassettes
    return None


def shipped_beside(rootpath: Path) -> tuple[Path, Path] | None:
    """The shipped suite where it is not the run's own: an installed package's, or a checkout's run
    from another project (an editable install); None for a run in the checkout itself, whose
    behaviours and cassettes are its own."""
    shipped = shipped_suite()
    return None if shipped is None or shipped[0].parent == Path(rootpath).resolve() else shipped


def holds_cassettes(folder: Path) -> bool:
    """Whether ``folder`` holds a cassette: an empty folder, or one of lock files, holds no recording."""
    return any(not p.name.startswith(".") for pattern in ("*.yaml", "*.yaml.gz") for p in folder.glob(pattern))


#: Folders of behaviours a run collects beside its arguments (``--gaamas-suite``'s shipped ones, from
#: another project), put here by the plugin that adds them, for what reads the run's behaviours.
COLLECTED_BESIDE = pytest.StashKey[list[Path]]()


def collected_beside(config: pytest.Config) -> list[Path]:
    return config.stash[COLLECTED_BESIDE] if COLLECTED_BESIDE in config.stash else []


def behaviour_arguments(config: pytest.Config) -> list[str]:
    """The files and folders of behaviours the run collects: its arguments, and the shipped suite's
    where ``--gaamas-suite`` adds it."""
    return [*config.args, *map(str, collected_beside(config))]


def behaviour_files(args: list[str]) -> list[Path]:
    """The behaviour files among the files and folders a run was given (node ids name their file)."""
    files = []
    for arg in args:
        path = Path(arg.split("::", 1)[0])
        files += [f for f in (sorted(path.rglob("test_*.py")) if path.is_dir() else [path]) if f.suffix == ".py"]
    return files


def behaviours_named_by(args: list[str]) -> set[str]:
    """The behaviours in the files and folders a run was given: ``test_ultimatum.py`` is ``ultimatum``."""
    return {f.stem.removeprefix("test_") for f in behaviour_files(args)}


_THRESHOLD_CALL = re.compile(r"\.threshold\(")
_THRESHOLD_NAMED = re.compile(r"\.threshold\(\s*[\"'](\w+)[\"']\s*,\s*([^)\n]*)\)")


def threshold_names(args: list[str]) -> dict[str, dict[str, str] | None]:
    """Each behaviour of the files and folders given, with the thresholds it reads (name -> default,
    as written), read from its source; None where it names one by a variable, which only running it
    would tell."""
    found: dict[str, dict[str, str] | None] = {}
    for file in behaviour_files(args):
        try:
            source = file.read_text(errors="replace")
        except OSError:
            continue
        literal = _THRESHOLD_NAMED.findall(source)
        every_call_literal = len(literal) == len(_THRESHOLD_CALL.findall(source))
        found[file.stem.removeprefix("test_")] = {name: _constant(default, source) for name, default in literal} if every_call_literal else None
    return found


def _constant(written: str, source: str) -> str:
    """A default as written, or the value of the module constant it names (``MIN_SURVIVAL = 0.5``)."""
    assigned = re.search(rf"^{re.escape(written)}\s*=\s*([^#\n]+)", source, re.MULTILINE) if written.isidentifier() else None
    return assigned.group(1).strip() if assigned else written.strip()


def unread_thresholds(thresholds: dict[str, float], names: dict[str, dict[str, str] | None]) -> str | None:
    """What of ``thresholds`` (--gaamas-threshold) no behaviour of the run reads, said with the names it
    could have meant; None where every override is read, or where the run's behaviours cannot tell."""
    if not names:
        return None
    unread = []
    for key in thresholds:
        behaviour, dot, name = key.rpartition(".")
        its_names = names.get(behaviour)
        if dot and behaviour not in names:
            unread.append(f"no behaviour {behaviour!r} in this run (behaviours: {', '.join(sorted(names))})")
        elif dot and its_names is not None and name not in its_names:
            unread.append(f"{behaviour} reads no threshold {name!r} (it reads: {', '.join(sorted(its_names)) or 'none'})")
        elif not dot and all(read is not None for read in names.values()) and not any(key in read for read in names.values() if read is not None):
            unread.append(f"no behaviour of this run reads a threshold {key!r}")
    return "; ".join(unread) or None


def root_runs_dir(config: pytest.Config, value) -> Path:
    return Path(config.rootpath) / (value("runs_dir") or "gaamas-runs")


def unwritable(directory: Path) -> str | None:
    """Why nothing could be written in ``directory`` (or in the nearest existing folder above it,
    where it is yet to be made), or None. Tried with a real file: permission bits say nothing to root."""
    existing = directory
    while not existing.exists():
        if existing.parent == existing:
            return "no such folder"
        existing = existing.parent
    if not existing.is_dir():
        return f"{existing} is not a folder"
    try:
        with tempfile.TemporaryFile(dir=existing):
            pass
    except OSError as error:
        return error.strerror or str(error)
    return None
