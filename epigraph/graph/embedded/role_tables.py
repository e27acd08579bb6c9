"""The tables of the store's optional roles, one DDL script each, in the order they came (v5-v11): derived
records, episode claims, corrections, owed summaries, forgetting, the redaction vault and decision records.
:mod:`.schema` puts them into the whole current ``DDL``; :mod:`.migrations` creates each one when it
upgrades a file from the version before it. The version history itself is in :mod:`.schema`'s docstring."""

from __future__ import annotations

DERIVED_TABLES = """
CREATE INDEX IF NOT EXISTS episodes_by_chain
    ON episodes (group_id, source_description, reference_time, created_at);

CREATE TABLE IF NOT EXISTS communities (
    id INTEGER PRIMARY KEY,
    group_id TEXT NOT NULL,
    uuid TEXT NOT NULL,
    name TEXT NOT NULL,
    summary TEXT NOT NULL,
    embedding BLOB,
    summarized TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    UNIQUE (group_id, uuid)
);
CREATE TABLE IF NOT EXISTS community_members (
    community_id INTEGER NOT NULL REFERENCES communities (id) ON DELETE CASCADE,
    entity_id INTEGER NOT NULL UNIQUE REFERENCES entities (id) ON DELETE CASCADE,
    PRIMARY KEY (community_id, entity_id)
) WITHOUT ROWID;

CREATE TABLE IF NOT EXISTS conversation_summaries (
    group_id TEXT NOT NULL,
    key TEXT NOT NULL,
    summary TEXT NOT NULL,
    episodes INTEGER NOT NULL,
    first_at INTEGER,
    last_at INTEGER,
    covered_until INTEGER,
    version INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    PRIMARY KEY (group_id, key)
) WITHOUT ROWID;
"""

CLAIM_TABLES = """
-- A claim on an episode (claims.py): one row per claimed episode, gone with the episode (v6).
CREATE TABLE IF NOT EXISTS episode_claims (
    episode_id INTEGER PRIMARY KEY REFERENCES episodes (id) ON DELETE CASCADE,
    owner TEXT NOT NULL,
    expires_at INTEGER NOT NULL
);
"""

CORRECTION_TABLES = """
-- Corrections by hand (v7): the record is the Correction's JSON (codec.correction_row), without embeddings.
CREATE TABLE IF NOT EXISTS corrections (
    id INTEGER PRIMARY KEY,
    group_id TEXT NOT NULL,
    uuid TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    record TEXT NOT NULL,
    UNIQUE (group_id, uuid)
);
CREATE INDEX IF NOT EXISTS corrections_by_time ON corrections (group_id, created_at);
-- the entity and fact uuids a correction touches (its history), within its group
CREATE TABLE IF NOT EXISTS correction_subjects (
    subject TEXT NOT NULL,
    correction_id INTEGER NOT NULL REFERENCES corrections (id) ON DELETE CASCADE,
    PRIMARY KEY (subject, correction_id)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS correction_subjects_by_correction ON correction_subjects (correction_id);
"""

OWED_TABLES = """
-- Entities whose summaries a batch still owes (v8): marked by the episode's write, cleared by the write
-- of their summaries, gone with the entity.
CREATE TABLE IF NOT EXISTS owed_summaries (
    entity_id INTEGER PRIMARY KEY REFERENCES entities (id) ON DELETE CASCADE
);
"""

FORGET_TABLES = """
-- Forgetting (v9): the audit records (the ForgetRecord's JSON) and each group's retention policy.
CREATE TABLE IF NOT EXISTS forgettings (
    id INTEGER PRIMARY KEY,
    group_id TEXT NOT NULL,
    uuid TEXT NOT NULL,
    at INTEGER NOT NULL,
    record TEXT NOT NULL,
    UNIQUE (group_id, uuid)
);
CREATE INDEX IF NOT EXISTS forgettings_by_time ON forgettings (group_id, at);
CREATE TABLE IF NOT EXISTS retention (
    group_id TEXT PRIMARY KEY,
    days INTEGER NOT NULL,
    updated_at INTEGER NOT NULL
) WITHOUT ROWID;
"""

VAULT_TABLES = """
-- The redaction vault (v10, vault.py): a group's header, and one row per placeholder. No original is
-- stored in clear: ``digest`` is keyed, ``sealed`` encrypted with the caller's key (or NULL: dropped).
CREATE TABLE IF NOT EXISTS redaction_vaults (
    group_id TEXT PRIMARY KEY,
    salt BLOB NOT NULL,
    key_check BLOB
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS redactions (
    group_id TEXT NOT NULL,
    kind TEXT NOT NULL,
    number INTEGER NOT NULL,
    digest BLOB NOT NULL,
    sealed BLOB,
    PRIMARY KEY (group_id, digest),
    UNIQUE (group_id, kind, number)
) WITHOUT ROWID;
"""

DECISION_TABLES = """
-- What each stage decided about an episode (v11): graph.decisions.DecisionRecord as JSON, gone with it.
CREATE TABLE IF NOT EXISTS decision_records (
    episode_id INTEGER PRIMARY KEY REFERENCES episodes (id) ON DELETE CASCADE,
    group_id TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    version INTEGER NOT NULL,
    record TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS decision_records_by_time ON decision_records (group_id, created_at);
-- the normalized names a record's name steps are about (DecisionRecord.names)
CREATE TABLE IF NOT EXISTS decision_names (
    group_id TEXT NOT NULL,
    norm TEXT NOT NULL,
    episode_id INTEGER NOT NULL REFERENCES decision_records (episode_id) ON DELETE CASCADE,
    PRIMARY KEY (group_id, norm, episode_id)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS decision_names_by_record ON decision_names (episode_id);
"""
