/* fast_expf_fma (elementwise.h) on eight lanes with AVX2 and FMA: the same
 * clamps, reduction, polynomial and two-step scaling, each multiply-add
 * one fused instruction, so every lane gives the scalar function's bits.
 * Softmax rows, Sigmoid and SiLU use it on AVX2 and AVX-512 machines. */
#ifndef ONYX_EP_CPU_KERNELS_EXP_FMA_AVX2_H
#define ONYX_EP_CPU_KERNELS_EXP_FMA_AVX2_H

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#include <stddef.h>

#include "ep/cpu/kernels/erf_poly.h"

/* The clamps, the reduction x = n ln2 + r and the polynomial p ~ e^r
 * (Estrin's scheme, as fast_expf_fma), written once for a vector width:
 * P is the intrinsics' prefix (_mm256 or _mm512), V the vector type;
 * declares n and p. max and min clamp x < -104 to -104 and x > 89 to 89
 * as the scalar selects (one cycle each, where compare and blend take
 * more on the exp's long dependency chain); a NaN lane becomes -104,
 * whose result the caller replaces by x. */
#define OX_EXP_FMA_CORE(P, V, x, n, p) \
    OX_EXP_REDUCE(P, V, P##_min_ps(P##_max_ps(x, P##_set1_ps(-104.0f)), P##_set1_ps(89.0f)), n, p)
/* The same for x <= 0 (or NaN, which max turns into -104): no upper clamp */
#define OX_EXP_NONPOS_CORE(P, V, x, n, p) OX_EXP_REDUCE(P, V, P##_max_ps(x, P##_set1_ps(-104.0f)), n, p)
/* The reduction and polynomial of the clamped argument xc */
#define OX_EXP_REDUCE(P, V, xc, n, p)                                                              \
    V n, p;                                                                                        \
    {                                                                                              \
        const V xc_ = (xc);                                                                        \
        const V magic_ = P##_set1_ps(12582912.0f);                                                 \
        n = P##_sub_ps(P##_fmadd_ps(xc_, P##_set1_ps(1.44269504088896341f), magic_), magic_);      \
        V r_ = P##_fnmadd_ps(n, P##_set1_ps(0.693359375f), xc_);                                   \
        r_ = P##_fmadd_ps(n, P##_set1_ps(2.12194440054690583e-4f), r_);                            \
        const V r2_ = P##_mul_ps(r_, r_), r4_ = P##_mul_ps(r2_, r2_);                              \
        const V a01_ = P##_fmadd_ps(P##_set1_ps(1.0f), r_, P##_set1_ps(1.0f));                     \
        const V a23_ = P##_fmadd_ps(P##_set1_ps(1.0f / 6), r_, P##_set1_ps(0.5f));                 \
        const V a45_ = P##_fmadd_ps(P##_set1_ps(1.0f / 120), r_, P##_set1_ps(1.0f / 24));          \
        const V a67_ = P##_fmadd_ps(P##_set1_ps(1.0f / 5040), r_, P##_set1_ps(1.0f / 720));        \
        p = P##_fmadd_ps(P##_fmadd_ps(a67_, r2_, a45_), r4_, P##_fmadd_ps(a23_, r2_, a01_));       \
    }

/* p 2^n on eight lanes for the whole numbers n the clamps allow, 2^n in
 * two halves so both stay normal floats */
__attribute__((target("avx2,fma"), always_inline)) static inline __m256 ox_exp8_scale(__m256 p, __m256 n) {
    /* n is a whole number: the conversion is exact; k / 2 toward zero */
    const __m256i k = _mm256_cvtps_epi32(n);
    const __m256i k1 = _mm256_srai_epi32(_mm256_add_epi32(k, _mm256_srli_epi32(k, 31)), 1);
    const __m256i k2 = _mm256_sub_epi32(k, k1), bias = _mm256_set1_epi32(127);
    const __m256 s1 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(k1, bias), 23));
    const __m256 s2 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(k2, bias), 23));
    return _mm256_mul_ps(_mm256_mul_ps(p, s1), s2);
}

