/* Fast float32 convolution paths of the CPU provider: a GEMM whose weight
 * operand is packed once (at session creation when W is a constant), a
 * direct depthwise kernel, and the epilogue both apply to each output
 * tile while it is in cache (bias, then a residual Z, then an
 * activation). Each has AVX-512, AVX2+FMA and portable variants chosen at
 * run time. */
#ifndef ONYX_EP_CPU_KERNELS_CONV_FAST_H
#define ONYX_EP_CPU_KERNELS_CONV_FAST_H

#include <math.h>
#include <stdint.h>

#include "core/error.h"
#include "core/stop.h"
#include "core/threadpool.h"
#include "ep/cpu/kernels/activation.h"
#include "ep/cpu/kernels/cpu_isa.h"


/* rows x cols of C (row stride ldc): c += bias[row] (bias may be NULL),
 * then c += z (z may be NULL, row stride ldz), then the activation, in
 * the instruction-set variant isa. */
void ox_conv_epilogue(float *c, int64_t ldc, int64_t rows, int64_t cols, const float *bias,
                      const float *z, int64_t ldz, const ox_act *act, ox_cpu_isa isa);

/* Weights of one convolution (G groups of an Mg x K matrix each) packed
 * into the row panels the GEMM kernels read: per group, per KC-deep slab
 * of K, panels of OX_CONV_MR rows, k-major inside a panel, zero rows past
 * Mg. The layout is the same for every ISA variant. */
#define OX_CONV_MR 6
#define OX_CONV_KC 256

/* FN(R, ...) with R = rows made a constant (1 to OX_CONV_MR): an inlined
 * register tile then keeps its sums in registers. */
#define OX_CONV_ROWS_CONST(rows, FN, ...)                                                        \
    switch (rows) {                                                                              \
    case 1: FN(1, __VA_ARGS__); break;                                                           \
    case 2: FN(2, __VA_ARGS__); break;                                                           \
    case 3: FN(3, __VA_ARGS__); break;                                                           \
    case 4: FN(4, __VA_ARGS__); break;                                                           \
    case 5: FN(5, __VA_ARGS__); break;                                                           \
    default: FN(OX_CONV_MR, __VA_ARGS__); break;                                                 \
    }

/* The epilogue a register tile applies while it stores its last slab,
 * for the activations that are a clamp (none, Relu, Clip):
 *   y = min(max(acc + bias[row] + z, lo), hi)
 * or HardSwish (MobileNetV3's, after most of its convolutions):
 *   v = acc + bias[row] + z,  y = v * min(max(v * (1/6) + 1/2, 0), 1)
 * or, in the AVX2 and AVX-512 tiles, Sigmoid or SiLU (the detectors'
 * backbones) by the eight-lane FMA exp (ox_exp_act8),
 * in the order ox_conv_epilogue adds and applies them (activation_row.h),
 * NaN passing through as there, so the values are the separate
 * epilogue's (a missing bias adds 0, which may turn a -0 into +0). bias
 * (per row) and z (laid out as the tile, row stride ldz) may be NULL. */
typedef enum ox_tile_act {
    OX_TILE_CLAMP,
    OX_TILE_HARDSWISH,
    OX_TILE_SIGMOID,
    OX_TILE_SILU,
} ox_tile_act;

typedef struct ox_tile_epilogue {
    const float *bias, *z;
    int64_t ldz;
    float lo, hi;    /* the clamp */
    ox_tile_act act; /* the clamp, or the activation instead of it */
} ox_tile_epilogue;

/* 1 when the tile can apply act: a clamp (*lo, *hi set), HardSwish, and
 * with exp (a tile with the FMA exp) Sigmoid and SiLU; *kind says which. */
static inline int ox_tile_activation(const ox_act *act, int exp, float *lo, float *hi, ox_tile_act *kind) {
    *lo = -INFINITY, *hi = INFINITY, *kind = OX_TILE_CLAMP;
    switch (act->kind) {
    case OX_ACT_NONE: return 1;
    case OX_ACT_RELU: *lo = 0.0f; return 1;
    case OX_ACT_CLIP: *lo = act->p0, *hi = act->p1; return 1;
    case OX_ACT_HARDSWISH: *kind = OX_TILE_HARDSWISH; return 1;
    case OX_ACT_SIGMOID: *kind = OX_TILE_SIGMOID; return exp;
    case OX_ACT_SILU: *kind = OX_TILE_SILU; return exp;
    default: return 0;
    }
}

typedef struct ox_conv_packed {
    int64_t G, Mg, K, Mp; /* Mp: Mg rounded up to OX_CONV_MR */
    float *data;          /* G * Mp * K floats, 64-byte aligned */
} ox_conv_packed;

/* Packs w (G * Mg rows of K floats). Returns 0, or -1 when out of memory
 * or sizes overflow. */
