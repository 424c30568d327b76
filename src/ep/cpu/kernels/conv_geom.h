/* The geometry of one forward or transposed convolution, as conv.c
 * derives it from the node and its tensors; shared with the kernels of
 * the family that live in other files. */
#ifndef ONYX_EP_CPU_KERNELS_CONV_GEOM_H
#define ONYX_EP_CPU_KERNELS_CONV_GEOM_H

#include <stdint.h>

#include "core/tensor.h"

typedef struct conv_geom {
    int r; /* spatial rank */
    int64_t N, C, M, G, Cg, Mg;
    int64_t in[OX_MAX_RANK], k[OX_MAX_RANK], out[OX_MAX_RANK];
    int64_t stride[OX_MAX_RANK], dil[OX_MAX_RANK], pb[OX_MAX_RANK]; /* pb: padding before */
    int64_t in_sz, out_sz, k_sz;
} conv_geom;

#endif
