"""A chat request's tools, as OpenAI's clients send them: `tools`, `tool_choice`,
`parallel_tool_calls`, and the conversation's earlier calls (an assistant message's
`tool_calls`, a `tool` message's answer). Validated here into plain data (ToolRequest, the
messages' extra keys), their complaints in this API's words (ApiError, naming the parameter).
What the model is then shown, and how its calls are read, is tool_plan.py's and
tool_calls.py's."""

from __future__ import annotations

import json
from dataclasses import dataclass

from draftlight.serve.api_error import ApiError

MAX_TOOLS = 128  # as OpenAI
CHOICES = ("none", "auto", "required")


@dataclass(frozen=True)
class ToolRequest:
    tools: tuple[dict, ...]  # OpenAI's {"type": "function", "function": {name, …}}, as sent
    choice: str  # "none", "auto" or "required"
    function: str | None = None  # tool_choice naming one function: the reply calls it
    parallel: bool = True  # parallel_tool_calls: more than one call in a reply

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(tool["function"]["name"] for tool in self.tools)


def tool_request(data: dict) -> ToolRequest | None:
    """The request's tools, or None when it offers none (or only tool_choice "none" with
    none). ApiError (400) for a malformed `tools`, `tool_choice` or `parallel_tool_calls`."""
    tools, choice = data.get("tools"), data.get("tool_choice")
    parallel = data.get("parallel_tool_calls")
    if parallel is not None and not isinstance(parallel, bool):
        raise _invalid("'parallel_tool_calls' must be true or false", "parallel_tool_calls")
    if tools in (None, []):
        if choice not in (None, "none", "auto"):
            raise _invalid("'tool_choice' needs 'tools' to choose from", "tool_choice")
        return None
    if not isinstance(tools, list) or len(tools) > MAX_TOOLS:
        raise _invalid(f"'tools' must be a list of at most {MAX_TOOLS} functions", "tools")
    checked = tuple(_tool(tool, f"tools[{i}]") for i, tool in enumerate(tools))
    names = [tool["function"]["name"] for tool in checked]
    if len(set(names)) != len(names):
        raise _invalid("'tools' names a function twice", "tools")
    function = None
    if isinstance(choice, dict):
        function = (choice.get("function") or {}).get("name") if choice.get(
            "type") == "function" and isinstance(choice.get("function"), dict) else None
        if function not in names:
            raise _invalid("'tool_choice' must be none, auto, required or "
                           "{\"type\": \"function\", \"function\": {\"name\": NAME}} naming one "
                           "of 'tools'", "tool_choice")
        choice = "required"
    elif choice is None:
        choice = "auto"
    elif choice not in CHOICES:
        raise _invalid("'tool_choice' must be none, auto, required or a function of 'tools'",
                       "tool_choice")
    return ToolRequest(checked, choice, function, parallel is not False)


def _tool(tool, where: str) -> dict:
    """One of `tools`, checked: a function with a name and, if any, an object of parameters."""
    function = tool.get("function") if isinstance(tool, dict) else None
    if not isinstance(tool, dict) or tool.get("type") != "function" or not isinstance(
            function, dict):
        raise _invalid(f"{where} must be {{\"type\": \"function\", \"function\": {{\"name\": "
                       f"…, \"parameters\": …}}}}", where)
    name = function.get("name")
    if not isinstance(name, str) or not name or len(name) > 64:
        raise _invalid(f"{where}.function.name must be a name of 1 to 64 characters",
                       f"{where}.function.name")
    if not isinstance(function.get("parameters", {}), dict):
        raise _invalid(f"{where}.function.parameters must be a JSON Schema object",
                       f"{where}.function.parameters")
    if not isinstance(function.get("description", ""), str):
        raise _invalid(f"{where}.function.description must be a string",
                       f"{where}.function.description")
    return tool


def message_tool_keys(role: str, tool_calls, tool_call_id, where: str) -> dict:
    """The keys a template reads of an earlier call (an assistant message's `tool_calls`, a
    tool message's `tool_call_id`), their arguments as objects: Qwen's and Llama's templates
    write `arguments | tojson`, which would quote a JSON string once more."""
    if role == "tool":
        if not isinstance(tool_call_id, str) or not tool_call_id:
            raise _invalid(f"{where}.tool_call_id must name the call this message answers",
                           f"{where}.tool_call_id")
        return {"tool_call_id": tool_call_id}
    if not tool_calls:
        return {}
    if role != "assistant" or not isinstance(tool_calls, list):
        raise _invalid(f"{where}.tool_calls must be a list, on an assistant message",
                       f"{where}.tool_calls")
    return {"tool_calls": [_earlier_call(call, f"{where}.tool_calls[{j}]")
                           for j, call in enumerate(tool_calls)]}


def _earlier_call(call, where: str) -> dict:
    function = call.get("function") if isinstance(call, dict) else None
    if not isinstance(function, dict) or not isinstance(function.get("name"), str):
        raise _invalid(f"{where} must be {{\"id\": …, \"type\": \"function\", \"function\": "
                       f"{{\"name\": …, \"arguments\": …}}}}", where)
    arguments = function.get("arguments", "{}")
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments or "{}")
        except (ValueError, RecursionError):
            raise _invalid(f"{where}.function.arguments must be a JSON object (as a string)",
                           f"{where}.function.arguments") from None
    if not isinstance(arguments, dict):
        raise _invalid(f"{where}.function.arguments must be a JSON object (as a string)",
                       f"{where}.function.arguments")
    return {"id": str(call.get("id") or ""), "type": "function",
            "function": {"name": function["name"], "arguments": arguments}}


def _invalid(message: str, param: str) -> ApiError:
    return ApiError(400, message, param=param)