int ox_conv_pack_weights(const float *w, int64_t G, int64_t Mg, int64_t K, ox_conv_packed *out);
void ox_conv_packed_free(ox_conv_packed *p);
/* The bytes of the packed layout (G * Mp * K floats); 0 when the sizes
 * overflow. */
size_t ox_conv_packed_bytes(int64_t G, int64_t Mg, int64_t K);

/* Builds rows [k0, k0 + kc) and columns [p0, p1) of the column matrix
 * (im2col) of image n, group grp into dst in the packed layout of the
 * GEMM: nr-wide panels of kc rows each (kc * nr floats apart), k-major,
 * zero columns past p1 - p0 in the last panel. */
typedef void (*ox_conv_cols_fn)(const void *arg, int64_t n, int64_t grp, int64_t k0, int64_t kc,
                                int64_t p0, int64_t p1, int nr, float *dst);

/* The cols function of a 2-D convolution (conv_cols2d.c), on image x of
 * one group (its first input channel): rows are (channel, kh, kw) with
 * channels plane floats apart, columns the output positions oh * OW + ow.
 * The geometry must have passed the convolution's checks (pads >= 0,
 * output sizes consistent with input, kernel, strides and dilations). */
typedef struct ox_cols2d_geom {
    int64_t IH, IW, OH, OW, KW; /* input and output height and width, kernel width */
    int64_t sh, sw, dh, dw, ph, pw;
    int64_t k_sz, plane; /* KH * KW; IH * IW */
} ox_cols2d_geom;

void ox_conv_cols_2d(const ox_cols2d_geom *g, const float *x, int64_t k0, int64_t kc, int64_t p0,
                     int64_t p1, int nr, float *dst);

/* One convolution lowered to GEMMs: for every image n < N and group grp,
 * Y[n, grp] (Mg x P, row stride P) = packed W[grp] x B(n, grp), then the
 * epilogue with bias + grp * Mg and z (laid out as Y). B(n, grp) is X read
 * in place when cols is NULL (1x1, stride 1, no padding: K x P at
 * x + n * x_img + grp * x_grp, row stride P), else built block by block by
 * cols(cols_arg, ...). Returns 0, or -1 when scratch memory could not be
 * allocated (Y is then unspecified). */
typedef struct ox_conv_gemm_args {
    const ox_conv_packed *w;
    int64_t N, P;         /* images, output positions per image */
    const float *x;       /* input, for the direct case */
    int64_t x_img, x_grp; /* strides of X per image and per group, in floats */
    ox_conv_cols_fn cols; /* NULL: direct */
    const void *cols_arg;
    /* 1: x already holds each group's B in the packed layout the tiles
     * read (ox_conv_gemm_panel_width(isa) = nr columns per panel): for
     * group grp at x + grp * x_grp, with Pp = P rounded up to nr, the
     * slab of rows [k0, k0 + kc) (OX_CONV_KC rows, the last one shorter)
     * at k0 * Pp, in it the panel of columns [q, q + nr) at q * kc and
     * row k of that panel at (k - k0) * nr; columns past P zero */
    int x_packed;
    /* one group, cols NULL: X's channel c of image n is read times
     * x_scale[n * x_scale_img + c] (an input scale; NULL: none), by
     * ox_conv_gemm_run and ox_conv_cv_run alike */
    const float *x_scale;
    int64_t x_scale_img;
    const float *bias; /* G * Mg values or NULL */
    const float *z;    /* residual laid out as y, or NULL */
    float *y;
    ox_act act;
    ox_cpu_isa isa;
} ox_conv_gemm_args;

int ox_conv_gemm_run(ox_threadpool *pool, const ox_stop *stop, const ox_conv_gemm_args *a);

/* The same product with the output channels in the vector lanes and the
 * positions broadcast (conv_gemm_cv.c), for planes whose positions fill
 * the GEMM's lanes badly (7x7: 49 of 56). Its own packing of W (M x K,
 * one group): slabs of K, blocks of 48 channels, transposed. */
size_t ox_conv_cv_bytes(int64_t M, int64_t K); /* 0 when the sizes overflow */
int ox_conv_cv_pack(const float *w, int64_t M, int64_t K, ox_conv_packed *out);
/* 1 when a plane of P positions, M output channels and K products per
 * output runs faster this way than by ox_conv_gemm_run on AVX-512 */
int ox_conv_cv_suits(int64_t P, int64_t M, int64_t K);
/* a->w packed by ox_conv_cv_pack, one group, a->x_packed 0. Returns 1
 * when it ran, 0 when it does not handle the ISA or the shape (nothing
 * written), -1 when out of memory. */
int ox_conv_cv_run(ox_threadpool *pool, const ox_stop *stop, const ox_conv_gemm_args *a);
/* The columns per packed panel of B in the ISA variant's tiles. */
int ox_conv_gemm_panel_width(ox_cpu_isa isa);
/* The share of the lanes the ISA variant's tiles compute that hold one of
 * a plane's P positions (ragged panel ends take narrower tiles: an
 * AVX-512 7x7 plane computes 56 columns for 49). */