__attribute__((target("avx2,fma"), always_inline)) static inline __m256 ox_exp8_fma(__m256 x) {
    const __m256 nan = _mm256_cmp_ps(x, x, _CMP_UNORD_Q);
    OX_EXP_FMA_CORE(_mm256, __m256, x, n, p)
    return _mm256_blendv_ps(ox_exp8_scale(p, n), x, nan);
}

/* The same on sixteen lanes with AVX-512, the scaling by 2^n in one
 * instruction (vscalefps: p 2^n rounded once, as the two normal halves
 * of the scalar give it: p 2^k1 is exact for the k1 the clamps allow),
 * which spares the integer work of building 2^n: an exp bound by its
 * operation count (Softmax rows) does about two thirds of the eight-lane
 * one's work per element. NaN lanes return x itself, as the scalar. */
__attribute__((target("avx512f"), always_inline)) static inline __m512 ox_exp16_avx512(__m512 x) {
    const __mmask16 nan = _mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q);
    OX_EXP_FMA_CORE(_mm512, __m512, x, n, p)
    return _mm512_mask_blend_ps(nan, _mm512_scalef_ps(p, n), x);
}

/* e^x for x <= 0 or NaN, as GELU's e^(-z^2) needs it: the bits of
 * ox_exp8_fma and ox_exp16_avx512 for every x <= 0, without the upper
 * clamp and the NaN blend (a NaN lane gives e^-104; GELU's NaN reaches
 * its result through the polynomial's t instead). Three operations fewer
 * in a GELU of about forty-five. */
__attribute__((target("avx2,fma"), always_inline)) static inline __m256 ox_exp8_nonpos(__m256 x) {
    OX_EXP_NONPOS_CORE(_mm256, __m256, x, n, p)
    return ox_exp8_scale(p, n);
}

__attribute__((target("avx512f"), always_inline)) static inline __m512 ox_exp16_nonpos(__m512 x) {
    OX_EXP_NONPOS_CORE(_mm512, __m512, x, n, p)
    return _mm512_scalef_ps(p, n);
}

/* Sigmoid = 1 / (1 + e^-x) or (silu) SiLU = x * Sigmoid(x) on eight
 * lanes, as activation_row.h writes them: the activation rows and the
 * convolution tiles' epilogues give the same bits. */
__attribute__((target("avx2,fma"), always_inline)) static inline __m256 ox_exp_act8(int silu, __m256 v) {
    const __m256 one = _mm256_set1_ps(1.0f);
    const __m256 s = _mm256_div_ps(one, _mm256_add_ps(one, ox_exp8_fma(_mm256_sub_ps(_mm256_setzero_ps(), v))));
    return silu ? _mm256_mul_ps(v, s) : s;
}

/* ox_exp_act8 on sixteen lanes by ox_exp16_avx512: the same bits, about
 * two thirds of the instructions per element. */
__attribute__((target("avx512f"), always_inline)) static inline __m512 ox_exp_act16(int silu, __m512 v) {
    const __m512 one = _mm512_set1_ps(1.0f);
    const __m512 s = _mm512_div_ps(one, _mm512_add_ps(one, ox_exp16_avx512(_mm512_sub_ps(_mm512_setzero_ps(), v))));
    return silu ? _mm512_mul_ps(v, s) : s;
}

/* fast_tanhf (elementwise.h) with every multiply-add fused and the FMA
 * exp, written once for a vector width (P, V, EXP, ABS, LT, SEL as for
 * OX_GELU_FMA below): the odd Taylor series below |x| = 0.55, else
 * 1 - 2 / (e^2|x| + 1) with x's sign. The same bits at 8 and 16 lanes.
 * Declares th = tanh(x). */
