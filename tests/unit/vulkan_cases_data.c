/* Vulkan-versus-CPU cases for the kernels of src/ep/vulkan/vk_kernels_data.c. */
#include "vulkan_case.h"

void vulkan_data_cases(void) {}
