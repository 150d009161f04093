/*
 * tinynn — the C training core of toy.
 *
 * A session owns one ggml backend (CPU, CUDA or Metal, fixed by the library
 * you loaded: libtinynn_cpu, libtinynn_cuda, ...), the buffers that hold the
 * model, and a table of tensors. Callers refer to tensors by integer handle.
 *
 * The life of a training session:
 *
 *   tnn_session_new        -> a session on this library's backend
 *   tnn_realize            -> the model a tnn_model_desc describes: parameters
 *                             (seeded random init, or adapters over a mapped
 *                             GGUF) and its inputs (token ids and positions,
 *                             or images) for one batch shape
 *   tnn_build_training_step-> forward + cross-entropy + backward + AdamW baked
 *                             into one ggml graph; hands back the handles of the
 *                             loss, the labels and the AdamW hyper-parameter row
 *   per step:
 *     tnn_graph_reset (first step only)
 *     tnn_upload tokens, positions, labels, hp
 *     tnn_compute_step      (forward, backward and the AdamW update)
 *     tnn_download loss
 *
 * Every call returns TNN_OK or an error status; tnn_last_error() then says
 * what went wrong in one line. No input reachable from these calls may abort
 * the process: shapes, types, files and handles are checked before ggml sees
 * them.
 *
 * The block between TNN_CDEF_BEGIN and TNN_CDEF_END is read verbatim by the
 * Python binding (cffi): keep it free of preprocessor lines and macros.
 */
#ifndef TINYNN_H
#define TINYNN_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* TNN_CDEF_BEGIN */

enum tnn_status {
    TNN_OK = 0,
    TNN_ERR_ARG = 1,  /* a bad argument: handle, shape, size, value */
    TNN_ERR_STATE = 2,  /* a call out of order (e.g. step before build) */
    TNN_ERR_BACKEND = 3,  /* the backend could not be created or failed */
    TNN_ERR_ALLOC = 4,  /* out of memory */
    TNN_ERR_IO = 5   /* a file could not be read or written */
};

/* Kinds of tensor in the session table. */
enum tnn_tensor_kind {
    TNN_KIND_PARAM = 0,  /* a trainable parameter */
    TNN_KIND_TOKENS = 1,  /* input: int32 token ids [n_tokens] */
    TNN_KIND_POSITIONS = 2,  /* input: int32 positions [n_tokens] */
    TNN_KIND_LABELS = 3,  /* input: int32 ids [n_tokens], -1 masks a token */
    TNN_KIND_HP = 4,  /* input: float32 AdamW row [7] */
    TNN_KIND_LOSS = 5,  /* output: float32 scalar, mean cross-entropy */
    TNN_KIND_LOGITS = 6,  /* output: float32 [vocab, n_tokens] */
    TNN_KIND_GRAD = 7,  /* gradient of a parameter, same shape */
    TNN_KIND_MOMENT = 8,  /* an AdamW moment (m or v) of a parameter */
    TNN_KIND_FROZEN = 9,  /* a frozen base weight, in its stored type */
    TNN_KIND_GRAD_NORM = 10, /* output: float32 [1], the global gradient norm before clipping */
    TNN_KIND_IMAGES = 11, /* input: float32 [patch_dim, n_patches, t_batch] (ViT) */
    TNN_KIND_REFERENCE = 12, /* input: float32 [samples], reference log-probabilities (DPO) */
    TNN_KIND_SAMPLE_LOGPS = 13, /* output: float32 [samples], each sample's summed log-probability */
    TNN_KIND_ROPE_FREQS = 14 /* frozen: float32 [rope width/2], RoPE's per-pair frequency factors
                                (rope_freqs.weight of a model created with rope_freqs = 1, or
                                rope_factors_short/long.weight with rope_orig_ctx > 0);
                                they start at 1, and an upload must be finite and positive */
};

/* LoRA targets: the projections of a block that can carry an adapter. */
enum tnn_lora_target {
    TNN_LORA_Q = 1 << 0,
    TNN_LORA_K = 1 << 1,
    TNN_LORA_V = 1 << 2,
    TNN_LORA_O = 1 << 3,
    TNN_LORA_GATE = 1 << 4,
    TNN_LORA_UP = 1 << 5,
    TNN_LORA_DOWN = 1 << 6,
    TNN_LORA_CONV_IN = 1 << 7,   /* a short-convolution layer's shortconv.in_proj (LFM2) */
    TNN_LORA_CONV_OUT = 1 << 8,  /* and its shortconv.out_proj */
    TNN_LORA_SSM_QKV = 1 << 9,   /* a delta-net layer's attn_qkv (Qwen 3.5: q, k, v before the
                                    convolution) */
    TNN_LORA_SSM_GATE = 1 << 10, /* its attn_gate (the output gate z) */
    TNN_LORA_SSM_OUT = 1 << 11,  /* its ssm_out (and a Mamba-2 layer's) */
    TNN_LORA_SSM_IN = 1 << 12,   /* a Mamba-2 layer's ssm_in */
    TNN_LORA_GATE_EXPS = 1 << 13, /* a mixture of experts' ffn_gate_exps: a pair per expert,
                                     A [d_in, rank, E], B [rank, d_out, E] (llama.cpp's
                                     build_lora_mm_id) */
    TNN_LORA_UP_EXPS = 1 << 14,   /* its ffn_up_exps */
    TNN_LORA_DOWN_EXPS = 1 << 15,  /* its ffn_down_exps */
    TNN_LORA_GATE_SHEXP = 1 << 16, /* a mixture's shared expert's ffn_gate_shexp (Qwen 3.5 MoE) */
    TNN_LORA_UP_SHEXP = 1 << 17,   /* its ffn_up_shexp */
    TNN_LORA_DOWN_SHEXP = 1 << 18  /* its ffn_down_shexp */
};

/* The most layers a token model may have; layer_kinds holds one letter a
 * layer and its terminating 0 (TNN_MAX_LAYERS + 1). */
#define TNN_MAX_LAYERS 1024

typedef struct tnn_session tnn_session;

/* A token model's shape and the batch shape it trains on. Every field is
 * read by the llama family; GPT-2 reads those its description in
 * tnn_model_desc names. */
