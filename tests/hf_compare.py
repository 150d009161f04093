"""Comparing toy with a transformers model of the same weights: the GGUF name
of a transformers parameter and its rows in llama.cpp's order, one check of
logits, loss and every weight's gradient through toy's full fine-tuning
session (which trains every tensor of the file), toy's and transformers'
logits, a Q8_0 copy of a model, llama.cpp's logits. Used by the family tests
(test_qwen, test_gemma2, test_gemma3, test_llama3_rope, test_smollm3);
needs torch."""

import numpy as np
import pytest

import toy
from toy.recipes import FullFineTune

# transformers -> GGUF names every llama-like model shares ({i}: the layer)
LLAMA_LIKE_NAMES = {
    "model.embed_tokens.weight": "token_embd.weight",
    "model.norm.weight": "output_norm.weight",
    "model.layers.{i}.input_layernorm.weight": "blk.{i}.attn_norm.weight",
    "model.layers.{i}.self_attn.q_proj.weight": "blk.{i}.attn_q.weight",
    "model.layers.{i}.self_attn.k_proj.weight": "blk.{i}.attn_k.weight",
    "model.layers.{i}.self_attn.v_proj.weight": "blk.{i}.attn_v.weight",
    "model.layers.{i}.self_attn.q_norm.weight": "blk.{i}.attn_q_norm.weight",
    "model.layers.{i}.self_attn.k_norm.weight": "blk.{i}.attn_k_norm.weight",
    "model.layers.{i}.self_attn.o_proj.weight": "blk.{i}.attn_output.weight",
    "model.layers.{i}.mlp.gate_proj.weight": "blk.{i}.ffn_gate.weight",
    "model.layers.{i}.mlp.up_proj.weight": "blk.{i}.ffn_up.weight",
    "model.layers.{i}.mlp.down_proj.weight": "blk.{i}.ffn_down.weight",
}


# Gemma's norms: one before and one after each sub-layer
GEMMA_NAMES = {
    **LLAMA_LIKE_NAMES,
    "model.layers.{i}.post_attention_layernorm.weight": "blk.{i}.post_attention_norm.weight",
    "model.layers.{i}.pre_feedforward_layernorm.weight": "blk.{i}.ffn_norm.weight",
    "model.layers.{i}.post_feedforward_layernorm.weight": "blk.{i}.post_ffw_norm.weight",
}


def gguf_name(hf_name: str, table: dict) -> str:
    """table maps transformers names to GGUF names, with {i} for the layer."""
    return gguf_names(hf_name, table)[0]


def gguf_names(hf_name: str, table: dict) -> tuple[str, ...]:
    """As gguf_name, where a table entry may be a tuple of GGUF names: the
    transformers weight's rows are theirs, stacked in that order, equally
    many each (Granite's shared_mlp.input_linear: ffn_gate, then ffn_up;
    each expert's rows of Qwen3-MoE's experts.gate_up_proj)."""
    layer = hf_name.split(".")[2] if hf_name.startswith("model.layers.") else None
    key = hf_name.replace(f".{layer}.", ".{i}.", 1) if layer else hf_name
    names = table[key] if isinstance(table[key], tuple) else (table[key],)
    return tuple(name.format(i=layer) for name in names)


def llama_cpp_rows(name: str, rows, n_heads: int, n_kv_heads: int):
    """transformers' q/k rows (per head, the two halves of the rotary pairs)
    in llama.cpp's order (per head, each pair adjacent), as llama.cpp's
    converter permutes them for the llama architecture (and SmolLM3); other
    tensors as they are. Applies to weights and to their gradients alike."""
    heads = {"attn_q": n_heads, "attn_k": n_kv_heads}.get(name.split(".")[-2])
    if heads is None:
        return rows
    half = rows.shape[0] // heads // 2
    return rows.reshape(heads, 2, half, *rows.shape[1:]).swapaxes(1, 2).reshape(rows.shape)


def mamba2_names(mixer: str) -> dict:
    """HF_TO_GGUF's rows for a Mamba-2 mixer whose transformers weights are
    model.layers.{i}.<mixer>.* (Granite 4's and Falcon-H1's "mamba",
    Nemotron-H's "mixer"), as llama.cpp's converter names them."""
    stored = {
        "in_proj.weight": "ssm_in.weight",
        "conv1d.weight": "ssm_conv1d.weight",
        "conv1d.bias": "ssm_conv1d.bias",
        "dt_bias": "ssm_dt.bias",
        "A_log": "ssm_a",
        "D": "ssm_d",
        "norm.weight": "ssm_norm.weight",
        "out_proj.weight": "ssm_out.weight",
    }
    return {f"model.layers.{{i}}.{mixer}.{hf}": f"blk.{{i}}.{gguf}" for hf, gguf in stored.items()}


