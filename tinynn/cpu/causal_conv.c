/* The causal depthwise convolution of Qwen 3.5's and Mamba-2's layers in
 * training (each sequence from a zero state), forward and backward, for
 * one custom node each way (models/primitives.c: tnn_causal_conv). It is
 * ggml's GGML_OP_SSM_CONV on the zero-padded, channel-major copy of the
 * input, computed on the token-major input itself:
 *   y[c, t] = sum over j < taps of w[j, c] x[c, t - (taps - 1) + j]
 * (the sum in j's order, terms before the sample's start left out: a
 * packed row's samples each start from zeros, tnn_starts_sample), so
 * the layer needs neither the transposed copy nor the padded one, nor
 * their gradients. Channels run along rows, so every loop is over
 * contiguous channels; threads take blocks of channels, and each writes
 * the whole of its channels' dx and dw: any thread count gives the same
 * bits. */
#include "cpu/kernels.h"

#define CHANNEL_BLOCK 32

/* Channels [c0, c1) of block b, and the number of blocks. */
static int64_t blocks_of(int64_t channels) { return (channels + CHANNEL_BLOCK - 1) / CHANNEL_BLOCK; }

static void block_range(int64_t channels, int64_t b, int64_t * c0, int64_t * width) {
    *c0 = b * CHANNEL_BLOCK;
    *width = channels - *c0 < CHANNEL_BLOCK ? channels - *c0 : CHANNEL_BLOCK;
}

/* w's block [taps][width] with channels along rows: w is [taps, channels] (taps fastest). */
static void gather_taps(const struct tnn_causal_conv_args * a, int64_t c0, int64_t width,
                        float wt[TNN_CAUSAL_CONV_TAPS_MAX][CHANNEL_BLOCK]) {
    for (int64_t j = 0; j < a->taps; ++j) {
        for (int64_t c = 0; c < width; ++c) {
            wt[j][c] = a->w[j + a->taps * (c0 + c)];
        }
    }
}

void tnn_causal_conv_forward(const struct tnn_causal_conv_args * a, int ith, int nth) {
    const int64_t C = a->channels, taps = a->taps;
    float wt[TNN_CAUSAL_CONV_TAPS_MAX][CHANNEL_BLOCK];
    for (int64_t b = ith; b < blocks_of(C); b += nth) {
        int64_t c0, width;
        block_range(C, b, &c0, &width);
        gather_taps(a, c0, width, wt);
        for (int64_t s = 0; s < a->n_seqs; ++s) {
            const int32_t * positions = tnn_sequence_positions(a->positions, a->t_seq, s);
            int64_t start = 0;   /* the first token of t's sample */
            for (int64_t t = 0; t < a->t_seq; ++t) {
                start = tnn_starts_sample(positions, t) ? t : start;
                float acc[CHANNEL_BLOCK] = { 0.0f };
                for (int64_t j = 0; j < taps; ++j) {
                    const int64_t from = t - (taps - 1) + j;
                    if (from < start) {
                        continue;
                    }
                    const float * x = a->x + c0 + C * (from + a->t_seq * s);
                    for (int64_t c = 0; c < width; ++c) {
                        acc[c] += wt[j][c] * x[c];
                    }
                }
                float * y = a->y + c0 + C * (t + a->t_seq * s);
                for (int64_t c = 0; c < width; ++c) {
                    y[c] = acc[c];
                }
            }
        }
    }
}

/* The gradients of a block of channels [c0, c0 + width): dx where a->dx is
 * not NULL (from w and dy), dw where a->dw is not NULL (from x and dy). */
static void backward_block(const struct tnn_causal_conv_args * a, int64_t c0, int64_t width) {
    const int64_t C = a->channels, taps = a->taps, T = a->t_seq;
    float wt[TNN_CAUSAL_CONV_TAPS_MAX][CHANNEL_BLOCK];
    float dw[TNN_CAUSAL_CONV_TAPS_MAX][CHANNEL_BLOCK] = { { 0.0f } };
    if (a->dx != NULL) {
        gather_taps(a, c0, width, wt);
    }
    for (int64_t s = 0; s < a->n_seqs; ++s) {
        const int32_t * positions = tnn_sequence_positions(a->positions, T, s);
        int64_t end = T;   /* the first token after t's sample */
        for (int64_t t = T - 1; t >= 0; --t) {
            /* x[t] fed y[t + (taps - 1) - j] through tap j, within its sample */
            float acc[CHANNEL_BLOCK] = { 0.0f };
            for (int64_t j = 0; j < taps; ++j) {
                const int64_t to = t + (taps - 1) - j;
                if (to >= end) {
                    continue;
                }
                const float * dy = a->dy + c0 + C * (to + T * s);
                if (a->dx != NULL) {
                    for (int64_t c = 0; c < width; ++c) {
                        acc[c] += wt[j][c] * dy[c];
                    }
                }
                if (a->dw != NULL) {
                    const float * x = a->x + c0 + C * (t + T * s);
                    for (int64_t c = 0; c < width; ++c) {
                        dw[j][c] += dy[c] * x[c];
                    }
                }
            }
            if (a->dx != NULL) {
                float * dx = a->dx + c0 + C * (t + T * s);
                for (int64_t c = 0; c < width; ++c) {
                    dx[c] = acc[c];
                }
            }
            end = tnn_starts_sample(positions, t) ? t : end;
        }
    }
    for (int64_t j = 0; a->dw != NULL && j < taps; ++j) {
        for (int64_t c = 0; c < width; ++c) {
            a->dw[j + taps * (c0 + c)] = dw[j][c];
        }
    }
}

void tnn_causal_conv_backward(const struct tnn_causal_conv_args * a, int ith, int nth) {
    for (int64_t b = ith; b < blocks_of(a->channels); b += nth) {
        int64_t c0, width;
        block_range(a->channels, b, &c0, &width);
        backward_block(a, c0, width);
    }
}
