/* CPU kernels of the quantize family. */
#include "ep/ep.h"

static const ox_kernel_def KERNELS[] = {
    {"", "", 0, -1, NULL, NULL, NULL, NULL}, /* sentinel: never matches */
};

const ox_kernel_table ox_cpu_kernels_quantize = {KERNELS, 0};