def mamba2_as_stored(model, groups: int, n_heads: int, n_kv_heads: int):
    """to_gguf for a Mamba-2 hybrid's gradients (Granite 4, Nemotron-H) as
    llama.cpp's converter stores their weights: A_log as ssm_a = -exp(A_log)
    (so its gradient is A_log's over ssm_a), A and D as [H, 1], conv1d
    [C, 1, K] as [C, K], the grouped norm as [groups, I / groups], q and k
    permuted as for llama (a reordering of each head's dims that leaves the
    scores alone where, as here, there is no RoPE)."""
    a_logs = {n.split(".")[2]: p.detach().numpy() for n, p in model.named_parameters() if n.endswith("A_log")}

    def as_stored(name: str, grad):
        if name.endswith(".ssm_a"):
            return (grad / -np.exp(a_logs[name.split(".")[1]]))[:, None]
        if name.endswith((".ssm_d", "ssm_conv1d.weight")):
            return grad.reshape(grad.shape[0], -1)
        if name.endswith("ssm_norm.weight"):
            return grad.reshape(groups, -1)
        return llama_cpp_rows(name, grad, n_heads, n_kv_heads)

    return as_stored


def randomize(model, norm_offset=1.0):
    """Weights larger than transformers' init, so that logits differ enough
    to compare: matrices N(0, 0.1), vectors N(0, 0.3), norms shifted by
    norm_offset (0 for Gemma, whose norms scale by 1 + w). Seeded: the same
    model every call."""
    import torch

    torch.manual_seed(0)
    with torch.no_grad():
        for name, p in model.named_parameters():
            p.copy_(torch.randn_like(p) * (0.1 if p.ndim == 2 else 0.3) + (norm_offset if "norm" in name else 0.0))
    return model.float().eval()


def q8_0_copy(model):
    """A copy of the transformers model with each matrix as a Q8_0 file
    stores it (quantized, then dequantized)."""
    import copy

    import gguf
    import torch

    q8_0 = gguf.GGMLQuantizationType.Q8_0
    quantized = copy.deepcopy(model)
    with torch.no_grad():
        for p in quantized.parameters():
            if p.ndim == 2:
                w = p.numpy().astype(np.float32)
                p.copy_(torch.from_numpy(gguf.quants.dequantize(gguf.quants.quantize(w, q8_0), q8_0)))
    return quantized


def hf_logits(model, ids, positions=None) -> np.ndarray:
    """transformers' logits [T, vocab] for ids [1, T] (at positions [1, T])."""
    import torch

    positions = None if positions is None else torch.tensor(positions, dtype=torch.long)
    with torch.no_grad():
        return model(torch.tensor(ids, dtype=torch.long), position_ids=positions).logits[0].numpy()


def toy_logits(path, ids) -> np.ndarray:
    """toy's logits [T, vocab] for ids [1, T] on the GGUF at path."""
    t = ids.shape[1]
    recipe = FullFineTune("cpu", threads=1)
    recipe.realize(path, toy.RecipeOptions(t_seq=t, t_batch=1))
    logits, _ = recipe.evaluate(ids, np.arange(t, dtype=np.int32)[None])
    return logits[0]


ALL_SEVEN = ("q", "k", "v", "o", "gate", "up", "down")


def trained_adapter(path, ids, out, targets=ALL_SEVEN, steps=10):
    """A rank-4 LoRA trained `steps` steps on ids [1, T+1] over the GGUF at
    path, saved at out: (the recipe, its logits [T, vocab] after training)."""
    from toy.recipes import LoRA

    t = ids.shape[1] - 1
    recipe = LoRA("cpu", threads=1)
    recipe.realize(path, None, 4, toy.RecipeOptions(t_seq=t, t_batch=1, seed=0), targets=targets)
    positions = np.arange(t, dtype=np.int32)[None]
    for step in range(1, steps + 1):
        recipe.step(ids[:, :-1], positions, ids[:, 1:], toy.adamw_hp(step, 1e-2), step == 1)
    recipe.save_adapter(out)
    return recipe, recipe.evaluate(ids[:, :-1], positions)[0][0]


