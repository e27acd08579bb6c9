"""How an MCP tool is registered: its ``group_id`` (optional when the server has a group of its own,
required otherwise) and an anticipated failure as a ``ToolError`` the model can read."""

from __future__ import annotations

import functools
import inspect
from collections.abc import Awaitable, Callable
from typing import Annotated, Any, TypeVar, cast

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import Field

from ..errors import ConflictError, NotFound, UsageError
from .schemas import LimitExceeded

T = TypeVar("T")


async def guarded(call: Awaitable[T]) -> T:
    """The call's result; an anticipated failure becomes a ``ToolError`` the model can read."""
    try:
        return await call
    except LimitExceeded as exc:
        raise ToolError(f"{exc.status} {exc.field}: {exc.message}") from None
    except (NotFound, UsageError, ValueError) as exc:
        raise ToolError(str(exc)) from None
    except ConflictError as exc:
        raise ToolError(f"409: {exc}") from None


GroupOf = Callable[[Context, str | None], str]

GroupArg = Annotated[
    str | None, Field(description="the group (default: the server's own, when it was started with --group)")
]
"""Every tool's ``group_id``: optional when the server has a group, else required (``Tools``)."""
F = TypeVar("F", bound=Callable[..., Any])


class Tools:
    """Registers the tools on ``server``, with ``group_id`` required in their schema when
    ``group_required`` (a server without a group of its own)."""

    def __init__(self, server: MCPServer, *, group_required: bool) -> None:
        self.server, self.group_required = server, group_required

    def tool(self) -> Callable[[F], F]:
        def register(fn: F) -> F:
            self.server.tool()(_group_required(fn) if self.group_required else fn)
            return fn

        return register


def _group_required(fn: F) -> F:
    """``fn`` as a tool whose ``group_id`` has no default (its schema then lists it as required)."""
    signature = inspect.signature(fn, eval_str=True)
    required = Annotated[str, Field(description="the group")]
    parameters = [
        p.replace(annotation=required, default=inspect.Parameter.empty) if p.name == "group_id" else p
        for p in signature.parameters.values()
    ]

    @functools.wraps(fn)
    async def tool(**kwargs: Any) -> Any:
        return await fn(**kwargs)

    tool.__signature__ = signature.replace(parameters=parameters)  # type: ignore[attr-defined]
    return cast(F, tool)
