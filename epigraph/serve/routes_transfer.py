"""Export and load over HTTP: a group as the JSON Lines dump of docs/dump-format.md.

``GET .../export`` streams the dump of one consistent read of the store (a snapshot, or the group's
writers held off meanwhile), so it is whole while episodes are being ingested; a failure mid-stream ends
it without its end line, which a load refuses. ``POST .../load`` takes a dump of one group as the body
(JSON Lines text, sent as ``text/plain`` or ``application/x-ndjson``: the route reads the bytes; at most
``Limits.max_dump_bytes``), checks every line first (422 naming the line and field: what makes a dump
cannot be said in a JSON Schema), and writes the group in one transaction into an empty group (409
otherwise).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Annotated, Any

from fastapi import APIRouter, Query, Request
from fastapi.responses import JSONResponse, StreamingResponse

from . import editing
from .deps import ERRORS, Group, state_of

router = APIRouter(prefix="/groups/{group_id}", tags=["export and load"])

NDJSON = "application/x-ndjson"


@router.get(
    "/export",
    response_class=StreamingResponse,
    responses={**ERRORS, 200: {"description": "the dump, one JSON object per line",
                                "content": {NDJSON: {"schema": {"type": "string"}}}},
               404: {"description": "the store holds nothing of the group: no dump"}},
)  # fmt: skip
async def export(
    request: Request,
    group_id: Group,
    vectors: Annotated[bool, Query(description="include the embeddings")] = False,
) -> StreamingResponse:
    """The group as a JSON Lines dump (header, records, end line), from one consistent read."""
    lines = editing.export_lines(state_of(request), group_id, vectors)
    first = await anext(aiter(lines))  # a group the store does not hold: 404 here, before the stream

    async def body() -> AsyncIterator[bytes]:
        yield (first + "\n").encode("utf-8")
        async for line in lines:
            yield (line + "\n").encode("utf-8")

    headers = {"Content-Disposition": f'attachment; filename="{group_id}.jsonl"'}
    return StreamingResponse(body(), media_type=NDJSON, headers=headers)


_LOAD_BODY: dict[str, Any] = {
    "requestBody": {
        "required": True,
        "description": "a dump written by GET .../export or `epigraph export` (one group)",
        "content": {"text/plain": {"schema": {"type": "string"}}},
    }
}


@router.post(
    "/load",
    status_code=201,
    openapi_extra=_LOAD_BODY,
    responses={**ERRORS, 409: {"description": "the group is not empty; nothing was written"},
               503: {"description": "the graph store is unavailable"}},
)  # fmt: skip
async def load(request: Request, group_id: Group) -> JSONResponse:
    """Load a one-group dump as this group: every line checked first, then one transaction."""
    raw = await request.body()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        return JSONResponse({"detail": f"the body is not UTF-8 ({exc.reason})", "field": "body"}, 422)
    report = await editing.load(state_of(request), group_id, text)
    return JSONResponse(report, status_code=201)
