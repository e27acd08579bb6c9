"""Personal data redacted at the door (``IngestOptions.redact``): ``POST .../reveal`` reads a text's
placeholders back as their originals, opened with the server's own key (``EPIGRAPH_REDACT_KEY``: a
request never carries it, and neither the text nor the answer is logged). A server without a key answers
503; a key that does not open the group's vault 403. A vault that keeps no originals (redacted without a
key) leaves every placeholder as it is."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request

from . import service
from .deps import ERRORS, Group, state_of
from .schemas import RevealIn

router = APIRouter(prefix="/groups/{group_id}", tags=["personal data"])


@router.post(
    "/reveal",
    responses={
        **ERRORS,
        403: {"description": "the key may not use this group, or the server's redaction key does not "
                             "open its vault"},
        503: {"description": "the server has no redaction key (EPIGRAPH_REDACT_KEY)"},
    },
)  # fmt: skip
async def reveal(request: Request, group_id: Group, body: RevealIn) -> dict[str, Any]:
    """The text with each placeholder of the group (``<PHONE_3>``) replaced by its original; one the
    vault keeps no original of is left as it is."""
    return await service.reveal(state_of(request), group_id, body.text)
