"""The session's engine, behind the thin hooks of ``pytest_gaamas.plugin``: its state and the one run
record made at its end (``engine``), the xdist transport (``xdist``), where answers come from and the
orphaned cassettes (``cassette_check``), the terminal summary (``terminal``) and the files written
from the record (``outputs``)."""
