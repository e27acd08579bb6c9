"""The redaction vault on both stores (``RedactionVault``, issue 62 part 2): a group's header is stored
once (a later proposal gets the first), placeholders are numbered per kind and group from 1, a digest
keeps its number, two writers racing never share or split one, the sealed originals are read back by
placeholder, and deleting the group takes the vault with it; reading the vault never writes, and a
loaded text's placeholders are reserved (never given to a new value) unless the vault numbers one for a
value of its own."""

from __future__ import annotations

import asyncio
from typing import cast

from epigraph.graph.store import GraphStore, VaultEntry, VaultHeader, reserved_digest
from epigraph.graph.store_roles import RedactionVault, WholeGroups


def vault_of(store: GraphStore) -> RedactionVault:
    assert isinstance(store, RedactionVault)
    return store


async def test_the_first_header_proposed_is_the_groups(store: GraphStore, group: str) -> None:
    vault = vault_of(store)
    first = await vault.vault_header(group, VaultHeader(b"a" * 16, b"check"))
    second = await vault.vault_header(group, VaultHeader(b"b" * 16, None))
    assert first == second == VaultHeader(b"a" * 16, b"check")


async def test_placeholders_are_numbered_per_kind_and_kept_per_digest(
    store: GraphStore, group: str, other_group: str
) -> None:
    vault = vault_of(store)
    entries = [VaultEntry("phone", b"p1"), VaultEntry("email", b"e1"), VaultEntry("phone", b"p2")]
    assert await vault.placeholders(group, entries) == [1, 1, 2]
    again = [VaultEntry("phone", b"p2"), VaultEntry("phone", b"p3"), VaultEntry("phone", b"p1")]
    assert await vault.placeholders(group, again) == [2, 3, 1]
    assert await vault.placeholders(other_group, [VaultEntry("phone", b"p3")]) == [1]


async def test_racing_writers_give_each_digest_one_number(store: GraphStore, group: str) -> None:
    vault = vault_of(store)
    digests = [f"d{i}".encode() for i in range(12)]
    runs = await asyncio.gather(
        *(
            vault.placeholders(group, [VaultEntry("card", d) for d in digests[i::3] + digests[:4]])
            for i in range(3)
        )
    )
    numbers: dict[bytes, set[int]] = {}
    for i, run in enumerate(runs):
        for digest, number in zip(digests[i::3] + digests[:4], run, strict=True):
            numbers.setdefault(digest, set()).add(number)
    assert all(len(n) == 1 for n in numbers.values())
    assert sorted(n for found in numbers.values() for n in found) == list(range(1, 13))


async def test_sealed_values_come_back_by_placeholder_and_go_with_the_group(
    store: GraphStore, group: str
) -> None:
    vault = vault_of(store)
    await vault.vault_header(group, VaultHeader(b"s" * 16, b"check"))
    await vault.placeholders(group, [VaultEntry("iban", b"i1", b"sealed-1"), VaultEntry("iban", b"i2", None)])
    found = await vault.sealed_values(group, [("iban", 1), ("iban", 2), ("iban", 3), ("phone", 1)])
    assert found == {("iban", 1): b"sealed-1"}
    await cast(WholeGroups, store).delete_group(group)
    assert await vault.sealed_values(group, [("iban", 1)]) == {}
    assert await vault.vault_header(group, VaultHeader(b"n" * 16)) == VaultHeader(b"n" * 16)
    assert await vault.placeholders(group, [VaultEntry("iban", b"i2")]) == [1]


async def test_reading_the_vault_never_writes(store: GraphStore, group: str, other_group: str) -> None:
    vault = vault_of(store)
    assert await vault.read_vault_header(group) is None
    assert await vault.known_placeholders(group, [b"p1"]) == [None]
    assert await vault.read_vault_header(group) is None  # still no vault
    await vault.vault_header(group, VaultHeader(b"h" * 16))
    await vault.placeholders(group, [VaultEntry("phone", b"p1"), VaultEntry("phone", b"p2")])
    assert await vault.read_vault_header(group) == VaultHeader(b"h" * 16)
    assert await vault.known_placeholders(group, [b"p2", b"p3", b"p1"]) == [2, None, 1]
    assert await vault.known_placeholders(group, []) == []
    assert await vault.known_placeholders(other_group, [b"p1"]) == [None]
    assert await vault.placeholders(group, [VaultEntry("phone", b"p3")]) == [3]  # nothing was taken


async def test_reserved_numbers_are_never_given_and_a_clash_reserves_nothing(
    store: GraphStore, group: str
) -> None:
    vault = vault_of(store)
    await vault.placeholders(group, [VaultEntry("phone", b"p1")])
    assert await vault.reserve_placeholders(group, [("phone", 4), ("email", 2)]) == []
    assert await vault.reserve_placeholders(group, [("phone", 4)]) == []  # again: a no-op
    assert await vault.placeholders(group, [VaultEntry("phone", b"p2"), VaultEntry("email", b"e1")]) == [5, 3]
    assert await vault.sealed_values(group, [("phone", 4)]) == {}
    assert await vault.known_placeholders(group, [reserved_digest("phone", 4)]) == [4]
    clashing = [("card", 1), ("phone", 1), ("phone", 5), ("phone", 4)]
    assert await vault.reserve_placeholders(group, clashing) == [("phone", 1), ("phone", 5)]
    assert await vault.placeholders(group, [VaultEntry("card", b"c1")]) == [1]  # card 1 was not reserved