typedef struct tnn_model_config {
    int32_t vocab;        /* token ids are 0 .. vocab-1 */
    int32_t d_model;      /* residual width */
    int32_t n_layers;
    int32_t n_heads;      /* query heads; head_dim = d_model / n_heads (even) */
    int32_t n_kv_heads;   /* key/value heads; divides n_heads */
    int32_t d_ff;         /* SwiGLU hidden width */
    int32_t t_seq;        /* tokens per sequence */
    int32_t t_batch;      /* sequences per step */
    float rope_base;    /* RoPE frequency base, e.g. 10000 */
    float norm_eps;     /* the norms' epsilon (RMSNorm's, or GPT-2's LayerNorm's), e.g. 1e-5 */
    float init_scale;   /* std of the random matrices */
    int32_t untied;       /* 1: separate output.weight; 0: logits use token_embd */
    int32_t qkv_bias;     /* 1: q, k and v projections have biases */
    uint64_t seed;        /* random init seed */
    int32_t donor_d_in;   /* 0, or the width of a donor's embedding: the table is then
                             [donor_d_in x vocab] and a trainable lens
                             token_embd_proj.weight [donor_d_in x d_model] maps it
                             into the model (needs untied = 1) */
    int32_t head_dim;     /* 0: d_model / n_heads; else the width of one head, even
                             (Qwen3's q projection is wider than d_model) */
    int32_t rope_neox;    /* 1: RoPE rotates the pairs (i, i + head_dim/2) (llama.cpp's
                             NEOX mode: Qwen2, Qwen3); 0: adjacent pairs (llama) */
    int32_t qk_norm;      /* 1: RMSNorm over each head of q and of k before RoPE, with
                             weights attn_q_norm / attn_k_norm [head_dim] (Qwen3, Gemma 3) */
    int32_t embd_scale;   /* 1: the embedding rows are scaled by sqrt(d_model) (Gemma) */
    int32_t ffn_gelu;     /* 1: the MLP's gate goes through GELU (tanh form), not SiLU (Gemma) */
    int32_t post_norms;   /* 1: RMSNorm on the attention's and the MLP's outputs before each
                             residual add, weights post_attention_norm / post_ffw_norm
                             [d_model] (Gemma 3) */
    int32_t swa_window;   /* 0, or sliding-window attention: a local layer's query sees the
                             swa_window positions up to itself only (Gemma 3) */
    int32_t swa_period;   /* with swa_window: layer l is global (full causal attention, base
                             rope_base) when l % swa_period == swa_period - 1, else local */
    float rope_base_swa;/* with swa_window: the local layers' RoPE base */
    int32_t rope_freqs;   /* 1: RoPE divides pair i's angle by factor i of rope_freqs.weight,
                             float32 [head_dim/2] (rope_dim/2 with rope_dim), frozen (llama 3's RoPE scaling, llama.cpp's
                             freq_factors): a GGUF base's own tensor, or for a model created
                             here one of kind TNN_KIND_ROPE_FREQS to upload */
    int32_t no_rope_period;/* 0, or layer l applies no RoPE where (l + 1) % no_rope_period
                              == 0 (SmolLM3: every fourth layer) */
    float attn_scale;   /* 0: attention scores scaled by 1 / sqrt(head width); else this
                           scale (Gemma 2 and 3 at 27 B: 1 / sqrt(d_model / n_heads)) */
    float attn_softcap; /* 0, or scores capped to cap * tanh(score / cap) before the
                           mask and the softmax (Gemma 2) */
    float final_softcap;/* 0, or logits capped to cap * tanh(logit / cap) (Gemma 2) */
    int32_t fused_qkv;    /* 1: q, k, v are one weight attn_qkv [d_model, (n_heads + 2 n_kv_heads)
                             * head_dim], their rows stacked in that order (Phi-3) */
    int32_t fused_gate_up;/* 1: the MLP's gate and up are one weight ffn_up [d_model, 2 d_ff],
                             gate rows first (Phi-3) */
    int32_t rope_dim;     /* 0: RoPE rotates the whole head; else the first rope_dim dims of
                             each head (even, at most the head width; Phi-4-mini), and the
                             RoPE factors have rope_dim/2 entries */
    int32_t rope_orig_ctx;/* 0, or with rope_freqs LongRoPE (Phi-3.5, the 128k Phi-3 models,
                             Phi-4-mini): two factor sets, rope_factors_short.weight for a
                             context (t_seq when training, the cache when generating) of at
                             most rope_orig_ctx tokens, else rope_factors_long.weight */
    float rope_attn_factor;/* 0: 1; else RoPE's cos and sin are multiplied by it (llama.cpp's
                              rope.scaling.attn_factor: LongRoPE's attention factor) */
    int32_t conv_kernel;  /* 0, or the width of the short convolutions (LFM2's
                             shortconv.l_cache, e.g. 3): each 'c' layer of layer_kinds
                             sees the token and the conv_kernel - 1 before it */
    char layer_kinds[1025];/* "" (every layer attends), or a letter per layer: 'a'
                              attention, 'c' a gated short convolution (LFM2: in_proj
                              [d_model, 3 d_model] -> B, C, x; C * conv(B * x);
                              out_proj), 'd' the gated delta rule (Qwen 3.5's linear
                              attention: attn_qkv, a short convolution of conv_kernel
                              taps, ssm_* as below), 'm' Mamba-2 (ssm_in -> z, x B C, dt;
                              a short convolution of x B C, conv_kernel taps, with a bias;
                              the selective scan; the D skip; a grouped RMS norm of y
                              silu(z); ssm_out), 'p' attention and Mamba-2 side by side on
                              the same normed input, their outputs summed (Falcon-H1), each
                              followed by the feed-forward; with one_sublayer also 'f', the
                              feed-forward alone */
    int32_t attn_gate;    /* 1: Qwen 3.5's attention: attn_q [d_model, 2 n_heads head_dim]
                             holds each head's query and then its output gate, the output
                             times sigmoid(gate); the feed-forward's norm is
                             post_attention_norm */
    int32_t ssm_state;    /* 'd' layers: the width of a key and of a value head (S) */
    int32_t ssm_groups;   /* 'd' layers: key heads (q and k), repeated to ssm_heads */
    int32_t ssm_heads;    /* 'd' layers: value heads; the state is [S, S] each. 'm' layers:
                             the scan's heads, ssm_groups groups of B and C of width
                             ssm_state, each head's state [ssm_inner / ssm_heads, S] */
    int32_t ssm_inner;    /* 'd' and 'm' layers: the inner width (what ssm_out reads):
                             ssm_state x ssm_heads for 'd' */
    float embd_multiplier;    /* 0: 1; else the embeddings are multiplied by it (Granite) */
    float residual_multiplier;/* 0: 1; else each block's two outputs are multiplied by it
                                 before their residual adds (Granite) */
    float logit_scaling;      /* 0: 1; else the logits are divided by it (Granite) */
    int32_t one_sublayer; /* 1: each layer is one sub-layer after its attn_norm, by its kind:
                             'a' attention or 'm' Mamba-2 with no feed-forward, 'f' the
                             feed-forward alone; no ffn_norm (Nemotron-H) */
    int32_t ffn_relu_sq;  /* 1: the feed-forward is ffn_down(relu(ffn_up x)^2), no gate
                             (Nemotron-H) */
    int32_t mamba_no_norm;/* 1: Mamba-2's y silu(z) goes to ssm_out without the grouped RMS
                             norm, and the layers have no ssm_norm (Falcon-H1's files
                             without one) */
    int32_t n_experts;    /* 0, or every layer's feed-forward is a mixture of n_experts SwiGLU
                             experts (at most 1024): a router ffn_gate_inp [d_model,
                             n_experts] and the experts ffn_gate_exps, ffn_up_exps [d_model,
                             d_ff_exp, n_experts], ffn_down_exps [d_ff_exp, d_model,
                             n_experts], kept as stored and frozen under LoRA (Qwen3-MoE) */
    int32_t n_experts_used;/* with n_experts: how many the router's softmax chooses a token
                              (its top k) */
    int32_t d_ff_exp;     /* with n_experts: an expert's hidden width */
    int32_t experts_norm; /* with n_experts: 1: the chosen experts' weights rescaled to sum
                             to 1 (Qwen3-MoE, as llama.cpp runs it) */
    int32_t d_ff_shexp;   /* with n_experts: 0, or the width of a shared expert every token
                             goes through beside the routed ones: ffn_gate_shexp, ffn_up_shexp
                             [d_model, d_ff_shexp], ffn_down_shexp [d_ff_shexp, d_model], its
                             SwiGLU output (gated: shexp_gate) added to the routed ones */
    int32_t shexp_gate;   /* with d_ff_shexp: 1: the shared expert's output is gated by
                             sigmoid(ffn_gate_inp_shexp x), ffn_gate_inp_shexp [d_model]
                             (Qwen 3.5 MoE); 0: added as it is (Granite 4 MoE) */
    float rope_scale;     /* 0: none; else RoPE's context extension factor (rope.scaling.factor,
                             above 1): every angle divided by it (llama.cpp's linear scaling,
                             freq_scale = 1 / rope_scale), or with rope_yarn YaRN's */
    int32_t rope_yarn;    /* with rope_scale: 1: YaRN, as llama.cpp runs it (ggml's ext_factor
                             1): the pairs that turn fewer than rope_yarn_beta_slow times over
                             rope_yarn_ctx tokens divided by rope_scale, those that turn more
                             than rope_yarn_beta_fast times kept, a ramp between; cos and sin
                             times 1 + 0.1 ln(rope_scale), or with rope_yarn_log_mul that over
                             1 + 0.1 rope_yarn_log_mul ln(rope_scale) (Ministral 3) */
    int32_t rope_yarn_ctx;/* with rope_yarn or attn_temp_scale: the original context
                             (rope.scaling.original_context_length) */
    float rope_yarn_beta_fast, rope_yarn_beta_slow; /* with rope_yarn: the ramp's ends (32, 1) */
    float rope_yarn_log_mul;  /* with rope_yarn: 0, or transformers' mscale_all_dim */
    float attn_temp_scale;/* 0, or each query times 1 + attn_temp_scale ln(1 + floor(pos /
                             rope_yarn_ctx)) after RoPE (Llama 4's and Ministral 3's
                             attention temperature: 1 within the original context) */
    int32_t swa_rope_scaled;/* with swa_window and rope_scale: 1: the sliding-window layers'
                               RoPE is extended as the global layers' (gpt-oss); 0: not
                               (Gemma 3) */
    int32_t attn_sinks;   /* 1: each attention head's softmax has one more logit, a learned
                             sink attn_sinks.weight [n_heads] that takes a share of the
                             weight and adds no value (gpt-oss) */
    int32_t attn_out_bias;/* 1: the attention's output projection has a bias attn_output.bias
                             [d_model] (gpt-oss) */
    int32_t experts_oai;  /* with n_experts: 1: gpt-oss's experts: the router and each
                             expert's gate, up and down have biases (ffn_gate_inp.bias
                             [n_experts], ffn_gate_exps.bias and ffn_up_exps.bias [d_ff_exp,
                             n_experts], ffn_down_exps.bias [d_model, n_experts]), the
                             activation is g' sigmoid(1.702 g') (u' + 1) with g' = min(g, 7),
                             u' = clamp(u, -7, 7), and the feed-forward's norm is
                             post_attention_norm */
    int32_t attn_split;   /* set by the trainer, not the caller: how training attention is
                             split (models/models.h, enum tnn_attention_split). 0: the whole
                             batch, or a sequence at a time where its scores outgrow a core's
                             cache; 1, with recomputation (tnn_set_recompute): one kv head
                             of one sequence at a time, so that one group's t_seq x t_seq
                             scores are held, not every head's; 2, attention fused into one
                             node (--precision bf16), which holds no scores: the whole
                             batch */
} tnn_model_config;

