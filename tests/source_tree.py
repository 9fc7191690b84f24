"""A module's source as an AST, for the tests that read the code itself (the import graph,
the engine's refusals)."""

from __future__ import annotations

import ast
from pathlib import Path


def parse_source(path: Path) -> ast.Module:
    """The AST of the Python file at `path`."""
    return ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
