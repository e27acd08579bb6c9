"""Episode claims in the embedded store: one row of ``episode_claims`` per claimed episode.

A claim is taken, renewed or refused inside one ``BEGIN IMMEDIATE`` transaction: SQLite's write lock
(across connections and processes) makes the read of the current claim and the write of the new one one
step, so of two claimants exactly one wins. The row hangs off the episode's row id (``ON DELETE
CASCADE``): deleting the episode drops its claim; the episode upsert keeps its row id, so saving or
writing the episode keeps it. Expiry is judged by this process's clock (every process of one file is on
one machine).
"""

from __future__ import annotations

from datetime import timedelta

from ..model import utc_now
from ..store import Claim
from .codec import from_us, to_us
from .db import Db

_EPISODE_ID = "SELECT id FROM episodes WHERE group_id = ? AND uuid = ?"
_CURRENT = "SELECT owner, expires_at FROM episode_claims WHERE episode_id = ?"
_TAKE = (
    "INSERT INTO episode_claims (episode_id, owner, expires_at) VALUES (?, ?, ?)"
    " ON CONFLICT (episode_id) DO UPDATE SET owner = excluded.owner, expires_at = excluded.expires_at"
)
_RELEASE = (
    "DELETE FROM episode_claims WHERE owner = ? AND episode_id = "
    "(SELECT id FROM episodes WHERE group_id = ? AND uuid = ?)"
)


def claim_episode(db: Db, group_id: str, uuid: str, owner: str, seconds: float) -> Claim | None:
    with db.write() as conn:
        row = conn.execute(_EPISODE_ID, (group_id, uuid)).fetchone()
        if row is None:
            return None
        episode_id, now = row[0], utc_now()
        current = conn.execute(_CURRENT, (episode_id,)).fetchone()
        if current is not None and current[0] != owner and current[1] > to_us(now):
            expires = from_us(current[1])
            assert expires is not None
            return Claim(owner=current[0], expires_at=expires)
        expires_at = now + timedelta(seconds=seconds)
        conn.execute(_TAKE, (episode_id, owner, to_us(expires_at)))
        return Claim(owner=owner, expires_at=expires_at)


def release_episode(db: Db, group_id: str, uuid: str, owner: str) -> None:
    with db.write() as conn:
        conn.execute(_RELEASE, (owner, group_id, uuid))
