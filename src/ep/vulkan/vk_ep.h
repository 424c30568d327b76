/* The Vulkan compute provider: float32 elementwise operators, MatMul,
 * Gemm, Softmax and Gather as GLSL compute shaders, on the first suitable
 * Vulkan 1.1+ device (a discrete GPU before an integrated one, before a
 * CPU driver such as Mesa's lavapipe). The loader (libvulkan.so.1) is
 * opened at creation, so a machine without Vulkan gets a clean error and,
 * when the session names "cpu" too, a CPU fallback.
 *
 * ONYX_VK_DISABLE (read at creation, kept in the provider) masks
 * capabilities the device has, to exercise the paths taken without them:
 * a comma-separated list of int64, fp16, subgroup (Softmax then reduces
 * through shared memory only) and hostmap (device memory is then never
 * mapped: every copy goes through a staging buffer, as on a discrete GPU).
 *
 * The driver denylist (vk_denylist.h, denylist.txt embedded at build
 * time) disables operators, features, large dispatches or the whole
 * device for drivers known to get them wrong; ONYX_VK_DENYLIST=FILE (or
 * the option "denylist") replaces it, "none" empties it.
 *
 * ONYX_VK_FAKE_DEVICE=VENDOR:DEVICE:DRIVER:VERSION[:DRIVER_ID] (tests)
 * overrides, after the real query, every device record's vendor id,
 * device id (hex 0x.. or decimal), driver name (as VkDriverProperties
 * spells it: radv, NVIDIA, ...) and driver version (dotted, in the
 * vendor's decoding: 21.0.0, 535.104.5.0), and the VkDriverId when given;
 * e.g. 0x1002:0x67df:radv:21.0.0:3 for an RX 580 on RADV 21.0. The real
 * device still runs the work; the denylist and onyx devices see the
 * faked record (marked as faked).
 *
 * Bounded work (vk_limits.c, vk_stream.c). ONYX_VK_LIMITS (read at
 * creation) and the option "limits" take "name=value,..." (or '+'
 * between settings, for the CLI's provider list) with names as
 * Vulkan spells them: maxStorageBufferRange, maxMemoryAllocationSize,
 * maxComputeWorkGroupInvocations, maxComputeWorkGroupSize and
 * maxComputeWorkGroupCount (one value for all three dimensions) lower the
 * capability record as a smaller device's would be; a value above the
 * device's is ignored (a ceiling the device already meets), so one setting
 * serves every machine. Unknown names and malformed values are errors.
 * The workgroup size follows the (masked) limits: the shaders take it as
 * a specialization constant, and the provider picks the largest power of
 * two up to 256 within maxComputeWorkGroupInvocations and
 * maxComputeWorkGroupSize[0] (MatMul and the convolution GEMM get the
 * largest square tile within it: 16 x 16 for 256, 8 x 8 for 64); under 32
 * invocations it claims no node. dispatchBudget / option
 * "dispatch_budget": the most estimated work (groups x invocations per
 * group x the kernel's per-invocation cost) one dispatch carries, default
 * 2^31 units on a discrete GPU and 2^27 on other devices (see
 * vk_limits.c); larger ones are recorded as several over slices of their grid, and a run
 * submits and waits whenever its recorded work passes four budgets. A
 * budget set by the driver denylist is a ceiling the option cannot raise.
 * fenceTimeoutMs / option "fence_timeout_ms": how long one submission may
 * take before the run fails with VK_TIMEOUT, default 10000 (600000 on a
 * CPU driver such as lavapipe, which hangs no GPU), 0 for ever.
 * The option "max_buffer" is maxStorageBufferRange by another name. The
 * elementwise unary kernels bind a tensor past that range in windows
 * (descriptor offset and range); every other kernel declines it. */
#ifndef ONYX_EP_VULKAN_VK_EP_H
#define ONYX_EP_VULKAN_VK_EP_H

#include <stdint.h>

#include "ep/ep.h"

/* The device id of tensors in Vulkan memory (the test provider is 1). */
#define OX_VULKAN_DEVICE 2

/* ONYX_VK_DISABLE bits */
#define OX_VK_MASK_INT64 1u
#define OX_VK_MASK_FP16 2u
#define OX_VK_MASK_SUBGROUP 4u
#define OX_VK_MASK_HOSTMAP 8u

