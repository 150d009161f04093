/* Preference losses (DPO, ORPO) in place of the mean cross-entropy.
 *
 * A batch holds pairs of samples: samples 2k and 2k + 1 are pair k's chosen
 * and rejected answer to one prompt, each labelled on its answer only (-1
 * elsewhere). The samples are numbered through the batch row by row: a row
 * is one sample, or, with packed rows (tnn_set_packed_rows), a sample begins
 * at each row's first token and wherever a position is 0, as the attention
 * masks see them. Both losses are functions of each sample's summed
 * log-probability
 *     lp_s = sum over sample s's labelled tokens t of log p(label_t) = -sum CE_t,
 * so with w_s = dL/dCE_t = -dL/dlp_s (one number per sample),
 *     dL/dz_t = w_s (softmax(z_t) - onehot(label_t))
 * is the cross-entropy's own gradient for token t, weighted. The training
 * graph is built with cross_entropy_loss as for any step, differentiated by
 * ggml, and then rewritten:
 *
 *   cross_entropy_loss(z, labels)      -> per-token losses [1, n]
 *   cross_entropy * loss_scale         -> the preference loss [1] (this file's
 *                                         objective, times loss_scale), which
 *                                         also writes each sample's lp and
 *                                         each token's weight w_s
 *   cross_entropy_loss_back(dce, z, l) -> dce w_s (softmax(z_t) - onehot)
 *
 * or, when the frozen head and the loss are fused (head_loss.c), the fused
 * node's per-token losses feed the preference loss and its per-token
 * gradients dL/dh_t (of the mean over n tokens) are scaled by n w_s dce.
 *
 * DPO, pair (c, r), reference log-probabilities ref_c, ref_r uploaded:
 *     h = beta ((lp_c - ref_c) - (lp_r - ref_r)),   L = mean over pairs softplus(-h)
 * ORPO, m = lp / (labelled tokens of the sample), log odds o(m) = m - log(1 - e^m):
 *     L = (sum of the chosen samples' CE) / (their labelled tokens)
 *         + beta mean over pairs softplus(-(o(m_c) - o(m_r)))
 * A pair with an unlabelled sample (padding) counts for nothing. */
#include "graph/graph.h"

#include <math.h>
#include <string.h>

int64_t tnn_preference_samples(const struct tnn_step * step) {
    return step->packed_rows ? TNN_MAX_PREFERENCE_SAMPLES : step->model->cfg.t_batch;
}

/* The objective's inputs and outputs in the trainer's static memory
 * (ctx_opt), created with the trainer's other small tensors: one float per
 * sample in and out, and each token's weight w_s. */
void tnn_preference_tensors(struct tnn_step * step) {
    const int64_t samples = tnn_preference_samples(step);
    const tnn_model_config * cfg = &step->model->cfg;
    struct ggml_context * ctx = step->ctx_opt;
    step->reference_logps = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, samples);
    ggml_set_name(step->reference_logps, "reference_logps");
    ggml_set_input(step->reference_logps);
    step->sample_logps = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, samples);
    ggml_set_name(step->sample_logps, "sample_logps");
    ggml_set_output(step->sample_logps);
    step->token_weights = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, (int64_t) cfg->t_seq * cfg->t_batch);
    ggml_set_name(step->token_weights, "token_weights");
}

/* Walks the tokens of a batch in order, numbering their samples (see the
 * top of this file): call next(&walk, t) for t = 0, 1, ... n - 1; it
 * returns token t's sample. */
struct sample_walk {
    const int32_t * positions; /* NULL: a row is one sample */
    int64_t t_seq, sample;
};

static int64_t next_sample(struct sample_walk * w, int64_t t) {
    if (t == 0) {
        w->sample = 0;
    } else if (t % w->t_seq == 0 || (w->positions != NULL && w->positions[t] == 0)) {
        w->sample++;
    }
    return w->sample;
}

static struct sample_walk sample_walk(const struct tnn_step * step, const int32_t * positions) {
    const struct sample_walk w = { step->packed_rows ? positions : NULL, step->model->cfg.t_seq, 0 };
    return w;
}

int64_t tnn_count_samples(const struct tnn_step * step, const int32_t * positions) {
    const int64_t n = (int64_t) step->model->cfg.t_seq * step->model->cfg.t_batch;
    struct sample_walk w = sample_walk(step, positions);
    int64_t last = 0;
    for (int64_t t = 0; t < n; ++t) {
        last = next_sample(&w, t);
    }
    return last + 1;
}

static double softplus(double x) { return x > 0 ? x + log1p(exp(-x)) : log1p(exp(x)); }

