"""Session: one tinynn session on one device, one method per C call.

A Session holds the C session and the handles of its inputs and outputs;
it does no math of its own. What it realizes is a ModelDesc, tinynn's
tnn_model_desc. Arrays cross into C without copies (ffi.from_buffer).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, replace
from dataclasses import fields as dataclass_fields

import numpy as np

from ..core import bounds, plan
from ..core.config import ModelConfig, RecipeOptions, ViTConfig
from ..core.errors import TNN_ERR_ARG, TNN_ERR_BACKEND, InputError, NoDevice, ToyError, refusals_as_input_errors
from ..core.ffi import enum_values
from ..core.machine import available_bytes, check_fits
from ..core.plan import MB, RECOMPUTE_AUTO, MemoryPlan, process_rss
from .library import check, ffi, library

_KINDS = enum_values("tnn_tensor_kind")
KIND_PARAM, KIND_LOSS = _KINDS["TNN_KIND_PARAM"], _KINDS["TNN_KIND_LOSS"]
KIND_MOMENT, KIND_GRAD_NORM = _KINDS["TNN_KIND_MOMENT"], _KINDS["TNN_KIND_GRAD_NORM"]
# what a training step minimises: "cross_entropy", "dpo", "orpo" (tnn_set_objective)
OBJECTIVES = {
    name.removeprefix("TNN_OBJECTIVE_").lower(): value for name, value in enum_values("tnn_objective").items()
}

# enum tnn_lora_target by CLI name: "q" for TNN_LORA_Q, ...
LORA_TARGETS = {
    name[len("TNN_LORA_") :].lower(): value
    for name, value in sorted(enum_values("tnn_lora_target").items(), key=lambda kv: kv[1])
}

# every projection the model has (LoRA's targets) but a mixture's experts (resolve_targets)
ALL_TARGETS = "all"
# a mixture of experts' stacks, a pair per expert: asked for by name (or "experts"), never by "all",
# as PEFT's all-linear leaves them out (an adapter of them is most of the model's size again)
EXPERT_TARGETS = ("gate_exps", "up_exps", "down_exps")
EXPERTS = "experts"


def layer_targets(cfg: ModelConfig) -> list[tuple[str, ...]]:
    """Each layer's LoRA targets (the weights its kind has), as the C core
    binds them (tnn_layer_targets), in the core's order."""
    lib = library("cpu")
    c = ffi.new("tnn_model_config *")
    config_to_c(cfg, c)
    masks = [lib.tnn_layer_targets(c, layer) for layer in range(cfg.n_layers)]
    if 0 in masks:
        check(lib, TNN_ERR_ARG)
    return [tuple(t for t, bit in LORA_TARGETS.items() if mask & bit) for mask in masks]


def lora_targets_of(cfg: ModelConfig) -> tuple[str, ...]:
    """The LoRA targets whose weights some layer of the model has, in the C core's order."""
    have = {t for targets in layer_targets(cfg) for t in targets}
    return tuple(t for t in LORA_TARGETS if t in have)


def resolve_targets(targets: tuple[str, ...], cfg: ModelConfig) -> tuple[str, ...]:
    """targets with "all" made the model's own (its experts left out) and
    "experts" its experts' three; a known target the model has no weight for
    is refused (ToyError) with the ones it has. Unknown names are left for
    ModelDesc.lora to refuse."""
    own = lora_targets_of(cfg)
    aliases = {ALL_TARGETS: tuple(t for t in own if t not in EXPERT_TARGETS), EXPERTS: EXPERT_TARGETS}
    names = [name for t in targets for name in aliases.get(t, (t,))]
    missing = [t for t in names if t in LORA_TARGETS and t not in own]
    if missing:
        raise ToyError(
            f"LoRA target '{missing[0]}': no layer of this model has that weight; it has {','.join(own)}", TNN_ERR_ARG
        )
    return tuple(dict.fromkeys(names))


# enum tnn_base_compute by name: "fast", "stored", "bf16"
BASE_COMPUTE = {
    name[len("TNN_BASE_") :].lower(): value
    for name, value in sorted(enum_values("tnn_base_compute").items(), key=lambda kv: kv[1])
}
BASE_COMPUTE_AUTO = "auto"  # fast where the step fits with the copies, else stored (Session.realize)

