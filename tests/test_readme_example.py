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
    # The coin misses at 30 trials, and its cell looks again: at 60 it is shown at chance.
    assert outcomes(result) == {"passed": 1, "at": 1}
    result.stdout.fnmatch_lines(["*More or less: rate of taking $6*", "reference:rational *actions *1.00 [[]0.89, 1.00[]] *met"])
    result.stdout.fnmatch_lines(["AT CHANCE test_more_or_less[[]reference-random[]]: took $6 at a rate of 0.50 [[]0.38, 0.62[]]*"])
    assert "look 2 of 3, at 60 trials (0.25 of the level)" in " ".join(result.stdout.str().split())


def test_the_readme_example_behaviour_finds_every_agent_that_never_reads_it_at_chance(pytester):
    """The example lists its two amounts in both orders, so an answer by position takes the $6 in exactly
    half the trials: shown at chance, never met."""
    pytester.makepyfile(test_more_or_less=example_behaviour())
    agents = [f"--gaamas-model=reference:{kind}" for kind in ("first", "last", "blind-option-2")]
    result = pytester.runpytest(*agents, "-p", "no:cacheprovider")
    assert outcomes(result) == {"at": 3}  # pytest reads "3 at chance" as {"at": 3}
    result.stdout.fnmatch_lines(["AT CHANCE test_more_or_less[[]reference-first[]]: took $6 at a rate of 0.50 *"])


def strategy_example() -> str:
    after = (ROOT / "docs" / "writing-a-behaviour.md").read_text().split("<!-- example-strategy -->", 1)[1]
    return re.search(r"```python\n(.*?)```", after, re.DOTALL).group(1)


def test_the_guide_s_strategy_example_plays_both_generations(pytester):
    """Added to the first example as the guide says, the strategy row is asked of the reference
    agents' code: the rational function takes $6 in every trial, the random one half the time."""
    pytester.makepyfile(test_more_or_less=example_behaviour() + "\n\n" + strategy_example())
    result = pytester.runpytest("--gaamas-model=reference:rational", "--gaamas-model=reference:random", "-p", "no:cacheprovider",
                                "-k", "in_code")  # fmt: skip
    result.stdout.fnmatch_lines(["reference:rational *strategy *1.00 [[]0.89, 1.00[]] *met"])
    assert outcomes(result) == {"passed": 2, "missed": 1, "at": 1}, result.stdout.str()[-3000:]


def test_a_game_without_strategy_played_as_one_fails_its_item_in_one_line(pytester):
    behaviour = example_behaviour().replace(
        "def test_more_or_less(gaamas):", '@pytest.mark.parametrize("generation", ["strategy"])\ndef test_more_or_less(gaamas, generation):'
    ).replace("temperature=gaamas.temperature(0.7))", "temperature=gaamas.temperature(0.7), generation=generation)")
    pytester.makepyfile(test_more_or_less="import pytest\n" + behaviour)
    result = pytester.runpytest("--gaamas-model=reference:rational", "-p", "no:cacheprovider")
    assert outcomes(result) == {"failed": 1}
    result.stdout.fnmatch_lines(["*MoreOrLess has no strategy(), the Contract a strategy is asked by*generation='actions' alone*"])
    assert "AttributeError" not in result.stdout.str() and "Traceback" not in result.stdout.str()
