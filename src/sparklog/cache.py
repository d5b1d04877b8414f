"""Where sparklog keeps what one run makes and later runs reuse: the JVM's class archive
(spark/archive.py) and the grammar's parse tables (syntax/parser.py).

``SPARKLOG_CACHE_DIR`` names the folder (default ``$XDG_CACHE_HOME/sparklog``, else
``~/.cache/sparklog``); ``SPARKLOG_CACHE_DIR=off`` turns the cache off. Every entry is
written under a temporary name and moved into place, so a reader sees a whole entry or
none, and a stale or damaged one only costs the time it saves.
"""

from __future__ import annotations

import os
from pathlib import Path

ENV = "SPARKLOG_CACHE_DIR"


def folder_of(environ) -> Path | None:
    chosen = environ.get(ENV)
    if chosen is not None:
        return None if chosen.strip().lower() in ("off", "") else Path(chosen).expanduser()
    cache = environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(cache) / "sparklog"


def read(name: str) -> bytes | None:
    """The entry's bytes, or None when the cache is off or has no such entry."""
    folder = folder_of(os.environ)
    if folder is None:
        return None
    try:
        return (folder / name).read_bytes()
    except OSError:
        return None


def write(name: str, data: bytes) -> None:
    """Keep ``data`` as the entry ``name``, atomically; an unwritable cache is skipped."""
    folder = folder_of(os.environ)
    if folder is None:
        return
    temporary = folder / f"{name}.{os.getpid()}.tmp"
    try:
        folder.mkdir(parents=True, exist_ok=True)
        temporary.write_bytes(data)
        os.replace(temporary, folder / name)
    except OSError:
        temporary.unlink(missing_ok=True)