# ggml type ids the session can hand back as numpy arrays
_NUMPY_DTYPE = {0: np.float32, 1: np.float16, 24: np.int8, 25: np.int16, 26: np.int32}


@dataclass(frozen=True)
class TensorInfo:
    handle: int
    name: str
    kind: int
    ggml_type: int
    shape: tuple  # numpy order: the slowest axis first
    nbytes: int


def default_threads() -> int:
    return max(1, min(os.cpu_count() or 1, 8))


def _check_seed(seed: int) -> None:
    bounds.check("seed", seed)


@dataclass(frozen=True)
class ModelDesc:
    """What Session.realize builds, made by one of the constructors:

        ModelDesc.from_scratch(cfg, opts)  a token model of cfg.arch ("llama",
            "gpt2", "llama-postnorm") from seeded random init. A warm start
            and a full fine-tune realize this too, then upload the weights
            they start from.
        ModelDesc.vit(cfg, t_batch, seed, init_scale)  a ViT classifier from
            seeded random init.
        ModelDesc.lora(gguf, opts, rank, alpha, targets, base_compute)  LoRA
            adapters over a llama-family GGUF mapped as the frozen base.
        ModelDesc.base(gguf, base_compute)  the GGUF base alone (rank 0, no
            adapters): a model to generate with, not to train.

    The constructors check what the C core would refuse less clearly."""

    arch: str = ""  # from scratch: the architecture
    config: ModelConfig | None = None  # token models from scratch
    opts: RecipeOptions | None = None  # token models: batch shape, init, seed
    vit_config: ViTConfig | None = None
    t_batch: int = 0  # ViT: images per step
    seed: int = 0  # ViT
    init_scale: float = 0.02  # ViT
    base_gguf: str | os.PathLike | None = None
    rank: int = 0  # LoRA over base_gguf
    alpha: float = 0.0
    targets: tuple[str, ...] = ()
    base_compute: str = "fast"

    @classmethod
    def from_scratch(cls, cfg: ModelConfig, opts: RecipeOptions) -> ModelDesc:
        if opts.weight_dtype != "f32":
            raise ToyError(f"weight_dtype '{opts.weight_dtype}' cannot be trained: trainable weights are f32")
        bounds.check_fields(cfg)
        bounds.check_fields(opts)
        return cls(arch=cfg.arch, config=cfg, opts=opts)

    @classmethod
    def vit(cls, cfg: ViTConfig, t_batch: int, seed: int = 0, init_scale: float = 0.02) -> ModelDesc:
        if cfg.image_size % cfg.patch:
            raise ToyError(f"the patch size {cfg.patch} must divide the image size {cfg.image_size}", TNN_ERR_ARG)
        bounds.check_fields(cfg)
        bounds.check("t_batch", t_batch, "t_batch")
        bounds.check("init_scale", init_scale)
        _check_seed(seed)
        return cls(arch="vit", vit_config=cfg, t_batch=t_batch, seed=seed, init_scale=init_scale)

    @classmethod
    def lora(
        cls,
        gguf_path,
        opts: RecipeOptions,
        rank: int,
        alpha: float,
        targets: tuple[str, ...],
        base_compute: str = "fast",
    ) -> ModelDesc:
        """base_compute "fast" makes transposed copies of the base's matrices
        (and Q8_0 forward copies of Q5_1 / K-quant ones); "stored" computes
        with the stored types in place (less memory, slower); "bf16" (precision
        bf16) one bfloat16 copy of each matrix, "bf16_head" fast's copies with
        the head's in bfloat16; "auto" is fast where the step fits with the
        copies, else stored (Session.realize)."""
        unknown = [t for t in targets if t not in LORA_TARGETS]
        if unknown:
            raise ToyError(f"unknown LoRA target '{unknown[0]}': choose from {','.join(LORA_TARGETS)}", TNN_ERR_ARG)
        if base_compute not in (*BASE_COMPUTE, BASE_COMPUTE_AUTO):
            choices = ", ".join((*BASE_COMPUTE, BASE_COMPUTE_AUTO))
            raise ToyError(
                f"unknown base_compute '{base_compute}': choose from {choices}",
                TNN_ERR_ARG,
            )
        if base_compute in ("bf16", "bf16_head") and opts.precision != "bf16":
            raise ToyError(f"base_compute {base_compute} multiplies in bfloat16: it needs precision bf16", TNN_ERR_ARG)
        bounds.check_fields(opts)
        if rank or targets:  # rank 0, no targets: the base alone
            bounds.check("rank", rank)
            bounds.check("alpha", alpha)
        return cls(
            base_gguf=gguf_path, opts=opts, rank=rank, alpha=alpha, targets=tuple(targets), base_compute=base_compute
        )

    @classmethod
    def base(cls, gguf_path, base_compute: str = "fast") -> ModelDesc:
        return cls.lora(gguf_path, RecipeOptions(t_seq=1, t_batch=1), 0, 0.0, (), base_compute)

    def computed_base(self) -> str:
        """How the C core computes the base: as asked, but "fast" under
        precision bf16 is the bfloat16 copy where the CPU's bfloat16 products
        outrun its int8 ones (the AMX tiles, whose int8 kernel must leave
        the tiles for a float step every block of 32). On AVX512-BF16 alone
        (Zen 4) the blocks' int8 copies are as fast forward and 1.45x backward
        (one int8 level): they stay, and the head alone, two int8 levels both
        ways, takes its bfloat16 copy ("bf16_head": 143 -> 84 ms of a SmolLM2
        step on Zen 4)."""
        if self.base_compute == "fast" and self.opts is not None and self.opts.precision == "bf16":
            answer = library("cpu").tnn_cpu_kernel_choice(b"fgemm_bf16")
            if answer != ffi.NULL:
                return "bf16" if ffi.string(answer) == b"amx" else "bf16_head"
        return self.base_compute

    def to_c(self):
        """(the tnn_model_desc, the cffi objects it points into, to keep alive)."""
        desc = ffi.new("tnn_model_desc *")
        if self.base_gguf is not None:
            keep = ffi.new("char[]", os.fsencode(self.base_gguf))
            desc.base_gguf = keep
            lora, opts = desc.lora, self.opts
            lora.rank, lora.alpha, lora.init_scale, lora.seed = self.rank, self.alpha, opts.init_scale, opts.seed
            lora.targets = sum(LORA_TARGETS[t] for t in set(self.targets))
            lora.t_seq, lora.t_batch = opts.t_seq, opts.t_batch
            lora.base_compute = BASE_COMPUTE[self.computed_base()]
            return desc, keep
        keep = ffi.new("char[]", self.arch.encode())
        desc.arch = keep
        if self.vit_config is not None:
            c = desc.vit
            for name in VIT_C_FIELDS:
                setattr(c, name, getattr(self.vit_config, name))
            c.t_batch, c.init_scale, c.seed = self.t_batch, self.init_scale, self.seed
            return desc, keep
        opts, c = self.opts, desc.config
        config_to_c(self.config, c)
        c.t_seq, c.t_batch, c.init_scale, c.seed = opts.t_seq, opts.t_batch, opts.init_scale, opts.seed
        return desc, keep


