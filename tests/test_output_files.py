"""Files the suite writes have the user's usual permissions, whatever the way they are written."""

import os
import stat

import pytest

from pytest_gaamas.cassettes import write_atomically


@pytest.mark.parametrize("umask", [0o022, 0o077, 0o002])
def test_a_file_written_atomically_has_the_mode_open_would_give_it(tmp_path, umask):
    previous = os.umask(umask)
    try:
        write_atomically(tmp_path / "report.html", "<html></html>", what="report")
        write_atomically(tmp_path / "report.html", "<html>again</html>", what="report")  # a rewrite too
        with open(tmp_path / "plain.html", "w") as plain:
            plain.write("x")
    finally:
        os.umask(previous)
    written = stat.S_IMODE((tmp_path / "report.html").stat().st_mode)
    assert written == stat.S_IMODE((tmp_path / "plain.html").stat().st_mode) == 0o666 & ~umask
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]
