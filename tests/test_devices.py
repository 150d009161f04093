"""Every recipe on a device backend, as a user runs it: the same command with
--device vulkan (or cuda) follows the CPU's losses, gives the same bytes
every run, keeps the step on the device, and writes files that load as the
CPU's do. Backend-generic: `pytest -m vulkan` runs them on Vulkan (Mesa's
lavapipe in CI), `pytest -m cuda` the day an NVIDIA GPU is at hand; each
skips in one line where its library or device is missing.

On lavapipe the step runs as Vulkan shaders on the CPU, about a hundred
times slower than --device cpu: the runs here are small (3 steps, short
sequences, and for the recipes on a GGUF a two-layer model with
SmolLM2's tokenizer, chat template and quantization in place of
SmolLM2's thirty layers) and the hang guards generous.
"""

import json
from pathlib import Path

import gguf
import numpy as np
import pytest

import reference_llama as ref
from cli_helpers import GATE_THREADS, INSTRUCT_FIRST_DEFAULTS, toy_train
from gguf_fixtures import small_model_like

GOLDEN = Path(__file__).parent / "golden"
# the first 8 rows of instruct-small.jsonl: each epoch's perplexities are
# forward passes over the whole file, slow on a software device
DATA = Path(__file__).parent / "data" / "instruct-tiny.jsonl"
DEVICES = [pytest.param("vulkan", marks=pytest.mark.vulkan), pytest.param("cuda", marks=pytest.mark.cuda)]

# Each recipe at a size lavapipe runs in about a minute at most; the golden
# logs are these commands' stdout.
RECIPES = {
    "from-scratch": (),
    "from-scratch-gpt2": ("--arch", "gpt2"),
    "warm-start-pca": ("warm-start", "--init", "pca", "--seq", "32", "--batch", "2"),
    "lora-all-targets": ("lora", "--targets", "q,k,v,o,gate,up,down", "--seq", "32", "--batch", "1"),
    "full": ("full", "--seq", "16", "--batch", "1"),
    "instruct": ("instruct", "--data", str(DATA), "--seq", "32", "--batch", "1", *INSTRUCT_FIRST_DEFAULTS),
    "vit-tiny": ("vit-tiny",),
}
ON_A_GGUF = {"warm-start-pca", "lora-all-targets", "full", "instruct"}
MODEL_OPTION = {"warm-start-pca": "--donor"}  # the GGUF whose embedding and tokenizer it starts from
STEPS = 3  # the golden logs are these runs' first steps (the same bytes as in a longer run)
HANG_GUARD = 600  # seconds: the slowest run above takes about 30 s on lavapipe
# SmolLM2-135M's kind of model (GQA 3:1, 64-wide heads, its vocabulary, Q4_1), two layers deep
SMALL = ref.Config(
    vocab=49152, d_model=192, n_layers=2, n_heads=3, n_kv_heads=1, d_ff=512, rope_base=100000.0, untied=False
)


@pytest.fixture(scope="module")
def small_gguf(smollm2, tmp_path_factory):
    """The base every recipe on a GGUF trains here (gguf_fixtures.small_model_like)."""
    return small_model_like(smollm2, tmp_path_factory.mktemp("small") / "small-smollm2.gguf", SMALL)


def device_name(device):
    from toy.native.library import backend_variant

    return backend_variant(device)


def golden_path(recipe, device):
    """The golden log of a recipe on the device, where one is kept: lavapipe's
    (a software device gives the same bits on every x86-64 machine; a GPU's
    depend on the GPU and driver, so there the test asks for the same bytes
    twice instead)."""
    if device == "vulkan" and device_name(device).startswith("llvmpipe"):
        return GOLDEN / f"{recipe}-vulkan-lavapipe.txt"
    return None


def losses(stdout):
    return [float(line.split("=")[1]) for line in stdout.splitlines()]


def train(recipe, device, out, model=None):
    result = toy_train(
        *RECIPES[recipe],
        *((MODEL_OPTION.get(recipe, "--model"), str(model)) if model else ()),
        "--steps",
        str(STEPS),
        "--threads",
        GATE_THREADS,
        "--device",
        device,
        "--out",
        str(out),
        timeout=HANG_GUARD,
    )
    assert result.returncode == 0, result.stderr
    return result


