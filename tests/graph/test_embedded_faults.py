"""The embedded store on a file system that fails it (found by ``bench/robustness/fault.py``): a real SQLite
file on a real tmpfs, mounted small (it fills) or remounted read-only. The error says what happened and
where (the file, and for a read-only store why it cannot be written); nothing of a refused write is
stored; once the cause is gone the same store takes the write.

Mounting needs root; elsewhere these tests skip.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from epigraph.errors import StoreError, StoreUnavailable
from epigraph.graph.embedded import EmbeddedStore
from epigraph.graph.model import Entity, Episode, EpisodeStatus, Mention
from epigraph.graph.store import EpisodeWrite

GROUP = "faults"
DIM = 4
T0 = datetime(2024, 5, 1, 12, 0, tzinfo=UTC)


def _mount(path: Path, size: str) -> bool:
    path.mkdir()
    if os.geteuid() != 0:
        return False
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(path)], capture_output=True
    )
    return done.returncode == 0


@pytest.fixture
def tmpfs(tmp_path: Path) -> Iterator[Path]:
    mount = tmp_path / "mnt"
    if not _mount(mount, "1m"):
        pytest.skip("mounting a tmpfs needs root")
    try:
        yield mount
    finally:
        if subprocess.run(["umount", str(mount)], capture_output=True).returncode != 0:
            subprocess.run(["umount", "-l", str(mount)], capture_output=True)  # still busy: detach it


def _remount(mount: Path, mode: str) -> None:
    subprocess.run(["mount", "-o", f"remount,{mode}", str(mount)], check=True, capture_output=True)


def _episode_write(i: int, words: int = 40) -> EpisodeWrite:
    """A done episode mentioning one entity of its own, with ``words`` words of text."""
    text = f"Episode {i}: " + " ".join(f"word{i}x{w}" for w in range(words))
    episode = Episode(group_id=GROUP, uuid=f"00000000-0000-4000-8000-{i:012d}", content=text,
                      reference_time=T0, status=EpisodeStatus.DONE)  # fmt: skip
    entity = Entity(group_id=GROUP, uuid=f"00000000-0000-4000-9000-{i:012d}", name=f"Person{i}",
                    summary=text, name_embedding=[1.0, 0.0, 0.0, float(i)])  # fmt: skip
    mention = Mention(group_id=GROUP, episode_uuid=episode.uuid, entity_uuid=entity.uuid)
    return EpisodeWrite(episode=episode, entities=[entity], mentions=[mention])


def _fill(mount: Path) -> Path:
    """A file taking every free byte of ``mount``."""
    filler = mount / "filler"
    with filler.open("wb") as f:
        try:
            while True:
                f.write(b"\0" * 65536)
                f.flush()
        except OSError:
            pass
    return filler


async def test_a_full_disk_refuses_the_write_whole_names_the_file_and_takes_it_once_freed(
    tmpfs: Path,
) -> None:
    path = str(tmpfs / "graph.db")
    async with EmbeddedStore(path) as store:
        await store.setup(DIM)
        assert await store.write_episode(_episode_write(0))
        filler = _fill(tmpfs)
        refused = None
        for i in range(1, 200):  # until a write no longer fits
            try:
                await store.write_episode(_episode_write(i, words=400))
            except StoreError as exc:
                refused = (i, str(exc))
                break
        assert refused is not None, "the file system never filled"
        i, message = refused
        assert "full" in message and path in message
        assert await store.get_episode(GROUP, _episode_write(i).episode.uuid) is None
        assert await store.get_entities(GROUP, [_episode_write(i).entities[0].uuid]) == []
        filler.unlink()
        assert await store.write_episode(_episode_write(i, words=400))
        stored = await store.get_episode(GROUP, _episode_write(i).episode.uuid)
        assert stored is not None and stored.status == EpisodeStatus.DONE
        assert (await store.stats(GROUP)).episodes == i + 1


async def test_a_store_on_a_read_only_file_system_says_so_and_opens_once_writable(tmpfs: Path) -> None:
    path = str(tmpfs / "graph.db")
    async with EmbeddedStore(path) as store:
        await store.setup(DIM)
        await store.write_episode(_episode_write(0))
    _remount(tmpfs, "ro")
    try:
        async with EmbeddedStore(path) as store:
            with pytest.raises(StoreUnavailable) as refused:
                await store.setup(DIM)
        assert path in str(refused.value) and "mounted read-only" in str(refused.value)
    finally:
        _remount(tmpfs, "rw")
    async with EmbeddedStore(path) as store:
        await store.setup(DIM)
        assert await store.write_episode(_episode_write(1))
        assert (await store.stats(GROUP)).episodes == 2
