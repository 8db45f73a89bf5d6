"""Cassette and journal names that cannot collide: two parameter values that slug alike, two model
names a look-alike hyphen apart, never share a file (re-recording one would erase the other), and no
name passes the 255 bytes a file name may have. The shipped cassettes keep their names."""

import json
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

from conftest import ROOT

from pytest_gaamas.journal import Journal
from pytest_gaamas.models import resolve
from pytest_gaamas.models.base import MAX_NAME_BYTES, slug
from pytest_gaamas.play import RoundRecord, TrialRecord
from pytest_gaamas.recording import RECORDED_BEFORE, item_file_name, item_paths

#: Each collected shipped item's test function and the values that name its files, as the plugin sees them.
COLLECT = """
import json, sys, pytest
class Items:
    def pytest_collection_finish(self, session):
        self.items = session.items
found = Items()
pytest.main(["--collect-only", "-q", "-p", "no:cacheprovider", "behaviours", "--gaamas-model=embedded:smollm2",
             "--gaamas-record=none"], plugins=[found])
named = []
for item in found.items:
    params = item.callspec.params if hasattr(item, "callspec") else {}
    named.append([item.originalname, [v for k, v in params.items() if k != "gaamas_model" and isinstance(v, (str, int, float, bool))]])
print("NAMED" + json.dumps(named))
"""


def spelt(name: str, stems: set[str], values: set[str]) -> bool:
    """Whether ``name`` is what ``item_file_name`` computes for one of ``stems`` and some of ``values``
    in some order (the values an item names its own files by, or another's it shares)."""
    tokens = {slug(value): value for value in values}
    for stem in stems:
        if name == stem:
            return True
        if not name.startswith(stem + "-"):
            continue
        rest, ways = name[len(stem) + 1:], {0: [[]]}
        for start in range(len(rest)):
            for chosen in ways.get(start, [])[:50]:
                for token, value in tokens.items():
                    end = start + len(token)
                    if rest.startswith(token, start) and (end == len(rest) or rest[end] == "-"):
                        ways.setdefault(end + 1 if end < len(rest) else end, []).append([*chosen, value])
        if any(item_file_name(stem, chosen) == name for chosen in ways.get(len(rest), [])):
            return True
    return False


def test_every_shipped_cassette_keeps_the_name_its_item_computes():
    """Each shipped cassette's name is what the code computes from its item's values (read from the
    collected items, and the names the behaviours record under): none was renamed by the digests."""
    run = subprocess.run([sys.executable, "-c", COLLECT], cwd=ROOT, capture_output=True, text=True, timeout=300)
    (line,) = [line for line in run.stdout.splitlines() if line.startswith("NAMED")]
    collected = json.loads(line[len("NAMED"):])
    stems = {stem for stem, _ in collected} | {"test_payoff_sensitivity"}
    values = {str(value) for _, named in collected for value in named} | RECORDED_BEFORE
    shipped = [path for path in (ROOT / "cassettes").glob("*/*/*") if path.name.endswith((".yaml", ".yaml.gz"))]
    assert len(shipped) > 250
    renamed = sorted(str(path.relative_to(ROOT)) for path in shipped if not spelt(path.name.split(".yaml")[0], stems, values))
    assert not renamed, f"shipped cassettes whose names no item computes any more: {renamed}"


def test_the_values_recorded_before_keep_names_no_other_value_can_have():
    names = [item_file_name("test_x", [value]) for value in RECORDED_BEFORE]
    assert len(set(names)) == len(names)
    assert all("-" in slug(value) and "~" not in name for value, name in zip(RECORDED_BEFORE, names))
    for value in RECORDED_BEFORE:  # the same slug, spelt otherwise, is told apart
        assert item_file_name("test_x", [slug(value)]) != item_file_name("test_x", [value])


def test_two_values_that_slug_alike_never_share_a_cassette_or_a_journal(tmp_path):
    settings = SimpleNamespace(cassette_dir=tmp_path / "cassettes", journal_dir=tmp_path / "journal", cassette_suffix="")
    model = resolve("openai:fake")
    item = SimpleNamespace(originalname="test_risk", name="test_risk")

    def paths(value):
        return item_paths(settings, model, item, "risk", {"attitude": value}, recorded_as=None, variant=None, compressed=False)

    spellings = ["risk averse", "risk-averse", "risk/averse", "risk  averse", "-risk-averse", "risk\u2010averse"]  # the last a look-alike hyphen
    assert len({paths(value).cassette for value in spellings}) == len(spellings)
    assert len({paths(value).journal for value in spellings}) == len(spellings)
    assert item_file_name("test_two", ["a-b", "c"]) != item_file_name("test_two", ["a", "b-c"])
    assert item_file_name("test_risk", ["averse"]) == "test_risk-averse"  # a plain value keeps a plain name


def test_two_model_names_a_look_alike_hyphen_apart_have_folders_of_their_own():
    specs = ["openai:gpt-4o", "openai:gpt\u20104o", "openai:gpt 4o", "openai:gpt/4o", "ollama:llama3:8b", "ollama:llama3-8b"]
    folders = [resolve(spec).directory for spec in specs]
    assert len(set(folders)) == len(specs), folders
    assert folders[0] == "openai-gpt-4o" and folders[-1] == "ollama-llama3-8b"
    assert resolve("embedded:qwen2.5-coder-0.5b").directory == "embedded-qwen2.5-coder-0.5b"


def test_a_long_parameter_makes_a_journal_the_file_system_takes(tmp_path):
    settings = SimpleNamespace(cassette_dir=tmp_path / "cassettes", journal_dir=tmp_path / "journal", cassette_suffix="")
    model = resolve("openai:" + "m" * 300)
    item = SimpleNamespace(originalname="test_" + "t" * 80, name="test_long")
    long_value = "a claim of many words " * 20
    paths = item_paths(settings, model, item, "long", {"claim": long_value}, recorded_as="test_" + "r" * 80, variant={"claim": long_value},
                       compressed=True)  # fmt: skip
    assert len(model.directory) <= MAX_NAME_BYTES
    journal = Journal(paths.journal, "0123456789abcdef")
    journal.write(TrialRecord(0, [RoundRecord(1, [], "{}", True, 0, "")], {"valid": True}), [])  # the file system takes it
    journal.close(complete=False)
    for name in (paths.cassette.name, journal.path.name, f".{journal.path.name}.lock", f".{journal.path.name}.abcdefgh.tmp"):
        assert len(name.encode()) <= 255, name
    Path(paths.cassette).parent.mkdir(parents=True)
    paths.cassette.write_bytes(b"")  # the file system takes it