static double sigmoid(double x) { return x >= 0 ? 1.0 / (1.0 + exp(-x)) : exp(x) / (1.0 + exp(x)); }

/* ORPO's log odds of a mean log-probability m, and its derivative in m.
 * m is kept below 0 (a certain answer has infinite odds). */
static double log_odds(double m, double * d_dm) {
    m = m < -1e-7 ? m : -1e-7;
    const double one_minus_p = -expm1(m);
    *d_dm = 1.0 / one_minus_p;
    return m - log(one_minus_p);
}

/* The loss of one batch from its samples' summed log-probabilities lp and
 * labelled counts; writes w[s] = dL/dCE_t for every token of sample s. */
static double preference_loss(int32_t objective, double beta, int64_t samples, const double * lp,
                              const int64_t * count, const float * reference, double * w) {
    int64_t pairs = 0, chosen_tokens = 0;
    for (int64_t k = 0; k < samples / 2; ++k) {
        if (count[2 * k] > 0 && count[2 * k + 1] > 0) {
            pairs++;
            chosen_tokens += count[2 * k];
        }
    }
    double loss = 0.0;
    for (int64_t k = 0; k < samples / 2; ++k) {
        const int64_t c = 2 * k, r = 2 * k + 1;
        w[c] = w[r] = 0.0;
        if (count[c] == 0 || count[r] == 0) {
            continue;
        }
        double dl_dlp_c, dl_dlp_r;
        if (objective == TNN_OBJECTIVE_DPO) {
            const double h = beta * ((lp[c] - reference[c]) - (lp[r] - reference[r]));
            loss += softplus(-h) / (double) pairs;
            const double dl_dh = -sigmoid(-h) / (double) pairs;
            dl_dlp_c = beta * dl_dh;
            dl_dlp_r = -beta * dl_dh;
        } else {
            double do_c, do_r;
            const double a = log_odds(lp[c] / (double) count[c], &do_c) -
                             log_odds(lp[r] / (double) count[r], &do_r);
            loss += -lp[c] / (double) chosen_tokens + beta * softplus(-a) / (double) pairs;
            const double dl_da = -beta * sigmoid(-a) / (double) pairs;
            dl_dlp_c = -1.0 / (double) chosen_tokens + dl_da * do_c / (double) count[c];
            dl_dlp_r = -dl_da * do_r / (double) count[r];
        }
        w[c] = -dl_dlp_c;
        w[r] = -dl_dlp_r;
    }
    return loss;
}

/* dst [1] = the preference loss times loss_scale. srcs: per-token losses
 * [m, n] (token t's loss the last of column t), labels int32 [n], positions
 * int32 [n], the reference log-probabilities [samples], then written:
 * sample_logps [samples] and token_weights [n]; loss_scale [1]. One thread,
 * in order: the same bytes every run. A batch with more samples than
 * sample_logps holds (follow_positions refuses it first) gives NaN.
 * userdata: the trainer's step (its objective, beta and rows). */
static void preference_loss_node(struct ggml_tensor * dst, int ith, int nth, void * userdata) {
    (void) nth;
    if (ith != 0) {
        return;
    }
    const struct tnn_step * step = userdata;
    const struct ggml_tensor * per_token = dst->src[0];
    const float * token_loss = per_token->data;
    const int32_t * labels = dst->src[1]->data;
    const float * reference = dst->src[3]->data;
    float *sample_logps = dst->src[4]->data, *token_weights = dst->src[5]->data;
    const float loss_scale = *(const float *) dst->src[6]->data;
    const int64_t m = per_token->ne[0], n = per_token->ne[1], capacity = dst->src[4]->ne[0];
    double lp[TNN_MAX_PREFERENCE_SAMPLES] = { 0 }, w[TNN_MAX_PREFERENCE_SAMPLES];
    int64_t count[TNN_MAX_PREFERENCE_SAMPLES] = { 0 };
    struct sample_walk walk = sample_walk(step, dst->src[2]->data);
    int64_t samples = 0;
    for (int64_t t = 0; t < n; ++t) {
        const int64_t k = next_sample(&walk, t);
        samples = k + 1;
        if (k < capacity && labels[t] >= 0) {
            lp[k] -= token_loss[t * m + m - 1];
            count[k]++;
        }
    }
    if (samples > capacity) {
        *(float *) dst->data = NAN;
        return;
    }
    const double loss = preference_loss(step->objective, step->beta, samples, lp, count, reference, w);
    for (int64_t k = 0; k < capacity; ++k) {
        sample_logps[k] = k < samples ? (float) lp[k] : 0.0f;
    }
    walk = sample_walk(step, dst->src[2]->data);
    for (int64_t t = 0; t < n; ++t) {
        const int64_t k = next_sample(&walk, t);
        token_weights[t] = labels[t] >= 0 && k < samples - samples % 2 ? (float) w[k] : 0.0f;
    }
    *(float *) dst->data = (float) loss * loss_scale;
}