def assert_adapter_runs_in_llama_cpp(path, batch, out, targets, exact: bool):
    """A rank-4 LoRA trained on batch [1, T+1] over the GGUF at path (on
    every one of targets), written to out: it learned the batch, and
    llama.cpp runs it to toy's logits. exact (an f32 file): to float
    rounding. Else (quantized), where llama.cpp rounds each quantized
    product's activations to 8 bits and toy not always, and a recurrent
    layer carries that along the sequence: correlated, and ten times closer
    to toy's than llama.cpp's own logits without the adapter."""
    t = batch.shape[1] - 1
    recipe, ours = trained_adapter(path, batch, out, targets=targets)
    positions = np.arange(t, dtype=np.int32)[None]
    assert recipe.evaluate(batch[:, :-1], positions, batch[:, 1:])[1] < 0.9 * np.log(recipe.cfg.vocab)
    theirs = llama_cpp_logits(path, batch[0, :-1], out, f32_cache=True)
    if exact:
        np.testing.assert_allclose(theirs, ours, atol=1e-5 * np.abs(ours).max())
        return
    base = llama_cpp_logits(path, batch[0, :-1], f32_cache=True)
    assert np.corrcoef(theirs.ravel(), ours.ravel())[0, 1] > 0.99
    assert np.abs(theirs - ours).max() < 0.1 * np.abs(base - ours).max()


def assert_cached_decoding_matches(path, tokens, expected, prefill, n_ctx=None, targets=("q",)):
    """Generation's KV-cache decode on the GGUF at path (a cache of n_ctx
    positions, len(tokens) by default): tokens[:prefill] at once, then one
    token at a time, each position's logits those of expected [T, vocab]
    (transformers' on the same tokens)."""
    from toy.recipes import LoRA

    t, vocab = len(tokens), expected.shape[1]
    recipe = LoRA("cpu", threads=1)
    recipe.realize(path, None, 1, toy.RecipeOptions(t_seq=t, t_batch=1), targets=targets)
    e = recipe.session
    e.kv_init(n_ctx or t)
    atol = 1e-4 * np.abs(expected).max()
    np.testing.assert_allclose(e.decode(tokens[:prefill], 0, vocab), expected[prefill - 1], atol=atol)
    for i in range(prefill, t):
        np.testing.assert_allclose(e.decode(tokens[i : i + 1], i, vocab), expected[i], atol=atol)


def assert_vulkan_follows_the_cpu(path, batch, vocab, targets, decode=True) -> None:
    """Five LoRA steps on batch [1, T+1] of the GGUF at path on the Vulkan
    backend (lavapipe in CI) and on the CPU: the same losses to float
    rounding; with decode, the logits of cached decoding after them too."""
    from toy.recipes import LoRA

    t = batch.shape[1] - 1
    positions = np.arange(t, dtype=np.int32)[None]
    losses, logits = {}, {}
    for device in ("cpu", "vulkan"):
        recipe = LoRA(device, threads=2)
        recipe.realize(path, None, 4, toy.RecipeOptions(t_seq=t, t_batch=1, seed=0), targets=targets)
        losses[device] = [
            recipe.step(batch[:, :-1], positions, batch[:, 1:], toy.adamw_hp(step, 1e-2), step == 1)
            for step in range(1, 6)
        ]
        if decode:
            session = recipe.session
            session.kv_init(16)
            session.decode(batch[0, :4], 0, vocab)
            logits[device] = session.decode(batch[0, 4:5], 4, vocab)
    np.testing.assert_allclose(losses["vulkan"], losses["cpu"], rtol=1e-4)
    if decode:
        np.testing.assert_allclose(logits["vulkan"], logits["cpu"], atol=1e-3 * np.abs(logits["cpu"]).max())