@pytest.fixture(scope="module")
def runs(request, tmp_path_factory):
    """Each (recipe, device) trained once, shared by the tests below."""
    done = {}

    def run(recipe, device):
        if (recipe, device) not in done:
            out = tmp_path_factory.mktemp(f"{recipe}-{device}") / "run"
            model = request.getfixturevalue("small_gguf") if recipe in ON_A_GGUF else None
            done[recipe, device] = (train(recipe, device, out, model), out)
        return done[recipe, device]

    return run


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("recipe", list(RECIPES))
def test_every_recipe_follows_the_cpu_and_gives_the_same_bytes(request, runs, recipe, device):
    on_device, out = runs(recipe, device)
    on_cpu, _ = runs(recipe, "cpu")
    # every step's loss within 1e-3 of the CPU's: the products, reductions and
    # (for a quantized base) the activations' rounding differ, not the step
    got, expected = np.array(losses(on_device.stdout)), np.array(losses(on_cpu.stdout))
    assert len(got) == len(expected) == STEPS
    np.testing.assert_allclose(got, expected, rtol=1e-3, atol=0)

    golden = golden_path(recipe, device)
    if golden is not None:
        assert on_device.stdout == golden.read_text()
    else:
        again = train(
            recipe,
            device,
            out.parent / "again",
            model=request.getfixturevalue("small_gguf") if recipe in ON_A_GGUF else None,
        )
        assert again.stdout == on_device.stdout


@pytest.mark.parametrize("device", DEVICES)
def test_a_step_on_the_device_copies_only_its_inputs_and_loss(runs, device):
    """Per step: tokens, positions, labels, the loss scale and AdamW's row in,
    the loss out: the weights, gradients and moments never leave the device
    (an op the device lacked would be refused at build, not run on the CPU)."""
    result, out = runs("from-scratch", device)
    _, cpu_out = runs("from-scratch", "cpu")
    events = [json.loads(line) for line in (out / "events.jsonl").read_text().splitlines()]
    cpu_events = [json.loads(line) for line in (cpu_out / "events.jsonl").read_text().splitlines()]
    assert [e["transfers"] for e in events] == [6] * STEPS
    assert [e["transfer_bytes"] for e in events] == [e["transfer_bytes"] for e in cpu_events]
    assert events[0]["transfer_bytes"] < 4096  # 256 tokens' ids, positions, labels; 3 floats; 7 hp
    assert f"6 host<->{device} copies per step" in result.stderr


@pytest.mark.parametrize("device", DEVICES)
def test_an_adapter_trained_on_the_device_is_the_cpu_ones_twin(small_gguf, runs, device):
    """llama.cpp reads an adapter by its names, shapes, types and keys: the
    device's are the CPU's (test_llama_cpp.py loads the CPU's into llama.cpp),
    and its values follow the CPU's as the losses do."""
    _, out = runs("lora-all-targets", device)
    _, cpu_out = runs("lora-all-targets", "cpu")
    got, expected = gguf.GGUFReader(out / "adapter.gguf"), gguf.GGUFReader(cpu_out / "adapter.gguf")
    assert {k: f.types for k, f in got.fields.items()} == {k: f.types for k, f in expected.fields.items()}
    for key in ("general.type", "adapter.type", "general.architecture"):
        assert bytes(got.fields[key].parts[-1]) == bytes(expected.fields[key].parts[-1])
    assert float(got.fields["adapter.lora.alpha"].parts[-1][0]) == 16.0
    assert [(t.name, t.tensor_type, list(t.shape)) for t in got.tensors] == [
        (t.name, t.tensor_type, list(t.shape)) for t in expected.tensors
    ]
    assert len(got.tensors) == SMALL.n_layers * 7 * 2
    # AdamW moves every entry by about lr per step in the sign of its gradient,
    # so a gradient near zero that the two backends round apart puts one entry
    # a whole step apart: compare whole matrices. B starts at zero (lavapipe
    # beside an AVX2-only CPU: worst relative difference 0.093, worst
    # correlation 0.9957, both blk.1.attn_k's B; on SmolLM2 itself 0.9886 was
    # seen); A from the same seeded init, which dominates it. Unrelated
    # matrices correlate near 0.
    for a, b in zip(got.tensors, expected.tensors):
        assert np.linalg.norm(a.data - b.data) < 0.2 * np.linalg.norm(b.data), a.name
        assert np.corrcoef(a.data.ravel(), b.data.ravel())[0, 1] > 0.98, a.name


@pytest.mark.parametrize("device", DEVICES)
def test_an_adapter_trained_on_the_device_runs_in_llama_cpp(small_gguf, runs, device):
    llama_cpp = pytest.importorskip("llama_cpp")
    _, out = runs("lora-all-targets", device)
    llm = llama_cpp.Llama(
        model_path=str(small_gguf), lora_path=str(out / "adapter.gguf"), n_ctx=64, n_threads=2, verbose=False, seed=0
    )
    text = llm("The capital of France is", max_tokens=4, temperature=0.0)["choices"][0]["text"]
    assert text.strip()


