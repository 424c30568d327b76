/* CPU kernels of the ai.onnx.ml operators (tree ensembles, linear models, scalers, encoders...). */
#include "ep/ep.h"

const ox_kernel_table ox_cpu_kernels_ml = {NULL, 0};