/* softmax's denominator: sum of exp(z_i - max) in double, and max = max_i z_i. */
static double exp_sum(const float * z, int64_t vocab, float * max_out) {
    float max = z[0];
    for (int64_t i = 1; i < vocab; ++i) {
        max = z[i] > max ? z[i] : max;
    }
    double sum = 0.0;
    for (int64_t i = 0; i < vocab; ++i) {
        sum += exp((double) z[i] - max);
    }
    *max_out = max;
    return sum;
}

/* -log softmax(z)[label], for a session without the CPU kernels' token_loss. */
static float plain_token_loss(const float * z, int64_t vocab, int32_t label) {
    float max;
    const double sum = exp_sum(z, vocab, &max);
    return (float) (log(sum) + max - z[label]);
}

/* dst [1, n] = each token's loss from logits src0 [vocab, n] and int32
 * labels src1 (0 for a masked token). userdata: the session's kernels. */
static void token_losses_node(struct ggml_tensor * dst, int ith, int nth, void * userdata) {
    const struct tnn_cpu_kernels * kernels = userdata;
    const struct ggml_tensor * logits = dst->src[0];
    const int32_t * ids = dst->src[1]->data;
    const int64_t vocab = logits->ne[0], n = logits->ne[1];
    float (*token_loss)(const float *, int64_t, int32_t) = kernels->token_loss ? kernels->token_loss
                                                                               : plain_token_loss;
    for (int64_t t = n * ith / nth; t < n * (ith + 1) / nth; ++t) {
        const float * z = (const float *) ((const char *) logits->data + t * logits->nb[1]);
        ((float *) dst->data)[t] = ids[t] < 0 || ids[t] >= vocab ? 0.0f : token_loss(z, vocab, ids[t]);
    }
}

/* dst [vocab, n] = dce w_t (softmax(z_t) - onehot(label_t)), w_t the weight
 * of token t's sample (0 where unlabelled). srcs: dce [1], logits [vocab, n],
 * labels, token_weights [n]. */
static void logits_gradient_node(struct ggml_tensor * dst, int ith, int nth, void * userdata) {
    (void) userdata;
    const float dce = *(const float *) dst->src[0]->data;
    const struct ggml_tensor * logits = dst->src[1];
    const int32_t * ids = dst->src[2]->data;
    const float * token_weights = dst->src[3]->data;
    const int64_t vocab = logits->ne[0], n = logits->ne[1];
    for (int64_t t = n * ith / nth; t < n * (ith + 1) / nth; ++t) {
        const float * z = (const float *) ((const char *) logits->data + t * logits->nb[1]);
        float * g = (float *) ((char *) dst->data + t * dst->nb[1]);
        if (ids[t] < 0 || ids[t] >= vocab) {
            memset(g, 0, (size_t) vocab * sizeof(float));
            continue;
        }
        float max;
        const double sum = exp_sum(z, vocab, &max);
        const double scale = (double) dce * token_weights[t] / sum;
        for (int64_t i = 0; i < vocab; ++i) {
            g[i] = (float) (scale * exp((double) z[i] - max));
        }
        g[ids[t]] -= dce * token_weights[t];
    }
}

/* dst [d, n] = rows [0, d) of the fused head's [d + 1, n] (the gradient of
 * the mean over n tokens) times n dce w_t, w_t the weight of token t's
 * sample. srcs: the fused node, dce [1], token_weights [n]. */
static void fused_gradient_node(struct ggml_tensor * dst, int ith, int nth, void * userdata) {
    (void) userdata;
    const struct ggml_tensor * per_token = dst->src[0];
    const float dce = *(const float *) dst->src[1]->data;
    const float * token_weights = dst->src[2]->data;
    const int64_t d = dst->ne[0], n = dst->ne[1];
    for (int64_t t = n * ith / nth; t < n * (ith + 1) / nth; ++t) {
        const float g = (float) n * dce * token_weights[t];
        const float * in = (const float *) per_token->data + t * (d + 1);
        float * out = (float *) ((char *) dst->data + t * dst->nb[1]);
        for (int64_t i = 0; i < d; ++i) {
            out[i] = in[i] * g;
        }
    }
}