/* The last error message of the calling thread ("" when none). */
const char * tnn_last_error(void);

/* The backend this library was built for: "cpu", "cuda", "vulkan" or "metal". */
const char * tnn_backend_name(void);

/* Which build of the backend's code runs. CPU: "native" when ggml was compiled
 * for the build machine (a source build), else the instruction-set level a
 * portable build picked for this CPU at run time ("x64", "haswell", "icelake",
 * "armv8.2_1"... ggml's variant names; "none" when no variant loads).
 * TNN_CPU_VARIANT=<name> in the environment loads that variant instead of the
 * best one (a session then fails with a message if this CPU cannot run it).
 * tinynn's own CPU kernels are chosen apart from ggml's variant, by this
 * CPU's features; TNN_CPU_KERNELS=off turns them off (see "kernel checks"
 * below). Vulkan: the device's name ("llvmpipe (LLVM 15.0.6, 256 bits)"),
 * with " (software: a CPU-type Vulkan device)" where the only device is one
 * (Mesa's lavapipe, which tinynn then uses although ggml alone would not),
 * or "none" when there is none. */
const char * tnn_backend_variant(void);

/* A new session on this library's backend. n_threads sets the CPU thread
 * count (ignored by GPU backends except for host-side work). */
int tnn_session_new(int32_t n_threads, tnn_session ** out);
void tnn_session_free(tnn_session * session);

/* A ViT image classifier: each image is n_patches flattened patches of
 * patch_dim floats, embedded by one linear map; a class token (the learned
 * embedding of position 0, whose patch is zeros) is put in front, learned
 * positions are added, pre-LayerNorm blocks with bidirectional attention
 * and a GELU MLP follow, and the final LayerNorm of the class token goes
 * through a linear head to n_classes logits. Labels are one class id per
 * image. */
typedef struct tnn_vit_config {
    int32_t n_classes;
    int32_t patch_dim;    /* floats per patch (patch side^2 x channels) */
    int32_t n_patches;    /* patches per image */
    int32_t d_model;
    int32_t n_layers;
    int32_t n_heads;      /* divides d_model */
    int32_t d_ff;         /* GELU MLP width */
    int32_t t_batch;      /* images per step */
    float ln_eps;       /* LayerNorm epsilon, e.g. 1e-6 */
    float init_scale;   /* std of the random matrices */
    uint64_t seed;
} tnn_vit_config;

/* Warm start: overwrite the token embedding with a donor's rows (float32,
 * vocab rows of the table's width, row-major) between realize and build — the
 * "warm window". Outside the window it is an error, never a silent no-op. */
int tnn_upload_donor(tnn_session * session, const float * data, size_t n_floats);

