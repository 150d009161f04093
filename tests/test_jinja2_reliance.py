"""What toy's chat-template sandbox (toy.text.chat_template) takes from
jinja2 beyond its documented API, checked by name and by behaviour, so that
a jinja2 that changes any of it fails here with one clear line instead of
letting a template past a guard. pyproject.toml bounds jinja2 below 3.2
for this: raise the bound only once these pass on the new release."""

import inspect

import jinja2
import pytest
from jinja2 import pass_context, pass_environment, pass_eval_context
from jinja2.compiler import CodeGenerator
from jinja2.sandbox import ImmutableSandboxedEnvironment, SandboxedFormatter

from toy.core.errors import InputError
from toy.text.chat_template import ChatTemplate, GuardedEnvironment, Limits

CHANGED = f"jinja2 {jinja2.__version__} changed what toy's chat-template guards rely on"
SMALL = Limits(max_size=1000)


def render(source, limits=SMALL, **variables):
    return ChatTemplate(source, limits).render(messages=[], **variables)


@pytest.mark.parametrize("method", ["visit_Concat", "visit_List", "visit_Tuple", "visit_Dict"])
def test_the_code_generator_still_has_the_methods_toy_overrides(method):
    found = getattr(CodeGenerator, method, None)
    assert found is not None, f"{CHANGED}: CodeGenerator.{method} is gone"
    params = list(inspect.signature(found).parameters)
    assert params == ["self", "node", "frame"], f"{CHANGED}: CodeGenerator.{method}{tuple(params)}"


def test_the_compiled_template_calls_toys_guards():
    source = GuardedEnvironment().compile("{{ a ~ b }}{{ [a] }}{{ (a, b) }}{{ {'k': a} }}", raw=True)
    assert "environment.guarded_concat(" in source, f"{CHANGED}: `~` no longer compiles through visit_Concat"
    assert source.count("environment.guarded_literal(") == 3, f"{CHANGED}: literals skip visit_List/Tuple/Dict"


def test_concatenation_and_literals_over_the_limit_are_refused():
    with pytest.raises(InputError, match="~"):
        render("{{ s ~ s }}", s="x" * 600)
    with pytest.raises(InputError, match="list literal"):
        render("{% set l = [s, s] %}", s="x" * 600)


def test_a_namespace_is_assigned_read_and_measured():
    assert render("{% set ns = namespace(a=1) %}{% set ns.a = ns.a + 1 %}{{ ns.a }}") == "2", CHANGED
    # jinja2's compiled assignment checks isinstance(ns, Namespace): any other value is refused
    with pytest.raises(InputError, match="non-namespace"):
        render("{% set d = 1 %}{% set d.a = 2 %}")
    # the attributes count toward the size limit, walked in toy's own dict
    with pytest.raises(InputError, match="namespace attribute c"):
        render("{% set ns = namespace() %}{% set ns.a = s %}{% set ns.b = s %}{% set ns.c = s %}", s="x" * 400)


@pytest.mark.parametrize("decorator", [pass_context, pass_eval_context, pass_environment])
def test_the_pass_decorators_still_mark_functions_with_jinja_pass_arg(decorator):
    marked = decorator(lambda *args: None)
    assert getattr(marked, "jinja_pass_arg", None) is not None, (
        f"{CHANGED}: {decorator.__name__} sets no jinja_pass_arg"
    )


def test_guarded_filters_still_get_the_context_they_ask_for():
    # map takes the context, join the eval context, wordwrap the environment
    assert render("{{ [1, 2] | map('string') | join(',') }}|{{ 'ab cd' | wordwrap(2) }}") == "1,2|ab\ncd", CHANGED


def test_the_sandbox_hooks_toy_overrides_are_still_called():
    sandbox = ImmutableSandboxedEnvironment()
    for name in ("call_binop", "call", "wrap_str_format", "unsafe_undefined", "binop_table", "intercepted_binops"):
        assert hasattr(sandbox, name), f"{CHANGED}: the sandbox has no {name}"
    for name in ("vformat", "format_field"):
        assert hasattr(SandboxedFormatter, name), f"{CHANGED}: SandboxedFormatter has no {name}"
    with pytest.raises(InputError, match="str.format"):
        render("{{ '{:>2000}'.format(1) }}")
    with pytest.raises(InputError, match="str \\* int"):
        render("{{ 'x' * 2000 }}")
    with pytest.raises(InputError, match="unsafe"):
        render("{{ ''.__class__ }}")