/* What the chosen device offers, from real queries, after the mask. */
typedef struct ox_vk_caps {
    uint32_t api_version; /* the device's, VK_MAKE_API_VERSION encoded */
    uint32_t driver_version;
    uint32_t vendor_id, device_id;
    int device_type; /* VkPhysicalDeviceType */
    char device_name[256];
    uint32_t driver_id; /* VkDriverId; 0 before Vulkan 1.2 */
    char driver_name[256], driver_info[256];
    int shader_int64, shader_float16, storage_buffer_16bit;
    uint32_t subgroup_size, subgroup_stages, subgroup_ops;
    int subgroup_reduce; /* subgroup arithmetic usable in compute shaders */
    uint64_t max_storage_buffer_range;
    uint64_t max_allocation_size; /* maxMemoryAllocationSize (Vulkan 1.1) */
    uint32_t max_workgroup_invocations;
    uint32_t max_workgroup_size[3], max_workgroup_count[3];
    uint32_t max_push_constants_size;
    uint32_t min_storage_offset_alignment; /* minStorageBufferOffsetAlignment */
    uint8_t pipeline_cache_uuid[16]; /* pipelineCacheUUID: changes with the driver build */
    int host_mapped; /* tensors live in host-visible memory, copied by memcpy */
    unsigned masked; /* OX_VK_MASK_* bits from ONYX_VK_DISABLE */

    /* ---- the fuller record (vk_caps.c), shown by onyx devices ---- */
    uint32_t conformance_version; /* major<<24 | minor<<16 | subminor<<8 | patch; 0 before 1.2 */
    int shader_int8, shader_int16, shader_float64, storage_buffer_8bit; /* as the device offers */
    uint32_t max_shared_memory; /* maxComputeSharedMemorySize, bytes */
    uint32_t n_heaps, n_memory_types;
    uint64_t heap_size[16];
    uint32_t heap_flags[16];   /* VkMemoryHeapFlags */
    uint32_t type_flags[32];   /* VkMemoryPropertyFlags */
    uint32_t type_heap[32];
    /* ONYX_VK_FAKE_DEVICE replaced vendor_id, device_id, driver_name,
     * driver_version (and driver_id when given); the real values: */
    int faked;
    uint32_t real_vendor_id, real_device_id, real_driver_version, real_driver_id;
    char real_driver_name[256];
} ox_vk_caps;

typedef struct ox_vk_stats {
    long kernel_runs;      /* dispatches recorded */
    long submits;          /* queue submissions (runs' streams and synchronous copies) */
    long copies_to_host;   /* provider copies, not counting kernel-internal reads */
    long copies_from_host;
    long live_buffers;     /* tensor buffers allocated and not yet freed */
    long kept_buffers;     /* of those, idle ones kept for the next run's tensors */
    long buffer_allocations; /* tensor buffers allocated from the device so far */
    long arenas;             /* of those, device arenas (runs' planned intermediates) */
    long half_weights;       /* weights stored as float16 (exactly: vk_weights.c) */
    uint64_t live_bytes;     /* their bytes, as the memory_budget option counts them */
    int pipeline_cache_loaded; /* the pipeline_cache file matched and was read */
    long split_dispatches; /* dispatches over the dispatch budget, recorded in slices */
    long dispatch_slices;  /* the slices those were recorded as */
} ox_vk_stats;

/* Options (opts may be NULL): "device" (index among the usable devices,
 * in the driver's order), "disable" (capability mask, as ONYX_VK_DISABLE),
 * "place" (dense or all), "pipeline_cache" (a file: compiled pipelines
 * are read from it at creation when it was written for this device,
 * driver and onyx version, and written back when the provider goes),
 * "max_buffer", "limits", "dispatch_budget", "fence_timeout_ms" (above). */
ox_ep *ox_vulkan_ep_create(const ox_ep_options *opts, ox_error *err);
const ox_vk_caps *ox_vulkan_ep_caps(const ox_ep *ep);
/* The workgroup size the provider chose for its device (0: none fits, no
 * node is taken) and, in *tile (may be NULL), the tiled shaders' side. */
uint32_t ox_vulkan_ep_workgroup(const ox_ep *ep, uint32_t *tile);
void ox_vulkan_ep_get_stats(const ox_ep *ep, ox_vk_stats *out);
/* Every Vulkan device, usable or not, as key/value records, without a
 * provider (onyx_env_list_devices); the loader is opened and closed here. */
struct ox_device_list;
int ox_vulkan_list_devices(struct ox_device_list *out, ox_error *err);
/* One line naming the device, driver and what it offers (for logs). */
void ox_vulkan_ep_describe(const ox_ep *ep, char *buf, size_t size);

#endif