/* How a frozen base's matrices are computed with (tnn_lora_config.base_compute). */
enum tnn_base_compute {
    TNN_BASE_FAST = 0,  /* the default: a transposed copy of every matrix (Q8_0; F16/F32 for
                             such bases; F32 for the output head) turns the input gradients into
                             matrix products; Q5_1 and K-quant matrices also get a Q8_0 copy
                             for the forward (the others forward as stored) */
    TNN_BASE_STORED = 1,  /* the blocks' stored types in place, no copies: least memory; the
                             output head keeps its copies where head_loss fuses it (it then
                             never holds the logits). On the CPU kernels both products run
                             on qgemm with the copies' panels made a pass at a time inside
                             each product (the same bits), and where qgemm cannot take a
                             matrix the input
                             gradient on fgemm with W dequantized a block of columns at a
                             time (TNN_STORED_FGEMM=1 asks for that path everywhere,
                             TNN_STORED_OUT_PROD=1 for ggml's out_prod, to compare) */
    TNN_BASE_BF16 = 2,    /* a bfloat16 copy of every matrix, the head's included, both
                             products through the CPU's bfloat16 kernel (fgemm_bf16:
                             AVX512-BF16 or AMX), summed in float32 with no step per block
                             of 32. Meant for precision bf16 (toy's "fast" is this there on
                             AMX CPUs) */
    TNN_BASE_BF16_HEAD = 3 /* fast's int8 copies for the blocks' matrices, a bfloat16 copy for
                             the output head alone (head_loss on fgemm_bf16). Meant for
                             precision bf16 on CPUs with AVX512-BF16 and no AMX (toy's "fast"
                             is this there): the blocks' int8 products, one level backward,
                             outrun bfloat16 there, the head's two levels both ways do not */
};

/* LoRA adapters on a frozen base: W x + (alpha / rank) * B (A x). */
typedef struct tnn_lora_config {
    int32_t rank;        /* 1 .. min(d_in, d_out) of every target */
    float alpha;       /* scale numerator: the update is scaled by alpha / rank */
    uint32_t targets;     /* OR of enum tnn_lora_target */
    float init_scale;  /* std of A's random init; B starts at zero */
    uint64_t seed;
    int32_t t_seq;
    int32_t t_batch;
    int32_t base_compute; /* enum tnn_base_compute */
} tnn_lora_config;

/* Read the hyper-parameters of a GGUF of a model family toy trains (no
 * weights; the families are tnn_family_info's). t_seq, t_batch,
 * init_scale and seed are left 0. Fails with a one-line reason on a missing
 * file, a non-GGUF or truncated file, another architecture, a tensor type
 * tinynn cannot back-propagate through, or a tensor of the wrong shape. */
int tnn_gguf_model_config(const char * path, tnn_model_config * config);

/* Check that a file is well-formed GGUF by ggml's own parser (header, every
 * key/value, every tensor info), whatever its architecture. Python reads a
 * GGUF's metadata (the tokenizer) only after this passes: gguf's reader can
 * loop without end on a corrupt file. */
int tnn_gguf_check(const char * path);

/* The LoRA targets (a mask of enum tnn_lora_target) whose weights layer
 * `layer` of a model of `config` has, by its kind (layer_kinds): an
 * attention layer's q, k, v, o, a short-convolution layer's conv_in and
 * conv_out, a delta-net layer's ssm_qkv, ssm_gate, ssm_out, a Mamba-2
 * layer's ssm_in, ssm_out, and every layer's gate, up, down (with
 * one_sublayer: an 'f' layer's up and down, or gate too). 0 with a
 * one-line reason (tnn_last_error) for a layer the config does not have. */
uint32_t tnn_layer_targets(const tnn_model_config * config, int32_t layer);

/* A model family toy reads from GGUF: the table entry (tinynn/models/
 * families.c) of a general.architecture, as tnn_family_info gives it. The
 * strings are the library's own, valid while it is loaded. */
typedef struct tnn_family_desc {
    const char * gguf_arch;             /* general.architecture: "llama", "qwen2", ... */
    const char * arch;                  /* the tnn_model_desc.arch that builds it */
    int32_t generates;                  /* 1: tnn_kv_init and tnn_decode run it */
    int32_t rope_neox;                  /* what tnn_gguf_model_config sets from the family */
    int32_t embd_scale;                 /*   (the flags of tnn_model_config of the same names; */
    int32_t ffn_gelu;                   /*   post_norms where the file has the norms) */
    int32_t post_norms;
    int32_t swa_period;                 /* every swa_period-th layer global; 0: no sliding window */
    const char * output_norm;           /* the final norm's tensor in its GGUFs ("output_norm.weight";
                                           LFM2's "token_embd_norm.weight"); a model made from one
                                           names it output_norm.weight */
    const char * tokenizer_kinds;       /* the tokenizer.ggml.model values its GGUFs carry,
                                           comma-separated: "gpt2" (byte-level BPE), "llama"
                                           (SentencePiece) */
    const char * default_chat_template; /* the Jinja chat template for a GGUF that ships none
                                           (Gemma 3's base models), or NULL: none */
} tnn_family_desc;

/* How many model families toy reads from GGUF (tnn_gguf_model_config). */
int32_t tnn_family_count(void);
/* The family at index (0 .. tnn_family_count() - 1), into out. */
int tnn_family_info(int32_t index, tnn_family_desc * out);

/* What tnn_realize builds: a model from seeded random init (arch names
 * the architecture), or LoRA adapters over a llama-family GGUF (base_gguf).
 *
 *   arch "llama"  decoder-only transformer: RMSNorm, RoPE, grouped-query
 *                 attention, SwiGLU (or GEGLU), tied or untied head; every
 *                 field of config (Qwen2/3 and Gemma 3 shapes too)
 *   arch "gpt2"   learned absolute positions (t_seq of them), pre-LayerNorm
 *                 blocks (weight and bias) with fused q/k/v and biases on
 *                 every projection, causal attention, a tanh-GELU MLP, a
 *                 final LayerNorm and the LM head tied to the token
 *                 embedding, in llama.cpp's GPT-2 tensor names. Reads vocab,
 *                 d_model, n_layers, n_heads (n_kv_heads must equal it),
 *                 d_ff, t_seq, t_batch, norm_eps (the LayerNorm epsilon),
 *                 init_scale and seed of config
 *   arch "vit"    an image classifier from vit: each image is n_patches
 *                 flattened patches of patch_dim floats, embedded by one
 *                 linear map; a class token (the learned embedding of
 *                 position 0, whose patch is zeros) in front, learned
 *                 positions, pre-LayerNorm blocks with bidirectional
 *                 attention and a GELU MLP, and the final LayerNorm of the
 *                 class token through a linear head to n_classes logits.
 *                 Labels are one class id per image
 *   arch "llama-postnorm"  the llama block with its norms after each
 *                 residual add (the original Transformer's placement):
 *                 a small variant that shows what adding an architecture takes
 *   base_gguf     map a llama, qwen2, qwen3 or gemma3 GGUF as a frozen base
 *                 (weights stay in their stored types; on the CPU they are
 *                 used in place from the mapped file) and add LoRA adapters
 *                 A [d_in, rank], B [rank, d_out] on lora's targets of every
 *                 block, the only trainable tensors. lora.rank 0 adds none:
 *                 a base to generate with, not to train
 *
 * Norm weights start at 1, biases and LoRA B at 0, matrices N(0,
 * init_scale^2) from the seed (init_scale 0: zeros, nothing drawn). A full
 * fine-tune (with init_scale 0) or a warm start realizes "llama" and
 * uploads the weights it starts from. */
typedef struct tnn_model_desc {
    const char * arch;       /* from scratch: "llama", "gpt2", "vit", "llama-postnorm" */
    tnn_model_config config;     /* token models: shape and batch shape */
    tnn_vit_config vit;        /* arch "vit" */
    const char * base_gguf;  /* instead of arch: a GGUF path */
    tnn_lora_config lora;       /* with base_gguf; t_seq, t_batch, init_scale and seed
                                     are read from here, the shape from the file */
} tnn_model_desc;

