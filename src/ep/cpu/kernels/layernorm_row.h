/* One float32 LayerNormalization row (layernorm_row.c): D values, their
 * mean and 1 / sqrt(variance + eps) in double, then
 * y = (x - mean) * inv * scale + bias per element in double (scale and
 * bias expanded to D doubles; bias may be NULL). Sums are sixteen partial
 * sums in a fixed order, so every variant gives the scalar one's bits;
 * unit.layernorm_rows checks each variant this CPU can run. */
#ifndef ONYX_EP_CPU_KERNELS_LAYERNORM_ROW_H
#define ONYX_EP_CPU_KERNELS_LAYERNORM_ROW_H

#include <stddef.h>
#include <stdint.h>

typedef void (*ox_layernorm_row_fn)(const float *x, float *y, int64_t D, const double *scale,
                                    const double *bias, double eps, double *mean, double *inv);
typedef struct ox_layernorm_row_variant {
    const char *name;
    int isa; /* the ox_cpu_isa it needs */
    ox_layernorm_row_fn row;
} ox_layernorm_row_variant;
const ox_layernorm_row_variant *ox_layernorm_row_variants(size_t *count);
/* The row the kernel uses under this ISA (an ox_cpu_isa). */
ox_layernorm_row_fn ox_layernorm_row_for(int isa);

#endif
