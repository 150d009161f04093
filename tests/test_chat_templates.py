"""toy's chat-template renderer against Hugging Face transformers'
apply_chat_template, on every template in llama.cpp's models/templates
(TOY_LLAMA_CPP_MODELS): each case of scripts/render_template_goldens.py
renders to the same bytes, or is refused where transformers raises.

The golden test holds toy to tests/data/templates/<template>.json (made once
with transformers); the live test renders with the transformers installed
now. Then examples of the language transformers renders in.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import time
from functools import cache
from pathlib import Path

import pytest

from conftest import reference_models_dir, require_reference
from toy.core.errors import InputError
from toy.text.chat_template import STRFTIME_NOW, ChatTemplate

ROOT = Path(__file__).resolve().parent.parent
GOLDENS = ROOT / "tests" / "data" / "templates"


def _load_goldens_script():
    path = ROOT / "scripts" / "render_template_goldens.py"
    spec = importlib.util.spec_from_file_location("render_template_goldens", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


goldens_script = _load_goldens_script()
NAMES = sorted(path.stem for path in GOLDENS.glob("*.json"))
PAIRS = [(name, case) for name in NAMES for case in goldens_script.CASES]


@cache
def template_source(name: str) -> str:
    return (reference_models_dir() / "templates" / f"{name}.jinja").read_text(encoding="utf-8")


@cache
def toy_template(name: str) -> ChatTemplate:
    return ChatTemplate(template_source(name))


def toy_render(name: str, case: str, messages: list) -> str:
    _, tools, add_generation_prompt = goldens_script.CASES[case]
    return toy_template(name).render(
        messages=messages, tools=tools, add_generation_prompt=add_generation_prompt, **goldens_script.VARIABLES
    )


def assert_toy_renders_as(name: str, case: str, expected: list[dict]) -> None:
    """expected: transformers' attempts at the case (goldens_script.golden)."""
    messages = dict(goldens_script.attempts(case))
    for attempt in expected:
        where = f"{name} {case} ({'with' if attempt['system'] else 'without'} a system message)"
        if "text" in attempt:
            assert toy_render(name, case, messages[attempt["system"]]) == attempt["text"], where
            continue
        with pytest.raises(InputError) as refused:
            toy_render(name, case, messages[attempt["system"]])
        message = str(refused.value)
        assert "\n" not in message, where
        if attempt["error"].startswith("TemplateError: "):  # raise_exception(...): toy says the same
            refusal = attempt["error"].removeprefix("TemplateError: ")[:60]
            assert "refuses this conversation" in message and refusal in message, (where, message)


def test_every_template_in_the_folder_has_goldens():
    names = sorted(path.stem for path in (reference_models_dir() / "templates").glob("*.jinja"))
    assert names == NAMES, "scripts/render_template_goldens.py makes them"


@pytest.mark.parametrize(("name", "case"), PAIRS, ids=[f"{name}-{case}" for name, case in PAIRS])
def test_toy_renders_the_goldens(name, case):
    golden = json.loads((GOLDENS / f"{name}.json").read_text(encoding="utf-8"))
    if hashlib.sha256(template_source(name).encode()).hexdigest() != golden["sha256"]:
        pytest.fail(f"{name}.jinja is not the template its goldens were rendered from: rerun the script")
    # transformers' clock stood at toy's STRFTIME_NOW while it rendered them
    assert golden["strftime_now"] == STRFTIME_NOW.isoformat()
    assert_toy_renders_as(name, case, golden["cases"][case])


@pytest.mark.parametrize(("name", "case"), PAIRS, ids=[f"{name}-{case}" for name, case in PAIRS])
def test_toy_renders_as_transformers_does_now(name, case):
    require_reference("transformers")
    _, tools, add_generation_prompt = goldens_script.CASES[case]
    expected = []
    for system, messages in goldens_script.attempts(case):
        try:
            source = template_source(name)
            text = goldens_script.render_with_transformers(source, messages, tools, add_generation_prompt)
        except Exception as err:  # noqa: BLE001 (toy must refuse it too)
            expected.append({"system": system, "error": goldens_script.describe(err)})
            continue
        expected.append({"system": system, "text": text})
        break
    assert_toy_renders_as(name, case, expected)


