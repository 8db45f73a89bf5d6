"""pytest-recording asks, when pytest loads it, for vcrpy's matchers to be assertion-rewritten.
Were this plugin loaded first, vcrpy would already be imported and every run would warn that they
cannot be. Asking first, and only where pytest-recording is installed, leaves vcrpy as it would be
without this plugin. Imported by the plugin before anything that imports vcrpy."""

import importlib.util

import pytest

if importlib.util.find_spec("pytest_recording") is not None:
    pytest.register_assert_rewrite("vcr.matchers")
