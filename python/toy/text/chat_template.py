"""A model's chat template, rendered as the hostile input it is.

A GGUF's tokenizer.chat_template is a Jinja program that came with the
model from the internet. jinja2's ImmutableSandboxedEnvironment keeps it
away from Python's internals (no __class__, no mutating the caller's
lists); what the sandbox leaves to its caller -- time, memory, recursion,
and which exceptions come out -- this module adds, so that any template
either renders or fails with one InputError line:

  time     Every line of the compiled template that runs is a step
           (sys.settrace, on the template's own frames only); building a
           large value costs steps too (a KiB of text or a container's
           item is one). Past max_steps the render stops: the template
           loops. Deterministic: a count, not a clock.
  size     No value the template builds (a string, list, dict, int) and no
           rendered conversation may exceed max_size characters or items,
           nor nest deeper than MAX_DEPTH. Operators (+ * ** % ~), literals,
           calls, filters and format widths are checked before they build
           a value where the size can be known beforehand, else right after.
  memory   The process's peak RSS may grow by at most memory_budget during a
           render, checked every MEMORY_CHECK_STEPS steps: growth through
           many values each within max_size.
  errors   Recursion (a macro calling itself) and any exception while
           rendering (SecurityError, UndefinedError, TypeError, ...) become
           one line naming the template line.

Constant folding is off (optimized=False, and finalize needs the context),
so nothing of the template runs at compile time, outside these guards.

The language is the one Hugging Face transformers renders chat templates in
(apply_chat_template), since that is what a model's authors wrote theirs
against: blocks trimmed (trim_blocks, lstrip_blocks), {% break %} and
{% continue %}, {% generation %} (transformers marks the assistant's text
with it; here it renders its body), raise_exception(message) to refuse a
conversation, strftime_now(format), tojson as json.dumps (keys in their
order, nothing HTML-escaped), namespace() without _names, a dict() with
fromkeys only. tools and documents are None unless given, and messages are
passed as apply_chat_template passes them: keys whose value is None
dropped, a message's reasoning (reasoning_content, thinking or reasoning)
under the names templates read. One difference on purpose: strftime_now
tells the time of STRFTIME_NOW, not the clock's, so that the same
conversation renders the same bytes on any day.
"""

from __future__ import annotations

import itertools
import json
import re
import sys
import types
from contextvars import ContextVar
from dataclasses import dataclass
from datetime import datetime
from functools import update_wrapper

from jinja2 import nodes, pass_context
from jinja2.compiler import CodeGenerator
from jinja2.exceptions import SecurityError
from jinja2.ext import Extension, loopcontrols
from jinja2.runtime import markup_join, str_join
from jinja2.sandbox import ImmutableSandboxedEnvironment, SandboxedEscapeFormatter, SandboxedFormatter
from jinja2.utils import Namespace
from markupsafe import Markup

from ..core.errors import InputError, one_line

# ~5,000 steps render a 200-message conversation with Qwen2's template and
# ten tools (SmolLM2's: ~1,000): 4M leaves 800x. An empty nested loop runs
# ~8M steps/s, a busier one ~2M/s: a runaway stops in 0.5-2 s.
MAX_STEPS = 4_000_000
# the largest string, list or rendered conversation (a long training
# conversation is well under 1 Mi characters)
MAX_SIZE = 16 * 2**20
MEMORY_BUDGET = 2**30
MEMORY_CHECK_STEPS = 1024
MAX_INT_BITS = 2**16  # ~20,000 digits; Python will not print ints over 4,300 anyway
MAX_DEPTH = 256  # nesting of values (hashing deeper tuples recurses in C, unguarded)
CHARS_PER_STEP = 1024  # what building a value costs in steps: its text per KiB ...
ITEMS_PER_STEP = 1  # ... and its items one each

TEMPLATE_FILE = "<template>"  # the compiled template's co_filename (from_string)

# what strftime_now(format) formats: a fixed moment (transformers reads the
# clock), so that a render depends on its inputs only
STRFTIME_NOW = datetime(2025, 1, 1, 12, 0, 0)
# strftime's text is at most 256 times its format's (CPython gives up past that)
STRFTIME_GROWTH = 256