# ---- the language, by example ---------------------------------------------------


def render(source: str, **variables) -> str:
    return ChatTemplate(source).render(**variables)


def test_a_block_tag_takes_its_line_with_it():
    # trim_blocks: the newline after a tag goes; lstrip_blocks: so does the indent before it
    source = "{% for m in messages %}\n    {% if m.role == 'user' %}\n[{{ m.content }}]\n    {% endif %}\n{% endfor %}"
    messages = [{"role": role, "content": text} for role, text in [("user", "a"), ("assistant", "b"), ("user", "c")]]
    assert render(source, messages=messages) == "[a]\n[c]\n"
    # the expression tags keep theirs
    assert render("{{ 'x' }}\n  {{ 'y' }}\nz") == "x\n  y\nz"


def test_break_leaves_a_loop_and_continue_skips_a_turn():
    source = (
        "{% for m in messages %}{% if m.role == 'system' %}{% continue %}{% endif %}"
        "{% if m.role == 'stop' %}{% break %}{% endif %}{{ m.content }};{% endfor %}"
    )
    roles = ["system", "user", "assistant", "stop", "user"]
    messages = [{"role": role, "content": str(i)} for i, role in enumerate(roles)]
    assert render(source, messages=messages) == "1;2;"


def test_strftime_now_tells_the_same_time_on_any_day():
    # transformers reads the clock; toy renders the same bytes for the same command
    source = "Today Date: {{ strftime_now('%d %b %Y') }}"
    assert render(source) == render(source) == f"Today Date: {STRFTIME_NOW:%d %b %Y}"


def test_tojson_keeps_the_keys_order_and_escapes_no_html():
    # jinja's own tojson sorts keys and writes < as \u003c; transformers' is json.dumps
    value = {"z": "<b>é</b>", "a": [1, 2]}
    assert render("{{ v | tojson }}", v=value) == '{"z": "<b>é</b>", "a": [1, 2]}'
    assert render("{{ v | tojson(indent=1) }}", v={"a": 1}) == '{\n "a": 1\n}'
    assert render("{{ v | tojson(true) }}", v="é") == '"\\u00e9"'  # the first argument is ensure_ascii


def test_a_generation_block_renders_its_body():
    source = "{% for m in messages %}{% generation %}<{{ m.content }}>{% endgeneration %}{% endfor %}"
    assert render(source, messages=[{"role": "assistant", "content": "hi"}]) == "<hi>"


def test_messages_reach_the_template_as_apply_chat_template_passes_them():
    # None-valued keys dropped (templates ask `is defined`); reasoning under the names templates read
    source = "{% for m in messages %}{{ m.content is defined }} {{ m.thinking }} {{ m.reasoning_content }}{% endfor %}"
    messages = [{"role": "assistant", "content": None, "reasoning": "hm"}]
    assert render(source, messages=messages) == "False hm hm"
    assert messages == [{"role": "assistant", "content": None, "reasoning": "hm"}]  # the caller's are untouched
    assert render("{{ tools is none }} {{ add_generation_prompt }}") == "True False"


def test_a_runaway_loop_of_continue_is_stopped_in_one_line():
    source = "{% for i in range(100000) %}{% for j in range(100000) %}{% continue %}{% endfor %}{% endfor %}"
    started = time.monotonic()
    with pytest.raises(InputError, match="did not finish within") as stopped:
        render(source)
    assert "\n" not in str(stopped.value) and time.monotonic() - started < 20


def test_a_namespace_attribute_named_private_is_refused():
    with pytest.raises(InputError, match="may not start with _"):
        render("{% set ns = namespace() %}{% set ns._hidden = 1 %}")


def test_tojson_refuses_before_building_a_huge_indent():
    # 200,000 short lists, each item on a line indented 100 spaces: far over the size limit
    with pytest.raises(InputError, match="tojson filter"):
        render("{{ ([[1]] * 200000) | tojson(indent=100) }}")


def test_strftime_now_refuses_a_format_that_could_print_too_much():
    # strftime may print 256 characters for each of its format's: a long format is refused before
    with pytest.raises(InputError, match="strftime_now"):
        render("{{ strftime_now('%c' * 100000) }}")