/* Realize what desc describes, once per session. Hands back the input
 * handles: token ids and positions (int32 [t_seq * t_batch] each), or for
 * a ViT the images (float32 [patch_dim, n_patches, t_batch], kind
 * TNN_KIND_IMAGES) and -1. */
int tnn_realize(tnn_session * session, const tnn_model_desc * desc, int32_t * input_handles);

/* Bake forward + cross-entropy + backward + AdamW into one graph, and a
 * forward-only graph that produces logits. Hands back the handles of the loss
 * (scalar), the labels (upload int32 ids) and the AdamW row (upload 7 floats:
 * lr, beta1, beta2, eps, weight_decay, 1/(1-beta1^t), 1/(1-beta2^t)) and the
 * logits ([vocab, n_tokens], valid after tnn_compute_forward). */
int tnn_build_training_step(tnn_session * session, int32_t * loss_handle, int32_t * labels_handle,
                            int32_t * hp_handle, int32_t * logits_handle);

/* Before build: clip gradients by their global norm inside the graph, on
 * whatever backend runs it. Every step the norm of all trainable gradients
 * is computed by ggml nodes and, when it exceeds max_norm, the gradients
 * reaching AdamW are scaled by max_norm / norm (the accumulated gradients
 * stay as computed). The pre-clip norm is the tensor "grad_norm" (float32
 * [1], kind TNN_KIND_GRAD_NORM, valid after tnn_compute_accumulated_step). */
int tnn_enable_grad_clipping(tnn_session * session, float max_norm);

/* What the training step minimises (tnn_set_objective). */
enum tnn_objective {
    TNN_OBJECTIVE_CROSS_ENTROPY = 0, /* the mean cross-entropy over the labelled tokens (the default) */
    TNN_OBJECTIVE_DPO = 1, /* direct preference optimisation, against a reference */
    TNN_OBJECTIVE_ORPO = 2  /* odds-ratio preference optimisation, no reference */
};

/* Before build: train on preference pairs instead of the mean cross-entropy
 * (CPU backend, token models). The samples of a batch, numbered row by row,
 * come in pairs: samples 2k and 2k+1 are pair k, the chosen and the
 * rejected answer to one prompt, labelled on the answer only (-1
 * elsewhere). A row is one sample (t_batch must be even), or with packed
 * rows (tnn_set_packed_rows) a sample begins at each row's first token and
 * wherever a position is 0, at most 256 samples a batch. With lp a
 * sample's summed log-probability of its labelled tokens:
 *   DPO   loss = mean over pairs of -log sigmoid(beta ((lp_c - ref_c) - (lp_r - ref_r))),
 *         ref the reference model's lp of each sample, uploaded per batch to
 *         "reference_logps" (float32 [samples], kind TNN_KIND_REFERENCE);
 *   ORPO  loss = the chosen samples' mean cross-entropy per labelled token
 *         + beta * mean over pairs of -log sigmoid(o(m_c) - o(m_r)), m a
 *         sample's lp per labelled token, o(m) = m - log(1 - e^m) its log odds.
 * [samples] is [t_batch], or [256] with packed rows. A pair with an
 * unlabelled sample (padding) counts for nothing. After any compute,
 * "sample_logps" (float32 [samples], kind TNN_KIND_SAMPLE_LOGPS) holds each
 * sample's lp (0 past the batch's last): run the forward graph before the
 * first step, when LoRA's B is still zero, and it gives the base model's
 * lp, DPO's reference. The
 * loss handle holds the objective's value; the loss scale multiplies it
 * (labels uploads leave it at 1; set it for gradient accumulation). */
int tnn_set_objective(tnn_session * session, int32_t objective, float beta);

/* Before build: the precision of the training step's dense float products.
 * "f32" (the default): float32 throughout. "bf16": mixed precision, the
 * weights, gradients and AdamW moments stay float32 and so does every sum,
 * but the operands of the products by weights are rounded to bfloat16 first
 * (fgemm_bf16: AVX512-BF16 or the AMX-BF16 tiles, about twice float32's
 * speed); attention's own products stay float32. TNN_ERR_ARG for another
 * name, or "bf16" where this backend and CPU have no such product (Zen 4
 * and later, Cooper Lake, Sapphire Rapids and later have). */
int tnn_set_precision(tnn_session * session, const char * precision);

/* Before build: activation recomputation. every = 0 (the default): the
 * backward reads the activations the forward kept, except those an
 * elementwise op makes from what it keeps anyway (a norm's output, the
 * gated unit's product: the adapters' inputs), which are computed again in
 * one pass just before they are read (TNN_KEEP_ACTIVATIONS=1 in the
 * environment keeps them too, to compare). every = k > 0: only the
 * residual stream entering every k-th block (and leaving the last) is kept
 * for the backward; the other activations are computed again from it as
 * the backward reaches each block. Memory for activations falls from all
 * layers' to one group of k blocks' plus the kept inputs; the step runs the
 * blocks' forward twice. The loss and every gradient keep their bytes.
 * TNN_ERR_ARG for every < 0 or an architecture that does not name its
 * blocks' inputs. */
int tnn_set_recompute(tnn_session * session, int32_t every);

/* Before build: packed rows. Each row of t_seq tokens may hold several
 * samples one after another, as TRL's padding-free packing lays them out:
 * a token at position 0 begins a new sample, and attention stays inside
 * a sample (each row gets its own block-diagonal causal mask, made from
 * the positions before the first compute after each upload of them). The positions
 * restart at 0 for each sample, so every token's loss and gradient are
 * those of its sample trained alone, up to the order of the sums. A
 * preference objective (tnn_set_objective) pairs the samples; a compute
 * on positions that make more than 256 samples is TNN_ERR_ARG.
 * TNN_ERR_ARG for a model without tokens (the ViT). */
int tnn_set_packed_rows(tnn_session * session, int32_t packed);

/* After build: the bytes the training step holds, by part: parts[0] the
 * graph allocator's buffer (activations and temporaries of the step),
 * parts[1] trainable weights and inputs, parts[2] gradients, AdamW moments
 * and the step's small tensors, parts[3] a frozen base's fast copies,
 * parts[5] the CPU kernels' scratch, the CPU backend's work buffer and the
 * graphs' descriptions (their nodes and hash sets, in host memory).
 * A measuring session's only (else 0): parts[4] the bytes of the mapped base
 * that the copies replace, which a step no longer reads; parts[6] the
 * allocator's buffer for the forward graph alone (tnn_compute_forward, with
 * all the logits), which an evaluation grows parts[0] to. A buffer is
 * reserved, not yet touched: what the process holds grows into it on the
 * first step. */
int tnn_training_memory(tnn_session * session, int64_t parts[7]);

/* Before realize: make this a measuring session. realize and build then
 * describe everything and allocate nothing (no weights initialised, no
 * copies of a base made, no graph laid out in memory), and
 * tnn_training_memory says what a session realized and built the same way
 * would hold: a plan before the memory is committed. A measuring session
 * computes nothing (TNN_ERR_STATE). CPU backend only (TNN_ERR_ARG). */
int tnn_set_measure_only(tnn_session * session);