# the names apply_chat_template passes a message's reasoning under: the first
# is what most templates read, gpt-oss's reads "thinking"
REASONING_FIELDS = ("reasoning_content", "thinking", "reasoning")


@dataclass(frozen=True)
class Limits:
    max_steps: int = MAX_STEPS
    max_size: int = MAX_SIZE
    memory_budget: int = MEMORY_BUDGET


class ChatTemplate:
    """A chat template compiled in the guarded sandbox.

    template = ChatTemplate(source)          # InputError if it does not parse
    text = template.render(messages=[...], add_generation_prompt=True)
    """

    def __init__(self, source: str, limits: Limits = Limits()):
        self.limits = limits
        self.environment = GuardedEnvironment()
        try:
            self.template = self.environment.from_string(source)
        except Exception as err:  # TemplateSyntaxError, RecursionError on deep nesting, ...
            raise InputError(f"the model's chat template does not parse: {_describe(err)}") from None

    def render(self, **variables) -> str:
        """The rendered text; InputError (one line) for whatever goes wrong.

        The variables are the template's (messages, add_generation_prompt,
        bos_token, eos_token, tools, ...), passed as transformers'
        apply_chat_template passes them."""
        variables = _as_transformers_passes(variables)
        render = _Render(self.limits)
        token = _active.set(render)
        previous = sys.gettrace()
        render.previous_tracer = previous
        parts, size = [], 0
        try:
            sys.settrace(render.global_tracer)
            try:
                for chunk in self.template.generate(**variables):
                    size += len(chunk)
                    if size > self.limits.max_size:
                        raise TemplateLimit(f"renders over {self.limits.max_size:,} characters for this conversation")
                    parts.append(chunk)
            finally:
                sys.settrace(previous)
        except InputError:
            raise
        except Exception as err:
            raise _as_input_error(err) from None
        finally:
            _active.reset(token)
        text = "".join(parts)
        bad = _SURROGATE.search(text)
        if bad:
            raise InputError(
                f"the model's chat template renders a lone surrogate (U+{ord(bad.group()):04X}), which is not text"
            )
        return text


class TemplateLimit(Exception):
    """The template went past one of its limits (the message says which)."""


class TemplateRefusal(Exception):
    """The template called raise_exception(message)."""


def raise_exception(message=""):
    raise TemplateRefusal(str(message))


def _as_transformers_passes(variables: dict) -> dict:
    """The variables with the defaults and message shapes transformers'
    apply_chat_template gives a template: tools and documents None and no
    generation prompt unless asked; in each message, keys whose value is
    None dropped (templates test `is defined`) and its reasoning under every
    name in REASONING_FIELDS that templates read. The caller's messages are
    not changed."""
    variables = {"tools": None, "documents": None, "add_generation_prompt": False, **variables}
    messages = variables.get("messages")
    if isinstance(messages, (list, tuple)):
        variables["messages"] = [_as_transformers_message(m) if isinstance(m, dict) else m for m in messages]
    return variables


def _as_transformers_message(message: dict) -> dict:
    message = {key: value for key, value in message.items() if value is not None}
    reasoning = next((message[key] for key in REASONING_FIELDS if key in message), None)
    if reasoning is not None:
        # "thinking" first unless given, "reasoning_content" always: transformers' order of keys
        message = {"thinking": reasoning, **message, "reasoning_content": reasoning}
    return message


def strftime_now(format):  # noqa: A002 (the name templates pass it by)
    """STRFTIME_NOW in format (a C strftime format)."""
    if isinstance(format, str):
        _current().refuse_over(len(format) * STRFTIME_GROWTH, "strftime_now()")
    return STRFTIME_NOW.strftime(format)