double ox_conv_gemm_lane_use(ox_cpu_isa isa, int64_t P);

/* A 2-D convolution (strides up to 8, any dilation and padding)
 * computed from a zero-padded copy of the input, split into stride
 * phases, with the packed weights, without an im2col matrix
 * (conv_direct.c); the input is N images of G * Cg planes (Cg = w->K /
 * (KH * KW)), the output N images of G * w->Mg planes of OH x OW.
 * Returns 1 when it ran, 0 when it does not handle the ISA or the shape
 * (the caller takes the im2col path), -1 out of memory. */
typedef struct ox_conv_direct_args {
    const ox_conv_packed *w;
    int64_t N, IH, IW, OH, OW, KH, KW, sh, sw, dh, dw, ph, pw;
    const float *x, *bias, *z;
    float *y;
    ox_act act;
    ox_cpu_isa isa;
} ox_conv_direct_args;

int ox_conv_direct_f32(ox_threadpool *pool, const ox_stop *stop, const ox_conv_direct_args *a);

/* Direct depthwise convolution, 1-D or 2-D, one input channel per group
 * (mult output channels each). Returns 1 when it ran, 0 when the shape
 * is not one it handles (the caller takes another path), -1 out of
 * memory. */
typedef struct ox_dw_args {
    int64_t N, C, mult;
    int64_t IH, IW, OH, OW, KH, KW, sh, sw, dh, dw, ph, pw;
    const float *x, *w, *bias, *z;
    float *y;
    ox_act act;
    ox_cpu_isa isa;
} ox_dw_args;

int ox_conv_depthwise_f32(ox_threadpool *pool, const ox_stop *stop, const ox_dw_args *a);
/* The same with multiplier 1, eight or sixteen channels per vector
 * (conv_depthwise_cb.c, AVX2 and AVX-512 machines; tiles up to 8 MiB,
 * strides up to 8), which ox_conv_depthwise_f32 tries first; the same
 * return values. */
int ox_conv_depthwise_blocked_f32(ox_threadpool *pool, const ox_stop *stop, const ox_dw_args *a);
/* Output rows [oh0, oh1) of one image's depthwise convolution a (N 1,
 * multiplier 1, at most 16 channels; a->y its output planes) from a
 * channel-innermost zero-padded tile of its input: 16 floats per
 * position (channel c in lane c, lanes past C ignored), PW positions per
 * padded row, the tile's first row being padded row oh0 * sh, with
 * (KW - 1) * dw + 7 * sw positions of slack past the last row the rows
 * read. w16: the weights tap-major, 16 lanes per tap (zero past C);
 * bias16: the bias in 16 lanes, zero past C. r8: scratch of (OW + 7) / 8
 * * 8 * 16 floats. AVX-512 machines (conv_depthwise_cb.c, the blocked
 * kernel's arithmetic); 1 when it ran, 0 when it does not take a. */
int ox_dw_tile16_rows(const ox_dw_args *a, const float *tile, int64_t PW, const float *w16, const float *bias16,
                      int64_t oh0, int64_t oh1, float *r8);

/* A 3x3, stride 1, dilation 1, ungrouped 2-D convolution by Winograd's
 * F(2x2, 3x3) or F(4x4, 3x3) (conv_winograd.c; s = 2 or 4, the output
 * tile): W (M x C x 3 x 3) transformed and packed once as (s+2)^2 groups
 * of M x C (ox_conv_winograd_pack, bytes as ox_conv_winograd_bytes),
 * then per run the input transformed, (s+2)^2 products, and the output
 * transformed with the bias, followed by the residual and the
 * activation. Returns 1 when it ran, 0 when the shape is too large for
 * its padded copy (ox_conv_winograd_fits) or u was packed for another
 * tile (the caller takes another path), -1 out of memory. */
typedef struct ox_conv_winograd_args {
    const ox_conv_packed *u;
    int s;
    int64_t N, C, M, IH, IW, OH, OW, ph, pw; /* ph, pw: leading pads */
    const float *x, *bias, *z;
    float *y;
    ox_act act;
    ox_cpu_isa isa;
} ox_conv_winograd_args;

size_t ox_conv_winograd_bytes(int64_t M, int64_t C, int s);
int ox_conv_winograd_pack(const float *w, int64_t M, int64_t C, int s, ox_conv_packed *out);
/* 1 when an OH x OW output of C channels fits the padded copy of tile
 * size s (ph, pw: the leading pads, not negative). */
int ox_conv_winograd_fits(int64_t C, int64_t OH, int64_t OW, int64_t ph, int64_t pw, int s);
int ox_conv_winograd_f32(ox_threadpool *pool, const ox_stop *stop, const ox_conv_winograd_args *a);

#endif
