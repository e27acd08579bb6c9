"""Webhooks: ``episode.done`` and ``episode.failed`` posted to the URLs the settings name, signed, retried
with backoff, never holding ingestion up (``EPIGRAPH_WEBHOOK_*``; ``KnowledgeGraph`` builds them).

- :mod:`.signing`: the signature headers a receiver checks (:func:`~.signing.verify`);
- :mod:`.payload`: what a delivery says of an episode (ids, status, error, report; never its content);
- :mod:`.sender`: :class:`~.sender.Webhooks`, the deliveries, their retries and the dead letters.
"""

from .sender import Webhooks, WebhookStats, webhooks_from_settings
from .signing import SIGNATURE, sign, verify

__all__ = ["SIGNATURE", "WebhookStats", "Webhooks", "sign", "verify", "webhooks_from_settings"]
