"""The manifest of the committed nets (vision/nets.json): what made each net, and from what.

Nothing reads it at run time; tests/test_nets_manifest.py holds it to the files. A retrained
net is committed with its entry (sha256, bytes, made_by, learned_from), and the entry's
`commit` names the commit that last changed the net's bytes.
"""

from __future__ import annotations

import hashlib
from pathlib import Path, PurePosixPath

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

from tidetower.engine.files import read_bounded

PACKAGE = Path(__file__).resolve().parent
MANIFEST = PACKAGE / "nets.json"
MAX_MANIFEST_BYTES = 1 << 20


class Net(BaseModel):
    """One committed net: its file, its bytes, the command that made it, and its data."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    file: str = Field(pattern=r"^vision/(?:[\w-]+/)*[\w-]+\.onnx$")
    """Its path from the repository's root."""
    sha256: str = Field(pattern=r"^[0-9a-f]{64}$")
    bytes: int = Field(gt=0)
    made_by: str = Field(min_length=1)
    commit: str = Field(pattern=r"^[0-9a-f]{40}$")
    learned_from: tuple[str, ...] = Field(min_length=1)
    checked_on: tuple[str, ...] = ()
    notes: str = ""

    @property
    def path(self) -> Path:
        """Return where the net lies in this package (a checkout or an install alike)."""
        return PACKAGE / PurePosixPath(self.file).relative_to("vision")


def load_manifest(path: Path = MANIFEST) -> tuple[Net, ...]:
    """Read and check the manifest: a list of nets, no key it does not know."""
    return TypeAdapter(tuple[Net, ...]).validate_json(read_bounded(path, MAX_MANIFEST_BYTES))


def sha256_of(path: Path) -> str:
    """Return the sha256 of a file, as the manifest writes it."""
    return hashlib.sha256(path.read_bytes()).hexdigest()
