"""What a chat request with tools shows the model, decided on the engine's thread where the
model's chat template is known: the tools go to the template (tool_format.py), in the format it
teaches the model, and tool_choice is honoured in the prompt, never by changing the model's
tokens, so speculation stays lossless:

- "auto": the tools are offered; the reply may call some, or answer.
- "none": the tools are not offered (the model cannot call what it is not shown); earlier calls
  and their answers still go to the template.
- "required", or one named function: the reply is begun with the opening of a call as the
  template writes it (`<tool_call>\\n{"name": "`, or with that function's name and
  `"arguments": `), which the model continues as a client's prefilled assistant message; its
  call is then validated like any other (tool_calls.py). Served for Hermes-style templates,
  whose calls open with text; Llama's and Mistral's open with a control token.
- parallel_tool_calls false: the reply ends after its first call (a stop sequence at the end of
  a Hermes call; the first call only, for the other formats).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from draftlight.engine.text.tool_format import ToolFormat, knows_tools, tool_format_of, with_tools
from draftlight.serve.api_error import ApiError
from draftlight.serve.tool_request import ToolRequest

HERMES_OPEN, HERMES_CLOSE = "<tool_call>", "</tool_call>"


@dataclass(frozen=True)
class ToolPlan:
    """How the reply's calls are read: the format, the text the reply was begun with (the
    model's text follows it), the names it may call, and whether more than one."""
    format: ToolFormat
    names: tuple[str, ...]
    prefill: str = ""
    parallel: bool = True


def template_source(engine) -> str | None:
    """The chat template `engine`'s model renders with: the in-process engine's own, or the
    hosted engine's model file's. ApiError (400) for an engine that renders elsewhere."""
    template = getattr(engine, "template", None)
    if template is not None:
        return template.source
    spec = getattr(engine, "spec", None)
    if spec is not None:
        from draftlight.store.gguf_info import read_gguf_info
        return read_gguf_info(spec.target).chat_template
    raise ApiError(400, "'tools' is served by Draftlight's own engine; this server's engine "
                        "(llama-server or a remote one) renders prompts itself", param="tools")


def planned(request, tools: ToolRequest, template: str | None):
    """(`request` as the engine is to see it, the ToolPlan its reply is read with, or None for
    tool_choice "none"). ApiError (400) where the model's template knows no tools, or cannot
    be made to call one."""
    if not knows_tools(template):
        raise ApiError(400, "this model's chat template knows no tools: it never reads a "
                            "'tools' variable, so the model would not be shown them",
                       param="tools", code="unsupported_parameter")
    if tools.choice == "none":
        return request, None
    found = tool_format_of(template)
    if found is None:
        raise ApiError(400, "this model's chat template takes tools but writes calls in a "
                            "format this server does not read (it reads Hermes/Qwen "
                            "<tool_call>, Llama 3 and Mistral [TOOL_CALLS] calls)",
                       param="tools", code="unsupported_parameter")
    messages, stop, prefill = list(request.messages), tuple(request.stop), ""
    if tools.choice == "required":
        if found is not ToolFormat.HERMES:
            raise ApiError(400, f"tool_choice 'required' or a named function is served for "
                                f"Hermes-style templates (Qwen2.5, Qwen3); this model's "
                                f"writes {found.value} calls", param="tool_choice",
                           code="unsupported_parameter")
        if messages[-1]["role"] == "assistant":
            raise ApiError(400, "a conversation that ends with an assistant message cannot "
                                "also require a tool call", param="tool_choice")
        prefill = HERMES_OPEN + '\n{"name": "'  # as Qwen's template writes a call
        if tools.function is not None:
            prefill += tools.function + '", "arguments": '
        messages.append({"role": "assistant", "content": prefill})
    if found is ToolFormat.HERMES and not tools.parallel:
        stop += (HERMES_CLOSE,)  # the reply ends with its first call
    request = replace(request, messages=with_tools(messages, list(tools.tools)), stop=stop)
    return request, ToolPlan(found, tools.names, prefill, tools.parallel)
