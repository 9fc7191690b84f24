"""Tune the numeral recogniser on real dice crops, each fold held out once (not adopted).

`python vision/training/recogniser_tune.py --model PP-OCRv6_rec_small.onnx --crops
crops.npz --out DIR [--folds wood] [--train-last 0.5]` (the crops from
`recogniser_crops`; the model from the rapidocr wheel). It stands alone, importing no
tidetower (torch, onnx, onnx2torch, OpenCV, numpy), so that it runs on a bare machine with an
accelerator; on two CPU cores one fold takes about 15 minutes (6 with `--upright`).

The recogniser is converted to torch with its padding written out at the reader's line size
(48x64) and its last softmax left off. Each die is cut as `faces.lines` cuts it, near its
upright turn (where the stock recogniser reads the die's own face likeliest), with its turn,
centre, size and light jittered, and learns its face's text by CTC; a share of lines turned
sideways learn to read as nothing. The output layer (18,710 symbols) is never learned. Each
fold held out is scored as the reader scores a die of a known kind (every face's texts summed
over the reader's 16 turns; a face is read when it leads by `LEAD` nats), stock against
tuned, on the same lines. Writes each fold's learned tensors by their ONNX names
(`tuned_FOLD.npz`), the upright turns (`upright.npy`, reused with `--upright`) and
`results.json`. docs/BENCHMARKS.md has what it measured.
"""

from __future__ import annotations

import argparse
import json
import math
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import cv2
import numpy as np

try:
    import onnx
    import torch
    import torch.nn.functional as F
    from onnx import helper, numpy_helper, shape_inference
    from onnx2torch import convert

    MISSING = ""
except ImportError as err:  # without the train extra: `--help` still works, a run says why
    MISSING = str(err)

HEIGHT, WIDTH = 48, 64
"""The reader's lines: 48 pixels tall, 4/3 as wide (`faces.lines`)."""
SYMBOLS = "0123456789._"
"""The symbols the reader keeps after the CTC blank (`recogniser.SYMBOLS`)."""
LEAD = 3.5
"""The shipped `numeral_lead`: nats the best face must lead the second by."""
LEADS = (1.0, 1.5, 2.0, 2.5, 3.0, LEAD)
"""Leads each fold is tallied at: a tuned net's leads differ from the stock one's, so they
are compared at equal wrong reads, not at one lead."""
FOLDS = ("top", "color", "angle", "wood", "taught")
OUTPUT = 18710
"""The recogniser's output symbols: its output layer is left as it is."""
Record = dict[str, Any]


