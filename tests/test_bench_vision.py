"""The d6 benchmark's honesty guard: a fold is only scored as held out by nets held out of it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tidetower.vision.d6 import nets
from tidetower.vision.numerals.nets import MODEL
from tidetower.vision.score import FOLDS, Label

BENCH = Path(__file__).resolve().parents[1] / "bench" / "vision_d6.py"
sys.path.insert(0, str(BENCH.parent))
import vision_numerals  # noqa: E402  (the benchmark is a script beside vision_d6.py)


def _cv(pair: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(BENCH), "--cv", pair], capture_output=True, text=True, timeout=120
    )


def test_shipped_nets_record_that_they_learned_from_dev_alone() -> None:
    for path in [nets.MODELS / "d6_finder.onnx", *nets.face_models()]:
        assert nets.learned_from(path) == set(FOLDS) - {"test"}, path.name


def test_cross_validation_refuses_nets_that_learned_from_the_fold() -> None:
    done = _cv(f"b={nets.MODELS}")
    assert done.returncode != 0
    assert "do not say they were held out of fold b" in done.stderr
    assert "| fold" not in done.stdout  # nothing was scored


def test_cross_validation_names_an_unknown_fold() -> None:
    done = _cv(f"z={nets.MODELS}")
    assert done.returncode != 0 and "no fold 'z'; folds are test, a, b, c" in done.stderr


def test_the_shipped_numeral_net_learned_from_no_real_numeral_photo() -> None:
    assert vision_numerals.seen_kinds(MODEL) == frozenset()


def test_each_real_photo_is_read_once_by_a_net_that_never_saw_its_kind() -> None:
    d20, d4 = (Label(1, (0.4, 0.4, 0.5, 0.5), "d20"),), (Label(1, (0.4, 0.4, 0.5, 0.5), "d4"),)
    seen = [frozenset({"d12", "d6"}), frozenset({"d20", "d8"})]
    assert vision_numerals.reader_of(d20, seen) == 0
    assert vision_numerals.reader_of(d4, seen) == 0  # no net has d4 classes: read once
    assert vision_numerals.reader_of(d20, [frozenset({"d20"})]) is None


@pytest.mark.skipif(
    not (BENCH.parents[1] / ".." / "shared" / "data" / "dice-values").is_dir(),
    reason="../shared/data/dice-values is not beside this clone: no photos to refuse to score",
)
def test_the_values_benchmark_refuses_a_kind_net_that_learned_from_the_fold() -> None:
    numerals = BENCH.parent / "vision_numerals.py"
    shipped = Path(vision_numerals.__file__).resolve().parents[1] / "vision" / "numerals"
    done = subprocess.run(
        [
            sys.executable,
            str(numerals),
            "--only",
            "values",
            "--kind-net",
            f"top={shipped / 'kinds.onnx'}",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode != 0
    assert "that net learned from top" in done.stderr
    assert "| fold" not in done.stdout  # nothing was scored
