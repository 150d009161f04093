"""Chat templates as fuzz input: a GGUF's tokenizer.chat_template is a Jinja
program downloaded with the model, and toy renders it (toy.text.chat_template)
for `instruct`, `toy-generate --chat` and the merge's metadata.

Each case assembles a template from fragments: the real shapes (ChatML,
Llama 3's headers, Gemma's turns, a system-message check that raises),
loops that never end or run 10^10 times, recursive macros and loops, values
built to gigabytes in one expression (string and list repetition, powers,
format widths, padding filters, tojson's indent, replace on the empty
string), reaches for Python's internals (__class__, __globals__, the
template's own context), missing names, bad arithmetic and broken syntax --
then, with some chance, cuts or duplicates a piece of its text.

Most cases render the template directly (a callable: it renders, or raises
one ToyError line, within CASE_SECONDS); one in ten runs `toy-generate
--chat` on a tiny GGUF carrying it (exit 0, or exit 2 with one line).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/: the fixtures

import reference_llama as ref  # noqa: E402
from gguf_fixtures import tiny_tokenizer, write_llama_gguf  # noqa: E402

NAME = "template"
# a render that has not ended by then is a hang, whatever the template does:
# the guards stop a runaway in 0.5-2 s on this machine
CASE_SECONDS = 20

SHAPES = [
    # ChatML (SmolLM2, Qwen)
    "{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}",
    # Llama 3's headers
    "{{ bos_token }}{% for m in messages %}<|start_header_id|>{{ m.role }}<|end_header_id|>\n\n"
    "{{ m.content | trim }}<|eot_id|>{% endfor %}",
    # Gemma's turns, and its refusal of a system turn out of place
    "{% if messages[0]['role'] == 'system' and messages|length < 2 %}"
    "{{ raise_exception('a system message needs a user turn') }}{% endif %}"
    "{% for m in messages %}<start_of_turn>{{ 'model' if m.role == 'assistant' else 'user' }}\n"
    "{{ m.content }}<end_of_turn>\n{% endfor %}",
    "{% set ns = namespace(n=0) %}{% for m in messages %}{% set ns.n = ns.n + 1 %}{{ ns.n }}:{{ m.content }}"
    "{% endfor %}",
]

N = ["3", "99999", "10**6", "10**9", "10**10", "2**31", "-1", "0", "99999 * 99999", "1e9", "'9'"]

HOSTILE = [
    # loops
    "{% for i in range({n}) %}{% for j in range({n}) %}{% endfor %}{% endfor %}",
    "{% for i in range({n}) %}{{ i }}{% endfor %}",
    "{% for m in messages * {n} %}{{ m.content }}{% endfor %}",
    "{% for m in messages recursive %}{{ loop(messages) }}{% endfor %}",
    "{% macro f(k) %}{{ f(k + 1) }}{% endmacro %}{{ f(0) }}",
    "{% macro f(k) %}{% if k > 0 %}{{ f(k - 1) }}{{ f(k - 1) }}{% endif %}x{% endmacro %}{{ f(40) }}",
    # values built large in one expression
    "{{ 'x' * {n} }}",
    "{{ ['x'] * {n} }}",
    "{{ (range({n}) | list) | length }}",
    "{{ 10 ** {n} }}",
    "{{ 2 ** 2 ** 2 ** 2 ** 2 }}",
    "{{ '%{n}d' % 1 }}",
    "{{ '{:>{n}}'.format(1) }}",
    "{{ '%*d' | format({n}, 1) }}",
    "{{ 'x' | center({n}) }}",
    "{{ 'a\\nb' | indent({n}) }}",
    "{{ messages | tojson(indent={n}) }}",
    "{{ 'ab' | replace('', 'x' * 99999) }}",
    "{{ ('x' * 99999) | wordwrap(1) }}",
    "{{ 'x'.join(range({n})) }}",
    "{{ 'x\\t' * 999 | string }}",
    "{{ (('x' * 99999).split('') if false else range(99999)) | map('string') | join(',' * 999) }}",
    "{% set s = 'x' %}{% for i in range(40) %}{% set s = s ~ s %}{% endfor %}{{ s | length }}",
    "{{ [[1] * 1000] * 1000 }}",
    "{{ {n} | round(-{n}) }}",
    "{{ range({n}) | batch(3) | list }}",
    "{{ messages | map(attribute='content') | sum(start='') }}",
    "{% set d = {} %}{% for i in range(200) %}{% set d = {'a': d} %}{% endfor %}{{ d }}",
    # Python's internals, through every door
    "{{ messages.__class__.__mro__ }}",
    "{{ ''.__class__.__subclasses__() }}",
    "{{ cycler.__init__.__globals__ }}",
    "{{ lipsum.__globals__['os'] }}",
    "{{ self._TemplateReference__context }}",
    "{{ namespace.__init__ }}",
    "{{ raise_exception.__globals__ }}",
    "{{ ''.format_map }}",
    "{{ '{0.__class__}'.format(messages) }}",
    "{{ messages.append(1) }}",
    "{{ joiner()() }}",
    "{{ config }}",
    "{{ range.__self__ }}",
    # failures
    "{{ undefined_name.x }}",
    "{{ 1 / 0 }}",
    "{{ messages[99] }}",
    "{{ 1 + 'a' }}",
    "{{ raise_exception('no') }}",
    "{{ raise_exception('x' * 99999) }}",
    "{% include 'other' %}",
    "{% extends 'base' %}",
    "{% import 'macros' as m %}",
    "{{ messages | nosuchfilter }}",
    "{% if %}",
    "{% for %}",
    "{{ ",
    "{% endfor %}",
    "{{ 'é\\ud800' }}",
    "{{ '\\x00' * 3 }}",
    "{% raw %}{{ unclosed",
    "{{ ''.join }}",
    "{{ (1).bit_length() }}",
    "{{ messages | list | sort(attribute='nope') }}",
]


def fragment(rng) -> str:
    text = rng.choice(HOSTILE)
    return text.replace("{n}", rng.choice(N))


def template(rng) -> str:
    pieces = [rng.choice(SHAPES)] if rng.random() < 0.5 else []
    for _ in range(rng.randint(0, 3)):
        pieces.insert(rng.randrange(len(pieces) + 1), fragment(rng))
    text = "".join(pieces) or rng.choice(SHAPES)
    roll = rng.random()
    if roll < 0.1 and text:  # cut short
        text = text[: rng.randrange(len(text))]
    elif roll < 0.15:  # a piece repeated, nesting what it opens
        at, end = sorted(rng.randrange(len(text) + 1) for _ in range(2))
        text = text[:end] + text[at:end] * rng.randint(2, 50) + text[end:]
    return text


def messages(rng) -> list[dict]:
    roles = ["system", "user", "assistant", "tool", ""]
    contents = ["Hi", "", "{{ 1 + 1 }}", "{% for %}", "x" * 1000, "é 🦙", "\x00"]
    turns = [{"role": rng.choice(roles), "content": rng.choice(contents)} for _ in range(rng.randint(1, 4))]
    if rng.random() < 0.1:
        turns.append({"role": "user"})  # no content
    return turns


def render_case(source: str, conversation: list[dict], add_generation_prompt: bool):
    def render_template():
        from toy.text.chat_template import ChatTemplate

        t0 = time.monotonic()
        try:
            ChatTemplate(source).render(
                messages=conversation, add_generation_prompt=add_generation_prompt, bos_token="<s>", eos_token="</s>"
            )
        finally:
            if time.monotonic() - t0 > CASE_SECONDS:
                raise AssertionError(f"the render took {time.monotonic() - t0:.0f} s")

    return render_template


def cli_case(source: str, workdir: Path):
    cfg = ref.Config(vocab=300, d_model=32, n_layers=1, n_heads=4, n_kv_heads=2, d_ff=64, untied=True)
    params = ref.init_params(cfg, np.random.default_rng(0), scale=0.3)
    model = write_llama_gguf(workdir / "chat.gguf", params, cfg, tokenizer=tiny_tokenizer(300), chat_template=source)
    return "toy-generate", ["Hello", "--model", str(model), "--chat", "--max-new-tokens", "2", "--threads", "1"]


def make_case(rng, workdir):
    source = template(rng)
    if rng.random() < 0.1:
        return cli_case(source, workdir)
    return render_case(source, messages(rng), rng.random() < 0.5)