# The seam between ModelConfig and tinynn's struct tnn_model_config: the same
# field names on both sides, but for these. tests/test_config_seam.py holds it.
C_RUN_FIELDS = ("t_seq", "t_batch", "init_scale", "seed")  # the run's: RecipeOptions
C_TRAINER_FIELDS = ("attn_split",)  # set by the trainer, not the caller
PYTHON_ONLY_FIELDS = ("arch",)  # the desc's arch string
# (name, annotation) of every field that crosses: "bool" as the int32_t 0 or 1, "str" as a char array
_CONFIG_FIELDS = tuple((f.name, f.type) for f in dataclass_fields(ModelConfig) if f.name not in PYTHON_ONLY_FIELDS)


# tnn_vit_config's fields from ViTConfig (patch_dim and n_patches are its
# properties, made from image_size, patch and channels); the rest are the run's
VIT_C_FIELDS = ("n_classes", "patch_dim", "n_patches", "d_model", "n_layers", "n_heads", "d_ff", "ln_eps")
VIT_C_RUN_FIELDS = ("t_batch", "init_scale", "seed")


def config_to_c(cfg: ModelConfig, c) -> None:
    """Write cfg's fields into a tnn_model_config (a bool as the int32_t 0 or 1)."""
    for name, kind in _CONFIG_FIELDS:
        value = getattr(cfg, name)
        setattr(c, name, int(bool(value)) if kind == "bool" else value.encode() if kind == "str" else value)


