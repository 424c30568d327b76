/* Vulkan-versus-CPU cases for the kernels of src/ep/vulkan/vk_kernels_nn.c. */
#include "vulkan_case.h"

void vulkan_nn_cases(void) {}
