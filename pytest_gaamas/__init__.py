"""pytest-gaamas: how LLM agents behave in classic economic games, against rational play and real people."""

__version__ = "0.1.0"


def cells(**parameters):
    """One parametrization for the tests that play the same cells (an experiment and the criteria
    that replay it): ``@cells(role=(...), generation=(...))``. The first parameter comes first in the
    test id and in the cassette's name, as the innermost ``parametrize`` would."""
    import pytest

    def parametrize(test):
        for name, values in parameters.items():
            test = pytest.mark.parametrize(name, values)(test)
        return test

    return parametrize