def explicit_pads(model: onnx.ModelProto) -> onnx.ModelProto:
    """Return the graph at 1x3x48x64 with SAME padding written out (onnx2torch lacks it)."""
    dims = model.graph.input[0].type.tensor_type.shape.dim
    dims[0].dim_value, dims[3].dim_value = 1, WIDTH
    model = shape_inference.infer_shapes(model)
    shapes = {
        v.name: [d.dim_value for d in v.type.tensor_type.shape.dim]
        for v in [*model.graph.value_info, *model.graph.input]
    }
    inits = {i.name: i for i in model.graph.initializer}
    for node in model.graph.node:
        attrs = {a.name: a for a in node.attribute}
        if "auto_pad" not in attrs or not attrs["auto_pad"].s.startswith(b"SAME"):
            continue
        conv = node.op_type == "Conv"
        kernel = list(inits[node.input[1]].dims[2:] if conv else attrs["kernel_shape"].ints)
        strides = list(attrs["strides"].ints) if "strides" in attrs else [1] * len(kernel)
        dilations = list(attrs["dilations"].ints) if "dilations" in attrs else [1] * len(kernel)
        begins, ends = [], []
        for k, s, d, size in zip(
            kernel, strides, dilations, shapes[node.input[0]][2:], strict=True
        ):
            total = max(0, (-(-size // s) - 1) * s + (k - 1) * d + 1 - size)
            begins.append(total // 2)
            ends.append(total - total // 2)
        node.attribute.remove(attrs["auto_pad"])
        node.attribute.append(helper.make_attribute("pads", begins + ends))
    return model


def without_softmax(model: onnx.ModelProto) -> onnx.ModelProto:
    """Return the graph ending at the logits its last softmax takes."""
    last = model.graph.node[-1]
    assert last.op_type == "Softmax" and last.output[0] == model.graph.output[0].name
    model.graph.node.remove(last)
    model.graph.output[0].name = last.input[0]
    return model


def columns(model: onnx.ModelProto) -> list[int]:
    """Return the output columns of the CTC blank and SYMBOLS (PP-OCR's charset)."""
    meta = {p.key: p.value for p in model.metadata_props}
    charset = ["", *meta["character"].splitlines(), " "]
    return [0, *(charset.index(c) for c in SYMBOLS)]


def frozen(model: onnx.ModelProto, device: torch.device) -> torch.nn.Module:
    """Return the recogniser in torch, in eval mode (batch norm keeps its statistics), frozen."""
    net = convert(model).to(device).eval()
    for p in net.parameters():
        p.requires_grad_(False)
    return net


def learnable(net: torch.nn.Module, model: onnx.ModelProto) -> dict[str, torch.nn.Parameter]:
    """Make each tensor of the net but the output layer a parameter, keyed by the ONNX
    initializer it came from (matched by value; one that matches twice stays frozen)."""
    by_bytes: dict[bytes, list[str]] = {}
    for init in model.graph.initializer:
        arr = numpy_helper.to_array(init)
        if arr.dtype == np.float32 and arr.size > 1:
            by_bytes.setdefault(arr.tobytes(), []).append(init.name)
    found: dict[str, torch.nn.Parameter] = {}
    for module in net.modules():
        own = [*module.named_parameters(recurse=False), *module.named_buffers(recurse=False)]
        for name, tensor in own:
            names = by_bytes.get(tensor.detach().cpu().numpy().tobytes(), [])
            if "running" in name or len(names) != 1 or OUTPUT in tensor.shape:
                continue
            if not isinstance(tensor, torch.nn.Parameter):
                delattr(module, name)
                tensor = torch.nn.Parameter(tensor.detach().clone(), requires_grad=False)
                module.register_parameter(name, tensor)
            found[names[0]] = tensor
    return found


@dataclass
class Dice:
    """The crops on the device, and what each die needs to be cut, learned and scored."""

    crops: torch.Tensor
    records: list[Record]
    side: float
    turns: torch.Tensor
    window: torch.Tensor
    folds: np.ndarray

    @classmethod
    def load(cls, path: Path, device: torch.device, every: int = 1) -> Dice:
        """Read `recogniser_crops`' file: every `every`-th die (1: all)."""
        data = np.load(path)
        meta = json.loads(bytes(data["meta"]).decode())
        jpegs, ends = data["jpegs"], data["ends"]
        starts = np.concatenate([[0], ends[:-1]])
        spans = zip(starts, ends, strict=True)
        images = [np.asarray(cv2.imdecode(jpegs[a:b], cv2.IMREAD_COLOR)) for a, b in spans]
        crops = torch.from_numpy(np.stack(images[::every])).permute(0, 3, 1, 2).float()
        records = meta["dice"][::every]
        return cls(
            crops.to(device),
            records,
            meta["size"] / meta["span"],
            torch.tensor(meta["turns"], device=device),
            torch.tensor([d["window"] for d in records], device=device),
            np.array([d["fold"] for d in records]),
        )

    def lines(
        self, idx: torch.Tensor, turn: torch.Tensor, shift: torch.Tensor, size: torch.Tensor
    ) -> torch.Tensor:
        """Cut (B, 3, 48, 64) lines as `faces.lines` does: the die's middle, its window tall,
        turned by `turn` degrees about its centre (+ shift pixels), `size` times as tall."""
        scale = HEIGHT / (self.side * self.window[idx] * size)
        rad = torch.deg2rad(turn)
        cos, sin = (torch.cos(rad) / scale)[:, None, None], (torch.sin(rad) / scale)[:, None, None]
        ys, xs = torch.meshgrid(
            torch.arange(HEIGHT, device=idx.device, dtype=torch.float32) - HEIGHT / 2,
            torch.arange(WIDTH, device=idx.device, dtype=torch.float32) - WIDTH / 2,
            indexing="ij",
        )
        middle = self.crops.shape[-1] / 2
        # cv2.getRotationMatrix2D's map, undone: from a line's pixel back to the crop's
        sx = middle + shift[:, 0, None, None] + cos * xs - sin * ys
        sy = middle + shift[:, 1, None, None] + sin * xs + cos * ys
        grid = torch.stack([sx, sy], dim=-1) * (2 / self.crops.shape[-1]) + (
            1 / self.crops.shape[-1] - 1
        )
        return F.grid_sample(self.crops[idx], grid, padding_mode="border", align_corners=False)

    def upright_lines(self, idx: torch.Tensor, turn: torch.Tensor) -> torch.Tensor:
        """Lines of dice `idx` at these turns, as the reader cuts them (no jitter)."""
        return self.lines(idx, turn, torch.zeros((len(idx), 2), device=idx.device), turn * 0 + 1)


def logp13(net: torch.nn.Module, lines: torch.Tensor, cols: list[int]) -> torch.Tensor:
    """Return (B, T, 13) log-probabilities of the blank and SYMBOLS, as the reader keeps them."""
    return torch.log_softmax(net(lines / 127.5 - 1.0), dim=-1)[:, :, cols]


def text_ll(logp: torch.Tensor, texts: list[str]) -> torch.Tensor:
    """Return log P(text) under CTC for each row of (B, T, 13) log-probabilities."""
    targets = [[1 + SYMBOLS.index(c) for c in text] for text in texts]
    width = max(len(x) for x in targets)
    padded = torch.tensor([x + [0] * (width - len(x)) for x in targets], device=logp.device)
    lengths = torch.tensor([len(x) for x in targets], device=logp.device)
    steps = torch.full((len(texts),), logp.shape[1], device=logp.device, dtype=torch.long)
    return -F.ctc_loss(logp.permute(1, 0, 2), padded, steps, lengths, reduction="none")


def turn_logp(
    net: torch.nn.Module, dice: Dice, cols: list[int], which: np.ndarray, turns: torch.Tensor
) -> torch.Tensor:
    """Return (N, turns, T, 13) log-probabilities of the dice `which` (the other rows zero)."""
    k, dev = len(turns), dice.crops.device
    idx = torch.tensor(which, device=dev).repeat_interleave(k)
    every = turns.repeat(len(which))
    with torch.no_grad():
        parts = [
            logp13(net, dice.upright_lines(idx[a : a + 2048], every[a : a + 2048]), cols)
            for a in range(0, len(idx), 2048)
        ]
    logp = torch.cat(parts)
    full = torch.zeros((len(dice.records), k, *logp.shape[1:]), device=dev)
    full[torch.tensor(which, device=dev)] = logp.view(len(which), k, *logp.shape[1:])
    return full


def face_scores(logp: torch.Tensor, dice: Dice, which: np.ndarray) -> list[list[float]]:
    """Return each die's faces' scores: their texts' CTC likelihoods summed over turns."""
    owners = [
        (int(i), f, text)
        for i in which
        for f, face in enumerate(dice.records[i]["faces"])
        for text in face["texts"]
    ]
    k, flat = logp.shape[1], []
    for a in range(0, len(owners), 8192):
        chunk = owners[a : a + 8192]
        rows = logp[torch.tensor([i for i, _, _ in chunk], device=logp.device)]
        ll = text_ll(rows.reshape(-1, *logp.shape[2:]), [t for *_, t in chunk for _ in range(k)])
        flat += torch.logsumexp(ll.view(len(chunk), k), dim=1).tolist()
    scores: dict[int, dict[int, list[float]]] = {}
    for (i, f, _), v in zip(owners, flat, strict=True):
        scores.setdefault(i, {}).setdefault(f, []).append(v)
    return [
        [float(np.logaddexp.reduce(v)) for _, v in sorted(scores[int(i)].items())] for i in which
    ]


def tally(dice: Dice, which: np.ndarray, scores: list[list[float]], lead: float) -> Record:
    """Right, wrong and unsure at a lead, each die's kind known, in per cent."""
    said = {"right": 0, "wrong": 0, "unsure": 0}
    for i, s in zip(which, scores, strict=True):
        die, order = dice.records[int(i)], np.argsort(s)[::-1]
        best = die["faces"][order[0]]
        if len(s) > 1 and s[order[0]] - s[order[1]] < lead:
            said["unsure"] += 1
        else:
            right = (best["kind"], best["value"]) == (die["kind"], die["value"])
            said["right" if right else "wrong"] += 1
    n = max(len(which), 1)
    return {k: round(100 * v / n, 1) for k, v in said.items()} | {"dice": len(which)}


def scored(net: torch.nn.Module, dice: Dice, cols: list[int], which: np.ndarray) -> Record:
    """Tally the dice `which` at each of LEADS, and per kind at LEAD."""
    s = face_scores(turn_logp(net, dice, cols, which, dice.turns), dice, which)
    out = {f"lead {lead}": tally(dice, which, s, lead) for lead in LEADS}
    for kind in sorted({dice.records[int(i)]["kind"] for i in which}):
        mine = [j for j, i in enumerate(which) if dice.records[int(i)]["kind"] == kind]
        out[kind] = tally(dice, which[mine], [s[j] for j in mine], LEAD)
    return out


def upright_turns(stock: torch.nn.Module, dice: Dice, cols: list[int], step: int) -> torch.Tensor:
    """Return each die's turn (of every `step`-th) where the stock recogniser reads its own
    face likeliest."""
    turns = dice.turns[::step]
    every = np.arange(len(dice.records))
    logp = turn_logp(stock, dice, cols, every, turns)
    n, k = logp.shape[:2]
    texts = [d["text"] for d in dice.records for _ in range(k)]
    return turns[text_ll(logp.reshape(n * k, *logp.shape[2:]), texts).view(n, k).argmax(dim=1)]


def jittered(dice: Dice, idx: torch.Tensor, turn: torch.Tensor, g: torch.Generator) -> torch.Tensor:
    """Training lines: each die near `turn`, its centre, size and light a little off."""
    b, dev = len(idx), idx.device

    def uniform(*shape: int) -> torch.Tensor:
        return torch.rand(shape, device=dev, generator=g)

    turn = turn + (uniform(b) - 0.5) * 30
    shift = torch.randn((b, 2), device=dev, generator=g) * 0.04 * dice.side
    lines = dice.lines(idx, turn, shift, 0.9 + 0.2 * uniform(b))
    grey = uniform(b, 1, 1, 1) < 0.2
    lines = torch.where(grey, lines.mean(dim=1, keepdim=True).expand_as(lines), lines)
    mean = lines.mean(dim=(1, 2, 3), keepdim=True)
    noise = torch.randn(lines.shape, device=dev, generator=g) * 4 * uniform(b, 1, 1, 1)
    bright = (uniform(b, 1, 1, 1) - 0.5) * 50
    return ((lines - mean) * (0.7 + 0.6 * uniform(b, 1, 1, 1)) + mean + bright + noise).clamp(
        0, 255
    )


def train(
    net: torch.nn.Module,
    learned: list[torch.nn.Parameter],
    dice: Dice,
    keep: np.ndarray,
    upright: torch.Tensor,
    cols: list[int],
    args: argparse.Namespace,
) -> float:
    """Tune the learned tensors on the kept dice; return the last 50 steps' mean loss."""
    dev = dice.crops.device
    g = torch.Generator(device=dev).manual_seed(args.seed)
    pool = torch.tensor(np.flatnonzero(keep), device=dev)
    texts = [[cols[1 + SYMBOLS.index(c)] for c in d["text"]] for d in dice.records]
    for p in learned:
        p.requires_grad_(True)
    opt = torch.optim.AdamW(learned, lr=args.lr, weight_decay=0.0)
    warm = max(1, args.steps // 20)
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda k: min(1.0, (k + 1) / warm) * 0.5 * (1 + math.cos(math.pi * k / args.steps))
    )
    losses = []
    for _ in range(args.steps):
        idx = pool[torch.randint(len(pool), (args.batch,), device=dev, generator=g)]
        # a share of lines turned sideways, read as nothing: a face is read upright
        side = torch.rand(len(idx), device=dev, generator=g) < args.sideways
        away = torch.where(torch.rand(len(idx), device=dev, generator=g) < 0.5, 90.0, 270.0)
        logp = torch.log_softmax(
            net(jittered(dice, idx, upright[idx] + side * away, g) / 127.5 - 1), -1
        )
        tg = [[] if s else texts[i] for i, s in zip(idx.tolist(), side.tolist(), strict=True)]
        loss = F.ctc_loss(
            logp.permute(1, 0, 2),
            torch.tensor([c for t in tg for c in t], device=dev, dtype=torch.long),
            torch.full((len(tg),), logp.shape[1], device=dev, dtype=torch.long),
            torch.tensor([len(t) for t in tg], device=dev),
            zero_infinity=True,
        )
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        sched.step()
        losses.append(loss.item())
    for p in learned:
        p.requires_grad_(False)
    return float(np.mean(losses[-50:]))


def run_fold(
    fold: str,
    graph: onnx.ModelProto,
    stock: torch.nn.Module,
    dice: Dice,
    upright: torch.Tensor,
    cols: list[int],
    args: argparse.Namespace,
) -> Record:
    """Tune a net without one fold (`all`: with every fold), score it on that fold, save it."""
    t0, held = time.time(), dice.folds == fold
    net = frozen(graph, dice.crops.device)
    found = list(learnable(net, graph).items())
    learned = found[int(len(found) * (1 - args.train_last)) :]
    keep = ~held if fold != "all" else np.ones(len(dice.records), bool)
    loss = train(net, [p for _, p in learned], dice, keep, upright, cols, args)
    row: Record = {
        "loss": round(loss, 4),
        "tensors": len(learned),
        "numbers": sum(p.numel() for _, p in learned),
        "seconds": round(time.time() - t0),
    }
    if fold != "all" and held.any():
        which = np.flatnonzero(held)[:: args.score_step]
        row["stock"], row["tuned"] = (
            scored(stock, dice, cols, which),
            scored(net, dice, cols, which),
        )
    tensors = {name: p.detach().cpu().numpy().astype(np.float16) for name, p in learned}
    np.savez_compressed(args.out / f"tuned_{fold}.npz", **tensors)
    return row


def arguments() -> argparse.Namespace:
    """Parse the command line."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add = parser.add_argument
    add("--model", type=Path, required=True, help="PP-OCRv6_rec_small.onnx from the wheel.")
    add("--crops", type=Path, required=True, help="`recogniser_crops`' file.")
    add("--out", type=Path, required=True)
    add("--folds", default=",".join(FOLDS) + ",all", help="Folds held out, one run each.")
    add("--steps", type=int, default=1500)
    add("--batch", type=int, default=256)
    add("--lr", type=float, default=1e-4)
    add("--seed", type=int, default=7)
    add("--sideways", type=float, default=0.25, help="Share of sideways lines, read as nothing.")
    add("--train-last", type=float, default=1.0, help="Share of the net's tensors learned, last.")
    add("--every", type=int, default=1, help="Every k-th die only (a trial run).")
    add("--upright-step", type=int, default=1, help="Upright looked for at every k-th turn.")
    add("--score-step", type=int, default=1, help="Every k-th held-out die scored.")
    add("--upright", type=Path, default=None, help="upright.npy of an earlier run.")
    add("--threads", type=int, default=0, help="CPU threads for torch (0: its default).")
    return parser.parse_args()


def main() -> None:
    """Tune and score one net per fold; write what each learned and what it read."""
    args = arguments()
    if MISSING:
        raise SystemExit(f"recogniser_tune needs pip install 'tidetower[train]': {MISSING}")
    dev = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if args.threads:
        torch.set_num_threads(args.threads)
    args.out.mkdir(parents=True, exist_ok=True)
    started = time.time()
    graph = without_softmax(explicit_pads(onnx.load(str(args.model))))
    cols = columns(graph)
    dice = Dice.load(args.crops, dev, args.every)
    stock = frozen(graph, dev)
    if args.upright is not None:
        upright = torch.from_numpy(np.load(args.upright)).to(dev)
    else:
        upright = upright_turns(stock, dice, cols, args.upright_step)
    np.save(args.out / "upright.npy", upright.cpu().numpy())
    print(f"{len(dice.records)} dice on {dev}, upright in {time.time() - started:.0f} s")
    said: Record = {"device": str(dev), "dice": len(dice.records)}
    said["args"] = {k: str(v) if isinstance(v, Path) else v for k, v in vars(args).items()}
    for fold in args.folds.split(","):
        said[fold] = run_fold(fold, graph, stock, dice, upright, cols, args)
        print(fold, json.dumps(said[fold]), flush=True)
        (args.out / "results.json").write_text(json.dumps(said, indent=1))
    print(f"done in {time.time() - started:.0f} s")


if __name__ == "__main__":
    main()
