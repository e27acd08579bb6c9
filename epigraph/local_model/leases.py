"""Who uses a server the library started: one file per user in ``users/``; the last one out stops it.

Two programs with ``EPIGRAPH_LLM=local`` share one server (one cache directory, one server). Each
``KnowledgeGraph`` that enters takes a lease (``<pid>-<random>``); on exit it drops it, and only when no
lease of a live process remains does it stop the server, so one program never stops the server under
another. A server from ``epigraph model start`` is never stopped by a lease: only ``epigraph model stop``.
"""

from __future__ import annotations

import os
import uuid
from pathlib import Path

USERS = "users"


def take(cache_dir: Path) -> str:
    folder = cache_dir / USERS
    folder.mkdir(parents=True, exist_ok=True)
    name = f"{os.getpid()}-{uuid.uuid4().hex[:12]}"
    (folder / name).touch()
    return name


def drop(cache_dir: Path, name: str) -> None:
    (cache_dir / USERS / name).unlink(missing_ok=True)


def held(cache_dir: Path) -> list[str]:
    """The leases of live processes (the leases of dead ones are removed)."""
    folder = cache_dir / USERS
    alive = []
    for lease in sorted(folder.iterdir()) if folder.is_dir() else []:
        if _pid_alive(lease.name.split("-", 1)[0]):
            alive.append(lease.name)
        else:
            lease.unlink(missing_ok=True)
    return alive


def _pid_alive(text: str) -> bool:
    try:
        os.kill(int(text), 0)
    except (ValueError, ProcessLookupError):
        return False
    except PermissionError:  # someone else's live process
        return True
    return True
