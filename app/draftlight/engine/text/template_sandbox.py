"""The sandbox a GGUF's chat template renders in, with a time and memory budget per render.

Chat templates come from model files downloaded from the internet: untrusted code
(CVE-2024-34359 was remote code execution through exactly this). Jinja's
ImmutableSandboxedEnvironment refuses underscore attributes (`__class__`, `__globals__`, …) and
mutation of Python objects; Jinja 3.1.6 is the floor because earlier releases let `str.format`
out through `|attr('format')` (CVE-2025-27516) and through formatter methods (CVE-2024-56326).
The environment has no loader, so `{% include %}`, `{% import %}` and `{% extends %}` cannot
read files, and the helper globals a chat template never needs (`cycler`, `joiner`, `lipsum`)
are removed.

What is left is a denial of service, and the budget stops it:
- size: no single step may make a string or list longer than MAX_TEXT. Steps that multiply
  (`*`, `**`, `+`, `~`, `%`, `str.format`, `ljust`/`center`/`zfill`/`expandtabs`, `join`,
  `replace`, the `indent`/`center`/`format`/`join`/`replace` filters) are checked *before* they
  run, from their arguments; every other call and filter has its result checked after.
- time: a tracer on the template's own code (Jinja compiles it to Python named "<template>")
  stops a render that runs past MAX_RENDER_SECONDS, including loops that call nothing.
- memory: the same tracer stops a render whose process has grown MAX_RENDER_BYTES past its
  earlier peak (getrusage; where that is missing, as on Windows, the size checks remain).

These run between the template's own steps and give precise reasons. What one step does inside
C (a quadratic `sum`, the `|string` of a huge list) only the process around it can stop: the
sandbox runs in a child bounded in time and memory from outside (template_child.py).
"""

from __future__ import annotations

import functools
import operator
import re
import sys
import threading
import time
from contextlib import contextmanager

import jinja2
from jinja2.compiler import CodeGenerator
from jinja2.sandbox import ImmutableSandboxedEnvironment

try:
    import resource
except ImportError:  # Windows
    resource = None

MAX_TEXT = 4_000_000  # longest string or list any one step of a render may make
MAX_POWER = 1 << 64  # largest result of ** (2 ** 10 ** 10 would take forever)
MAX_RENDER_SECONDS = 3.0  # real templates render a long conversation in milliseconds
MAX_RENDER_BYTES = 512 << 20  # growth of the process's peak memory during one render
_MEMORY_EVERY = 1024  # trace events between two looks at the process's memory
_WIDTH_METHODS = frozenset({"ljust", "rjust", "center", "zfill"})
_FORMAT_NUMBER = re.compile(r"\d+")


class _Budget(threading.local):
    deadline: float = float("inf")
    peak_limit: int = 0  # ru_maxrss (KiB on Linux, bytes on macOS) that may not be passed


_budget = _Budget()


def _refuse(why: str):
    raise jinja2.exceptions.SecurityError(why)


def _check_size(value) -> None:
    if isinstance(value, (str, list, tuple)) and len(value) > MAX_TEXT:
        _refuse("a step made a text or list too long")


def _check_count(count) -> None:
    if isinstance(count, int) and count > MAX_TEXT:
        _refuse(f"a width or count of {count} is too large")


def _check_format(fmt: str, args) -> None:
    """`%` and str.format: widths and precisions, written or passed by `*`, stay small."""
    for number in _FORMAT_NUMBER.findall(fmt):
        _check_count(int(number))
    for arg in args if isinstance(args, (tuple, list)) else (args,):
        _check_count(arg)


def _check_join(separator: str, items) -> None:
    if isinstance(items, (list, tuple)):
        parts = sum(len(item) for item in items if isinstance(item, str))
        if len(separator) * len(items) + parts > MAX_TEXT:
            _refuse("a join would make a text too long")


def _check_replace(text: str, old: str, new: str) -> None:
    if isinstance(old, str) and isinstance(new, str):
        found = text.count(old) if old else len(text) + 1
        if len(text) + found * (len(new) - len(old)) > MAX_TEXT:
            _refuse("a replace would make a text too long")


def _check_string_method(text: str, name: str, args, kwargs) -> None:
    values = list(args) + list(kwargs.values())
    if name in _WIDTH_METHODS and values:
        _check_count(values[0])
    elif name == "expandtabs" and values and isinstance(values[0], int):
        _check_count(values[0] * (text.count("\t") + 1))
    elif name in ("format", "format_map"):
        _check_format(text, values)
    elif name == "join" and values:
        _check_join(text, values[0])
    elif name == "replace" and len(values) >= 2:
        _check_replace(text, values[0], values[1])


