/* The Vulkan provider's kernels for data movement (Transpose, Concat, Slice, Pad, Expand...), Cast, Where and the elementwise operators beyond vk_kernels.c. */
#include "ep/vulkan/vk_kernel.h"

const ox_kernel_table ox_vk_kernels_data = {NULL, 0};

uint32_t ox_vk_data_host_inputs(const ir_node *node) {
    (void)node;
    return 0;
}
