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

/* A compute shader (shaders/<name>.comp), embedded as SPIR-V by the
 * build. A kernel file names the shaders it uses with OX_VK_SHADER(name)
 * and dispatches &VK_SHADER_name; the provider makes each pipeline on
 * first use and keeps it, keyed on the descriptor's address. */
typedef struct vk_shader {
    const char *name;
    const uint32_t *code;
    const size_t *size;
} vk_shader;
#define OX_VK_SHADER(name)                                  \
    extern const uint32_t ox_vk_spv_##name[];               \
    extern const size_t ox_vk_spv_##name##_size;            \
    static const vk_shader VK_SHADER_##name = {#name, ox_vk_spv_##name, &ox_vk_spv_##name##_size};
/* Pipelines one provider keeps (one per shader). */
#define VK_MAX_PIPES 128

/* Every pipeline has the same layout: VK_BINDINGS storage buffers
 * (unused ones bound to a small dummy buffer) and VK_PUSH_BYTES of push
 * constants, the least every device offers. The last binding is the
 * index-check flag block (see vk_index_check). */
#define VK_BINDINGS 6
#define VK_FLAG_BINDING (VK_BINDINGS - 1)
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
    struct {
        const vk_shader *shader;
        VkPipeline pipe;
    } pipes[VK_MAX_PIPES]; /* made on first use */
    int n_pipes;
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

/* A kernel's request that the shader check its indices: the shader
 * raises the flag block's flag and lowers first_bad to the position (in
 * `indices`, counted in elements) of an index outside its axis, writing
 * nothing through it; the provider then fails the run naming the node,
 * the position and the index value. */
typedef struct vk_index_check {
    const ox_tensor *indices; /* int32 or int64, on the device */
    int64_t axis_size;        /* the size the indices address, -1 when it varies */
    int axis;                 /* the data axis, -1 when there is none to name */
} vk_index_check;

typedef struct vk_dispatch {
    const vk_shader *shader;
    const vk_buf *bufs[VK_FLAG_BINDING]; /* NULL: the dummy buffer */
    const void *push;
    uint32_t push_bytes;
    uint32_t groups[3];
    /* When set, binding VK_FLAG_BINDING is a flag block
     * {uint flag; uint first_bad;} set to {0, 0xffffffff} before the
     * dispatch. */
    const vk_index_check *check;
} vk_dispatch;
/* Records, submits and waits for one dispatch; with d->check, copies the
 * flag block into flags_out[0..1] afterwards. */
int ox_vk_dispatch(vk_ep *v, const vk_dispatch *d, uint32_t *flags_out, ox_error *err);
/* Fails err for an index check whose flag was raised: reads the index at
 * position first_bad back from the device to name it. */
int ox_vk_index_fail(vk_ep *v, const char *op, const vk_index_check *ck, uint32_t first_bad,
                     ox_error *err);

/* The kernel tables, one per file (vk_kernels*.c), and the inputs each
 * file's kernels read on the host (bit k: input k). */
extern const ox_kernel_table ox_vk_kernels, ox_vk_kernels_nn, ox_vk_kernels_data,
    ox_vk_kernels_index;
uint32_t ox_vk_core_host_inputs(const ir_node *node);
uint32_t ox_vk_nn_host_inputs(const ir_node *node);
uint32_t ox_vk_data_host_inputs(const ir_node *node);
uint32_t ox_vk_index_host_inputs(const ir_node *node);
/* All of them, for the planner (ox_ep_ops.host_inputs). */
uint32_t ox_vk_host_inputs(ox_ep *ep, const ir_node *node);
/* Whether the provider takes the node beyond its kernel's type check:
 * sizes known at load time must fit the device's limits. */
int ox_vk_claims(const vk_ep *v, const ir_node *node, const ir_type *const *in, int n);

#endif
