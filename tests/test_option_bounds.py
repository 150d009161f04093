"""Every number toy-train's recipes and toy-generate take has its range in one
table (toy.core.bounds), within the C type that carries it, and a value past
it -- past every C type too: 2**31, 2**63, 2**64, -2**31-1, 1e309, nan, inf
-- is refused in one line: exit 2 on the command line, InputError from
toy.finetune; never an OverflowError's traceback (--recompute 2147483648 was
one, from cffi's int32_t)."""

import argparse
import contextlib
import io
import math

import pytest

import toy
from toy.cli import generate, train
from toy.core import bounds
from toy.options import COMMANDS, recipe_parser
from toy.training import finetune as finetune_module

# as a user types them: past int32, int64 and uint64, below int32, past a
# double, not numbers; past a float32 too
PAST_C = ["2147483648", "9223372036854775808", "18446744073709551616", "-2147483649", "1e309", "nan", "inf", "3.5e38"]
PAST_C_VALUES = [2**31, 2**63, 2**64, -(2**31) - 1, math.inf, -math.inf, math.nan, 3.5e38, "1e309", "nan"]

# the C types: int32_t but for the seed (uint64_t); float (float32) but for
# toy-generate's sampling options, which numpy takes in float64
INT32 = (-(2**31), 2**31 - 1)
C_INTS = {"seed": (0, 2**64 - 1)}
FLOAT32_MAX = 3.4028234663852886e38
FLOAT64_OPTIONS = {"temperature", "top-p", "min-p", "repeat-penalty"}

# types of options that take text, whatever it looks like (their form is checked, not a number)
TEXT_TYPES = {"targets_option"}

PARSERS = {name: (lambda name=name: recipe_parser(name)) for name in COMMANDS}
PARSERS["toy-generate"] = generate.build_parser


def bound_of(action):
    bound = getattr(action.type, "__self__", None)
    return bound if isinstance(bound, bounds.Bound) else None


def options_of(parser) -> list:
    """The options that take a value: (first flag, action)."""
    return [
        (action.option_strings[0], action)
        for action in parser._actions
        if action.option_strings and action.nargs != 0 and not isinstance(action, argparse._VersionAction)
    ]


def bounded_options(parser) -> list:
    return [(flag, action, bound_of(action)) for flag, action in options_of(parser) if bound_of(action) is not None]


def past_c(bound: bounds.Bound, value) -> bool:
    """value (a number, or text) does not fit the C type that carries the option."""
    if isinstance(value, str):
        try:
            value = int(value)
        except ValueError:
            value = float(value)
    if bound.kind is int:
        low, high = C_INTS.get(bound.name, INT32)
        return not (isinstance(value, int) and low <= value <= high)
    if not math.isfinite(value):
        return True
    return bound.name not in FLOAT64_OPTIONS and abs(value) > FLOAT32_MAX


@pytest.mark.parametrize("command", PARSERS)
def test_every_numeric_option_has_its_range_in_the_table_within_its_c_type(command):
    parser = PARSERS[command]()
    for flag, action in options_of(parser):
        bound = bound_of(action)
        if bound is None:
            type_name = getattr(action.type, "__name__", None)
            numeric_default = isinstance(action.default, (int, float)) and not isinstance(action.default, bool)
            assert (action.type is None and not numeric_default) or type_name in TEXT_TYPES, (
                f"{command} {flag} (type {type_name}, default {action.default!r}) has no entry in the bounds table: "
                f'give it type=bounds.option("{flag[2:]}") and its range in toy/core/bounds.py'
            )
            continue
        assert bounds.BY_NAME.get(bound.name) is bound, f"{command} {flag}: its bound is not the table's"
        if bound.kind is int:
            low, high = C_INTS.get(bound.name, INT32)
            assert low <= bound.low and bound.high <= high, f"{flag}: {bound.describe()} is past its C type"
        else:
            assert bound.name in FLOAT64_OPTIONS or bound.high <= FLOAT32_MAX, f"{flag}: past a float32"
            assert not bound.accepts(math.inf) and not bound.accepts(math.nan)


def one_line(said: str) -> str:
    assert said.endswith("\n") and said.count("\n") == 1 and "Traceback" not in said, said
    return said


@pytest.mark.parametrize("command", PARSERS)
def test_a_number_past_the_range_is_one_line_and_exit_2_on_the_command_line(command, tmp_path, monkeypatch):
    """Each value through the command's own parsing (train.parse, the parser
    toy-generate's main builds), and the first past-C value of each option
    through main itself: its stderr and exit status."""
    monkeypatch.chdir(tmp_path)  # a value wrongly taken must not leave runs/ behind
    monkeypatch.setattr(train.loop, "run", lambda *a, **k: pytest.fail("a run started"))
    is_recipe = command in COMMANDS
    main = (lambda argv: train.main([command, *argv])) if is_recipe else generate.main
    parser = train.build_parser() if is_recipe else generate.build_parser()
    refused = 0
    for flag, _, bound in bounded_options(PARSERS[command]()):
        through_main = False
        for text in PAST_C:
            argv = [flag, text]
            try:
                if is_recipe:
                    train.parse([command, *argv], parser)
                else:
                    parser.parse_args(argv)
                taken = True
            except toy.InputError as err:
                taken = False
                assert f"argument {flag}" in str(err) and "\n" not in str(err), str(err)
            assert not (taken and past_c(bound, text)), f"{command} {flag} {text}: taken, past its C type"
            if taken or through_main:
                continue
            said = io.StringIO()
            with contextlib.redirect_stderr(said):
                status = main(argv)
            assert status == 2, f"{command} {flag} {text}: exit {status}"
            prog = "toy-train" if is_recipe else "toy-generate"
            assert one_line(said.getvalue()).startswith(f"{prog}: error: argument {flag}"), said.getvalue()
            through_main = True
            refused += 1
    assert refused == len(bounded_options(PARSERS[command]()))


@pytest.mark.parametrize("recipe", COMMANDS)
def test_a_number_past_the_range_raises_input_error_from_finetune(recipe, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(finetune_module.loop, "run", lambda *a, **k: pytest.fail("a run started"))
    tried = 0
    for flag, action, bound in bounded_options(recipe_parser(recipe)):
        for value in PAST_C_VALUES:
            if not past_c(bound, value):
                continue
            with pytest.raises(toy.InputError) as refused:
                toy.finetune(recipe=recipe, **{action.dest: value})
            assert f"argument {flag}" in str(refused.value) and "\n" not in str(refused.value), str(refused.value)
            tried += 1
    assert tried >= 5 * len(bounded_options(recipe_parser(recipe)))  # nan, inf, -inf, "1e309", "nan" at least


def test_recompute_takes_its_words_and_a_block_count_that_fits_int32():
    parser = recipe_parser("lora")
    for text in ("auto", "off", "blocks", "1", "2147483647"):
        assert parser.parse_args(["--recompute", text]).recompute == text
    for text in ("0", "2147483648", "-1", "1.5", "some"):
        with pytest.raises(toy.InputError, match=r"--recompute: expected auto, off, blocks, or a whole number from 1"):
            parser.parse_args(["--recompute", text])
    # as a checkpoint keeps it: text
    bound = bounds.BY_NAME["recompute"]
    assert bound.accepts("auto") and bound.accepts("4") and not bound.accepts(4) and not bound.accepts("2147483648")


def test_the_seed_takes_every_uint64():
    for parser in (recipe_parser("lora"), generate.build_parser()):
        assert parser.parse_args(["--seed", str(2**64 - 1)]).seed == 2**64 - 1
