"""Personal data caught at the door (``IngestOptions(redact=True)``): found by rules (``detectors``) and
optionally a name tagger (``names``), replaced by a placeholder per value and group (``placeholders``)
before an episode reaches the model or the store (``redactor``, called by the ingestion queue at every
door), its original dropped or sealed by the caller's key (``vault``). Nothing is imported here."""