/* Zero gradients and AdamW moments and seed the loss gradient: before the
 * first step. */
int tnn_graph_reset(tnn_session * session);
/* Zero gradients only, keeping the AdamW moments: before every later step. */
int tnn_graph_reset_grads_only(tnn_session * session);

/* Copy host data into a tensor. nbytes must equal the tensor's size, except
 * for the labels, which take int32 ids, one per token. Token ids and labels
 * are checked against the vocabulary; a label of -1 masks its token: the loss
 * is then the mean cross-entropy over the labelled tokens only. */
int tnn_upload(tnn_session * session, int32_t handle, const void * data, size_t nbytes);
/* Override the loss scale the labels upload set (n_tokens / n_labelled): for
 * gradient accumulation over micro-batches, n_tokens / (labelled tokens of
 * all micro-batches) makes the summed losses and gradients those of the mean
 * over the whole batch. Call after uploading the labels. */
int tnn_set_loss_scale(tnn_session * session, float scale);

/* Copy a tensor out to host memory; nbytes must equal its size. */
int tnn_download(tnn_session * session, int32_t handle, void * data, size_t nbytes);

/* The copies between host memory and the backend's memory this session has
 * made so far, with their bytes: every upload, label and loss-scale write,
 * download, gradient copy, decode input and logits row (and most of
 * realize's one-off weight copies). A step's own traffic is the difference
 * around it: on a device backend the rest of the step stays on the device,
 * in one graph (an op the device cannot run is refused at build, never
 * sent back to the CPU). */
typedef struct tnn_transfers {
    int64_t to_device, to_host;              /* copies */
    int64_t bytes_to_device, bytes_to_host;
} tnn_transfers;
int tnn_transfer_counts(tnn_session * session, tnn_transfers * out);

/* The gradients as one flat float32 buffer, for summing a step's gradients
 * over processes with one collective (see tnn_apply_update). The buffer holds
 * each parameter's gradient accumulator (kind TNN_KIND_GRAD) in the order of
 * the parameters' handles, each in ggml order (ne[0] fastest), one after
 * another. The three calls below are valid after build.
 *
 * How many floats the buffer holds. */
int tnn_gradients_size(tnn_session * session, int64_t * n_floats);
/* Copy every gradient into flat; n must equal tnn_gradients_size's count. */
int tnn_download_gradients(tnn_session * session, float * flat, int64_t n);
/* Overwrite every gradient from flat (n floats, tnn_gradients_size's count),
 * e.g. with its sum over processes before tnn_apply_update. */
int tnn_upload_gradients(tnn_session * session, const float * flat, int64_t n);

/* Run forward, cross-entropy, backward and the AdamW update; the gradients
 * add onto the accumulators (zeroed by a reset, or holding earlier
 * micro-batches' from tnn_compute_gradients). */
int tnn_compute_accumulated_step(tnn_session * session);
/* One step from this batch alone: as tnn_graph_reset_grads_only then
 * tnn_compute_accumulated_step, the same values, but the gradients are
 * written into the accumulators instead of added, so nothing zeroes them first (a pass
 * over every gradient saved: 540 MB for SmolLM2's shape). */
int tnn_compute_step(tnn_session * session);
/* Run forward, cross-entropy and backward only: gradients without an update
 * (gradients add up across calls until the next reset). */
int tnn_compute_gradients(tnn_session * session);
/* Run the forward graph only: logits (and the loss, if labels are uploaded). */
int tnn_compute_forward(tnn_session * session);
/* The AdamW update alone (clipping included when enabled), from the
 * gradients as they stand: for data parallelism, where each process runs
 * tnn_compute_gradients on its share of the batch, the gradients are
 * downloaded as one buffer (tnn_download_gradients), summed over processes
 * and uploaded back (tnn_upload_gradients), and then this call updates every
 * parameter without running the forward or backward again. */
int tnn_apply_update(tnn_session * session);

/* One training step (as tnn_compute_accumulated_step, the update
 * included) run node by node, timing each: for measuring where a step's time goes, not for training
 * speed (every node pays a thread start). Writes one line per kind of node,
 * "<seconds> <count> <op> <type of src0>", slowest first, into report (at
 * most report_cap bytes, NUL-terminated). With the environment variable
 * TNN_PROFILE_SHAPES set, the operands' shapes are part of the kind. */
int tnn_profile_step(tnn_session * session, char * report, size_t report_cap);

/* Generation with a KV cache (any realized session; LoRA adapters apply).
 * tnn_kv_init allocates the caches for n_ctx positions; tnn_decode runs the
 * n new tokens at positions n_past .. n_past+n-1 (the cache must hold the
 * n_past before them), stores their keys and values, and writes the logits
 * of the last one (vocab floats). A prompt is one call with n_past = 0, then
 * one call per generated token; n_past may go back (a new prompt at 0). The
 * decode graph is kept between calls and rebuilt only when n or the
 * 256-position window of the cache it reads changes. Attention is ggml's
 * flash attention where the backend has it, else mul_mat + softmax (always
 * on Vulkan, whose flash attention crashed lavapipe; the environment
 * variable TNN_DECODE_ATTENTION=matmul, read by tnn_kv_init, forces it). */
int tnn_kv_init(tnn_session * session, int32_t n_ctx);
int tnn_decode(tnn_session * session, const int32_t * tokens, int32_t n, int32_t n_past, float * logits_out,
               size_t n_logits);
/* Whether decoding applies the session's LoRA adapters (on = 1, the default)
 * or runs the base alone (on = 0): for a session whose adapters only hold
 * the place of none, it spares every token their products. */
int tnn_decode_adapters(tnn_session * session, int32_t on);

/* The tensor table. */
int tnn_tensor_count(tnn_session * session, int32_t * count);
/* Name, kind, ggml type id, shape (ggml order: ne[0] is the fastest axis) and
 * byte size of a tensor. name_out receives at most name_cap bytes. */
int tnn_tensor_info(tnn_session * session, int32_t handle, char * name_out, size_t name_cap, int32_t * kind,
                    int32_t * ggml_type, int64_t * ne4, size_t * nbytes);
/* The handle of a tensor by name (GGUF names: "blk.0.attn_q.weight"). */
int tnn_find(tnn_session * session, const char * name, int32_t * handle);
/* The handle of a parameter's gradient (valid after build). */
int tnn_grad_of(tnn_session * session, int32_t param_handle, int32_t * grad_handle);

/* Write the trainable tensors as a GGUF file llama.cpp can read. A from-scratch
 * session writes the model: tensors under llama.cpp's names (F32), the llama.*
 * hyper-parameters, and tokenizer.ggml.model "none" (raw byte ids). A LoRA
 * session writes the adapter: general.type "adapter", adapter.type "lora",
 * (a model with a donor lens is written with the lens folded into its
 * embedding, E' = lens^T E, so llama.cpp sees a plain llama)
 * adapter.lora.alpha, tensors <weight>.lora_a / .lora_b. A GPT-2 writes
 * llama.cpp's gpt2 layout and keys. (A ViT is written by the Python layer,
 * which knows its image preprocessing.) Written to
 * path + ".tmp" and renamed, so a failure never leaves a half-written file. */
int tnn_save_gguf(tnn_session * session, const char * path);

