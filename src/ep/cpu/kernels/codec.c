/* CPU kernel of the image decoding operator (ImageDecoder, opset 20). */
#include "ep/ep.h"

const ox_kernel_table ox_cpu_kernels_codec = {NULL, 0};