def prompt_logits(device, small_gguf, adapter=None):
    from toy import load_model
    from toy.text.tokenizer import GGUFTokenizer

    model = load_model(small_gguf, adapter, device, threads=2)
    ids = GGUFTokenizer.from_gguf(small_gguf).encode("The capital of France is")
    model.session.kv_init(64)
    return model.session.decode(np.array(ids, np.int32), 0, model.cfg.vocab)


@pytest.mark.parametrize("device", DEVICES)
def test_generation_on_the_device_scores_the_prompt_as_the_cpu(small_gguf, runs, device):
    _, out = runs("lora-all-targets", device)
    for adapter in (None, out / "adapter.gguf"):
        got, expected = prompt_logits(device, small_gguf, adapter), prompt_logits("cpu", small_gguf, adapter)
        # the CPU rounds activations to 8 bits for the quantized products, the
        # device does not: close, not equal, as llama.cpp against us
        # (test_llama_cpp.py). lavapipe: correlation 0.99987 without the
        # adapter and 0.99988 with it, mean difference 1.3% of the spread
        # (SmolLM2's thirty layers: 0.9992 and 0.9987, 8-9%)
        assert np.corrcoef(got, expected)[0, 1] > 0.998
        assert np.abs(got - expected).mean() < 0.15 * expected.std()
        assert got.argmax() == expected.argmax()


@pytest.mark.parametrize("device", DEVICES)
def test_toy_generate_with_an_adapter_runs_on_the_device(small_gguf, runs, device):
    """Eight tokens with an adapter, three times: this once aborted with a
    corrupted heap on lavapipe one run in two (vendor patch 0010), and died of
    a SIGSEGV in about one run in twenty while decoding used ggml-vulkan's
    flash attention (tnn_kv_init)."""
    import subprocess
    import sys

    _, out = runs("lora-all-targets", device)
    for _ in range(3):
        result = subprocess.run(
            [
                sys.executable,
                "-m",
                "toy.cli.generate",
                "The capital of France is",
                "--max-new-tokens",
                "8",
                "--device",
                device,
                "--threads",
                "2",
                "--model",
                str(small_gguf),
                "--adapter",
                str(out / "adapter.gguf"),
            ],
            capture_output=True,
            text=True,
            timeout=HANG_GUARD,
        )
        assert result.returncode == 0, result.stderr
        assert result.stdout.strip()


@pytest.mark.parametrize("device", DEVICES)
def test_the_stored_quantized_base_is_refused_on_the_device_in_one_line(smollm2, tmp_path, device):
    result = toy_train(
        "lora",
        "--base-compute",
        "stored",
        "--steps",
        "1",
        "--seq",
        "16",
        "--batch",
        "1",
        "--device",
        device,
        "--out",
        str(tmp_path / "run"),
        timeout=HANG_GUARD,
    )
    assert result.returncode == 2
    errors = [line for line in result.stderr.splitlines() if line.startswith("toy-train: error:")]
    assert len(errors) == 1 and "--base-compute fast" in errors[0]
    assert not (tmp_path / "run").exists()


@pytest.mark.vulkan
def test_a_tensor_larger_than_lavapipe_addresses_is_refused_by_name(tmp_path):
    if not device_name("vulkan").startswith("llvmpipe"):
        pytest.skip("the 128 MiB limit is lavapipe's; GPUs address more")
    # 6144 x 6144 float32 = 144 MiB in one weight
    result = toy_train(
        "--device",
        "vulkan",
        "--d-model",
        "6144",
        "--heads",
        "8",
        "--layers",
        "1",
        "--seq",
        "8",
        "--batch",
        "1",
        "--steps",
        "1",
        "--out",
        str(tmp_path / "run"),
        timeout=HANG_GUARD,
    )
    assert result.returncode == 2
    assert "blk.0.attn_output.weight needs 144 MiB in one piece" in result.stderr.splitlines()[-1]


@pytest.mark.vulkan
def test_a_bad_device_list_is_one_line_and_exit_2(tmp_path):
    import os
    import subprocess
    import sys

    env = dict(os.environ, GGML_VK_VISIBLE_DEVICES="99")
    result = subprocess.run(
        [sys.executable, "-m", "toy.cli.train", "--device", "vulkan", "--out", str(tmp_path / "r")],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert result.returncode == 2
    lines = result.stderr.splitlines()
    assert len(lines) == 1
    assert lines[0].startswith(
        "toy-train: error: --device vulkan: GGML_VK_VISIBLE_DEVICES='99' names no Vulkan device here"
    )
