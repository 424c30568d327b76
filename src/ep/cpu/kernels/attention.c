/* CPU kernels of the Attention, RotaryEmbedding and the other transformer-block operators of ai.onnx (opset 23+). */
#include "ep/ep.h"

const ox_kernel_table ox_cpu_kernels_attention = {NULL, 0};
