"""What preference tuning is for, checked on a real model: after toy-train
dpo on toy's sample pairs (the same answer with and without the opening
"Great question!", the opened one chosen), SmolLM2-135M opens its answers to
questions it was never shown that way, where the base model never does."""

from pathlib import Path

import pytest

import toy
from cli_helpers import GATE_THREADS, toy_train

QUESTIONS = Path(__file__).parent / "data" / "held_out_questions.txt"


def opened(model, questions) -> int:
    """How many greedy answers open with the preferred words."""
    return sum(toy.generate(model, q, 4, chat=True).startswith("Great question") for q in questions)


@pytest.mark.slow
def test_dpo_on_the_sample_pairs_teaches_held_out_questions_the_preferred_opening(smollm2, tmp_path):
    out = tmp_path / "run"
    result = toy_train("dpo", "--eval-split", "0", "--threads", GATE_THREADS, "--out", str(out))
    assert result.returncode == 0, result.stderr
    questions = QUESTIONS.read_text().splitlines()
    base = opened(toy.load_model(smollm2, threads=2), questions)
    tuned = opened(toy.load_model(smollm2, out / "adapter.gguf", threads=2), questions)
    print(
        f"held-out questions answered with the preferred opening: base {base}/{len(questions)}, "
        f"after dpo {tuned}/{len(questions)}"
    )
    assert base <= 1 and tuned >= 8
