"""Where a tower config keeps its table's files, read from its `[table]` by the nodes (which
load only `[mqtt]`): the tray photos for the page, the GM's token for `tidetower gm`."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

DEFAULT_STORE = Path("/var/lib/tidetower/session.db")
"""The session store of a tower whose config names none (the Pi's)."""


def _table_section(config_path: Path | None) -> dict[str, Any]:
    """The config's `[table]`, or nothing when there is no readable one (the node's own
    settings have said what is wrong with the file)."""
    if config_path is None:
        return {}
    try:
        table = tomllib.loads(config_path.read_text(encoding="utf-8")).get("table", {})
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError, RecursionError):
        return {}
    return table if isinstance(table, dict) else {}


def configured_snapshots(config_path: Path | None) -> Path | None:
    """The tray photos' folder a tower config names (`[table] snapshots`), else the one the
    tower derives from its `[table] store` (`<stem>-snapshots` beside it), if it names one."""
    table = _table_section(config_path)
    folder, store = table.get("snapshots"), table.get("store")
    if isinstance(folder, str):
        return Path(folder)
    if isinstance(store, str):
        return Path(store).with_name(f"{Path(store).stem}-snapshots")
    return None


def configured_store(config_path: Path | None) -> Path:
    """The session store a tower config names (`[table] store`), else the default one; the
    LAN broker keeps the GM's token beside it."""
    store = _table_section(config_path).get("store")
    return Path(store) if isinstance(store, str) else DEFAULT_STORE
