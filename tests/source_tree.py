"""A module's source as an AST, for the tests that read the code itself (the import graph,
the engine's refusals)."""

from __future__ import annotations

import ast
import gc
from pathlib import Path


def parse_source(path: Path) -> ast.Module:
    """The AST of the Python file at `path`, parsed with the garbage collector paused.

    CPython 3.11 can fail a parse with "SystemError: AST constructor recursion depth
    mismatch" when a collection during it runs finalizers that raise; earlier tests leave
    such objects behind (an embedded broker's coroutines, finalized after its loop closed).
    """
    text = path.read_text(encoding="utf-8")
    gc.collect()
    gc.disable()
    try:
        return ast.parse(text, filename=str(path))
    finally:
        gc.enable()