#define OX_TANH_FMA(P, V, EXP, ABS, LT, SEL, x, th)                                                 \
    V th;                                                                                           \
    {                                                                                               \
        static const float tc_[] = {(float)(-929569.0 / 638512875.0), (float)(21844.0 / 6081075.0), \
                                    (float)(-1382.0 / 155925.0), 62.0f / 2835, -17.0f / 315,        \
                                    2.0f / 15, -1.0f / 3};                                          \
        const V a_ = ABS(x), u_ = P##_mul_ps(x, x);                                                 \
        V p_ = P##_set1_ps(tc_[0]);                                                                 \
        _Pragma("GCC unroll 8") for (size_t i_ = 1; i_ < sizeof tc_ / sizeof tc_[0]; i_++)          \
            p_ = P##_fmadd_ps(p_, u_, P##_set1_ps(tc_[i_]));                                        \
        const V small_ = P##_fmadd_ps(P##_mul_ps(x, u_), p_, x);                                    \
        const V one_ = P##_set1_ps(1.0f);                                                           \
        const V big_ = P##_sub_ps(one_, P##_div_ps(P##_set1_ps(2.0f),                               \
                                                   P##_add_ps(EXP(P##_add_ps(a_, a_)), one_)));     \
        /* x's sign onto the big branch (a NaN stays NaN) */                                        \
        const V zero_ = P##_setzero_ps();                                                           \
        const V signed_ = SEL(LT(x, zero_), P##_sub_ps(zero_, big_), big_);                          \
        th = SEL(LT(a_, P##_set1_ps(0.55f)), small_, signed_);                                      \
    }

/* What erf and GELU share, for z: a = |z|, the odd Taylor series'
 * polynomial p in z^2 (erf(z) = OX_ERF_TAYLOR_SCALE z p below |z| = 0.5)
 * and tail = erfc(|z|) = R(t) e^(-z^2), t = 1 / (1 + OX_ERFC_TAIL_T |z|).
 * Declares a, p and tail. */
#define OX_ERF_PARTS(P, V, EXP, ABS, z, a, p, tail)                                                 \
    V a, p, tail;                                                                                   \
    {                                                                                               \
        static const float tc_[] = {OX_ERF_TAYLOR_COEFFS}, rc_[] = {OX_ERFC_TAIL_COEFFS};           \
        a = ABS(z);                                                                                 \
        const V u_ = P##_mul_ps(z, z);                                                              \
        p = P##_set1_ps(tc_[0]);                                                                    \
        _Pragma("GCC unroll 16") for (size_t i_ = 1; i_ < sizeof tc_ / sizeof tc_[0]; i_++)         \
            p = P##_fmadd_ps(p, u_, P##_set1_ps(tc_[i_]));                                          \
        const V t_ = P##_div_ps(P##_set1_ps(1.0f), P##_fmadd_ps(P##_set1_ps(OX_ERFC_TAIL_T), a,     \
                                                                P##_set1_ps(1.0f)));                \
        V r_ = P##_set1_ps(rc_[0]);                                                                 \
        _Pragma("GCC unroll 16") for (size_t i_ = 1; i_ < sizeof rc_ / sizeof rc_[0]; i_++)         \
            r_ = P##_fmadd_ps(r_, t_, P##_set1_ps(rc_[i_]));                                        \
        tail = P##_mul_ps(r_, EXP(P##_sub_ps(P##_setzero_ps(), P##_mul_ps(a, a))));                 \
    }

/* fast_gelu (elementwise.h) with every multiply-add fused and the FMA
 * exp, written once for a vector width like OX_EXP_FMA_CORE: P the
 * intrinsics' prefix, V the vector type, EXP the exp of that width, and
 * ABS(a), LT(a, b) and SEL(m, a, b) |a|, a compare's mask and the blend
 * taking a where it is set. The same polynomials (erf_poly.h) by Horner's
 * scheme, the same operations in the same order at 8 and 16 lanes, so
 * AVX2 and AVX-512 machines give the same bits; within a few ulp of the
 * portable loops' fast_gelu. Declares g = GELU(x). */
#define OX_GELU_FMA(P, V, EXP, ABS, LT, SEL, x, g)                                                  \
    V g;                                                                                            \
    {                                                                                               \
        const V z_ = P##_mul_ps(x, P##_set1_ps(0.70710678118654752440f));                           \
        OX_ERF_PARTS(P, V, EXP, ABS, z_, a_, p_, tail_)                                             \
        /* |z| < 0.5: 1 + erf(z) by the Taylor series; else the tail itself                         \
         * below zero, 2 minus it above */                                                          \
        const V small_ = P##_fmadd_ps(P##_mul_ps(P##_set1_ps(OX_ERF_TAYLOR_SCALE), z_), p_,         \
                                      P##_set1_ps(1.0f));                                           \
        V ope_ = SEL(LT(z_, P##_setzero_ps()), tail_, P##_sub_ps(P##_set1_ps(2.0f), tail_));        \
        ope_ = SEL(LT(a_, P##_set1_ps(0.5f)), small_, ope_);                                        \
        g = P##_mul_ps(P##_mul_ps(P##_set1_ps(0.5f), x), ope_);                                     \
    }

/* fast_erff (elementwise.h) in the same way: the Taylor series below
 * |z| = 0.5, else the sign of z times 1 - erfc(|z|). Declares e = erf(z). */
#define OX_ERF_FMA(P, V, EXP, ABS, LT, SEL, z, e)                                                   \
    V e;                                                                                            \
    {                                                                                               \
        OX_ERF_PARTS(P, V, EXP, ABS, z, a_, p_, tail_)                                              \
        const V small_ = P##_mul_ps(P##_mul_ps(P##_set1_ps(OX_ERF_TAYLOR_SCALE), z), p_);           \
        const V zero_ = P##_setzero_ps();                                                           \
        const V big_ = P##_sub_ps(P##_set1_ps(1.0f), tail_);                                        \
        const V signed_ = SEL(LT(z, zero_), P##_sub_ps(zero_, big_), big_);                         \
        e = SEL(LT(a_, P##_set1_ps(0.5f)), small_, signed_);                                        \
    }

#define OX_ABS8(a) _mm256_andnot_ps(_mm256_set1_ps(-0.0f), a)
#define OX_LT8(a, b) _mm256_cmp_ps(a, b, _CMP_LT_OQ)
#define OX_SEL8(m, a, b) _mm256_blendv_ps(b, a, m)
#define OX_LT16(a, b) _mm512_cmp_ps_mask(a, b, _CMP_LT_OQ)
#define OX_SEL16(m, a, b) _mm512_mask_blend_ps(m, b, a)

/* The 8- and 16-lane functions of one FMA form (FORM: OX_GELU_FMA,
 * OX_ERF_FMA or OX_TANH_FMA) over the exps EXP8 and EXP16 */
#define OX_FMA_PAIR(NAME8, NAME16, FORM, EXP8, EXP16)                                              \
    __attribute__((target("avx2,fma"), always_inline)) static inline __m256 NAME8(__m256 x) {      \
        FORM(_mm256, __m256, EXP8, OX_ABS8, OX_LT8, OX_SEL8, x, out_)                              \
        return out_;                                                                               \
    }                                                                                              \
    __attribute__((target("avx512f"), always_inline)) static inline __m512 NAME16(__m512 x) {      \
        FORM(_mm512, __m512, EXP16, _mm512_abs_ps, OX_LT16, OX_SEL16, x, out_)                     \
        return out_;                                                                               \
    }
OX_FMA_PAIR(ox_gelu8_fma, ox_gelu16_avx512, OX_GELU_FMA, ox_exp8_nonpos, ox_exp16_nonpos)
OX_FMA_PAIR(ox_erf8_fma, ox_erf16_avx512, OX_ERF_FMA, ox_exp8_fma, ox_exp16_avx512)
OX_FMA_PAIR(ox_tanh8_fma, ox_tanh16_avx512, OX_TANH_FMA, ox_exp8_fma, ox_exp16_avx512)
#endif

#endif
