/* Convolution on channel-blocked activations (the onyx operators
 * BlockChannels, BlockedConv and UnblockChannels, schemas in
 * src/ops/contrib.c): the register tiles and the loop around them
 * (conv_nchwc.c), shared with the per-ISA tiles (conv_nchwc_tile.c). */
#ifndef ONYX_EP_CPU_KERNELS_CONV_NCHWC_H
#define ONYX_EP_CPU_KERNELS_CONV_NCHWC_H

#include <stdint.h>

#include "ep/cpu/kernels/activation.h"
#include "ops/contrib.h"

#define NCHWC_B OX_CHANNEL_BLOCK
/* positions per register tile, and blocks of 16 output channels per
 * tile on AVX-512 (6 x 4 sums of 16 lanes: 24 of the 32 registers) */
#define NCHWC_NP 6
#define NCHWC_NB 4

/* One image's convolution, as the tiles see it. The input is read at
 * x + cb * x_cb + off + c * x_c for channel c of block cb at a position
 * whose offset is off (positions x_pos apart along a row, rows x_row
 * apart): blocked input has x_pos 16 and x_c 1, planar input x_pos 1
 * and x_c its plane. Padding is already in x (a padded copy), so every
 * offset a tile reads is inside it. */
typedef struct nchwc_conv {
    int64_t C, Cb, M, Mb; /* input channels and their blocks; output channels and theirs */
    int64_t OW, OP;       /* output row length and plane */
    int64_t KK;           /* kernel positions */
    const int64_t *k_off; /* per kernel position: its offset in x */
    int64_t sh, sw;       /* strides */
    int64_t x_row, x_pos, x_cb, x_c;
    /* packed per group of the tiles' output blocks (blocked_weights_pack
     * in conv_nchwc.c): a tile of nb blocks from block mb reads kernel
     * position kk, channel c at w + mb * KK * C * 16 + (kk * C + c) *
     * nb * 16, its nb vectors side by side */
    const float *w;
    const float *bias; /* Mb * 16 values, zero past M */
    ox_act act;
} nchwc_conv;

/* Output positions [q, q + np) of blocks [mb, mb + nb) of one image: y
 * and z (NULL: none) the image's blocked output and residual. np is at
 * most NCHWC_NP; nb at most NCHWC_NB (AVX-512), 1 otherwise. The tile
 * adds the reduction's units [u0, u1), a unit being one kernel position
 * and one block of input channels (unit u: kernel position u / Cb, block
 * u % Cb): it starts from the bias when u0 is 0, else from the partial
 * sums in y; it leaves partial sums in y unless u1 ends the reduction,
 * where it applies the epilogue. Stored and reloaded sums are exact, so
 * any split into slabs gives the same bits. The _pf variant also asks
 * for pfn cache lines from pf on into L2 per unit (the next slab's
 * weights, spread over the products). */
void ox_nchwc_tile_avx512(const nchwc_conv *cv, const float *x, const float *z, float *y, int64_t q,
                          int np, int64_t mb, int nb, int64_t u0, int64_t u1);
void ox_nchwc_tile_avx512_pf(const nchwc_conv *cv, const float *x, const float *z, float *y, int64_t q,
                             int np, int64_t mb, int nb, int64_t u0, int64_t u1, const char *pf, int64_t pfn);
void ox_nchwc_tile_avx2(const nchwc_conv *cv, const float *x, const float *z, float *y, int64_t q,
                        int np, int64_t mb, int64_t u0, int64_t u1);
void ox_nchwc_tile_portable(const nchwc_conv *cv, const float *x, const float *z, float *y, int64_t q,
                            int np, int64_t mb, int64_t u0, int64_t u1);

#endif