def _bounded_filter(name: str, function):
    """A built-in filter with the size checks of its string-method twin, and its result checked."""
    @functools.wraps(function)  # keeps jinja_pass_arg (filters that take the context)
    def filtered(*args, **kwargs):
        values = [a for a in args if not isinstance(a, (jinja2.runtime.Context,
                                                        jinja2.nodes.EvalContext,
                                                        jinja2.Environment))]
        if values and isinstance(values[0], str):
            text, rest = values[0], values[1:] + list(kwargs.values())
            if name == "center":
                _check_string_method(text, "center", rest, {})
            elif name == "indent" and rest:
                width = rest[0] if isinstance(rest[0], int) else len(str(rest[0]))
                _check_count(width * (text.count("\n") + 1) + len(text))
            elif name == "format":
                _check_format(text, rest)
            elif name == "replace":
                _check_string_method(text, "replace", rest, {})
        elif name == "join" and values:
            separator = next((v for v in values[1:] if isinstance(v, str)), "")
            _check_join(separator, list(values[0]) if isinstance(values[0], (list, tuple))
                        else values[0])
        result = function(*args, **kwargs)
        _check_size(result)
        return result
    return filtered


def _bounded_join(parts) -> str:
    """`a ~ b ~ c`, with its length checked before it is made."""
    texts = [str(part) for part in parts]
    if sum(map(len, texts)) > MAX_TEXT:
        _refuse("a concatenation would make a text too long")
    return "".join(texts)


class _BoundedCodeGenerator(CodeGenerator):
    """Jinja's compiler, sending `~` through the environment so that its size is checked."""

    def visit_Concat(self, node, frame) -> None:  # Jinja's visitor naming
        self.write("environment.bounded_join((")
        for arg in node.nodes:
            self.visit(arg, frame)
            self.write(", ")
        self.write("))")


class TemplateSandbox(ImmutableSandboxedEnvironment):
    """The immutable sandbox, refusing unsafe attributes outright, with every step that can
    multiply a text's size bounded."""

    intercepted_binops = frozenset({"*", "**", "+", "%"})
    code_generator_class = _BoundedCodeGenerator

    def __init__(self, **options) -> None:
        super().__init__(**options)
        self.bounded_join = _bounded_join
        self.filters = {name: _bounded_filter(name, f) for name, f in self.filters.items()}
        for name in ("cycler", "joiner", "lipsum"):
            self.globals.pop(name, None)

    def unsafe_undefined(self, obj, attribute):
        # Jinja would return an Undefined that fails only when used; a template that even
        # looks at `__class__` is hostile, and the user should hear about it.
        _refuse(f"access to attribute {attribute!r} of {type(obj).__name__!r} is not allowed")

    def call_binop(self, context, operator_name, left, right):
        if operator_name == "**":
            if isinstance(left, (int, float)) and isinstance(right, (int, float)):
                if abs(right) > 64 or abs(left) ** min(abs(right), 64) > MAX_POWER:
                    _refuse("the power is too large")
            return operator.pow(left, right)
        if operator_name == "*":
            for seq, count in ((left, right), (right, left)):
                if isinstance(seq, (str, list, tuple)) and isinstance(count, int):
                    if len(seq) * count > MAX_TEXT:
                        _refuse("the repetition is too long")
            return operator.mul(left, right)
        if operator_name == "%":
            if isinstance(left, str):
                _check_format(left, right)
            result = operator.mod(left, right)
        else:
            result = operator.add(left, right)
        _check_size(result)
        return result

    def call(__self, __context, __obj, *args, **kwargs):  # Jinja's own signature
        method = getattr(__obj, "__wrapped__", __obj)  # the sandbox wraps str.format
        owner = getattr(method, "__self__", None)
        if isinstance(owner, str):
            _check_string_method(owner, getattr(method, "__name__", ""), args, kwargs)
        result = super().call(__context, __obj, *args, **kwargs)
        _check_size(result)
        return result


def _peak_memory() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss if resource else 0


def _memory_unit() -> int:
    return 1 if sys.platform == "darwin" else 1024  # ru_maxrss: bytes on macOS, KiB elsewhere


def _trace_template_code(frame, event, arg):
    """sys.settrace's global tracer: only the template's compiled code is followed."""
    if frame.f_code.co_filename != "<template>":
        return None
    return _check_budget


def _check_budget(frame, event, arg, _count=[0]):  # noqa: B006 (a counter, shared on purpose)
    if time.monotonic() > _budget.deadline:
        _refuse(f"it ran longer than {MAX_RENDER_SECONDS:.0f} s")
    _count[0] += 1
    if resource and _count[0] % _MEMORY_EVERY == 0 and _peak_memory() > _budget.peak_limit:
        _refuse(f"it took more than {MAX_RENDER_BYTES >> 20} MB of memory")
    return _check_budget


@contextmanager
def render_budget():
    """Follow the template's code on this thread while the block runs (one render)."""
    _budget.deadline = time.monotonic() + MAX_RENDER_SECONDS
    _budget.peak_limit = _peak_memory() + MAX_RENDER_BYTES // _memory_unit()
    previous = sys.gettrace()
    sys.settrace(_trace_template_code)
    try:
        yield
    finally:
        sys.settrace(previous)
