/* Vulkan-versus-CPU cases for the kernels of src/ep/vulkan/vk_kernels_index.c. */
#include "vulkan_case.h"

void vulkan_index_cases(void) {}
