"""Train the numeral net: `python -m tidetower.vision.training.numerals [--out FILE]`.

Makes labelled crops from synthetic trays of every kind and from the d6-tray photos outside
the test split (`numeral_crops`), caches them in --crops DIR, trains `numeral_net.NumeralNet`
and writes vision/numerals/numerals.onnx, made int8 (twice as fast, same reads). The shipped
net: `--chunks 20 --epochs 12`.

`--real` learns from the real numeral dice of ../shared/data/numerals-taught too, and
`--leave-out d20,d10` keeps those kinds' photos out, so that the benchmark can read them as
untaught dice (`bench/vision_numerals.py --only real --model A.onnx --model B.onnx`).
`--start FLOAT.onnx` tunes an earlier float export for a few epochs instead of starting anew.
Needs the `train` extra (torch, onnx).
"""

from __future__ import annotations

import argparse
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np

from tidetower.vision.numerals.nets import MODEL
from tidetower.vision.progress import progress
from tidetower.vision.training import TRAIN_EXTRA, missing_training_tools
from tidetower.vision.training.numeral_crops import (
    Crops,
    real_numeral_crops,
    real_pip_crops,
    synth_crops,
)

ROOT = Path(__file__).resolve().parents[2]
D6_TRAY = ROOT / ".." / "shared" / "data" / "d6-tray"
NUMERALS = ROOT / ".." / "shared" / "data" / "numerals-taught"
SYNTH_SEED = 100_000
"""Seed of the first synthetic training tray; chunks of CHUNK consecutive seeds follow."""
CHUNK = 500
CALIBRATION = 2000
"""Training crops (of the first chunk) the int8 net is calibrated on."""


def _chunk(path: Path, first: int) -> Path:
    """Make one cached chunk of synthetic crops, unless it is there already."""
    if not path.exists():
        crops = synth_crops(range(first, first + CHUNK))
        np.savez(path, images=crops.images, labels=crops.labels)
    return path


def load_crops(folder: Path, chunks: int, workers: int) -> Crops:
    """Return the training crops, making the missing ones (synthetic chunks in parallel)."""
    folder.mkdir(parents=True, exist_ok=True)
    paths = [folder / f"synth_{k:02d}.npz" for k in range(chunks)]
    firsts = [SYNTH_SEED + k * CHUNK for k in range(chunks)]
    with (
        ProcessPoolExecutor(workers) as pool,
        progress(pool.map(_chunk, paths, firsts), "synthetic crops", length=chunks) as made,
    ):
        done = list(made)
    real = folder / "real_pips.npz"
    if not real.exists() and D6_TRAY.exists():
        crops = real_pip_crops(D6_TRAY)
        np.savez(real, images=crops.images, labels=crops.labels)
    if real.exists():
        done.append(real)
    parts = []
    for path in done:
        with np.load(path) as data:
            parts.append(Crops(data["images"], data["labels"]))
    return Crops.join(parts)


def all_crops(args: argparse.Namespace) -> tuple[Crops, str]:
    """Return the crops to learn from and a note of where they came from."""
    crops = load_crops(args.crops, args.chunks, args.threads)
    said = f"synthetic:{SYNTH_SEED}+{args.chunks * CHUNK},d6-tray:dev"
    if not (args.real and NUMERALS.exists()):
        return crops, said
    leave_out = frozenset(k for k in args.leave_out.split(",") if k)
    real = real_numeral_crops(NUMERALS, leave_out)
    note = (
        f"numerals-taught:all but {'+'.join(sorted(leave_out))}"
        if leave_out
        else "numerals-taught:all"
    )
    return Crops.join([crops, real]), f"{said},{note}"


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    """Read the command line; the defaults reproduce the shipped net."""
    parser = argparse.ArgumentParser(
        prog="python -m tidetower.vision.training.numerals",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--crops",
        type=Path,
        default=Path("/tmp/tidetower-numeral-crops"),
        help="folder caching the training crops",
    )
    parser.add_argument(
        "--chunks", type=int, default=16, help=f"chunks of {CHUNK} synthetic trays to learn from"
    )
    parser.add_argument("--epochs", type=int, default=10)
    parser.add_argument("--width", type=float, default=1.0, help="net width factor")
    parser.add_argument(
        "--stem", type=int, default=0, help="channels of a first layer at full resolution (0: none)"
    )
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--out", type=Path, default=MODEL, help="the .onnx to write")
    parser.add_argument("--start", type=Path, help="tune this float export rather than start anew")
    parser.add_argument(
        "--real",
        action="store_true",
        help="learn from the real numeral dice of numerals-taught too",
    )
    parser.add_argument(
        "--leave-out",
        default="",
        help="comma-separated kinds whose real photos stay out (held out)",
    )
    parser.add_argument(
        "--float",
        action="store_true",
        help="keep the net float (by default it is made int8, calibrated on "
        f"the first {CALIBRATION} training crops)",
    )
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> None:
    """Make or load the crops, train, and write the net."""
    args = parse_args(argv)
    missing = missing_training_tools()
    if missing:
        sys.exit(f"training needs {', '.join(missing)}: {TRAIN_EXTRA}")
    import torch

    from tidetower.vision.training.numeral_net import export, from_export, quantize, train

    torch.set_num_threads(args.threads)
    start = time.time()
    crops, trained_on = all_crops(args)
    print(f"{len(crops.labels)} crops ({time.time() - start:.0f} s)", flush=True)
    net = train(
        crops,
        args.epochs,
        args.seed,
        args.width,
        from_export(args.start, args.width) if args.start else None,
        stem=args.stem,
    )
    export(net, args.out, trained_on)
    if not args.float:
        quantize(args.out, crops.images[:CALIBRATION])
    print(f"wrote {args.out} in {time.time() - start:.0f} s")


if __name__ == "__main__":
    main()