def config_from_c(c, arch: str = "llama") -> ModelConfig:
    """A ModelConfig from a tnn_model_config's fields."""
    crossing = {"bool": bool, "str": lambda chars: ffi.string(chars).decode()}
    values = {name: crossing.get(kind, lambda v: v)(getattr(c, name)) for name, kind in _CONFIG_FIELDS}
    return ModelConfig(arch=arch, **values)


def _check_memory(desc: ModelDesc, cfg: ModelConfig | None) -> None:
    """Refuse (InputError) a desc whose training step needs more memory than
    this machine has; cfg: the token model's shape (from its GGUF for a base)."""
    if desc.vit_config is not None:
        vit = desc.vit_config
        check_fits(
            plan.vit_training_bytes(vit, desc.t_batch),
            f"a ViT of {vit.n_patches:,} patches per image and {desc.t_batch} images per step",
            "use a smaller --batch, --image-size or model",
        )
        return
    opts = desc.opts
    tokens = f"{opts.t_batch} x {opts.t_seq} tokens per step"
    if desc.base_gguf is None:
        check_fits(
            plan.token_training_bytes(cfg, opts.t_seq, opts.t_batch, cfg.untied),
            f"a model of {plan.token_params(cfg, cfg.untied):,} parameters trained on {tokens}",
            "use a smaller --d-model, --layers, --seq or --batch",
        )
    elif desc.rank > 0:
        check_fits(
            plan.token_activation_bytes(cfg, opts.t_seq, opts.t_batch),
            f"LoRA on {os.fspath(desc.base_gguf)} with {tokens}",
            "use a smaller --seq or --batch",
        )


AUTO_SHARE = 0.8  # --recompute auto keeps every activation only in this share of the memory available


def plan_memory(
    desc: ModelDesc, build: dict, evaluates: bool, new_probe, suggest_stored: bool = True, streamed: int = 0
) -> MemoryPlan:
    """The memory plan of realizing desc and building it with build's arguments,
    measured by a measuring session (new_probe() gives a fresh CPU Session);
    build's recompute=RECOMPUTE_AUTO keeps every activation where that takes at
    most AUTO_SHARE of the memory available and recomputes the blocks otherwise. A plan the machine cannot hold
    is refused (InputError), naming what would make it fit (--base-compute
    stored too, unless not suggest_stored); a refusal's need is the bytes the
    least of the plans tried would take. streamed: the base file's bytes a step
    reads but need not hold (a mixture of experts' stacks)."""
    base_file = os.path.getsize(desc.base_gguf) if desc.base_gguf is not None else 0
    process = process_rss()
    setting = build.get("recompute", 0)

    def measured(every: int) -> MemoryPlan:
        with refusals_as_input_errors():
            parts = new_probe().measure(desc, {**build, "recompute": every})
        return MemoryPlan(every, parts, base_file, process, evaluates, base_streamed=streamed)

    available = available_bytes()
    result = measured(0 if setting == RECOMPUTE_AUTO else setting)
    # auto leaves a fifth of what is available to the rest of the machine
    room = available if setting != RECOMPUTE_AUTO or available is None else int(AUTO_SHARE * available)
    if available is None or result.new_bytes <= room:
        return result
    if setting in (RECOMPUTE_AUTO, 0):
        with_recompute = measured(1)
        if setting == RECOMPUTE_AUTO and with_recompute.new_bytes <= available:
            return with_recompute
        if with_recompute.new_bytes <= available:
            raise InputError(
                f"this run needs {result.total / MB:,.0f} MB and {available / MB:,.0f} MB is available: "
                f"--recompute blocks (or auto) would need {with_recompute.total / MB:,.0f} MB"
            )
        result = with_recompute
    fixes = "a smaller --seq or --batch"
    if desc.base_gguf is not None and desc.rank > 0:
        fixes += ", a lower --rank"
        if desc.base_compute == "fast" and result.parts["base_copies"] and suggest_stored:
            fixes += ", --base-compute stored (no fast copies of the base)"
    refusal = InputError(
        f"this run needs {result.total / MB:,.0f} MB even with --recompute "
        f"{'blocks' if result.recompute == 1 else result.recompute}, and {available / MB:,.0f} MB is available: "
        f"try {fixes}"
    )
    refusal.need = result.total
    raise refusal


