/* Internals shared by the Vulkan provider's files: the loader's function
 * table, the provider record, device buffers and the dispatch helper. */
#ifndef ONYX_EP_VULKAN_VK_INTERNAL_H
#define ONYX_EP_VULKAN_VK_INTERNAL_H

#define VK_NO_PROTOTYPES
#include <vulkan/vulkan.h>

#include <pthread.h>
#include <stdatomic.h>

#include "ep/vulkan/vk_ep.h"

/* Functions resolved through vkGetInstanceProcAddr: before an instance
 * exists, with the instance, and with the device. The table lives in the
 * provider, so two providers never share loader state. Order matters:
 * each list loads until one is missing, so its destroy function comes
 * first and vkDeviceWaitIdle last (see ox_vk_exec_free). */
#define OX_VK_GLOBAL_FNS(X) X(vkCreateInstance) X(vkEnumerateInstanceVersion)
#define OX_VK_INSTANCE_FNS(X)                                                             \
    X(vkDestroyInstance) X(vkEnumeratePhysicalDevices) X(vkGetPhysicalDeviceProperties)  \
    X(vkGetPhysicalDeviceProperties2) X(vkGetPhysicalDeviceFeatures2)                     \
    X(vkGetPhysicalDeviceQueueFamilyProperties) X(vkGetPhysicalDeviceMemoryProperties)   \
    X(vkCreateDevice) X(vkGetDeviceProcAddr)
#define OX_VK_DEVICE_FNS(X)                                                                \
    X(vkDestroyDevice) X(vkGetDeviceQueue) X(vkCreateBuffer) X(vkDestroyBuffer)            \
    X(vkGetBufferMemoryRequirements) X(vkAllocateMemory) X(vkFreeMemory)                   \
    X(vkBindBufferMemory) X(vkMapMemory) X(vkUnmapMemory) X(vkCreateShaderModule)          \
    X(vkDestroyShaderModule) X(vkCreateDescriptorSetLayout) X(vkDestroyDescriptorSetLayout) \
    X(vkCreatePipelineLayout) X(vkDestroyPipelineLayout) X(vkCreateComputePipelines)       \
    X(vkDestroyPipeline) X(vkCreateDescriptorPool) X(vkDestroyDescriptorPool)              \
    X(vkResetDescriptorPool) X(vkAllocateDescriptorSets) X(vkUpdateDescriptorSets)         \
    X(vkCreateCommandPool) X(vkDestroyCommandPool) X(vkAllocateCommandBuffers)             \
    X(vkResetCommandBuffer) X(vkBeginCommandBuffer) X(vkEndCommandBuffer)                  \
    X(vkCmdBindPipeline) X(vkCmdBindDescriptorSets) X(vkCmdPushConstants) X(vkCmdDispatch) \
    X(vkCmdCopyBuffer) X(vkCmdFillBuffer) X(vkCmdPipelineBarrier) X(vkCreateFence)         \
    X(vkDestroyFence) X(vkResetFences) X(vkWaitForFences) X(vkQueueSubmit)                 \
    X(vkDeviceWaitIdle)

#define OX_VK_FIELD(name) PFN_##name name;
typedef struct vk_fns {
    PFN_vkGetInstanceProcAddr vkGetInstanceProcAddr;
    OX_VK_GLOBAL_FNS(OX_VK_FIELD)
    OX_VK_INSTANCE_FNS(OX_VK_FIELD)
    OX_VK_DEVICE_FNS(OX_VK_FIELD)
} vk_fns;
#undef OX_VK_FIELD

/* The compute shaders (shaders/<name>.comp), embedded as SPIR-V. */
#define OX_VK_SHADERS(X) X(unary) X(binary) X(matmul) X(softmax) X(softmax_subgroup) X(gather)
#define OX_VK_ENUM(name) VK_PIPE_##name,
typedef enum vk_pipe { OX_VK_SHADERS(OX_VK_ENUM) VK_PIPE_COUNT } vk_pipe;
#undef OX_VK_ENUM

/* Every pipeline has the same layout: up to VK_BINDINGS storage buffers
 * (unused ones bound to a small dummy buffer) and VK_PUSH_BYTES of push
 * constants, the least every device offers. */
#define VK_BINDINGS 4
#define VK_PUSH_BYTES 128
/* Workgroup sizes the shaders are written for (checked against the
 * device's limits when it is chosen). */
