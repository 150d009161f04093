/* Shared internals of tinynn: the session struct, the tensor table and the
 * layer interfaces (primitives -> block -> llama -> train). Not installed. */
#ifndef TINYNN_INTERNAL_H
#define TINYNN_INTERNAL_H

#include "tinynn.h"

#include "ggml.h"
#include "ggml-alloc.h"
#include "ggml-backend.h"
#include "cpu/kernels.h"

#include <stdbool.h>

struct gguf_context;

/* ---- errors (session.c) ---------------------------------------------- */

/* Record a one-line message for tnn_last_error and return status. */
int tnn_fail(int status, const char * fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* ---- backend (csrc/backend_<name>.c, one per library) ------------------ */

ggml_backend_t tnn_backend_create(int32_t n_threads);
/* true when the backend computes on host memory, so a mapped file can be used
 * in place (CPU); false when weights must be copied to the device. */
bool           tnn_backend_uses_host_memory(void);
/* The largest tensor the backend's ops take, in bytes: ggml's largest buffer,
 * or less where the device's shaders address less (Vulkan's
 * maxStorageBufferRange: 128 MiB on lavapipe). */
size_t         tnn_backend_max_tensor_bytes(ggml_backend_t backend);
/* Which of tinynn's CPU kernels (cpu/kernels.h) this backend's graphs run,
 * chosen once at realize: the CPU backend asks the kernel layer (this CPU's
 * features under TNN_CPU_KERNELS), a device backend answers none. TNN_OK,
 * or TNN_ERR_ARG (recorded) for a TNN_CPU_KERNELS it cannot read. */
int            tnn_backend_cpu_kernels(struct tnn_cpu_kernels * kernels);
/* A ggml log callback that passes its warnings and errors to stderr and
 * drops the rest: ggml announces every backend and device it starts, which
 * would bury toy's own stderr (session.c). */
void           tnn_log_warnings_only(enum ggml_log_level level, const char * text, void * user_data);

/* ---- tensor table (session.c) ------------------------------------------ */

/* Free a context of tensors and the backend buffer that holds their data
 * (either may be NULL). */
void tnn_free_tensors(struct ggml_context * ctx, ggml_backend_buffer_t buf);

struct tnn_entry {
    struct ggml_tensor * tensor;
    int32_t kind;      /* enum tnn_tensor_kind */
    int32_t owner;     /* for GRAD and MOMENT: the parameter's handle; else -1 */
};

/* Append a tensor to the table; returns its handle or -1 (error recorded). */
int32_t tnn_table_add(tnn_session * s, struct ggml_tensor * t, int32_t kind, int32_t owner);

/* ---- primitives (primitives.c): one ggml sub-graph each ---------------- */

/* x [d, n] -> x / rms(x) * weight */
struct ggml_tensor * tnn_rms_norm(struct ggml_context * ctx, struct ggml_tensor * x,
                                  struct ggml_tensor * weight, float eps);
/* x [head_dim, n_heads, n_tokens], positions int32 [n_tokens] -> rotated x:
 * adjacent pairs (llama.cpp's NORM mode, llama) or, neox, the pairs
 * (i, i + head_dim/2) (NEOX mode: Qwen2, Qwen3) */
struct ggml_tensor * tnn_rope(struct ggml_context * ctx, struct ggml_tensor * x,
                              struct ggml_tensor * positions, float rope_base, bool neox);
/* gate, up [d_ff, n] -> silu(gate) * up */
struct ggml_tensor * tnn_swiglu(struct ggml_context * ctx, struct ggml_tensor * gate,
                                struct ggml_tensor * up);
/* gate, up [d_ff, n] -> gelu(gate) * up (Gemma) */
struct ggml_tensor * tnn_geglu(struct ggml_context * ctx, struct ggml_tensor * gate,
                               struct ggml_tensor * up);
/* Causal grouped-query attention.
 * q [head_dim, n_heads, t_seq*t_batch], k, v [head_dim, n_kv_heads, t_seq*t_batch],
 * causal_mask [t_seq, t_seq] (0 on and below the diagonal, -inf above)
 * -> [head_dim*n_heads, t_seq*t_batch] */
struct ggml_tensor * tnn_attention(struct ggml_context * ctx, struct ggml_tensor * q,
                                   struct ggml_tensor * k, struct ggml_tensor * v,
                                   struct ggml_tensor * causal_mask, int32_t t_seq, int32_t t_batch);
/* Causal GQA attention of n new queries over a KV cache: writes the new keys
 * and values into the cache rows kv->kv_rows, then attends over the first
 * kv->n_kv cache positions under kv->kq_mask (0 where a query may look,
 * -inf elsewhere), with one flash-attention op or, where the backend lacks
 * it, two mul_mats and a softmax.
 * q [head_dim, n_heads, n], k, v [head_dim, n_kv_heads, n] -> [head_dim*n_heads, n] */
struct tnn_kv_step;
struct ggml_tensor * tnn_attention_cached(struct ggml_context * ctx, struct ggml_tensor * q,
                                          struct ggml_tensor * k, struct ggml_tensor * v,
                                          const struct tnn_kv_step * kv);
/* x [d, n] -> (x - mean(x)) / sqrt(var(x) + eps) * weight + bias, per column */
struct ggml_tensor * tnn_layer_norm(struct ggml_context * ctx, struct ggml_tensor * x,
                                    struct ggml_tensor * weight, struct ggml_tensor * bias, float eps);
/* GELU, tanh form (GPT-2's): 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))) */
struct ggml_tensor * tnn_gelu(struct ggml_context * ctx, struct ggml_tensor * x);
/* logits [vocab, n], labels int32 [n] (-1: masked) -> cross-entropy summed
 * over the labelled tokens, divided by n (scalar) */
struct ggml_tensor * tnn_cross_entropy(struct ggml_context * ctx, struct ggml_tensor * logits,
                                       struct ggml_tensor * labels);

/* ---- one transformer block (block.c) ----------------------------------- */

/* LoRA target slots, in enum tnn_lora_target bit order */
enum { TNN_LORA_SLOT_Q, TNN_LORA_SLOT_K, TNN_LORA_SLOT_V, TNN_LORA_SLOT_O,
       TNN_LORA_SLOT_GATE, TNN_LORA_SLOT_UP, TNN_LORA_SLOT_DOWN, TNN_LORA_SLOTS };

struct tnn_block {
    struct ggml_tensor * attn_norm;                   /* [d_model] */
    struct ggml_tensor * wq, * wk, * wv;              /* [d_model, n_heads*hd], [d_model, n_kv*hd] x2 */
    struct ggml_tensor * bq, * bk, * bv;              /* biases or NULL */
    struct ggml_tensor * q_norm, * k_norm;            /* [hd] per-head RMSNorm weights or NULL */
    struct ggml_tensor * post_attn_norm, * post_ffn_norm;  /* [d] or NULL (Gemma 3) */
    bool local;                                       /* sliding-window attention (Gemma 3) */
    struct ggml_tensor * wo;                          /* [n_heads*hd, d_model] */
    struct ggml_tensor * ffn_norm;                    /* [d_model] */
    struct ggml_tensor * w_gate, * w_up;              /* [d_model, d_ff] */
    struct ggml_tensor * w_down;                      /* [d_ff, d_model] */
    /* LoRA adapters per slot, or NULL: A [d_in, rank], B [rank, d_out] */
    struct ggml_tensor * lora_a[TNN_LORA_SLOTS];
    struct ggml_tensor * lora_b[TNN_LORA_SLOTS];
    float lora_scale;                                 /* alpha / rank */
};

/* The block's weight for a LoRA slot (wq, wk, ... w_down), and the field
 * that holds it (a fast copy of a frozen base replaces it there). */
struct ggml_tensor * tnn_block_weight(const struct tnn_block * block, int slot);
struct ggml_tensor ** tnn_block_weight_field(struct tnn_block * block, int slot);
/* The GGUF name suffix of a slot's weight ("attn_q", ..., "ffn_down"). */
const char * tnn_lora_slot_name(int slot);

/* Point the block at existing weights named blk.<layer>.* in ctx (a mapped
 * GGUF); returns TNN_OK or records which tensor is missing or misshapen. */
int tnn_block_bind(struct ggml_context * ctx, struct tnn_block * block, int32_t layer,
                   const tnn_model_config * cfg);
/* Create LoRA A and B (named <weight name>.lora_a / .lora_b) in ctx for the
 * slots in targets (a mask of enum tnn_lora_target). */
void tnn_block_add_lora(struct ggml_context * ctx, struct tnn_block * block, int32_t layer,
                        const tnn_lora_config * lora);
/* Create the block's weight tensors (named blk.<layer>.*) in ctx. */
void tnn_block_create(struct ggml_context * ctx, struct tnn_block * block, int32_t layer,
                      const tnn_model_config * cfg);
/* For generation: this layer's KV cache and the decode graph's inputs. The
 * graph does not depend on where the new tokens go: their cache rows, the
 * mask and the positions are inputs, so one graph serves every decode step
 * of the same shape (generate.c builds and keeps it, filling every field). */
struct tnn_kv_step {
    struct ggml_tensor * k_cache, * v_cache;   /* [head_dim, n_ctx, n_kv_heads]: a head's
                                                  positions are consecutive rows */
    struct ggml_tensor * kv_rows;              /* I64 [n]: the cache row of each new token */
    struct ggml_tensor * kq_mask;              /* F16 [n_kv, n]: 0 or -inf */
    int32_t n_kv;                              /* cache positions attended (the mask's width) */
    bool flash;                                /* ggml_flash_attn_ext, else mul_mat + softmax */
};

/* The block's two sub-layers, without norms or residuals, for blocks that
 * place them otherwise (a variant architecture):
 * attention: h [d_model, n] -> wo attend(rope(wq h), rope(wk h), wv h) [d_model, n]
 * (kv and causal_mask as for tnn_block_forward); ffn: h -> w_down (act(w_gate h) * w_up h). */
struct ggml_tensor * tnn_block_attention(struct ggml_context * ctx, const struct tnn_block * block,
                                         struct ggml_tensor * h, struct ggml_tensor * positions,
                                         struct ggml_tensor * causal_mask,
                                         const tnn_model_config * cfg, const struct tnn_kv_step * kv);
struct ggml_tensor * tnn_block_ffn(struct ggml_context * ctx, const struct tnn_block * block,
                                   struct ggml_tensor * h, const tnn_model_config * cfg);
/* x [d_model, n_tokens] -> x after attention and feed-forward residuals.
 * kv NULL: training (t_batch sequences of t_seq, causal_mask as for
 * tnn_attention); else one sequence, cached (causal_mask unused). */
struct ggml_tensor * tnn_block_forward(struct ggml_context * ctx, const struct tnn_block * block,
                                       struct ggml_tensor * x, struct ggml_tensor * positions,
                                       struct ggml_tensor * causal_mask,
                                       const tnn_model_config * cfg, const struct tnn_kv_step * kv);

/* ---- the pre-LayerNorm GELU block of GPT-2 and ViT (ln_block.c) -------- */

struct tnn_ln_block {
    struct ggml_tensor * attn_norm, * attn_norm_b;    /* [d] */
    struct ggml_tensor * wqkv, * bqkv;                /* [d, 3d], [3d]: q, k, v stacked */
    struct ggml_tensor * wo, * bo;                    /* [d, d], [d] */
    struct ggml_tensor * ffn_norm, * ffn_norm_b;      /* [d] */
    struct ggml_tensor * w_up, * b_up;                /* [d, d_ff], [d_ff] */
    struct ggml_tensor * w_down, * b_down;            /* [d_ff, d], [d] */
};

#define TNN_LN_BLOCK_TENSORS 12

/* Create the block's tensors (named blk.<layer>.* as llama.cpp's GPT-2) in
 * ctx and list them in out (TNN_LN_BLOCK_TENSORS of them). */
void tnn_ln_block_create(struct ggml_context * ctx, struct tnn_ln_block * block, int32_t layer,
                         int64_t d_model, int64_t d_ff, struct ggml_tensor ** out);
/* x [d, t_seq*t_batch] -> x + attn(LN1(x)), then + mlp(LN2(.)). causal_mask
 * as for tnn_attention, or NULL: every position sees every other. */
struct ggml_tensor * tnn_ln_block_forward(struct ggml_context * ctx, const struct tnn_ln_block * block,
                                          struct ggml_tensor * x, int32_t n_heads,
                                          int32_t t_seq, int32_t t_batch,
                                          struct ggml_tensor * causal_mask, float eps);

/* ---- the model and its architecture (model.c) ----------------------------- */

struct gguf_context;
struct tnn_model;

/* What a forward reads besides the parameters (NULL where unused). */
struct tnn_forward_inputs {
    struct ggml_tensor * tokens, * positions;   /* int32 [t_seq*t_batch] (token models) */
    struct ggml_tensor * images;                /* [patch_dim, n_patches, t_batch] (ViT) */
    struct ggml_tensor * causal_mask;           /* [t_seq, t_seq]: 0 where a query sees a key, else -inf */
    struct ggml_tensor * swa_mask;              /* the same within the sliding window, or NULL */
};

/* Generation's forward over a KV cache: n new tokens, their cache rows and
 * the mask over the n_kv positions they attend (generate.c fills it). */
struct tnn_decode_inputs {
    struct ggml_tensor * tokens, * positions;   /* int32 [n] */
    struct ggml_tensor * rows;                  /* int64 [n]: each token's cache row */
    struct ggml_tensor * mask;                  /* F16 [n_kv, n] */
    struct ggml_tensor ** k_caches, ** v_caches;/* one per layer */
    int32_t n, n_kv;
    bool flash;                                 /* ggml_flash_attn_ext, else mul_mat + softmax */
    bool base_only;                             /* leave the LoRA adapters out */
};

/* An architecture as data: one table entry each (arch.c lists them), so
 * adding one is a file and a line there. NULL members are things the
 * architecture does not do. */
struct tnn_arch {
    const char * name;                          /* tnn_model_desc.arch */
    /* Check desc, create the parameters in s->model.ctx (each added with
     * tnn_add_param) and the inputs (tnn_add_token_inputs, or its own);
     * the memory and the init come after. */
    int (*create)(tnn_session * s, const tnn_model_desc * desc);
    /* The same over desc->base_gguf: open it as s->base, bind its weights
     * and create desc->lora's adapters. */
    int (*create_on_base)(tnn_session * s, const tnn_model_desc * desc);
    /* inputs -> logits [vocab (classes for a ViT), n] */
    struct ggml_tensor * (*forward)(struct ggml_context * ctx, const struct tnn_model * model,
                                    const struct tnn_forward_inputs * in);
    /* new tokens over the KV cache -> logits [vocab, 1] of the last one */
    struct ggml_tensor * (*forward_cached)(struct ggml_context * ctx, const struct tnn_model * model,
                                           const struct tnn_decode_inputs * in);
    /* The model's GGUF metadata as llama.cpp reads it (NULL: not saved by
     * tinynn, e.g. the ViT, whose file Python writes). */
    void (*gguf_metadata)(struct gguf_context * gguf, const tnn_model_config * cfg);
    /* The host tensor to save for a parameter (NULL: leave it out), when the
     * file's tensor is not a plain copy (a lens folded into an embedding). */
    struct ggml_tensor * (*gguf_tensor)(struct ggml_context * host, const struct tnn_model * model,
                                        struct ggml_tensor * param);
    bool learned_positions;                     /* positions index a table of t_seq rows */
};

/* The table entry of an architecture, or NULL. */
const struct tnn_arch * tnn_arch_find(const char * name);
/* Every architecture's name, ", "-separated (for messages). */
const char * tnn_arch_names(void);

/* llama's entry, which also serves every GGUF base (model.c) */
extern const struct tnn_arch tnn_arch_llama;

/* The realized model: its architecture, shape, parameters and inputs. */
struct tnn_model {
    const struct tnn_arch * arch;
    tnn_model_config cfg;        /* the shape every layer reads; a ViT's classes are vocab */
    void * params;               /* the architecture's own struct (struct tnn_llama, ...),
                                    from tnn_alloc_with_blocks: free() frees it */
    struct ggml_context * ctx;   /* trainable parameters and inputs */
    ggml_backend_buffer_t buf;
    struct ggml_tensor * tokens, * positions, * images;
    bool has_lora;               /* adapters on a frozen base (lora says which) */
    tnn_lora_config lora;
};

/* Mark t trainable and add it to the table. */
int tnn_add_param(tnn_session * s, struct ggml_tensor * t);
/* The int32 token and position inputs of t_seq x t_batch (model.cfg). */
int tnn_add_token_inputs(tnn_session * s);
/* n_layers pre-LayerNorm blocks in the model's context, every tensor trainable. */
int tnn_add_ln_blocks(tnn_session * s, struct tnn_ln_block * blocks, int32_t n_layers,
                      int64_t d_model, int64_t d_ff);
/* The GGUF keys llama.cpp reads for arch that every token model shares
 * (general.*, <arch>.context_length, embedding_length, block_count,
 * feed_forward_length, attention.head_count), and, written last,
 * <arch>.vocab_size and a raw-byte tokenizer (export.c). */
void tnn_gguf_model_keys(struct gguf_context * gguf, const char * arch, const tnn_model_config * cfg);
void tnn_gguf_vocab_keys(struct gguf_context * gguf, const char * arch, const tnn_model_config * cfg);
/* A host copy of t (same name) in host, a context with memory (export.c). */
struct ggml_tensor * tnn_host_copy(struct ggml_context * host, const struct ggml_tensor * t);
/* An architecture's struct (struct_size bytes) and its n_blocks blocks
 * (block_size bytes each) in one zeroed allocation, which free() frees;
 * *blocks points at the first block. NULL when out of memory. */
void * tnn_alloc_with_blocks(size_t struct_size, size_t block_size, int32_t n_blocks, void ** blocks);
/* A context for a model's tensors: n_tensors descriptors, no data. */
struct ggml_context * tnn_tensor_context(size_t n_tensors);

/* ---- llama-family models (llama.c) ------------------------------------------ */

/* The width of one attention head. */
static inline int64_t tnn_head_dim(const tnn_model_config * cfg) {
    return cfg->head_dim > 0 ? cfg->head_dim : cfg->d_model / cfg->n_heads;
}

struct tnn_llama {
    const tnn_model_config * cfg;      /* the model's (s->model.cfg) */
    struct ggml_tensor * token_embd;   /* [d_model, vocab], or [donor_d_in, vocab] with a lens */
    struct ggml_tensor * embd_proj;    /* the lens [donor_d_in, d_model], or NULL */
    struct tnn_block   * blocks;       /* n_layers */
    struct ggml_tensor * output_norm;  /* [d_model] */
    struct ggml_tensor * output;       /* [d_model, vocab] or NULL when tied */
    struct ggml_tensor * head;         /* what logits are computed with: output, or
                                          token_embd when tied, or a fast copy of either */
};

/* The llama of a model built on one (every frozen GGUF base is). */
static inline struct tnn_llama * tnn_llama_of(const struct tnn_model * model) {
    return (struct tnn_llama *) model->params;
}
/* Check a config; returns TNN_OK or records why not. */
int tnn_llama_check_config(const tnn_model_config * cfg);
/* A llama's parameters with random init, for its own create or a variant's. */
int tnn_llama_create(tnn_session * s, const tnn_model_desc * desc);
/* tokens int32 [n] -> their embedding rows [d, n] (through the lens, scaled
 * by sqrt(d) for Gemma) */
struct ggml_tensor * tnn_llama_embed(struct ggml_context * ctx, const struct tnn_llama * model,
                                     struct ggml_tensor * tokens);

/* ---- GPT-2 (gpt2.c) and ViT (vit.c) ------------------------------------- */

struct tnn_gpt2 {
    struct ggml_tensor * token_embd;     /* [d, vocab], also the LM head */
    struct ggml_tensor * position_embd;  /* [d, t_seq] */
    struct tnn_ln_block * blocks;        /* n_layers */
    struct ggml_tensor * output_norm, * output_norm_b;   /* [d] */
};

struct tnn_vit {
    tnn_vit_config cfg;
    struct ggml_tensor * patch_embd, * patch_embd_b;   /* [patch_dim, d], [d] */
    struct ggml_tensor * position_embd;                /* [d, 1 + n_patches]: 0 is the class token */
    struct tnn_ln_block * blocks;                      /* n_layers */
    struct ggml_tensor * output_norm, * output_norm_b; /* [d] */
    struct ggml_tensor * head, * head_b;               /* [d, n_classes], [n_classes] */
};

/* ---- a llama GGUF as a frozen base (gguf_base.c, frozen.c) ----------------- */

struct tnn_mapped_file {
    void * addr;      /* the whole file, read-only */
    size_t size;
};

struct tnn_frozen_pair;

/* The base a LoRA session trains on: the GGUF's tensors, in their stored
 * types, and the fast copies made of them (frozen.c). */
struct tnn_frozen_base {
    struct ggml_context * ctx;       /* tensor descriptors named as in the file */
    ggml_backend_buffer_t buf;
    struct gguf_context * gguf;
    char arch_name[32];              /* general.architecture ("llama", "qwen2", ...) */
    struct tnn_mapped_file file;
    bool in_place;                   /* tensors point into the mapped file */
    /* fast copies of the matrices, unless base_compute = stored */
    struct ggml_context * ctx_copies;
    ggml_backend_buffer_t buf_copies;
    struct tnn_frozen_pair * pairs;
    int32_t n_pairs;
};

/* Open and validate a llama GGUF: its config, and a ggml context of tensor
 * descriptors (no data) named as in the file. */
int tnn_gguf_open(const char * path, tnn_model_config * cfg, struct gguf_context ** gguf_out,
                  struct ggml_context ** tensors_out);
int tnn_map_file(const char * path, struct tnn_mapped_file * map);
/* general.architecture of an opened GGUF, or NULL. */
const char * tnn_gguf_arch(struct gguf_context * g);
void tnn_unmap_file(struct tnn_mapped_file * map);
/* Open and map path as s->base, its config into s->model.cfg. */
int tnn_base_open(tnn_session * s, const char * path);
/* Give the base's tensors memory (in place in the mapped file when the
 * backend computes on host memory, else a device copy), make the fast
 * copies (fast_copies), let go of the map where nothing points into it, and
 * add the tensors to the table (kind FROZEN). Needs the base bound. */
int tnn_base_place(tnn_session * s, bool fast_copies);
void tnn_base_free(struct tnn_frozen_base * base);

/* ---- rewriting a built graph's nodes (rewrite.c) ------------------------- */

/* node becomes a custom node running fn(node, ith, nth, userdata) on srcs
 * (n_srcs of them); its shape stays. */
void tnn_become_custom(struct ggml_context * ctx, struct ggml_tensor * node, ggml_custom_op_t fn,
                       void * userdata, struct ggml_tensor ** srcs, int n_srcs);
/* The first node of graph that reads src as its source slot with op, or NULL. */
struct ggml_tensor * tnn_graph_reader(struct ggml_cgraph * graph, const struct ggml_tensor * src, int slot,
                                     enum ggml_op op);
/* Set node's shape to [ne0, ne1], contiguous. */
void tnn_reshape_node(struct ggml_tensor * node, int64_t ne0, int64_t ne1);
/* A node nothing reads any more becomes a no-op one element large (the
 * graph allocator never frees a node that nothing reads). Its sources stay:
 * the allocator frees them after their last reader, and a view source whose
 * reader vanished would keep what it views alive to the end. */
void tnn_become_noop(struct ggml_tensor * node);
/* A copy of graph (forward, backward, AdamW) whose nodes write each
 * accumulator's first gradient (acc = g) instead of adding it (acc = acc + g,
 * which needs acc zeroed first); NULL when some accumulator's first write is
 * not a whole-tensor add, or out of memory. New nodes go in ctx. */
struct ggml_cgraph * tnn_graph_writing_gradients(struct ggml_context * ctx, struct ggml_cgraph * graph,
                                                 struct ggml_tensor ** accs, int n_accs);

/* ---- fast copies of a frozen base (frozen.c) ------------------------------ */

/* A frozen matrix as the forward uses it, its transpose (or NULL), and
 * whether the CPU's packed integer products (qgemm, cpu/kernels.h) serve each. */
struct tnn_frozen_pair {
    struct ggml_tensor * w;        /* [d_in, d_out] */
    struct ggml_tensor * wt;       /* [d_out, d_in] */
    struct ggml_tensor * w_panels; /* W in 16-row panels for the forward, or NULL */
    bool wt_panels;                /* wt holds 16-row panels (a Q8_0 W^T) */
    int32_t wt_levels;             /* int8 levels of the gradient times panels wt (qgemm) */
};

/* Make the transposed copies (and Q8_0 forward copies of slow quantized
 * types) of the base's matrices from the mapped file, and point the model's
 * fields at the forward copies. Needs the base mapped and bound. */
int tnn_frozen_prepare(tnn_session * s);
/* Rewrite a training graph to use the copies: the input gradients through
 * frozen matrices, out_prod(W, dy^T) -> mul_mat(W^T, dy), and on the CPU the
 * products with packed copies -> the packed integer kernels. */
int tnn_use_fast_copies(tnn_session * s, struct ggml_cgraph * graph);

/* ---- tinynn's CPU kernels in a session's graphs ---------------------------- */

/* What the kernel nodes share: scratch memory, per_thread bytes for each of
 * n_threads threads (grown by tnn_grow_scratch as rewrites need it). */
struct tnn_cpu_scratch {
    char * data;
    size_t per_thread;
    int32_t n_threads;
};

/* Thread ith's scratch inside a custom node's compute, or NULL for a thread
 * the scratch was not sized for (never: ggml runs the session's threads);
 * *nth is lowered to the threads that have scratch. */
static inline char * tnn_thread_scratch(const struct tnn_cpu_scratch * scratch, int ith, int * nth) {
    if (ith >= scratch->n_threads) {
        return NULL;
    }
    *nth = *nth < scratch->n_threads ? *nth : scratch->n_threads;
    return scratch->data + (size_t) ith * scratch->per_thread;
}

struct tnn_cpu_state;

/* A packed product node's user data: the kernels and scratch, and how many
 * int8 levels its columns are quantized in (qgemm). */
struct tnn_qgemm_use {
    const struct tnn_cpu_state * cpu;
    int32_t levels;
};

/* A float32 product node's user data: the kernels and scratch, and whether
 * each operand is read as the transpose of its source (fgemm, by_k). */
struct tnn_fgemm_use {
    const struct tnn_cpu_state * cpu;
    bool a_by_k, b_by_k;
    bool bf16;        /* through fgemm_bf16 (tnn_set_precision) */
};

/* The session's one member for the CPU kernels: which run (chosen at
 * realize), their scratch, and the user data their nodes point at. */
struct tnn_cpu_state {
    struct tnn_cpu_kernels kernels;              /* tnn_backend_cpu_kernels; all NULL off the CPU */
    struct tnn_cpu_scratch scratch;
    struct tnn_qgemm_use qgemm_two_levels, qgemm_one_level;   /* frozen.c */
    struct tnn_fgemm_use fgemm_uses[4];          /* by operand layout (products.c) */
};

/* Make the CPU kernel nodes' scratch at least bytes per thread. */
int tnn_grow_scratch(tnn_session * s, size_t bytes);

/* ---- float32 products on tinynn's CPU kernel (products.c) ------------------ */

/* Turn the F32 matrix products of a training graph into custom nodes that
 * run the fgemm kernel (when the session's kernels have it). */
int tnn_use_fgemm(tnn_session * s, struct ggml_cgraph * graph);

/* ---- the AdamW update on tinynn's CPU kernel (adamw.c) ---------------------- */

/* Turn a graph's AdamW nodes into custom nodes that compute the same bits
 * with the adamw kernel (when the session's kernels have it). */
int tnn_use_fast_adamw(tnn_session * s, struct ggml_cgraph * graph);

/* ---- the frozen head and the loss in one node (head_loss.c) -------------- */

/* Whether a training graph's head and cross-entropy can be fused: the
 * session's kernels have head_loss and the llama's head has packed copies
 * (frozen.c). The training graphs then need a forward of their own (the
 * forward graph keeps its logits). */
bool tnn_head_loss_fusable(const tnn_session * s);
/* Rewrite a training graph (forward + backward) whose loss is
 * cross_entropy_loss(logits = mul_mat(head, h), int32 labels) so that the
 * logits and their gradient [vocab, n] are never held: a few tokens at a
 * time, one node computes each token's loss and dL/dh. */
int tnn_fuse_head_loss(tnn_session * s, struct ggml_cgraph * graph, struct ggml_tensor * logits);
/* The same loss from logits [vocab, n] held in full, for the forward graph
 * beside a fused training graph: summed as the fused node sums it, so that
 * the two agree to the bit (cross_entropy_loss sums in another order). */
struct ggml_tensor * tnn_head_loss_of_logits(const tnn_session * s, struct ggml_context * ctx,
                                             struct ggml_tensor * logits, struct ggml_tensor * labels);

/* ---- preference losses (preference.c) -------------------------------------- */

/* The most rows a preference batch may hold (pairs x 2). */
#define TNN_MAX_PREFERENCE_ROWS 256

/* The objective's tensors in the trainer's ctx_opt (reference_logps,
 * row_logps, row_weights [t_batch]). */
void tnn_preference_tensors(tnn_session * s);
/* The forward graph's preference loss from logits [vocab, n] held in full. */
struct ggml_tensor * tnn_preference_loss_of_logits(tnn_session * s, struct ggml_context * ctx,
                                                   struct ggml_tensor * logits);
/* Rewrite a training graph whose loss is cross_entropy_loss(logits, labels)
 * * loss_scale, and its backward, onto the preference objective. */
int tnn_preference_rewrite(tnn_session * s, struct ggml_cgraph * graph, struct ggml_tensor * logits);
/* The same for a graph tnn_fuse_head_loss rewrote: per_token its fused node
 * [d + 1, n], ce its mean-loss node, dh its gradient node, dce the loss's
 * gradient. */
int tnn_preference_fuse(tnn_session * s, struct ggml_cgraph * graph, struct ggml_tensor * per_token,
                        struct ggml_tensor * ce, struct ggml_tensor * dh, struct ggml_tensor * dce);

/* ---- the trainer (train.c) ------------------------------------------------ */

/* The training step's graphs, their inputs and outputs, the gradient
 * accumulators and the AdamW moments. */
struct tnn_trainer {
    /* gradient accumulators, AdamW moments and the step's small inputs */
    struct ggml_context * ctx_opt;
    ggml_backend_buffer_t buf_opt;
    /* graph nodes; their memory comes from the graph allocator */
    struct ggml_context * ctx_graph;
    ggml_gallocr_t galloc;

    struct ggml_cgraph * gf;        /* forward + loss */
    struct ggml_cgraph * gb_grad;   /* forward + loss + backward */
    struct ggml_cgraph * gb_opt;    /* forward + loss + backward + AdamW */
    struct ggml_cgraph * gb_step;   /* gb_opt with the gradients written, not added */
    struct ggml_cgraph * gb_update; /* AdamW alone, from the gradient accumulators */
    struct ggml_cgraph * allocated; /* the graph whose layout the allocator holds */

    struct ggml_tensor * causal_mask, * swa_mask;
    struct ggml_tensor * labels, * hp, * loss, * logits;
    /* n_tokens / n_labelled, set when labels are uploaded: ggml's cross-entropy
     * averages over every token, a masked loss over the labelled ones */
    struct ggml_tensor * loss_scale;
    /* the dense products in bfloat16 (tnn_set_precision "bf16") */
    bool bf16_products;
    /* gradient clipping (tnn_enable_grad_clipping): max norm, 0 when off */
    float clip_norm;
    struct ggml_tensor * grad_norm, * clip_one;
    /* the objective (tnn_set_objective, preference.c) and, for a preference
     * objective, its tensors [t_batch]: reference input, outputs, weights */
    int32_t objective;
    float beta;
    struct ggml_tensor * reference_logps, * row_logps, * row_weights;
    bool built, reset_done;
};

void tnn_trainer_free(struct tnn_trainer * train);

/* ---- the decoder (generate.c) ------------------------------------------------ */

/* Generation: the KV caches and the decode graph, kept while its shape stays. */
struct tnn_decoder {
    struct ggml_context * ctx_kv;
    ggml_backend_buffer_t buf_kv;
    struct ggml_tensor ** k_caches, ** v_caches;
    int32_t n_ctx;
    ggml_gallocr_t galloc;
    /* the last decode graph, reused while the shape (n, n_kv) stays the same */
    struct ggml_context * ctx_graph;
    struct ggml_cgraph * graph;
    struct ggml_tensor * tokens, * positions, * rows, * mask, * logits;
    int32_t n, n_kv;
    bool flash;                      /* the backend runs ggml_flash_attn_ext */
    bool base_only;                  /* tnn_decode_adapters(s, 0): no LoRA products */
    uint16_t * mask_host;            /* staging for the F16 mask, mask_cap halves */
    size_t mask_cap;
};

/* Free the KV caches and the decode graph (nothing when kv_init never ran). */
void tnn_decoder_free(struct tnn_decoder * decoder);

/* ---- the session -------------------------------------------------------- */

/* Copies between host and backend memory, counted into s->transfers
 * (tnn_transfer_counts): every per-step ggml_backend_tensor_set/get goes
 * through these (frozen.c's and export.c's one-off copies do not). */
void tnn_tensor_set(tnn_session * s, struct ggml_tensor * t, const void * data, size_t offset, size_t size);
void tnn_tensor_get(tnn_session * s, const struct ggml_tensor * t, void * data, size_t offset, size_t size);

/* The session owns one part per concern; each part's file manages it. */
struct tnn_session {
    ggml_backend_t backend;
    tnn_transfers transfers;         /* tnn_tensor_set/get */
    int32_t n_threads;
    struct tnn_entry * table;
    int32_t n_table, cap_table;
    bool realized;

    struct tnn_model model;          /* model.c and the architectures' files */
    struct tnn_frozen_base base;     /* gguf_base.c, frozen.c: LoRA's frozen base */
    struct tnn_cpu_state cpu;        /* tinynn's CPU kernels (cpu/kernels.h) and their scratch */
    struct tnn_trainer train;        /* train.c */
    struct tnn_decoder decoder;      /* generate.c */
};

#endif
