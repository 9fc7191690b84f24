"""`tidetower enclosure ...`: build the printable parts (needs the `cad` extra), or show the
geometry the camera needs (works anywhere, the Pi too)."""

from __future__ import annotations

from pathlib import Path

import click

from tidetower.enclosure.params import EnclosureParams, ParamsError, load_params

CAD_MISSING = "the enclosure's CAD needs the cad extra: pip install 'tidetower[cad]'"


def _params(config: Path | None) -> EnclosureParams:
    """The [enclosure] table of the file, or the defaults."""
    if config is None:
        return EnclosureParams()
    try:
        return load_params(config)
    except ParamsError as error:
        raise click.ClickException(str(error)) from None


CONFIG = click.option(
    "--config",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="A TOML file with an [enclosure] table (the tower's config will do); else the defaults.",
)


@click.group("enclosure")
def enclosure_group() -> None:
    """The tower's printable enclosure, made from parameters (docs/enclosure.md)."""


@enclosure_group.command("build")
@CONFIG
@click.option(
    "--out",
    type=click.Path(file_okay=False, path_type=Path),
    required=True,
    help="Folder to write into.",
)
def build_command(config: Path | None, out: Path) -> None:
    """Write every part's STL and STEP, previews (PNG) and the bill of materials."""
    params = _params(config)
    try:
        from tidetower.enclosure.cad.build import build
    except ModuleNotFoundError as error:
        if (error.name or "").split(".")[0] in ("build123d", "OCP"):
            raise click.ClickException(CAD_MISSING) from None
        raise
    written = build(params, out, say=click.echo)
    click.echo(f"{len(written)} files in {out}")


@enclosure_group.command("geometry")
@CONFIG
def geometry_command(config: Path | None) -> None:
    """The camera's height, the die size it sees, where the light goes: no CAD needed."""
    from tidetower.enclosure.report import lines

    for line in lines(_params(config)):
        click.echo(line)
