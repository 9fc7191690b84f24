"""`tidetower enclosure build`: every part as STL and STEP laid on the bed, a preview of each
and of the assembly, and the bill of materials."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import build123d as bd
import cv2

from tidetower.enclosure import bom
from tidetower.enclosure.cad.mesh import mesh
from tidetower.enclosure.cad.model import Part, all_parts
from tidetower.enclosure.cad.render import Colour, label, render
from tidetower.enclosure.params import EnclosureParams

COLOURS: dict[str, Colour] = {
    "tower": (70, 120, 190),
    "ramp": (80, 160, 220),
    "tray": (125, 125, 125),
    "camera_mast": (60, 60, 60),
    "camera_arm": (80, 80, 80),
    "camera_mount": (70, 160, 70),
    "light_bar": (225, 225, 230),
    "pi_mount": (60, 130, 60),
    "tide_channel": (180, 110, 60),
    "tide_key": (60, 90, 200),
}
"""Preview colours (BGR)."""
STL_TOLERANCE = (0.02, 0.1)
"""Linear (mm) and angular (radians) tolerance of the STL files: finer than a 0.4 mm nozzle."""
PART_PREVIEW = (480, 360)
ASSEMBLY_PREVIEW = (800, 600)


def build(params: EnclosureParams, out: Path, say: Callable[[str], None] = print) -> list[Path]:
    """Write everything into `out`; `say` hears a line per part. Returns the files written."""
    out.mkdir(parents=True, exist_ok=True)
    parts = all_parts(params)
    written: list[Path] = []
    for part in parts:
        written += _write_part(part, out)
        say(f"{part.name}: {part.count} x, {_size(part)} on the bed")
    written += _write_assembly(parts, out)
    written += _write_bom(params, parts, out)
    say(f"assembly and bill of materials: {out / 'assembly.png'}, {out / 'bom.md'}")
    return written


def _size(part: Part) -> str:
    """The part's size as it lies on the bed."""
    s = part.on_bed().bounding_box().size
    return f"{s.X:.0f} x {s.Y:.0f} x {s.Z:.0f} mm"


def _volume(part: Part) -> str:
    """The part's solid volume (filament is its walls and infill, much less for big parts)."""
    cm3 = part.solid.volume / 1000
    return f"{cm3:.0f} cm³" if cm3 >= 10 else f"{cm3:.1f} cm³"


def _write_part(part: Part, out: Path) -> list[Path]:
    """The part's STL and STEP as it prints, and its preview."""
    solid = part.on_bed()
    stl, step, png = (out / f"{part.name}.{ext}" for ext in ("stl", "step", "png"))
    bd.export_stl(solid, str(stl), tolerance=STL_TOLERANCE[0], angular_tolerance=STL_TOLERANCE[1])
    bd.export_step(solid, str(step))
    picture = render([(mesh(solid), COLOURS.get(part.name, (150, 150, 150)))], PART_PREVIEW)
    cv2.imwrite(str(png), label(picture, f"{part.title} (x{part.count}), as printed"))
    return [stl, step, png]


def _write_assembly(parts: list[Part], out: Path) -> list[Path]:
    """The assembled tower as one STEP (parts where they sit) and its preview."""
    placed = [(p.name, s) for p in parts for s in p.placed]
    step, png = out / "assembly.step", out / "assembly.png"
    bd.export_step(bd.Compound([s for _, s in placed]), str(step))
    meshes = [(mesh(s), COLOURS.get(name, (150, 150, 150))) for name, s in placed]
    cv2.imwrite(str(png), render(meshes, ASSEMBLY_PREVIEW))
    return [step, png]


def _write_bom(params: EnclosureParams, parts: list[Part], out: Path) -> list[Path]:
    """The bill of materials as Markdown and CSV."""
    printed = [
        (f"{p.title} (`{p.name}.stl`)", p.count, f"{_size(p)}, {_volume(p)} solid; {p.settings}")
        for p in parts
    ]
    items = bom.bought(params)
    md, csv_file = out / "bom.md", out / "bom.csv"
    md.write_text(
        "# Tide Tower enclosure: bill of materials\n\n" + bom.markdown(items, printed),
        encoding="utf-8",
    )
    csv_file.write_text(bom.csv_text(items, printed), encoding="utf-8")
    return [md, csv_file]
