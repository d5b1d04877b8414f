"""A class-data archive of Spark's JVM: written by one run, mapped by every later start.

A fresh JVM reads, verifies and links some twenty thousand of Spark's classes before a
program's first round runs. A class-data sharing archive (the JDK's AppCDS) holds them
already parsed and verified, and a JVM started with it maps them instead. The first
``sparklog run`` on a machine has its JVM write one when it exits
(``-XX:ArchiveClassesAtExit``), under a temporary name that is moved into place only once
that JVM has exited cleanly (:func:`keep`); every later start with the same Java and the
same Spark jars maps it (``-XX:SharedArchiveFile``). The JVM checks an archive against its
class path itself and ignores one that does not match. benchmarks/results/programs.md
measures runs with and without one.

It lives in sparklog's cache folder (cache.py); ``SPARKLOG_CACHE_DIR=off`` turns it off.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path

from sparklog.cache import ENV, folder_of  # noqa: F401 (ENV: the folder's variable)

# The JVM reports on its archive with warnings on stdout (each class it leaves out while
# writing one, a mismatch while mapping one), where sparklog writes a program's output.
_QUIET = "-Xlog:cds=off -Xlog:cds+dynamic=off"
# Options with which the caller already chose what the JVM shares.
_CALLERS = ("-Xshare", "SharedArchiveFile", "ArchiveClassesAtExit")


@dataclass(frozen=True)
class Archive:
    path: Path  # the archive
    writing: Path | None = None  # where this JVM writes it when it exits; None: it maps it

    def java_options(self) -> str:
        if self.writing is not None:
            return f"-XX:ArchiveClassesAtExit={self.writing} {_QUIET}"
        return f"-XX:SharedArchiveFile={self.path} {_QUIET}"


def choose(java_version: str, java_options: str, write: bool) -> Archive | None:
    """The archive a JVM about to start maps, or writes if ``write`` and there is none
    yet; None when the archive is off or the caller's Java options choose for it."""
    folder = folder_of(os.environ)
    if folder is None or any(flag in java_options for flag in _CALLERS):
        return None
    path = folder / f"spark-{_key(java_version)}.jsa"
    if path.is_file():
        return Archive(path)
    if not write:
        return None
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError:
        return None  # an unwritable cache costs the speed-up only
    _sweep(folder)
    return Archive(path, path.with_name(f"{path.name}.{os.getpid()}.tmp"))


def keep(archive: Archive, exit_code: int | None) -> bool:
    """Move what a JVM wrote at its exit into place; True if it did. Only a JVM that
    exited cleanly (0) wrote a whole archive; anything else is deleted."""
    if archive.writing is None:
        return False
    try:
        if exit_code == 0 and archive.writing.is_file() and archive.writing.stat().st_size:
            os.replace(archive.writing, archive.path)  # atomic: a reader maps old or new
            return True
        archive.writing.unlink(missing_ok=True)
    except OSError:
        pass
    return False


def _key(java_version: str) -> str:
    """Names what an archive depends on: the Java runtime and Spark's jars."""
    import pyspark

    jars = Path(pyspark.__file__).parent / "jars"
    digest = hashlib.sha256(java_version.encode())
    try:
        for entry in sorted(os.scandir(jars), key=lambda e: e.name):
            digest.update(f"{entry.name}:{entry.stat().st_size}\n".encode())
    except OSError:
        pass
    return f"{pyspark.__version__}-{digest.hexdigest()[:16]}"


def _sweep(folder: Path) -> None:
    """Delete archives left half-written by runs that ended without keeping theirs."""
    for leftover in folder.glob("*.jsa.*.tmp"):
        pid = leftover.suffixes[-2].lstrip(".") if len(leftover.suffixes) >= 2 else ""
        if pid.isdigit() and not _alive(int(pid)):
            leftover.unlink(missing_ok=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # exists, not ours to signal
    return True