def full_fine_tune(path, ids, out, steps=5) -> np.ndarray:
    """Fine-tune every weight of the GGUF at path on ids [1, T+1] for a few
    steps, write the model to out with the base's metadata, and return
    toy's logits [T, vocab] after training (checked to differ from before)."""
    t = ids.shape[1] - 1
    positions = np.arange(t, dtype=np.int32)[None]
    recipe = FullFineTune("cpu", threads=1)
    recipe.realize(path, toy.RecipeOptions(t_seq=t, t_batch=1, seed=0))
    before, _ = recipe.evaluate(ids[:, :-1], positions)
    for step in range(1, steps + 1):
        recipe.step(ids[:, :-1], positions, ids[:, 1:], toy.adamw_hp(step, 1e-3), step == 1)
    after, _ = recipe.evaluate(ids[:, :-1], positions)
    assert np.abs(after - before).max() > 1e-2 * np.abs(before).max()
    recipe.save_model(out)
    return after[0]


def assert_full_fine_tune_runs_in_llama_cpp(path, ids, out) -> None:
    """full_fine_tune's model, written to out, gives llama.cpp (its KV cache
    in F32) toy's logits after training."""
    ours = full_fine_tune(path, ids, out)
    theirs = llama_cpp_logits(out, ids[0, :-1], f32_cache=True)
    np.testing.assert_allclose(theirs, ours, atol=1e-4 * np.abs(ours).max())


def assert_toy_matches(model, path, ids, table, skip=(), to_gguf=None):
    """Logits, loss and every gradient of toy's session on the GGUF at path
    equal (to float32 rounding) those of the transformers model on ids [1, T+1].
    to_gguf(name, array): a transformers gradient in the GGUF's layout where
    the file reorders a weight (llama's q and k rows); None: as it is."""
    import torch

    model.zero_grad()
    out = model(torch.tensor(ids[:, :-1], dtype=torch.long))
    loss = torch.nn.functional.cross_entropy(out.logits[0], torch.tensor(ids[0, 1:], dtype=torch.long))
    loss.backward()

    t = ids.shape[1] - 1
    recipe = FullFineTune("cpu", threads=1)
    recipe.realize(path, toy.RecipeOptions(t_seq=t, t_batch=1))
    batch = (ids[:, :-1], np.arange(t, dtype=np.int32)[None], ids[:, 1:])
    assert_step_matches(recipe, batch, model, out.logits, loss, table, skip, to_gguf)


def assert_step_matches(recipe, batch, model, hf_logits, hf_loss, table, skip=(), to_gguf=None):
    """toy's full fine-tuning recipe on batch (ids, positions, labels) gives
    transformers' logits [1, T, vocab], loss and every weight's gradient
    (hf_loss.backward() has run); to_gguf and skip as for assert_toy_matches."""
    logits, ours = recipe.evaluate(*batch)
    expected = hf_logits[0].detach().numpy()
    np.testing.assert_allclose(logits[0], expected, atol=1e-4 * np.abs(expected).max())
    assert ours == pytest.approx(float(hf_loss.detach()), rel=1e-5)

    e = recipe.session
    e.reset()
    e.compute_gradients()
    grads = {}
    for n, p in model.named_parameters():
        names = gguf_names(n, table)
        grad = p.grad.numpy()  # rows (the last axis but one) split among names
        grads.update(zip(names, np.split(grad, len(names), axis=-2 if grad.ndim > 1 else 0)))
    if to_gguf is not None:
        grads = {name: to_gguf(name, grad) for name, grad in grads.items()}
    for name in skip:
        grads.pop(name, None)
    assert set(grads) == set(e.params())
    for name, handle in e.params().items():
        scale = np.abs(grads[name]).max()
        np.testing.assert_allclose(
            e.download(e.grad_of(handle)), grads[name], atol=1e-4 * scale + 1e-8, err_msg=f"gradient of {name}"
        )


def llama_cpp_logits(path, ids, adapter=None, f32_cache=False) -> np.ndarray:
    """llama.cpp's logits (llama-cpp-python) at every position of ids [T],
    for the GGUF at path, with a LoRA adapter GGUF where given: [T, vocab].
    f32_cache: its KV cache in F32, not its default F16, whose rounding a
    peaked attention row can carry past 1e-3 of the logits."""
    llama_cpp = pytest.importorskip("llama_cpp")
    llm = llama_cpp.Llama(
        model_path=str(path),
        lora_path=None if adapter is None else str(adapter),
        n_ctx=len(ids),
        logits_all=True,
        n_threads=1,
        verbose=False,
        seed=0,
        flash_attn=False,
        **({"type_k": 0, "type_v": 0} if f32_cache else {}),  # 0: GGML_TYPE_F32
    )
    llm.eval([int(i) for i in ids])
    return np.array(llm.scores[: len(ids)], dtype=np.float32)
