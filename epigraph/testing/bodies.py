"""The OpenAI chat response bodies the test server sends (``server.FakeOpenAIServer``): a completion,
a stream's chunks, usage, tool calls, with ids numbered per server."""

from __future__ import annotations

import re
import time
from typing import Any

from .http import approx_tokens
from .replies import Reply


class Bodies:
    """The bodies of one server's answers; ``model``: the one named when neither the reply nor the
    request names one."""

    def __init__(self, model: str) -> None:
        self.model = model
        self.ids = 0

    def next_id(self, prefix: str) -> str:
        self.ids += 1
        return f"{prefix}-{self.ids}"

    def usage(self, reply: Reply, body: dict[str, Any]) -> dict[str, int]:
        prompt_text = " ".join(str(m.get("content", "")) for m in body.get("messages") or [])
        prompt = reply.prompt_tokens if reply.prompt_tokens is not None else approx_tokens(prompt_text)
        completion = (
            reply.completion_tokens if reply.completion_tokens is not None else approx_tokens(reply.text)
        )
        return {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}

    def completion(self, reply: Reply, body: dict[str, Any]) -> dict[str, Any]:
        out: dict[str, Any] = {
            "id": self.next_id("chatcmpl"),
            "object": "chat.completion",
            "created": int(time.time()),
            "model": reply.model or body.get("model") or self.model,
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": reply.text, **self.calls(reply)},
                    "finish_reason": reply.finish_reason,
                    "logprobs": None,
                }
            ],
        }
        if reply.usage:
            out["usage"] = self.usage(reply, body)
        return out

    def calls(self, reply: Reply) -> dict[str, Any]:
        """The message's ``tool_calls`` (and no content when the reply has no text); none: nothing."""
        if not reply.tool_calls:
            return {}
        calls = [
            {
                "id": call.id or self.next_id("call"),
                "type": "function",
                "function": {"name": call.name, "arguments": call.arguments},
            }
            for call in reply.tool_calls
        ]
        return {"tool_calls": calls, **({} if reply.text else {"content": None})}

    def chunk_base(self, reply: Reply, body: dict[str, Any]) -> dict[str, Any]:
        return {
            "id": self.next_id("chatcmpl"),
            "object": "chat.completion.chunk",
            "created": int(time.time()),
            "model": reply.model or body.get("model") or self.model,
        }


def pieces_of(reply: Reply) -> list[str]:
    """The content pieces a streamed ``reply`` is sent in: its own chunks, or its text's words."""
    return list(reply.chunks) if reply.chunks is not None else re.findall(r"\s*\S+\s*", reply.text)


def delta(delta: dict[str, Any], finish_reason: str | None = None) -> dict[str, Any]:
    return {"index": 0, "delta": delta, "finish_reason": finish_reason, "logprobs": None}