def tojson(value, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
    """The tojson filter as transformers has it: json.dumps, keys in the
    order given (jinja's own sorts them and escapes < > & ' for HTML); its
    arguments in transformers' order."""
    return json.dumps(value, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)


class _DictGlobal:
    """dict() and dict.fromkeys() for templates, and no more of the type."""

    def __call__(self, *args, **kwargs):
        return dict(*args, **kwargs)

    def fromkeys(self, *args, **kwargs):
        return dict.fromkeys(*args, **kwargs)


class _GenerationBlock(Extension):
    """{% generation %}...{% endgeneration %}: transformers finds the
    assistant's text by it; the body renders as it stands. A call block, as
    in transformers, so that what the body sets stays in it there and here."""

    tags = {"generation"}

    def parse(self, parser):
        lineno = next(parser.stream).lineno
        body = parser.parse_statements(("name:endgeneration",), drop_needle=True)
        return nodes.CallBlock(self.call_method("_body"), [], [], body).set_lineno(lineno)

    def _body(self, caller):
        return caller()


_SURROGATE = re.compile("[\ud800-\udfff]")


def _describe(err: BaseException) -> str:
    text = one_line(err, 300)
    return f"{type(err).__name__}: {text}" if text else type(err).__name__


def _template_line(err: BaseException) -> int | None:
    """The template line the error came from: jinja rewrites tracebacks
    through a template's code into frames named after the template."""
    line, tb = None, err.__traceback__
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == TEMPLATE_FILE:
            line = tb.tb_lineno
        tb = tb.tb_next
    return line


def _as_input_error(err: Exception) -> InputError:
    line = _template_line(err)
    at = f" (template line {line})" if line else ""
    if isinstance(err, TemplateRefusal):
        return InputError(f"the model's chat template refuses this conversation: {one_line(err, 300)}{at}")
    if isinstance(err, TemplateLimit):
        return InputError(f"the model's chat template {err}{at}")
    if isinstance(err, RecursionError):
        return InputError(f"the model's chat template recursed too deeply (a macro calling itself?){at}")
    if isinstance(err, MemoryError):
        return InputError(f"the model's chat template ran out of memory{at}")
    return InputError(f"the model's chat template failed on this conversation: {_describe(err)}{at}")


# ---- one render's budget -------------------------------------------------------

_active: ContextVar[_Render | None] = ContextVar("toy_chat_template_render", default=None)


def _peak_rss() -> int | None:
    try:
        import resource
    except ImportError:  # not on Windows
        return None
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak if sys.platform == "darwin" else peak * 1024  # bytes on macOS, KiB elsewhere


class _Render:
    """Steps taken and memory grown by one render."""

    def __init__(self, limits: Limits):
        self.limits = limits
        self.steps = 0
        self.next_check = MEMORY_CHECK_STEPS
        self.rss_at_start = _peak_rss()
        self.previous_tracer = None
        self._line_tracer = self.line_tracer  # one bound method, returned on every event

    # sys.settrace's function: sees every new frame; traces the template's only
    def global_tracer(self, frame, event, arg):
        if frame.f_code.co_filename == TEMPLATE_FILE:
            return self._line_tracer
        if self.previous_tracer is not None:  # a debugger or coverage keeps its view of the rest
            return self.previous_tracer(frame, event, arg)
        return None

    def line_tracer(self, frame, event, arg):
        if event == "line":
            self.steps += 1
            if self.steps >= self.next_check:
                self.check()
        return self._line_tracer

    def charge(self, steps: int) -> None:
        self.steps += steps
        if self.steps >= self.next_check:
            self.check()

    def check(self) -> None:
        if self.steps > self.limits.max_steps:
            raise TemplateLimit(f"did not finish within {self.limits.max_steps:,} steps (it loops)")
        self.next_check = self.steps + MEMORY_CHECK_STEPS
        if self.rss_at_start is not None:
            grown = _peak_rss() - self.rss_at_start
            if grown > self.limits.memory_budget:
                raise TemplateLimit(f"used over {self.limits.memory_budget // 2**20:,} MiB of memory while rendering")

    # sizes -------------------------------------------------------------------
    def refuse_over(self, size: int, what: str) -> None:
        if size > self.limits.max_size:
            raise TemplateLimit(f"builds a value of over {self.limits.max_size:,} characters or items ({what})")

    def measure(self, value) -> _Size:
        size = _measure(value, self.limits.max_size)
        self.charge(size.nodes // ITEMS_PER_STEP + size.chars // CHARS_PER_STEP)
        return size

    def checked(self, value, what: str):
        """value, once its size is known to be within the limits."""
        if type(value) is str:  # the common case, cheaply
            self.refuse_over(len(value), what)
            if len(value) >= CHARS_PER_STEP:
                self.charge(len(value) // CHARS_PER_STEP)
            return value
        self.refuse_over(self.measure(value).total, what)
        return value


def _current() -> _Render:
    render = _active.get()
    return render if render is not None else _Render(Limits())


# ---- the size of a value ---------------------------------------------------------


@dataclass
class _Size:
    chars: int = 0  # text in strings (and digits of ints)
    nodes: int = 0  # containers and items walked
    depth: int = 0

    @property
    def total(self) -> int:
        """About as long as str(value): text and a separator or two per item."""
        return self.chars + 2 * self.nodes


def _measure(value, limit: int) -> _Size:
    """The size of value as str() would print it, counting an item held in
    several places each time (so [[x] * 1000] * 1000 is a million x's); the
    walk stops once past limit. TemplateLimit when nested deeper than
    MAX_DEPTH."""
    size = _Size()
    stack = [iter((value,))]
    while stack:
        for item in stack[-1]:
            size.nodes += 1
            if isinstance(item, (str, bytes)):
                size.chars += len(item)
            elif isinstance(item, int):
                size.chars += item.bit_length() // 3 + 1
            elif isinstance(item, (list, tuple, set, frozenset, dict)) or _namespace_attrs(item) is not None:
                if len(stack) >= MAX_DEPTH:
                    raise TemplateLimit(f"nests values deeper than {MAX_DEPTH} levels")
                if isinstance(item, dict):
                    children = itertools.chain.from_iterable(item.items())
                elif isinstance(item, (list, tuple, set, frozenset)):
                    children = iter(item)
                else:
                    children = itertools.chain.from_iterable(_namespace_attrs(item).items())
                stack.append(children)
                size.depth = max(size.depth, len(stack) - 1)
                if size.total > limit:
                    return size
                break
            else:
                size.chars += 8  # None, floats, Undefined, a macro, a loop: a short repr
            if size.total > limit:
                return size
        else:
            stack.pop()
    return size


def _namespace_attrs(value) -> dict | None:
    return object.__getattribute__(value, "_attributes") if isinstance(value, _BoundedNamespace) else None


def _digits(spec_number: str) -> int:
    """A width or precision from a format string (its digits may be many)."""
    return int(spec_number) if len(spec_number) <= 12 else 10**12


# %-formatting: %[(key)][flags][width|*][.precision|*][length]type
_PERCENT_FIELD = re.compile(r"%(?:\([^)]*\))?[-#0 +]*(\*|\d+)?(?:\.(\*|\d+))?[hlL]?")
_SPEC_NUMBER = re.compile(r"\d+")


def _percent_estimate(render: _Render, fmt, args) -> int:
    """About how long fmt % args is: the format, its widths and precisions,
    and the arguments printed."""
    text = fmt if isinstance(fmt, str) else fmt.decode("latin-1")
    estimate = len(text) + render.measure(args).total
    for match in _PERCENT_FIELD.finditer(text):
        for number in match.groups():
            if number and number != "*":
                estimate += _digits(number)
    return estimate


# ---- the environment ----------------------------------------------------------


class _GuardedCodeGenerator(CodeGenerator):
    """Routes `~` and list, tuple and dict literals through size checks: the
    sandbox has no hook for them."""

    def visit_Concat(self, node, frame):
        if frame.eval_ctx.volatile:
            autoescape = "context.eval_ctx.autoescape"
        else:
            autoescape = repr(bool(frame.eval_ctx.autoescape))
        self.write(f"environment.guarded_concat({autoescape}, (")
        for arg in node.nodes:
            self.visit(arg, frame)
            self.write(", ")
        self.write("))")

    def _literal(self, visit, node, frame):
        if getattr(node, "ctx", "load") != "load":  # an assignment target: {% set a, b = ... %}
            return visit(node, frame)
        self.write("environment.guarded_literal(")
        visit(node, frame)
        self.write(")")

    def visit_List(self, node, frame):
        self._literal(super().visit_List, node, frame)

    def visit_Tuple(self, node, frame):
        self._literal(super().visit_Tuple, node, frame)

    def visit_Dict(self, node, frame):
        self._literal(super().visit_Dict, node, frame)


@pass_context
def _finalize(context, value):
    """Every {{ value }}, before it is printed. (Needing the context also
    keeps jinja2 from printing constants at compile time.)"""
    return _current().checked(value, "printed")


class _BoundedNamespace(Namespace):
    """namespace(): its attributes, set one at a time, within the size limit;
    none named _... (transformers refuses them too).

    A Namespace only for the check jinja2's compiled {% set ns.name = ... %}
    makes (isinstance, then ns[name] = value): the attributes live in a dict
    of its own (_attributes), not in Namespace's private one, so that
    _measure can walk them without jinja2's private names."""

    def __init__(*args, **kwargs):  # noqa: N805 (Namespace's spelling: a `self` keyword is an attribute)
        self, attrs = args[0], dict(*args[1:], **kwargs)
        for name in attrs:
            _refuse_private(name)
        object.__setattr__(self, "_attributes", attrs)

    def __getattribute__(self, name):
        # ns.name reads an attribute, never a method; __class__ for isinstance and
        # jinja2's awaitable check (as Namespace's own)
        if name == "__class__":
            return object.__getattribute__(self, name)
        try:
            return object.__getattribute__(self, "_attributes")[name]
        except KeyError:
            raise AttributeError(name) from None

    def __setitem__(self, name, value):
        _refuse_private(name)
        object.__getattribute__(self, "_attributes")[name] = value
        _current().checked(self, f"namespace attribute {one_line(name, 40)}")

    def __repr__(self):
        return f"<Namespace {object.__getattribute__(self, '_attributes')!r}>"


def _refuse_private(name) -> None:
    if isinstance(name, str) and name.startswith("_"):
        raise SecurityError(f"a namespace attribute may not start with _ ({one_line(name, 40)!r})")


class _SizedFormats:
    """str.format's fields: each one's width, and the text so far, within
    the size limit before the field is formatted."""

    def vformat(self, format_string, args, kwargs):
        self.size = len(format_string)
        return super().vformat(format_string, args, kwargs)

    def format_field(self, value, format_spec):
        render = _current()
        widths = [_digits(n) for n in _SPEC_NUMBER.findall(format_spec)]
        self.size += max(widths + [render.measure(value).total])
        render.refuse_over(self.size, "str.format")
        return super().format_field(value, format_spec)


class _Formatter(_SizedFormats, SandboxedFormatter):
    pass


class _EscapeFormatter(_SizedFormats, SandboxedEscapeFormatter):
    pass


def _int_argument_over(limit: int, args, kwargs):
    for value in itertools.chain(args, kwargs.values()):
        if isinstance(value, int) and not isinstance(value, bool) and abs(value) > limit:
            return value
    return None


def _short(value: int) -> str:
    return f"{value:,}" if value.bit_length() < 64 else f"an int of {value.bit_length():,} bits"


class GuardedEnvironment(ImmutableSandboxedEnvironment):
    """The immutable sandbox with every way to build a value checked."""

    intercepted_binops = frozenset(["+", "*", "**", "%"])
    code_generator_class = _GuardedCodeGenerator

    def __init__(self):
        # transformers' language: blocks trimmed, break and continue, {% generation %}
        super().__init__(
            optimized=False,
            finalize=_finalize,
            trim_blocks=True,
            lstrip_blocks=True,
            extensions=[loopcontrols, _GenerationBlock],
        )
        self.filters["tojson"] = tojson
        self.filters = {name: _guarded_filter(name, f) for name, f in self.filters.items()}
        self.globals.pop("lipsum", None)  # lorem ipsum: no use in a chat template, and costly
        self.globals["namespace"] = _BoundedNamespace
        self.globals["dict"] = _DictGlobal()
        self.globals["raise_exception"] = raise_exception
        self.globals["strftime_now"] = strftime_now

    def call_binop(self, context, operator, left, right):
        """+ * ** %, their result's size checked before they build it."""
        render = _current()
        what = f"{type(left).__name__} {operator} {type(right).__name__}"
        both_ints = isinstance(left, int) and isinstance(right, int)
        if operator == "**" and both_ints:
            if right > 0 and abs(left) > 1 and left.bit_length() * right > MAX_INT_BITS:
                raise TemplateLimit(f"computes an integer of over {MAX_INT_BITS:,} bits ({what})")
        elif operator == "*" and both_ints:
            if left.bit_length() + right.bit_length() > MAX_INT_BITS:
                raise TemplateLimit(f"computes an integer of over {MAX_INT_BITS:,} bits ({what})")
        elif operator == "*":
            count, sequence = (left, right) if isinstance(left, int) else (right, left)
            if isinstance(count, int) and isinstance(sequence, (str, bytes, list, tuple)):
                # the count alone first: a huge one must not wait for a walk of the sequence
                render.refuse_over(max(count, 0) * min(len(sequence), 1), what)
                render.refuse_over(max(count, 0) * render.measure(sequence).total, what)
        elif operator == "+":
            sequences = (str, bytes, list, tuple)
            if isinstance(left, sequences) and isinstance(right, sequences):
                render.refuse_over(render.measure(left).total + render.measure(right).total, what)
        elif operator == "%" and isinstance(left, (str, bytes)):
            render.refuse_over(_percent_estimate(render, left, right), what)
        return render.checked(self.binop_table[operator](left, right), what)

    def call(__self, __context, __obj, *args, **kwargs):  # noqa: N805 (the sandbox's spelling)
        """Every call a template makes: no int argument over the size limit
        (widths, counts), str methods that multiply text estimated first,
        the result's size checked."""
        render = _current()
        name = getattr(__obj, "__name__", type(__obj).__name__)
        big = _int_argument_over(render.limits.max_size, args, kwargs)
        if big is not None:
            raise TemplateLimit(f"calls {name}() with {_short(big)}, over the limit of {render.limits.max_size:,}")
        args = _estimate_method(render, __obj, args, kwargs)
        result = super().call(__context, __obj, *args, **kwargs)
        return render.checked(result, f"{name}()")

    def wrap_str_format(self, value):
        """str.format and format_map, through a formatter that checks widths
        (as the sandbox's own, with _SizedFormats in front)."""
        if not (
            isinstance(value, (types.MethodType, types.BuiltinMethodType))
            and value.__name__ in ("format", "format_map")
            and isinstance(value.__self__, str)
        ):
            return None
        text = value.__self__
        formatter = _EscapeFormatter(self, escape=text.escape) if isinstance(text, Markup) else _Formatter(self)
        is_map = value.__name__ == "format_map"

        def wrapper(*args, **kwargs):
            if is_map:
                if kwargs or len(args) != 1:
                    raise TypeError("format_map() takes exactly one argument")
                args, kwargs = (), args[0]
            return type(text)(formatter.vformat(text, args, kwargs))

        return update_wrapper(wrapper, value)

    def unsafe_undefined(self, obj, attribute):
        """Touching an internal attribute (__class__, _anything) is an error at
        once; the sandbox would return an undefined that prints as nothing."""
        raise SecurityError(
            f"access to attribute {one_line(attribute, 40)!r} of a {type(obj).__name__!r} object is unsafe"
        )

    def guarded_concat(self, autoescape, parts):
        """a ~ b ~ ...: the joined length checked before joining."""
        render = _current()
        render.refuse_over(sum(len(p) if isinstance(p, str) else render.measure(p).total for p in parts), "~")
        return (markup_join if autoescape else str_join)(parts)

    def guarded_literal(self, value):
        """[...], (...) and {...} with variables in them."""
        return _current().checked(value, f"a {type(value).__name__} literal")


def _guarded_filter(name, function):
    """The filter with its int arguments within the size limit, and its
    result's size estimated before (where _FILTER_ESTIMATES knows how) and
    checked after."""
    # the marker jinja2's pass_context, pass_eval_context and pass_environment set
    # (tests/test_jinja2_reliance.py holds jinja2 to it)
    pass_arg = getattr(function, "jinja_pass_arg", None)
    skip = 1 if pass_arg is not None else 0  # the context, eval context or environment it takes
    estimate = _FILTER_ESTIMATES.get(name)

    def guarded(*args, **kwargs):
        render = _current()
        big = _int_argument_over(render.limits.max_size, args[skip + 1 :], kwargs)
        if big is not None:
            raise TemplateLimit(f"gives the {name} filter {_short(big)}, over the limit of {render.limits.max_size:,}")
        if estimate is not None:
            args = estimate(render, args, kwargs, skip)
        return render.checked(function(*args, **kwargs), f"the {name} filter")

    update_wrapper(guarded, function)
    if pass_arg is not None:
        guarded.jinja_pass_arg = pass_arg  # jinja2 reads it to pass the context first
    return guarded


# ---- estimates: how large a call's result will be, before making it ---------------
# Each takes (render, args, kwargs, skip) -- skip: how many leading arguments
# the filter's pass_context/eval_context/environment takes -- refuses over
# the limit, and returns args (some turn an iterator into a list first, to
# count it).


def _arg(args, kwargs, index, name, default=None):
    if index < len(args):
        return args[index]
    return kwargs.get(name, default)


def _text_of(value) -> str:
    return value if isinstance(value, str) else str(value)


def _estimate_center(render, args, kwargs, skip):
    value, width = _arg(args, kwargs, skip, "value"), _arg(args, kwargs, skip + 1, "width", 80)
    if isinstance(width, int):
        render.refuse_over(max(render.measure(value).total, width), "the center filter")
    return args


def _estimate_indent(render, args, kwargs, skip):
    text = _arg(args, kwargs, skip, "s")
    width = _arg(args, kwargs, skip + 1, "width", 4)
    size = render.measure(text).total
    lines = _text_of(text).count("\n") + 1 if size <= render.limits.max_size else 1
    per_line = len(width) if isinstance(width, str) else width if isinstance(width, int) else 0
    render.refuse_over(size + lines * max(per_line, 0), "the indent filter")
    return args


def _estimate_wordwrap(render, args, kwargs, skip):
    text = _arg(args, kwargs, skip, "s")
    width = _arg(args, kwargs, skip + 1, "width", 79)
    wrapstring = _arg(args, kwargs, skip + 3, "wrapstring")
    size = render.measure(text).total
    if isinstance(width, int) and width > 0:
        lines = size // width + _text_of(text).count("\n") + 1 if size <= render.limits.max_size else 1
        wrap = len(wrapstring) if isinstance(wrapstring, str) else 1
        render.refuse_over(size + lines * wrap, "the wordwrap filter")
    return args


def _replaced_size(text, old, new, count) -> int:
    if not isinstance(old, (str, bytes)) or not isinstance(new, (str, bytes)):
        return len(text)
    found = len(text) + 1 if not old else text.count(old)
    if isinstance(count, int) and count >= 0:
        found = min(found, count)
    return len(text) + found * max(len(new) - len(old), 0)


def _estimate_replace(render, args, kwargs, skip):
    value = _arg(args, kwargs, skip, "s")
    render.refuse_over(render.measure(value).total, "the replace filter")
    text = _text_of(value)
    old, new = _arg(args, kwargs, skip + 1, "old"), _arg(args, kwargs, skip + 2, "new")
    render.refuse_over(
        _replaced_size(text, _text_of(old), _text_of(new), _arg(args, kwargs, skip + 3, "count")), "the replace filter"
    )
    return args


def _joined(render, items, separator, what):
    """items as a list (an iterator is drawn first), refused when items
    joined with separator would be over the limit."""
    if isinstance(items, str):
        render.refuse_over(len(items) * (1 + len(separator)), what)
        return items
    if not isinstance(items, (list, tuple)):
        items = list(itertools.islice(items, render.limits.max_size + 1))
    render.refuse_over(len(items), what)
    render.refuse_over(render.measure(items).total + len(separator) * len(items), what)
    return items


def _estimate_join(render, args, kwargs, skip):
    separator = _arg(args, kwargs, skip + 1, "d", "")
    items = _joined(render, _arg(args, kwargs, skip, "value"), _text_of(separator), "the join filter")
    if skip < len(args):
        return (*args[:skip], items, *args[skip + 1 :])
    kwargs["value"] = items
    return args


def _estimate_format(render, args, kwargs, skip):
    value = _arg(args, kwargs, skip, "value")
    if isinstance(value, str):
        render.refuse_over(_percent_estimate(render, value, (args[skip + 1 :], kwargs)), "the format filter")
    return args


def _estimate_slice(render, args, kwargs, skip):
    slices = _arg(args, kwargs, skip + 1, "slices")
    if isinstance(slices, int):
        fill = _arg(args, kwargs, skip + 2, "fill_with")
        render.refuse_over(
            render.measure(_arg(args, kwargs, skip, "value")).total + slices * (2 + render.measure(fill).total),
            "the slice filter",
        )
    return args


def _estimate_batch(render, args, kwargs, skip):
    linecount = _arg(args, kwargs, skip + 1, "linecount")
    fill = _arg(args, kwargs, skip + 2, "fill_with")
    if isinstance(linecount, int) and fill is not None:
        render.refuse_over(
            render.measure(_arg(args, kwargs, skip, "value")).total + linecount * (2 + render.measure(fill).total),
            "the batch filter",
        )
    return args


def _estimate_tojson(render, args, kwargs, skip):
    # tojson(value, ensure_ascii, indent, separators, sort_keys), as transformers orders them
    ensure_ascii = _arg(args, kwargs, skip + 1, "ensure_ascii", False)
    indent = _arg(args, kwargs, skip + 2, "indent")
    separators = _arg(args, kwargs, skip + 3, "separators")
    width = len(indent) if isinstance(indent, str) else indent if isinstance(indent, int) else 0
    size = render.measure(_arg(args, kwargs, skip, "value"))
    # \ud83d\ude00: 12 characters for one, where ascii is ensured
    text = size.chars * (12 if ensure_ascii else 1) + 2 * size.nodes
    between = render.measure(separators).total if isinstance(separators, (list, tuple)) else 2
    # each item on its own line, indented by its depth, separators between
    render.refuse_over(text + size.nodes * ((size.depth + 1) * max(width, 0) + between), "the tojson filter")
    return args


def _estimate_round(render, args, kwargs, skip):
    precision = _arg(args, kwargs, skip + 1, "precision", 0)
    if isinstance(precision, int) and abs(precision) > MAX_INT_BITS // 4:
        # round(x, -n) computes 10**n
        raise TemplateLimit(f"rounds to {_short(precision)} digits")
    return args


def _estimate_sum(render, args, kwargs, skip):
    start = _arg(args, kwargs, skip + 2, "start", 0)
    if not isinstance(start, (int, float)):
        # adding lists or strings one by one copies the total so far each time
        items = _arg(args, kwargs, skip, "iterable")
        size = render.measure(items)
        render.refuse_over(size.total * min(size.nodes, render.limits.max_size) // 64, "the sum filter")
    return args


_FILTER_ESTIMATES = {
    "center": _estimate_center,
    "indent": _estimate_indent,
    "wordwrap": _estimate_wordwrap,
    "replace": _estimate_replace,
    "join": _estimate_join,
    "format": _estimate_format,
    "slice": _estimate_slice,
    "batch": _estimate_batch,
    "tojson": _estimate_tojson,
    "round": _estimate_round,
    "sum": _estimate_sum,
}


def _estimate_method(render, method, args, kwargs):
    """For the str and bytes methods that can grow their text many times
    over (replace, join, expandtabs, translate): refuses over the limit;
    returns args (join's iterator drawn into a list)."""
    owner = getattr(method, "__self__", None)
    if not isinstance(method, types.BuiltinMethodType) or not isinstance(owner, (str, bytes)):
        return args
    name, what = method.__name__, f"str.{method.__name__}()"
    if name == "replace" and len(args) >= 2:
        count = args[2] if len(args) > 2 else kwargs.get("count", -1)
        render.refuse_over(_replaced_size(owner, args[0], args[1], count), what)
    elif name == "join" and args:
        sep = owner if isinstance(owner, str) else owner.decode("latin-1")
        return (_joined(render, args[0], sep, what), *args[1:])
    elif name == "expandtabs":
        tabsize = args[0] if args else kwargs.get("tabsize", 8)
        if isinstance(tabsize, int):
            tab = "\t" if isinstance(owner, str) else b"\t"
            render.refuse_over(len(owner) + owner.count(tab) * max(tabsize, 0), what)
    elif name == "translate" and args:
        table = args[0]
        values = table.values() if isinstance(table, dict) else table if isinstance(table, (list, tuple)) else ()
        longest = max((len(v) for v in values if isinstance(v, (str, bytes))), default=1)
        render.refuse_over(len(owner) * max(longest, 1), what)
    return args