#define VK_WG 256
#define VK_TILE 16

/* A device buffer: what the provider's alloc returns as a tensor's data
 * pointer. `mapped` is set when the memory is host-visible and coherent
 * and the provider copies with memcpy. */
typedef struct vk_buf {
    VkBuffer buf;
    VkDeviceMemory mem;
    VkDeviceSize size; /* as allocated: at least 16 bytes, a multiple of 16 */
    void *mapped;
} vk_buf;

typedef struct vk_ep {
    ox_ep base;
    void *lib; /* the dlopen'ed loader */
    vk_fns f;
    VkInstance instance;
    VkPhysicalDevice phys;
    VkDevice device;
    uint32_t queue_family;
    VkQueue queue;
    ox_vk_caps caps;
    uint32_t mem_type_device;  /* tensors */
    uint32_t mem_type_staging; /* host-visible, coherent: staging and flags */

    /* The queue, command buffer, descriptor pool, staging buffer and
     * pipeline creation are used under this lock: each kernel call or
     * copy records, submits and waits before releasing it. */
    pthread_mutex_t lock;
    VkCommandPool cmd_pool;
    VkCommandBuffer cmd;
    VkFence fence;
    VkDescriptorPool desc_pool;
    VkDescriptorSetLayout set_layout;
    VkPipelineLayout pipe_layout;
    VkPipeline pipes[VK_PIPE_COUNT]; /* made on first use */
    vk_buf dummy;   /* bound to unused bindings */
    vk_buf flags;   /* kernels' error flags, read back after the dispatch */
    vk_buf staging; /* made on first staged copy */

    atomic_long runs, to_host, from_host, live;
} vk_ep;

/* "VK_ERROR_OUT_OF_DEVICE_MEMORY" etc. */
const char *ox_vk_result_name(VkResult r);
/* Fails err with "vulkan: <call> failed: <VkResult name>". */
int ox_vk_fail(ox_error *err, const char *call, VkResult r);

/* vk_device.c: loader, instance, device choice and capability record. */
/* device: index among the usable devices, or -1 for the best kind (a
 * discrete GPU first); disable: capabilities masked besides ONYX_VK_DISABLE. */
int ox_vk_device_open(vk_ep *v, int device, const char *disable, ox_error *err);
void ox_vk_device_close(vk_ep *v);
/* Parses ONYX_VK_DISABLE into OX_VK_MASK_* bits. */
int ox_vk_parse_mask(const char *s, unsigned *mask, ox_error *err);

/* vk_exec.c: buffers, copies, pipelines and dispatches. */
int ox_vk_exec_init(vk_ep *v, ox_error *err);
void ox_vk_exec_free(vk_ep *v);
/* map: keep the memory mapped (host-visible types only). */
int ox_vk_buf_make(vk_ep *v, VkDeviceSize bytes, uint32_t mem_type, int map, vk_buf *b,
                   ox_error *err);
void ox_vk_buf_drop(vk_ep *v, vk_buf *b);
/* Host <-> device bytes at an offset into b. */
int ox_vk_read(vk_ep *v, const vk_buf *b, size_t offset, void *dst, size_t bytes, ox_error *err);
int ox_vk_write(vk_ep *v, vk_buf *b, size_t offset, const void *src, size_t bytes, ox_error *err);

typedef struct vk_dispatch {
    vk_pipe pipe;
    const vk_buf *bufs[VK_BINDINGS]; /* NULL: the dummy buffer */
    const void *push;
    uint32_t push_bytes;
    uint32_t groups[3];
    /* When set, binding 3 is the flag buffer, filled with {0, ~0u} before
     * the dispatch and read back into flags_out[0..1] after it. */
    uint32_t *flags_out;
} vk_dispatch;
/* Records, submits and waits for one dispatch. */
int ox_vk_dispatch(vk_ep *v, const vk_dispatch *d, ox_error *err);

/* vk_kernels.c */
extern const ox_kernel_table ox_vk_kernels;
/* Bit k set: the kernel for this node reads input k on the host. */
uint32_t ox_vk_host_inputs(ox_ep *ep, const ir_node *node);
/* Whether the provider takes the node beyond its kernel's type check:
 * sizes known at load time must fit the device's limits. */
int ox_vk_claims(const vk_ep *v, const ir_node *node, const ir_type *const *in, int n);

#endif
