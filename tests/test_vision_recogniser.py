"""The pretrained recogniser: loaded from the installed wheel, scored only on legal faces, and
a clear start-up error when it is missing."""

from __future__ import annotations

import subprocess
from pathlib import Path

import cv2
import numpy as np
import pytest
from click.testing import CliRunner

from tidetower.firmware.cli import main
from tidetower.firmware.config import ConfigError, load_config
from tidetower.vision.numerals import recogniser
from tidetower.vision.numerals.faces import texts
from tidetower.vision.numerals.recogniser import (
    SYMBOLS,
    RecogniserMissing,
    model_path,
    text_log_likelihood,
)
from tidetower.vision.read import reader_problem
from tidetower.vision.settings import ReaderSettings

REPO = Path(__file__).resolve().parents[1]


def test_the_recogniser_is_loaded_from_the_installed_wheel_not_the_repository() -> None:
    path = model_path()
    assert path.is_file() and path.name == "PP-OCRv6_rec_small.onnx"
    assert "rapidocr" in path.parts
    tracked = subprocess.run(
        ["git", "ls-files"], cwd=REPO, capture_output=True, text=True, check=True
    ).stdout.split()
    assert not [name for name in tracked if "PP-OCR" in name or "rapidocr" in name]


def test_a_missing_recogniser_is_one_clear_line_at_start_up(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(recogniser, "PACKAGE", "no_such_ocr_package")
    with pytest.raises(RecogniserMissing, match="pip install"):
        model_path()
    problem = reader_problem(ReaderSettings())
    assert problem is not None and "\n" not in problem
    assert problem.startswith("camera.reader.numerals: ") and "no_such_ocr_package" in problem
    assert reader_problem(ReaderSettings(numerals=False)) is None  # pip d6 alone still read
    config = tmp_path / "tower.toml"
    config.write_text(f'[table]\nstore = "{tmp_path}/t.db"\n[camera]\nsource = "simulated"\n')
    with pytest.raises(ConfigError, match=r"camera\.reader\.numerals: .*no_such_ocr_package"):
        load_config(config)
    photo = tmp_path / "roll.png"
    cv2.imwrite(str(photo), np.zeros((64, 64, 3), np.uint8))
    result = CliRunner().invoke(main, ["read", str(photo)])
    assert result.exit_code == 1 and "no_such_ocr_package" in result.output
    assert "Traceback" not in result.output


def _one_hot(text: str, steps: int = 8) -> np.ndarray:
    """A line whose recogniser output spells `text`, blanks between, as log-probabilities."""
    logp = np.full((1, steps, 1 + len(SYMBOLS)), np.log(1e-4))
    logp[0, :, 0] = np.log(0.999)
    for i, char in enumerate(text):
        logp[0, 1 + 2 * i, 0] = np.log(1e-4)
        logp[0, 1 + 2 * i, 1 + SYMBOLS.index(char)] = np.log(0.999)
    return logp


@pytest.mark.parametrize("text", ["7", "17", "00", "11", "6.", "90"])
def test_ctc_scores_the_text_spelled_above_every_other(text: str) -> None:
    logp = _one_hot(text)
    best = text_log_likelihood(logp, text)[0]
    for other in ("1", "7", "17", "71", "0", "00", "6", "9", "11", "90", "6."):
        if other != text:
            assert text_log_likelihood(logp, other)[0] < best - 3, other


def test_a_doubled_digit_needs_a_blank_between() -> None:
    logp = _one_hot("1")
    logp[0, 2] = logp[0, 1]  # "1" held for two steps is one 1, not 11
    assert text_log_likelihood(logp, "1")[0] > text_log_likelihood(logp, "11")[0] + 3


def test_six_and_nine_may_read_with_their_mark_the_others_only_as_printed() -> None:
    assert texts("d20", 6) == ("6", "6.", "6_")
    assert texts("d10-tens", 0) == ("00",)
    assert texts("d10", 0) == ("0",)