class Session:
    """A tinynn session on one device: realize a ModelDesc, build the
    training step, then step, evaluate, decode, save."""

    def __init__(self, device: str = "cpu", threads: int | None = None):
        self.device = device
        self.lib = library(device)
        if threads is not None:
            bounds.check("threads", threads)
        self.threads = threads or default_threads()
        out = ffi.new("tnn_session **")
        status = self.lib.tnn_session_new(self.threads, out)
        if status == TNN_ERR_BACKEND and device != "cpu":  # the library loads, the device does not
            raise NoDevice(f"--device {device}: " + ffi.string(self.lib.tnn_last_error()).decode())
        check(self.lib, status)
        self._session = ffi.gc(out[0], self.lib.tnn_session_free)
        self.tokens = self.positions = self.images = None
        self.n_ctx = 0
        self.token_config = None  # the realized token model's shape (None for a ViT)
        self.loss = self.labels = self.hp = self.logits = None
        self.plan: MemoryPlan | None = None  # realize's measured plan, when it had build's arguments
        self.base_compute: str | None = None  # how a GGUF base computes ("fast" or "stored"), after realize
        self.reference_logps = self.sample_logps = None  # a preference objective's (build)
        self._gradients = None  # sum_gradients' host buffer

    def _check(self, status: int) -> None:
        check(self.lib, status)

    # -- realize / build ---------------------------------------------------
    def realize(self, desc: ModelDesc, build: dict | None = None, evaluates: bool = True, streamed: int = 0) -> None:
        """Realize what desc describes (tnn_realize), once per session. Its
        inputs are then self.tokens and self.positions, or for a ViT self.images.
        A desc whose planned memory exceeds what the machine has is refused first.
        build: the arguments build will get; on the CPU the plan is then measured
        (a measuring session realizes and builds the same step, allocating
        nothing: self.plan), and recompute=AUTO chooses recomputation where the
        step would not fit without it; evaluates: the forward graph (its logits
        whole) will run too (compute_forward) and counts in the plan; streamed: the
        base file's bytes the plan leaves out as read, not held (plan_memory)."""
        if desc.vit_config is None:
            self.token_config = desc.config if desc.base_gguf is None else read_gguf_config(desc.base_gguf, self.lib)
        planned = build is not None and self.device == "cpu" and desc.vit_config is None
        if desc.base_compute == BASE_COMPUTE_AUTO:
            desc = (
                self._choose_base_compute(desc, build, evaluates, streamed)
                if planned
                else replace(desc, base_compute="fast")
            )
        elif planned:
            self.plan = plan_memory(
                desc, build, evaluates, lambda: Session("cpu", threads=self.threads), streamed=streamed
            )
        if not planned:
            _check_memory(desc, self.token_config)
        self.base_compute = desc.base_compute if desc.base_gguf is not None else None
        self._realize(desc)

    def _choose_base_compute(self, desc: ModelDesc, build: dict, evaluates: bool, streamed: int) -> ModelDesc:
        """base_compute "auto": the fast copies where the step's plan fits with
        them (recomputing as build asks), else the stored base (less memory
        where the copies outweigh the activations it keeps, as on 8 B models);
        a run that fits neither way is refused by the plan that needs less."""

        def planned(base_compute: str) -> ModelDesc:
            chosen = replace(desc, base_compute=base_compute)
            probe = lambda: Session("cpu", threads=self.threads)  # noqa: E731
            self.plan = plan_memory(chosen, build, evaluates, probe, suggest_stored=False, streamed=streamed)
            return chosen

        try:
            return planned("fast")
        except InputError as fast:
            try:
                return planned("stored")
            except InputError as stored:
                raise min(fast, stored, key=lambda refusal: getattr(refusal, "need", 0)) from None

    def measure(self, desc: ModelDesc, build: dict) -> dict:
        """A measuring session's realize and build (tnn_set_measure_only): what a
        session realized and built the same way would hold (memory())."""
        self._check(self.lib.tnn_set_measure_only(self._session))
        self._realize(desc)
        self.build(**build)
        return self.memory()

    def _realize(self, desc: ModelDesc) -> None:
        c_desc, _keep = desc.to_c()
        inputs = ffi.new("int32_t[2]")
        self._check(self.lib.tnn_realize(self._session, c_desc, inputs))
        if desc.vit_config is not None:
            self.images = inputs[0]
        else:
            self.tokens, self.positions = inputs[0], inputs[1]

    def upload_donor(self, buffer: np.ndarray, n_floats: int) -> None:
        """Donor rows into the token embedding; only inside the warm window."""
        buffer = np.ascontiguousarray(buffer, dtype=np.float32)
        if buffer.size < n_floats:
            raise ToyError(f"upload_donor: the buffer holds {buffer.size} floats, not {n_floats}", TNN_ERR_ARG)
        self._check(self.lib.tnn_upload_donor(self._session, ffi.cast("float *", ffi.from_buffer(buffer)), n_floats))

    def build(
        self,
        clip_norm: float = 0.0,
        precision: str = "f32",
        objective: str = "cross_entropy",
        beta: float = 0.1,
        recompute: int = 0,
        packed: bool = False,
    ) -> None:
        """Bake the training step; clip_norm > 0 clips gradients by their global
        norm inside the graph (self.grad_norm then holds the pre-clip norm);
        precision "bf16" takes the dense products in bfloat16 (tnn_set_precision);
        recompute k > 0 keeps every k-th block's input for the backward and
        computes the rest again (tnn_set_recompute);
        packed: rows hold several samples, each beginning at position 0, and
        attention stays inside each (tnn_set_packed_rows);
        objective "dpo" or "orpo" trains on pairs of samples with beta
        (tnn_set_objective: self.reference_logps and self.sample_logps then
        hold each sample's reference and summed log-probabilities)."""
        if objective != "cross_entropy":
            self._check(self.lib.tnn_set_objective(self._session, OBJECTIVES[objective], beta))
        if clip_norm:
            self._check(self.lib.tnn_enable_grad_clipping(self._session, clip_norm))
        if precision != "f32":
            with refusals_as_input_errors():  # a CPU without bf16 products: the option is what is wrong
                self._check(self.lib.tnn_set_precision(self._session, precision.encode()))
        if recompute == RECOMPUTE_AUTO:
            recompute = self.plan.recompute if self.plan is not None else 0
        if recompute:
            self._check(self.lib.tnn_set_recompute(self._session, recompute))
        if packed:
            self._check(self.lib.tnn_set_packed_rows(self._session, 1))
        handles = [ffi.new("int32_t *") for _ in range(4)]
        self._check(self.lib.tnn_build_training_step(self._session, *handles))
        self.loss, self.labels, self.hp, self.logits = (h[0] for h in handles)
        if self.plan is not None:
            self.plan.built_rss = process_rss()
        self.grad_norm = self.find("grad_norm") if clip_norm else None
        preference = objective != "cross_entropy"
        self.reference_logps = self.find("reference_logps") if preference else None
        self.sample_logps = self.find("sample_logps") if preference else None

    def memory(self) -> dict:
        """After build: the bytes the training step holds, by part (tnn_training_memory):
        graph (the step's activations and temporaries, the allocator's buffer), params
        (trainable weights and inputs), optimizer (gradients and AdamW moments),
        base_copies (a frozen base's fast copies), base_released (a measuring
        session's: the mapped base's bytes the copies replace), overhead (the CPU
        kernels' scratch, the backend's work buffer, the graphs' descriptions), forward (a measuring
        session's: the forward graph's buffer alone, which evaluation needs)."""
        parts = ffi.new("int64_t[7]")
        self._check(self.lib.tnn_training_memory(self._session, parts))
        names = ("graph", "params", "optimizer", "base_copies", "base_released", "overhead", "forward")
        return dict(zip(names, parts))

    # -- the step ----------------------------------------------------------
    def reset(self) -> None:
        self._check(self.lib.tnn_graph_reset(self._session))

    def reset_grads_only(self) -> None:
        self._check(self.lib.tnn_graph_reset_grads_only(self._session))

    def upload(self, handle: int, array: np.ndarray) -> None:
        array = np.ascontiguousarray(array)
        self._check(self.lib.tnn_upload(self._session, handle, ffi.from_buffer(array), array.nbytes))

    def download(self, handle: int) -> np.ndarray:
        info = self.info(handle)
        dtype = _NUMPY_DTYPE.get(info.ggml_type)
        if dtype is None:
            raise ToyError(f"tensor '{info.name}' has ggml type {info.ggml_type}, which has no numpy equivalent")
        out = np.empty(info.shape, dtype=dtype)
        self._check(self.lib.tnn_download(self._session, handle, ffi.from_buffer(out), out.nbytes))
        return out

    def kv_init(self, n_ctx: int) -> None:
        """A KV cache of n_ctx positions for decode (generation)."""
        if not 1 <= n_ctx <= bounds.TOKENS_PER_STEP:
            raise ToyError(
                f"the context must be between 1 and {bounds.TOKENS_PER_STEP:,} tokens, got {n_ctx}", TNN_ERR_ARG
            )
        if self.token_config is not None:
            check_fits(
                plan.kv_cache_bytes(self.token_config, n_ctx),
                f"a KV cache of {n_ctx:,} positions",
                "generate fewer tokens (--max-new-tokens) or give a shorter prompt",
            )
        self._check(self.lib.tnn_kv_init(self._session, n_ctx))
        self.n_ctx = n_ctx

    def decode(self, tokens, n_past: int, vocab: int) -> np.ndarray:
        """Logits [vocab] of the last of tokens, run at n_past.. over the KV cache."""
        tokens = np.ascontiguousarray(tokens, dtype=np.int32)
        out = np.empty(vocab, dtype=np.float32)
        self._check(
            self.lib.tnn_decode(
                self._session,
                ffi.cast("int32_t *", ffi.from_buffer(tokens)),
                tokens.size,
                n_past,
                ffi.cast("float *", ffi.from_buffer(out)),
                vocab,
            )
        )
        return out

    def decode_adapters(self, on: bool) -> None:
        """Whether decode applies the LoRA adapters (default) or runs the base alone."""
        self._check(self.lib.tnn_decode_adapters(self._session, int(bool(on))))

    def set_loss_scale(self, scale: float) -> None:
        self._check(self.lib.tnn_set_loss_scale(self._session, scale))

    def compute_accumulated_step(self) -> None:
        self._check(self.lib.tnn_compute_accumulated_step(self._session))

    def profile_step(self) -> list[tuple[float, int, str]]:
        """One training step run node by node: (seconds, count, "op type") per kind of node."""
        report = ffi.new("char[]", 1 << 16)
        self._check(self.lib.tnn_profile_step(self._session, report, len(report)))
        rows = []
        for line in ffi.string(report).decode().splitlines():
            seconds, count, key = line.split(" ", 2)
            rows.append((float(seconds), int(count), key))
        return rows

    def transfers(self) -> tuple[int, int]:
        """(copies, bytes) between host and device memory so far, both
        directions (tnn_transfer_counts): a step's traffic is the difference."""
        out = ffi.new("tnn_transfers *")
        self._check(self.lib.tnn_transfer_counts(self._session, out))
        return out.to_device + out.to_host, out.bytes_to_device + out.bytes_to_host

    def compute_step(self) -> None:
        """One step from this batch alone (no reset_grads_only needed)."""
        self._check(self.lib.tnn_compute_step(self._session))

    def compute_gradients(self) -> None:
        self._check(self.lib.tnn_compute_gradients(self._session))

    def compute_forward(self) -> None:
        self._check(self.lib.tnn_compute_forward(self._session))

    def apply_update(self) -> None:
        """AdamW from the gradients as they stand (after replacing them by sums over ranks)."""
        self._check(self.lib.tnn_apply_update(self._session))

    def gradients_size(self) -> int:
        """How many floats every trainable gradient holds together (after build)."""
        n = ffi.new("int64_t *")
        self._check(self.lib.tnn_gradients_size(self._session, n))
        return n[0]

    def gradients(self, out: np.ndarray | None = None) -> np.ndarray:
        """Every trainable gradient in one float32 array: the parameters' in
        handle order, each flattened (tnn_download_gradients). out: a float32
        array of gradients_size() floats to download into, else a new one."""
        if out is None:
            out = np.empty(self.gradients_size(), dtype=np.float32)
        if out.dtype != np.float32 or not out.flags.c_contiguous:
            raise ToyError("gradients: out must be a contiguous float32 array", TNN_ERR_ARG)
        self._check(self.lib.tnn_download_gradients(self._session, ffi.cast("float *", ffi.from_buffer(out)), out.size))
        return out

    def set_gradients(self, flat: np.ndarray) -> None:
        """Overwrite every trainable gradient from one array laid out as gradients() gives it."""
        flat = np.ascontiguousarray(flat, dtype=np.float32)
        self._check(self.lib.tnn_upload_gradients(self._session, ffi.cast("float *", ffi.from_buffer(flat)), flat.size))

    def sum_gradients(self, sum_over_ranks) -> None:
        """Every trainable gradient replaced by sum_over_ranks of it: one
        collective on one array a step (its host memory made once)."""
        if self._gradients is None:
            self._gradients = np.empty(self.gradients_size(), dtype=np.float32)
        self.set_gradients(sum_over_ranks(self.gradients(out=self._gradients)))

    # -- the tensor table --------------------------------------------------
    def info(self, handle: int) -> TensorInfo:
        name = ffi.new("char[]", 256)
        kind, gtype = ffi.new("int32_t *"), ffi.new("int32_t *")
        ne, nbytes = ffi.new("int64_t[4]"), ffi.new("size_t *")
        self._check(self.lib.tnn_tensor_info(self._session, handle, name, 256, kind, gtype, ne, nbytes))
        dims = [ne[i] for i in range(4)]
        while len(dims) > 1 and dims[-1] == 1:
            dims.pop()
        if kind[0] in (KIND_LOSS, KIND_GRAD_NORM):
            dims = []
        return TensorInfo(handle, ffi.string(name).decode(), kind[0], gtype[0], tuple(reversed(dims)), nbytes[0])

    def handles(self, kind: int | None = None) -> list[int]:
        count = ffi.new("int32_t *")
        self._check(self.lib.tnn_tensor_count(self._session, count))
        return [h for h in range(count[0]) if kind is None or self.info(h).kind == kind]

    def params(self) -> dict[str, int]:
        """Parameter name -> handle, in creation order."""
        return {self.info(h).name: h for h in self.handles(KIND_PARAM)}

    def find(self, name: str) -> int:
        handle = ffi.new("int32_t *")
        self._check(self.lib.tnn_find(self._session, name.encode(), handle))
        return handle[0]

    def grad_of(self, param_handle: int) -> int:
        handle = ffi.new("int32_t *")
        self._check(self.lib.tnn_grad_of(self._session, param_handle, handle))
        return handle[0]

    def gguf_config(self, gguf_path) -> ModelConfig:
        """The hyper-parameters of a llama-family GGUF (its shapes checked)."""
        return read_gguf_config(gguf_path, self.lib)

    def save_gguf(self, path: str | os.PathLike) -> None:
        self._check(self.lib.tnn_save_gguf(self._session, os.fsencode(path)))


def check_gguf(gguf_path, lib=None) -> None:
    """ToyError unless the file is well-formed GGUF by ggml's parser (any architecture)."""
    lib = lib or library("cpu")
    check(lib, lib.tnn_gguf_check(os.fsencode(gguf_path)))


def read_gguf_config(gguf_path, lib=None) -> ModelConfig:
    """A llama-family GGUF's ModelConfig (llama, Qwen2/3, Gemma 3, Phi-3 ...),
    read and checked by tinynn (no weights loaded)."""
    lib = lib or library("cpu")
    c = ffi.new("tnn_model_config *")
    check(lib, lib.tnn_gguf_model_config(os.fsencode(gguf_path), c))
    return config_from_c(c)
