"""vision/nets.json lists every committed net once: its bytes, the command and commit that
made it, and the data it learned from (issue 36, item 7)."""

from __future__ import annotations

import hashlib
import importlib.util
import json
import shlex
import subprocess
from collections import Counter
from pathlib import Path

import pytest
from pydantic import ValidationError

from tidetower.vision.d6 import nets as d6_nets
from tidetower.vision.d6.find import DICE_FINDER
from tidetower.vision.nets import MANIFEST, PACKAGE, Net, load_manifest, sha256_of
from tidetower.vision.numerals.kind import KIND_MODEL
from tidetower.vision.numerals.nets import MODEL as NUMERAL_MODEL

ROOT = Path(__file__).resolve().parents[1]
NETS = load_manifest()
IN_GIT = (ROOT / ".git").exists()


def _git(*args: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, timeout=60)


def committed_nets() -> list[str]:
    """Return the committed .onnx files: git's list in a checkout, else the package's own."""
    if IN_GIT:
        return sorted(_git("ls-files", "*.onnx").stdout.decode().split())
    return sorted(f"vision/{p.relative_to(PACKAGE).as_posix()}" for p in PACKAGE.rglob("*.onnx"))


def test_every_committed_net_has_exactly_one_entry() -> None:
    counts = Counter(net.file for net in NETS)
    assert committed_nets() and sorted(counts) == committed_nets()
    assert [file for file, n in counts.items() if n > 1] == []


def test_every_net_the_reader_loads_is_listed() -> None:
    loaded = {d6_nets.finder(), *d6_nets.face_models(), DICE_FINDER, KIND_MODEL, NUMERAL_MODEL}
    assert {p.resolve() for p in loaded} <= {net.path.resolve() for net in NETS}


@pytest.mark.parametrize("net", NETS, ids=lambda net: net.file)
def test_each_entry_matches_its_file(net: Net) -> None:
    assert net.path.stat().st_size == net.bytes
    assert sha256_of(net.path) == net.sha256


@pytest.mark.parametrize("net", NETS, ids=lambda net: net.file)
def test_each_commit_is_the_last_to_change_the_net(net: Net) -> None:
    if not IN_GIT:
        pytest.skip("no .git here (an installed wheel or an export): no history to look in")
    if _git("rev-parse", "--is-shallow-repository").stdout.strip() == b"true":
        pytest.skip("a shallow clone: the nets' commits may lie beyond its depth")
    assert _git("merge-base", "--is-ancestor", net.commit, "HEAD").returncode == 0
    blob = _git("cat-file", "blob", f"{net.commit}:{net.file}").stdout
    assert hashlib.sha256(blob).hexdigest() == net.sha256, "the commit holds other bytes"
    last = _git("log", "-1", "--format=%H", "HEAD", "--", net.file).stdout.decode().strip()
    assert last == net.commit


def scripts_of(command: str) -> list[Path]:
    """Return the file each python step of a command runs (`python -m MODULE` or a path)."""
    found = []
    for step in command.split("&&"):
        words = shlex.split(step)
        if words[:2] == ["python", "-m"]:
            spec = importlib.util.find_spec(words[2])
            found.append(Path(spec.origin if spec and spec.origin else words[2]))
        elif words[:1] == ["python"]:
            found.append(ROOT / words[1])
    return found


@pytest.mark.parametrize("net", NETS, ids=lambda net: net.file)
def test_each_command_names_a_script_in_the_repository(net: Net) -> None:
    scripts = scripts_of(net.made_by)
    assert scripts and all(path.is_file() for path in scripts), scripts


def test_an_unknown_key_is_refused(tmp_path: Path) -> None:
    entry = json.loads(MANIFEST.read_text())[0]
    bad = tmp_path / "nets.json"
    bad.write_text(json.dumps([{**entry, "trained_by": "someone"}]))
    with pytest.raises(ValidationError, match="trained_by"):
        load_manifest(bad)