/* ---- kernel checks (tests) ------------------------------------------------
 *
 * tinynn's CPU kernels (tinynn/cpu/kernels.h) one call each on plain
 * arrays, so that tests can hold every kernel against numpy apart from any
 * training step (tests/test_cpu_kernels.py). Not for training: a session
 * calls the kernels itself.
 *
 * Which kernels a session uses is chosen at tnn_realize, by the backend:
 * the CPU backend runs each kernel in the best variant this CPU has, a GPU
 * backend none. TNN_CPU_KERNELS in the environment narrows that: unset or
 * "on", every kernel; "off", none (ggml's ops throughout); or a
 * comma-separated list of the kernels to use, e.g. "qgemm,fgemm" (the
 * names: qgemm, fgemm, head_loss, adamw, fgemm_bf16; head_loss needs qgemm).
 * TNN_CPU_VARIANT, a CPU level named as ggml's variants are (haswell,
 * alderlake, skylakex, icelake, zen4, sapphirerapids, ...), bounds the
 * variants to that level's features. Any other value of either makes
 * tnn_realize fail with TNN_ERR_ARG.
 *
 * The variants: "avx2" (every kernel but fgemm_bf16), "avxvnni" (qgemm),
 * "avx512" (every kernel), "amx" (qgemm, fgemm_bf16). All variants of a
 * kernel give the same bits, but for fgemm_bf16: its avx512 variant sums
 * over k in order, the AMX tiles their own way (a few ulps apart).
 * Every check runs variant of its kernel and returns TNN_OK, or
 * TNN_ERR_ARG when this CPU or build cannot run that variant or the shapes
 * do not suit the kernel (tnn_last_error says which); nth: the work shared
 * out as between nth threads, run one after another. Matrices are ggml's
 * order: the first index is contiguous. */

/* The variant kernel ("qgemm", "fgemm", "head_loss", "adamw") runs in on
 * this backend under the TNN_CPU_KERNELS and TNN_CPU_VARIANT now set:
 * "avx2", ..., or "none" (ggml's ops serve). NULL for an unknown kernel or
 * a bad setting (tnn_last_error says which). */
const char * tnn_cpu_kernel_choice(const char * kernel);
/* 1 when this CPU and build can run variant of kernel, else 0. */
int tnn_cpu_kernel_runs(const char * kernel, const char * variant);

/* qgemm: y [rows, n] = A x, A [k, rows] given as stored ggml rows of Q8_0
 * (q4_1 = 0) or Q4_1 (q4_1 = 1) blocks, x [k, n] float, x quantized in
 * levels (1 or 2) int8 levels. rows a multiple of 16, k of 32. */
int tnn_kernel_check_qgemm(const char * variant, int32_t q4_1, int32_t levels, const void * blocks, int64_t rows,
                           int64_t k, const float * x, int64_t n, float * y, int32_t nth);
/* fgemm: c [m, n] = A B^T summed over k. A [k, m] (a[i * k + j] = A[i, j]),
 * or with a_by_k A^T [m, k] (a[j * m + i] = A[i, j]); B likewise [k, n] or
 * with b_by_k [n, k]. */
int tnn_kernel_check_fgemm(const char * variant, const float * a, int32_t a_by_k, int64_t m, int64_t k,
                           const float * b, int32_t b_by_k, int64_t n, float * c, int32_t nth);
/* The input gradient through a frozen matrix kept as stored, on fgemm
 * (base_compute stored): dx [d_in, n] = W^T dy for W [d_in, d_out] given as
 * its stored rows of type_name ("q4_K", "q8_0", "f16", ...: ggml's names),
 * dy [d_out, n] (dy[j * d_out + k]), dx[j * d_in + i]; d_in a multiple of
 * the type's block (256 for the K-quants, else 32). */
int tnn_kernel_check_stored_gradient(const char * variant, const char * type_name, const void * w_rows,
                                     int64_t d_in, int64_t d_out, const float * dy, int64_t n, float * dx,
                                     int32_t nth);
/* qgemm on a matrix kept as stored (base_compute stored): y = W x
 * (transposed 0; x [d_in, n], y [d_out, n]) or y = W^T x (transposed 1;
 * x [d_out, n], y [d_in, n]) for W [d_in, d_out] given as its stored rows of
 * type_name (ggml's names), its panels packed inside the product as a
 * training step packs them; x's columns quantized in levels (1 or 2) int8
 * levels. Shapes qgemm cannot take so are refused. */
int tnn_kernel_check_stored_qgemm(const char * variant, const char * type_name, const void * w_rows, int64_t d_in,
                                  int64_t d_out, int32_t transposed, int32_t levels, const float * x, int64_t n,
                                  float * y, int32_t nth);
/* ggml's quantization (ggml_quantize_chunk, no importance matrix) of rows
 * [rows, cols] floats into type_name's blocks (ggml's names: "q4_K",
 * "iq4_xs", "mxfp4", ...) at dst, rows * the type's row bytes: stored
 * matrices of every type for tests and benchmarks. Types that need an
 * importance matrix, and cols not a multiple of the block, are refused. */
int tnn_kernel_quantize_rows(const char * type_name, const float * src, int64_t rows, int64_t cols, void * dst);
/* ggml's own product on its CPU backend, as llama.cpp runs it, on W [d_in,
 * d_out] given as stored rows of type_name: y = W x (mul_mat; x [d_in, n],
 * y [d_out, n]) or, transposed, y = W^T x (out_prod(W, x^T), ggml's backward
 * of mul_mat for a constant W; x [d_out, n], y [d_in, n]), nth threads. */
int tnn_kernel_check_ggml_product(const char * type_name, const void * w_rows, int64_t d_in, int64_t d_out,
                                  int32_t transposed, const float * x, int64_t n, float * y, int32_t nth);
/* A mixture of experts' products and x's gradient through them, as a
 * training graph runs them on the CPU backend (models' tnn_experts_product:
 * ggml's MUL_MAT_ID forward, toy's backward on the session's fgemm), nth
 * threads: experts [n_experts][d_out rows of d_in] as stored rows of
 * type_name, x [n_tokens][x_slots][d_in] (x_slots 1 or n_used), ids
 * [n_tokens][n_used] -> y [n_tokens][n_used][d_out]; dy has y's shape and
 * the loss is sum(y * dy), so dx (x's shape) = d loss / d x. */
int tnn_kernel_check_experts(const char * type_name, const void * w_rows, int64_t d_in, int64_t d_out,
                             int64_t n_experts, const float * x, int64_t x_slots, const int32_t * ids,
                             int64_t n_used, int64_t n_tokens, const float * dy, float * y, float * dx,
                             int32_t nth);
/* fgemm's skinny product: c [m, n] = X Y^T with X [m, k] (x[t * m + j]
 * = X[j, t]), Y [n, k] (y[t * n + i] = Y[i, t]), m at most 16. */
int tnn_kernel_check_fgemm_skinny(const char * variant, const float * x, int64_t m, const float * y, int64_t n,
                                  int64_t k, float * c, int32_t nth);
