"""The complete example behaviour of docs/writing-a-behaviour.md ("A complete behaviour, in one
file") is run as written."""

import re

from conftest import ROOT, outcomes

MARKER = "<!-- example-behaviour -->"


def example_behaviour() -> str:
    page = (ROOT / "docs" / "writing-a-behaviour.md").read_text()
    after = page.split(MARKER, 1)[1]
    return re.search(r"```python\n(.*?)```", after, re.DOTALL).group(1)


def test_the_readme_example_behaviour_discriminates_rational_from_random(pytester):
    pytester.makepyfile(test_more_or_less=example_behaviour())
    result = pytester.runpytest("--gaamas-model=reference:rational", "--gaamas-model=reference:random", "-p", "no:cacheprovider")
    assert outcomes(result) == {"passed": 1, "missed": 1}
    result.stdout.fnmatch_lines(["*More or less: rate of taking $6*", "reference:rational *actions *1.00 [[]0.84, 1.00[]] *met"])
    result.stdout.fnmatch_lines(["MISSED test_more_or_less[[]reference-random[]]: took $6 at a rate of 0.55 [[]0.34, 0.74[]]"])


def test_the_readme_example_behaviour_is_missed_by_every_agent_that_never_reads_it(pytester):
    """The example lists its two amounts in both orders, so no answer by position or by rote meets it."""
    pytester.makepyfile(test_more_or_less=example_behaviour())
    agents = [f"--gaamas-model=reference:{kind}" for kind in ("first", "last", "constant")]
    result = pytester.runpytest(*agents, "-p", "no:cacheprovider")
    assert outcomes(result) == {"missed": 3}
    result.stdout.fnmatch_lines(["MISSED test_more_or_less[[]reference-first[]]: took $6 at a rate of 0.50 *"])
