/* The Vulkan provider's kernels for convolutions, pooling and normalizations. */
#include "ep/vulkan/vk_kernel.h"

const ox_kernel_table ox_vk_kernels_nn = {NULL, 0};

uint32_t ox_vk_nn_host_inputs(const ir_node *node) {
    (void)node;
    return 0;
}