/* head_loss (its products through the best qgemm variant up to its own
 * level): for a head W [d, vocab] given as stored rows of Q8_0 (q4_1 =
 * 0) or Q4_1 blocks, and W^T [vocab, d] as Q8_0 rows, hidden states h
 * [d, n] and labels int32 [n] (-1 masks a token): out [d + 1, n], column t
 * the gradient of the mean loss over the n tokens with respect to h_t, then
 * token t's loss. d and vocab multiples of 32. */
int tnn_kernel_check_head_loss(const char * variant, int32_t q4_1, const void * w_blocks, const void * wt_blocks,
                               int64_t d, int64_t vocab, const float * h, const int32_t * labels, int64_t n,
                               float * out, int32_t nth);
/* The same with the products of --precision bf16: fgemm_bf16 in the named
 * variant on the head's bfloat16 copy w_bf16 (vocab rows of d bfloat16
 * words, W [d, vocab] as a GGUF stores it); any d and vocab. */
int tnn_kernel_check_head_loss_bf16(const char * variant, const char * fgemm_bf16_variant, const uint16_t * w_bf16,
                                    int64_t d, int64_t vocab, const float * h, const int32_t * labels, int64_t n,
                                    float * out, int32_t nth);
/* head_loss's loss from logits held in full: loss [n] of logits z
 * [vocab, n] and labels int32 [n] (a masked token: 0). */
int tnn_kernel_check_token_loss(const char * variant, const float * z, int64_t vocab, const int32_t * labels,
                                int64_t n, float * loss);
/* adamw: one update of w, m and v [n] in place from the gradient g [n],
 * hp = [alpha, beta1, beta2, eps, wd, beta1h, beta2h] as ggml's
 * opt_step_adamw reads it. */
int tnn_kernel_check_adamw(const char * variant, float * w, const float * g, float * m, float * v,
                           const float * hp, int64_t n, int32_t nth);
/* rms_norm ("avx512", the activations kernels): y [rows][d] = x / sqrt(mean
 * of the row's x^2 + eps), times w [d] unless NULL; and unless dz is NULL,
 * the backward of the norm without w: dx [rows][d] from dz. */
int tnn_kernel_check_rms_norm(const char * variant, const float * x, const float * w, const float * dz, int64_t d,
                              int64_t rows, float eps, float * y, float * dx, int32_t nth);
/* swiglu_back ("avx512", the activations kernels): SwiGLU's gradients over n values, s = sigmoid(g):
 * dgate = dy up s (1 + g (1 - s)) (up NULL: dy alone) and dup = g s dy;
 * dgate or dup NULL: not computed. */
int tnn_kernel_check_swiglu_back(const char * variant, const float * g, const float * up, const float * dy,
                                 int64_t n, float * dgate, float * dup, int32_t nth);
/* ggml's CPU buffers (vendor patch 0014): of n tensors of 3 floats each
 * (1 to 1024), allocated in one buffer as a session's are, how many do
 * not start at a cache line (64 bytes), where the kernels' 64-byte rows
 * (an AMX tile's, an AVX-512 register's) lie in one line each. */
int tnn_kernel_check_tensor_alignment(int32_t n, int32_t * misaligned);
/* fgemm_bf16: as tnn_kernel_check_fgemm, through the bfloat16 product
 * ("avx512", "amx"), each thread's panels in one call. a_stored_bf16: A
 * reaches the kernel as bfloat16 words (rounded here first), as a frozen
 * base's bfloat16 copy does (1: in rows; 2: in the amx variant's own tiles,
 * m and k multiples of 32). accumulate: c += A B^T, each sum starting from
 * c's value (a sum of two products in one node, graph/products.c). */
int tnn_kernel_check_fgemm_bf16(const char * variant, const float * a, int32_t a_by_k, int32_t a_stored_bf16,
                                int64_t m, int64_t k, const float * b, int32_t b_by_k, int64_t n,
                                int32_t accumulate, float * c, int32_t nth);
/* attention_bf16 ("avx512"): causal attention's forward, then its backward,
 * on contiguous arrays: q, dout and out [n_queries][t_seq][head_dim], k
 * and v [n_queries / group][t_seq][head_dim]; writes out, lse [n_queries]
 * [t_seq] (log2 of each query's sum of 2^(scores log2 e)), and the
 * gradients dq, dk and dv shaped as q, k and v (the threads' dQ parts summed
 * in order). head_dim a multiple of 32 up to 256. */
int tnn_kernel_check_attention_bf16(const char * variant, const float * q, const float * k, const float * v,
                                    int64_t head_dim, int64_t t_seq, int64_t n_queries, int64_t group, float scale,
                                    const float * dout, float * out, float * lse, float * dq, float * dk,
                                    float * dv, int32_t nth);

/* ---- operation checks -------------------------------------------------------
 *
 * A ggml operation that toy gave a backward (vendor/patches), computed
 * forward and backward on the session's backend on plain arrays, so that
 * tests can hold it against a float64 reference on every backend
 * (tests/test_recurrent_ops.py). Not for training.
 *
 * op names the operation and its inputs, each float32 of up to 4 dims in
 * ggml's order (shapes: n_inputs rows of 4, unused dims 1):
 *   "ssm_conv": sx [d_conv - 1 + n_t, d_inner, n_s] (the carried state, then
 *               the sequence), c [d_conv, d_inner]; out [d_inner, n_t, n_s].
 *   "pad":      x, zero-padded by 2 before and 1 after along dim 0 and 1
 *               before along dim 1 (ggml_pad_ext).
 *   "sigmoid":  x -> 1 / (1 + exp(-x)) (its backward: vendor patch 0017).
 *   "gated_delta_net": q, k, v [n, heads, T, B], g, beta [1, heads, T, B];
 *               out [n, heads, T, B] (the gated delta rule from a zero state,
 *               toy's custom node: the CPU's alone).
 *   "ssm_scan": x [head_dim, heads, T, B], dt [heads, T, B], a [1, heads],
 *               b, c [state, groups, T, B]; out [head_dim, heads, T, B]
 *               (Mamba-2's scan from a zero state, toy's custom node).
 *   "causal_conv": x [channels, T, B] (token-major), w [taps, channels];
 *               out [channels, T, B]: ssm_conv of each sequence from a zero
 *               state, on x as it is (toy's custom node: the CPU's alone).
 *   "moe_ffn_top1", "moe_ffn_top3", "moe_ffn_top3_norm": x [d, T], router
 *               [d, E], gate and up [d, ff, E], down [ff, d, E]; out [d, T]:
 *               the mixture of experts' feed-forward (tnn_moe_ffn) choosing
 *               1 or 3 experts a token, their weights normalized or not
 *               (toy's custom nodes: the CPU's alone).
 * grad_out has out's shape; the loss is sum(out * grad_out), so grads[i]
 * (input i's shape, or NULL: not wanted) is d loss / d input i. TNN_OK;
 * TNN_ERR_ARG for an unknown op or shapes that do not fit it; TNN_ERR_BACKEND
 * where the backend cannot run a node of the forward or backward graph,
 * refused before anything is allocated. */
int tnn_op_check(tnn_session * session, const char * op, const int64_t * shapes, int32_t n_inputs,
                 const float * const * inputs, const float * grad_out, float * out, float * const * grads);

/* TNN_CDEF_END */

#ifdef __cplusplus
}
#endif

#endif /* TINYNN_H */
