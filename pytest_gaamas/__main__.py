"""``python -m pytest_gaamas report RUN -o report.html``: the report of a run saved earlier."""

from __future__ import annotations

import argparse
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
    arguments = parser.parse_args(argv)

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


if __name__ == "__main__":
    sys.exit(main())
