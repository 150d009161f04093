"""Every error toy-train promises: one line on stderr, exit 2, nothing on stdout."""

import pytest

from cli_helpers import toy_train


def assert_input_error(result, *phrases):
    assert result.returncode == 2, (result.returncode, result.stderr)
    assert result.stdout == ""
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("toy-train: error: ")
    for phrase in phrases:
        assert phrase in lines[0], lines[0]


def test_missing_corpus_file(tmp_path):
    assert_input_error(toy_train("--corpus", str(tmp_path / "nope.txt")), "not found", "--corpus")


def test_corpus_shorter_than_one_sequence(tmp_path):
    short = tmp_path / "short.txt"
    short.write_text("too short")
    assert_input_error(toy_train("--corpus", str(short)), "9 tokens", "--seq")


def test_token_file_that_is_not_int32(tmp_path):
    bad = tmp_path / "bad.tok"
    bad.write_bytes(b"12345")
    assert_input_error(toy_train("--corpus", str(bad)), "not a multiple of 4")


def test_corpus_that_is_a_directory(tmp_path):
    assert_input_error(toy_train("--corpus", str(tmp_path)), "not a file")


@pytest.mark.parametrize("flag", ["--bogus", "--stepz"])
def test_unknown_flag(flag):
    assert_input_error(toy_train(flag), "unrecognized arguments", "--help")


def test_unknown_recipe():
    assert_input_error(toy_train("from-nothing"), "invalid choice", "from-scratch")


@pytest.mark.parametrize(
    "args,phrase",
    [
        (["--steps", "0"], "from 1 to 2,147,483,647"),
        (["--steps", "many"], "whole number"),
        (["--lr", "-1"], "> 0"),
        (["--lr", "nan"], "> 0"),
        (["--heads", "5"], "even head width"),
        (["--heads", "4", "--kv-heads", "3"], "must divide"),
        (["--beta1", "1.5"], "below 1"),
        (["--min-lr", "1"], "above --lr"),
    ],
)
def test_bad_values(args, phrase):
    assert_input_error(toy_train(*args), phrase)


def test_device_not_built():
    # this install is CPU-only unless TOY_CUDA was set at build time
    from toy.native.library import DeviceNotBuilt, library

    try:
        library("cuda")
        pytest.skip("libtinynn_cuda is built here")
    except DeviceNotBuilt:
        pass
    # toy-cuda is on no index: the hint names the checkout's package, not a name pip would look up
    result = toy_train("--device", "cuda")
    assert_input_error(result, "not built", "pip install ./packages/toy-cuda", "TOY_CUDA=ON")
    assert "pip install toy-cuda" not in result.stderr and "toy[cuda]" not in result.stderr


def test_unknown_device():
    assert_input_error(toy_train("--device", "tpu"), "invalid choice")


def test_base_compute_is_refused_outside_lora_runs():
    assert_input_error(
        toy_train("--base-compute", "stored"),
        "--base-compute is an option of lora, instruct, dpo and orpo, not of from-scratch",
    )


def test_unknown_base_compute():
    assert_input_error(toy_train("lora", "--base-compute", "q8"), "--base-compute")


def test_run_directory_that_cannot_be_created():
    assert_input_error(toy_train("--out", "/proc/toy-run"), "cannot write the run directory", "--out")


def test_bad_checkpoint_flags():
    assert_input_error(toy_train("--save-every", "-1"), "--save-every")
    assert_input_error(toy_train("--keep", "0"), "--keep")


def test_each_recipe_lists_only_its_own_options():
    lora = toy_train("lora", "--help")
    assert lora.returncode == 0 and "--rank" in lora.stdout and "--d-model" not in lora.stdout
    scratch = toy_train("--help")
    assert all(recipe in scratch.stdout for recipe in ("from-scratch", "lora", "instruct", "warm-start", "full"))


def test_an_option_of_another_recipe_names_its_recipes():
    assert_input_error(toy_train("lora", "--donor", "x.gguf"), "--donor is an option of warm-start, not of lora")