/* The preference loss's sources (see preference_loss_node), per_token first. */
enum { PREFERENCE_LOSS_SRCS = 7 };
static void preference_loss_srcs(const struct tnn_step * step, struct ggml_tensor * per_token,
                                 struct ggml_tensor ** srcs) {
    struct ggml_tensor * all[PREFERENCE_LOSS_SRCS] = {
        per_token,          step->labels,        step->model->positions, step->reference_logps,
        step->sample_logps, step->token_weights, step->loss_scale
    };
    memcpy(srcs, all, sizeof(all));
}

struct ggml_tensor * tnn_preference_loss_of_logits(const struct tnn_step * step, const struct tnn_cpu_state * cpu,
                                                   struct ggml_context * ctx, struct ggml_tensor * logits) {
    struct ggml_tensor * args[2] = { logits, step->labels };
    struct ggml_tensor * per_token = ggml_custom_4d(ctx, GGML_TYPE_F32, 1, logits->ne[1], 1, 1, args, 2,
                                                    token_losses_node, GGML_N_TASKS_MAX, (void *) &cpu->kernels);
    struct ggml_tensor * srcs[PREFERENCE_LOSS_SRCS];
    preference_loss_srcs(step, per_token, srcs);
    return ggml_custom_4d(ctx, GGML_TYPE_F32, 1, 1, 1, 1, srcs, PREFERENCE_LOSS_SRCS, preference_loss_node, 1,
                          (void *) step);
}

int tnn_preference_rewrite(const struct tnn_step * step, const struct tnn_cpu_state * cpu,
                           struct ggml_cgraph * graph, struct ggml_tensor * logits) {
    struct ggml_context * ctx = step->ctx_graph;
    const tnn_model_config * cfg = &step->model->cfg;
    struct ggml_tensor * ce = tnn_graph_reader(graph, logits, 0, GGML_OP_CROSS_ENTROPY_LOSS);
    struct ggml_tensor * scaled = ce ? tnn_graph_reader(graph, ce, 0, GGML_OP_MUL) : NULL;
    struct ggml_tensor * dz = tnn_graph_reader(graph, logits, 1, GGML_OP_CROSS_ENTROPY_LOSS_BACK);
    if (ce == NULL || scaled == NULL || dz == NULL || logits->type != GGML_TYPE_F32 ||
        logits->nb[0] != sizeof(float) || logits->ne[1] != (int64_t) cfg->t_seq * cfg->t_batch) {
        return tnn_fail(TNN_ERR_STATE, "internal: the training graph's loss is not as "
                                       "tnn_preference_rewrite expects");
    }
    struct ggml_tensor * dce = dz->src[0];
    struct ggml_tensor * token_srcs[2] = { logits, step->labels };
    tnn_become_custom(ctx, ce, token_losses_node, (void *) &cpu->kernels, token_srcs, 2);
    tnn_reshape_node(ce, 1, logits->ne[1]);
    struct ggml_tensor * loss_srcs[PREFERENCE_LOSS_SRCS];
    preference_loss_srcs(step, ce, loss_srcs);
    tnn_become_custom(ctx, scaled, preference_loss_node, (void *) step, loss_srcs, PREFERENCE_LOSS_SRCS);
    struct ggml_tensor * grad_srcs[4] = { dce, logits, step->labels, step->token_weights };
    tnn_become_custom(ctx, dz, logits_gradient_node, NULL, grad_srcs, 4);
    return TNN_OK;
}

int tnn_preference_fuse(const struct tnn_step * step, struct ggml_cgraph * graph, struct ggml_tensor * per_token,
                        struct ggml_tensor * ce, struct ggml_tensor * dh, struct ggml_tensor * dce) {
    struct ggml_context * ctx = step->ctx_graph;
    struct ggml_tensor * scaled = tnn_graph_reader(graph, ce, 0, GGML_OP_MUL);
    if (scaled == NULL || per_token->ne[1] != (int64_t) step->model->cfg.t_seq * step->model->cfg.t_batch) {
        return tnn_fail(TNN_ERR_STATE, "internal: the fused training graph's loss is not as "
                                       "tnn_preference_fuse expects");
    }
    struct ggml_tensor * loss_srcs[PREFERENCE_LOSS_SRCS];
    preference_loss_srcs(step, per_token, loss_srcs);
    tnn_become_custom(ctx, scaled, preference_loss_node, (void *) step, loss_srcs, PREFERENCE_LOSS_SRCS);
    tnn_become_noop(ce);
    struct ggml_tensor * grad_srcs[3] = { per_token, dce, step->token_weights };
    tnn_become_custom(ctx, dh, fused_gradient_node, NULL, grad_srcs, 3);
    return TNN_OK;
}
