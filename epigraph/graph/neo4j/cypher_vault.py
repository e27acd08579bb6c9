"""The Cypher of the redaction vault (``vault``): a group's ``RedactionVault`` node (salt, key check) and
one ``Redaction`` node per placeholder (kind, number, digest, sealed original or none). Every value a
``$parameter``; placeholders are numbered under the group's lock (``cypher.LOCK_GROUP``)."""

from __future__ import annotations

VAULT_HEADER = """
MERGE (v:RedactionVault {group_id: $group_id})
ON CREATE SET v.salt = $salt, v.key_check = $key_check
RETURN v.salt AS salt, v.key_check AS key_check
"""
NUMBER_OF = "MATCH (r:Redaction {group_id: $group_id, digest: $digest}) RETURN r.number AS number"
ADD_PLACEHOLDER = """
OPTIONAL MATCH (r:Redaction {group_id: $group_id, kind: $kind})
WITH coalesce(max(r.number), 0) + 1 AS number
CREATE (:Redaction {group_id: $group_id, kind: $kind, number: number, digest: $digest, sealed: $sealed})
RETURN number
"""
SEALED = """
UNWIND $refs AS ref
MATCH (r:Redaction {group_id: $group_id, kind: ref[0], number: ref[1]})
WHERE r.sealed IS NOT NULL
RETURN r.kind AS kind, r.number AS number, r.sealed AS sealed
"""
READ_HEADER = "MATCH (v:RedactionVault {group_id: $group_id}) RETURN v.salt AS salt, v.key_check AS key_check"
KNOWN = """
UNWIND range(0, size($digests) - 1) AS i
OPTIONAL MATCH (r:Redaction {group_id: $group_id, digest: $digests[i]})
RETURN i, r.number AS number ORDER BY i
"""
AT = """
UNWIND $refs AS ref
MATCH (r:Redaction {group_id: $group_id, kind: ref[0], number: ref[1]})
RETURN r.kind AS kind, r.number AS number, r.digest AS digest
"""
ROWS = """
MATCH (r:Redaction {group_id: $group_id})
RETURN r.kind AS kind, r.number AS number, r.digest AS digest
"""
FREE = """
UNWIND $rows AS row
MATCH (r:Redaction {group_id: $group_id, kind: row.kind, number: row.number})
SET r.digest = row.digest, r.sealed = null
"""
RESERVE = """
UNWIND $rows AS row
MERGE (r:Redaction {group_id: $group_id, kind: row.kind, number: row.number})
ON CREATE SET r.digest = row.digest, r.sealed = null
"""
