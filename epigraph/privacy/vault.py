"""The secrets of a group's redaction vault: the digest that finds a value's placeholder again, and the
sealed original when the caller keeps originals.

- **Without a key** (``redact=True`` alone) originals are dropped: the vault holds, per placeholder, an
  HMAC-SHA256 of the value's normal form keyed by the group's random salt. It is stored beside the
  digests, so someone holding the store file who guesses a value (a phone number of a known country)
  can confirm the guess; nothing is readable otherwise.
- **With a key** (``EPIGRAPH_REDACT_KEY``, 32 random bytes in URL-safe base64: :func:`new_key`) two
  subkeys are derived from it and the salt (HKDF-SHA256): one keys the digests (a guess cannot be
  confirmed without the key), the other seals each original with AES-256-GCM (a random nonce; the group
  and kind as associated data, so a sealed value moved to another placeholder fails to open). The
  vault stores a check of the key (an HMAC under the digest subkey), so a wrong key is refused before
  anything is written or read, and the key itself is never stored.

A group is keyed or not from its first redaction on: the other way is refused (``ConfigError``), so its
placeholders never split into two numberings.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import os
from dataclasses import dataclass, field

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

from ..config import Settings
from ..errors import ConfigError, VaultKeyError
from ..graph.store import VaultHeader

KEY_BYTES = 32
SALT_BYTES = 16
NONCE_BYTES = 12
KEY_HINT = (
    "32 random bytes in URL-safe base64, 44 characters (make one: "
    "python -c 'from epigraph.privacy.vault import new_key; print(new_key())')"
)


def vault_id(header: VaultHeader) -> str:
    """A vault's public name: 16 hex digits of a hash of its random salt (which it does not reveal),
    different for every group and every new vault of a group (deleted and started again). What a
    producer that redacts writes in a Kafka envelope, so a worker can tell its store numbered it."""
    return hashlib.sha256(b"epigraph vault id\0" + header.salt).hexdigest()[:16]


def new_key() -> str:
    """A new vault key, as ``EPIGRAPH_REDACT_KEY`` takes it."""
    return base64.urlsafe_b64encode(os.urandom(KEY_BYTES)).decode("ascii")


@dataclass(frozen=True)
class VaultKey:
    """The caller's key (never printed: its repr hides it)."""

    raw: bytes = field(repr=False)

    @classmethod
    def parse(cls, text: str) -> VaultKey:
        try:
            raw = base64.urlsafe_b64decode(text.strip().encode("ascii"))
        except (binascii.Error, UnicodeEncodeError, ValueError):
            raw = b""
        if len(raw) != KEY_BYTES:
            raise ConfigError(f"EPIGRAPH_REDACT_KEY: not a vault key; it must be {KEY_HINT}")
        return cls(raw)


def _derive(key: VaultKey, salt: bytes, purpose: bytes) -> bytes:
    return HKDF(algorithm=hashes.SHA256(), length=32, salt=salt, info=b"epigraph vault " + purpose).derive(
        key.raw
    )


class Sealer:
    """A group's digests and seals, from its vault header and the caller's key (or none)."""

    def __init__(self, group_id: str, header: VaultHeader, key: VaultKey | None) -> None:
        self.group_id = group_id
        self.keeps_originals = key is not None
        self._mac_key = _derive(key, header.salt, b"digest") if key is not None else header.salt
        self._aead = AESGCM(_derive(key, header.salt, b"seal")) if key is not None else None
        if key is None and header.key_check is not None:
            raise ConfigError(
                f"group {group_id!r}: its redaction vault keeps originals sealed by a key; set "
                "EPIGRAPH_REDACT_KEY to redact into it or look a value up in it"
            )
        if key is not None and header.key_check is None:
            raise ConfigError(
                f"group {group_id!r}: its redaction vault drops originals (started without a key); "
                "redact into it without EPIGRAPH_REDACT_KEY, or use another group"
            )
        if header.key_check is not None and not hmac.compare_digest(self.key_check(), header.key_check):
            raise VaultKeyError(
                f"group {group_id!r}: the redaction key is not the one its vault was made with"
            )

    @staticmethod
    def proposal(key: VaultKey | None) -> VaultHeader:
        """A new group's header: a fresh salt, and the key's check when there is a key."""
        salt = os.urandom(SALT_BYTES)
        check = hmac.new(_derive(key, salt, b"digest"), b"check", hashlib.sha256).digest() if key else None
        return VaultHeader(salt, check)

    def key_check(self) -> bytes:
        return hmac.new(self._mac_key, b"check", hashlib.sha256).digest()

    def digest(self, kind: str, value: str) -> bytes:
        return hmac.new(self._mac_key, f"{kind}\0{value}".encode(), hashlib.sha256).digest()

    def seal(self, kind: str, value: str) -> bytes | None:
        if self._aead is None:
            return None
        nonce = os.urandom(NONCE_BYTES)
        return nonce + self._aead.encrypt(nonce, value.encode(), self._bound(kind))

    def open(self, kind: str, sealed: bytes) -> str:
        if self._aead is None:
            raise VaultKeyError(f"group {self.group_id!r}: its vault keeps no originals")
        try:
            plain = self._aead.decrypt(sealed[:NONCE_BYTES], sealed[NONCE_BYTES:], self._bound(kind))
        except InvalidTag:
            raise VaultKeyError(
                f"group {self.group_id!r}: a sealed value does not open with this key"
            ) from None
        return plain.decode()

    def _bound(self, kind: str) -> bytes:
        return f"{self.group_id}\0{kind}".encode()


def key_of(settings: Settings, key: str | None = None) -> VaultKey | None:
    """``key``, or the settings' ``redact_key`` (``EPIGRAPH_REDACT_KEY``), parsed; None without one."""
    if key is None and settings.redact_key is not None:
        key = settings.redact_key.get_secret_value()
    return VaultKey.parse(key) if key is not None else None
