/* CPU kernels of the com.microsoft contrib operators that ONNX Runtime writes into its saved optimized graphs. */
#include "ep/ep.h"

const ox_kernel_table ox_cpu_kernels_contrib = {NULL, 0};
