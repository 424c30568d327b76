/* The coefficients of erf's two polynomials (elementwise.h explains
 * them: erf_taylor for |z| < 0.5, erfc_tail above), highest power first,
 * and the constants around them. fast_gelu and its FMA form (OX_GELU_FMA
 * in exp_fma_avx2.h) both evaluate these, so the two cannot drift apart. */
#ifndef ONYX_EP_CPU_KERNELS_ERF_POLY_H
#define ONYX_EP_CPU_KERNELS_ERF_POLY_H

#define OX_ERF_TAYLOR_COEFFS 1.0f / 9360, -1.0f / 1320, 1.0f / 216, -1.0f / 42, 1.0f / 10, -1.0f / 3, 1.0f
#define OX_ERF_TAYLOR_SCALE 1.12837916709551257f /* 2 / sqrt(pi) */
#define OX_ERFC_TAIL_COEFFS                                                                          \
    7.949805984e-02f, -2.415571403e-01f, 1.576193734e-01f, 5.528118889e-02f, 1.810031978e-01f,      \
        2.379558913e-01f, 2.647649541e-01f, 2.655212718e-01f, -4.213043480e-06f
#define OX_ERFC_TAIL_T 0.47047f /* t = 1 / (1 + OX_ERFC_TAIL_T a) */

#endif
