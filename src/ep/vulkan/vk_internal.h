/* Internals shared by the Vulkan provider's files: the loader's function
 * table, the provider record, device buffers and the dispatch helper. */
#ifndef ONYX_EP_VULKAN_VK_INTERNAL_H
#define ONYX_EP_VULKAN_VK_INTERNAL_H

#define VK_NO_PROTOTYPES
#include <vulkan/vulkan.h>

#include <pthread.h>
#include <stdatomic.h>

#include "ep/vulkan/vk_denylist.h"
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
    X(vkCreatePipelineCache) X(vkDestroyPipelineCache) X(vkGetPipelineCacheData)          \
    X(vkCmdDispatchBase) X(vkDeviceWaitIdle)

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
/* Every dispatch's whole grid, as uints {z, y, x} (shaders/grid.glsl),
 * sits at this offset of the push constants; a kernel's own constants end
 * before it, or, for a one-dimensional grid, before x (the last 4 bytes). */
#define VK_GRID_OFFSET 116
/* Workgroup sizes. The shaders take theirs as specialization constants
 * (shaders/wg.glsl): the provider picks one per device (vk_ep.wg, .tile;
 * ox_vk_pick_wg) from its possibly masked limits, the largest power of
 * two up to VK_WG_MAX invocations, and a device (or mask) allowing fewer
 * than VK_WG_MIN gets no node. */
#define VK_WG_MAX 256
#define VK_WG_MIN 32
/* Specialization constant ids (wg.glsl): a one-dimensional shader's
 * size, and a tiled shader's width and height. */
#define VK_SPEC_WG 0
#define VK_SPEC_TILE_X 1
#define VK_SPEC_TILE_Y 2

/* A device buffer: what the provider's alloc returns as a tensor's data
 * pointer. `mapped` is set when the memory is host-visible and coherent
 * and the provider copies with memcpy. A view of an arena (arena_view)
 * is a record of the same kind in the run's memory: the arena's buffer,
 * no memory of its own, its bytes from `offset` on (mapped already points
 * there); every descriptor and copy adds `offset`. */
typedef struct vk_buf {
    VkBuffer buf;
    VkDeviceMemory mem;
    VkDeviceSize size;   /* as allocated: at least 16 bytes, a multiple of 16 */
    VkDeviceSize offset; /* of a view, into buf; 0 otherwise */
    int half; /* a float32 weight stored as float16 pairs (vk_weights.c) */
    void *mapped;
    size_t accounted; /* bytes counted against the memory budget (tensor buffers) */
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
    /* Workgroup sizes chosen for the device (after ONYX_VK_LIMITS): wg
     * invocations for the one-dimensional shaders, tile x tile for the
     * tiled ones (MatMul, the convolution GEMM; tile^2 <= wg). 0 when the
     * limits allow fewer than VK_WG_MIN: the provider then takes no node. */
    uint32_t wg, tile;
    uint32_t mem_type_device;  /* tensors */
    uint32_t mem_type_staging; /* host-visible, coherent: staging and flags */

    /* The queue (every submission), the provider's own command buffer,
     * staging buffer, fence, the pipelines and the idle streams are used
     * under this lock. A synchronous copy records, submits and waits
     * before releasing it; streams record outside it. */
    pthread_mutex_t lock;
    VkCommandPool cmd_pool;
    VkCommandBuffer cmd;
    VkFence fence;
    VkDescriptorSetLayout set_layout;
    VkPipelineLayout pipe_layout;
    struct {
        const vk_shader *shader;
        VkPipeline pipe;
    } pipes[VK_MAX_PIPES]; /* made on first use */
    int n_pipes;
    VkPipelineCache pipeline_cache; /* always made; filled from the file when it matches */
    /* option pipeline_cache; else, with a session cache folder, a file per
     * device and driver in it (chosen when the device is open); or NULL */
    char *pipeline_cache_path;
    char *cache_dir; /* the session's cache folder, or NULL */
    /* ONYX_VK_REFUSE_SHADERS (fault injection for tests): shader names,
     * comma-separated, whose pipelines fail as a driver's might; or NULL */
    char *refused_shaders;
    int pipeline_cache_loaded;
    vk_buf dummy;   /* bound to unused bindings */
    vk_buf staging; /* made on first staged copy */
    /* the size of staging buffers (this one, the streams'): copies move at
     * most this much per submission, whatever the tensor */
    VkDeviceSize staging_bytes;

    struct vk_stream *idle_streams; /* streams of finished runs, for reuse */
    uint32_t flag_stride; /* bytes between flag blocks: the offset alignment */
    /* option place=all: keep every node the kernels take, even in groups
     * with no dense node (kernel tests; the default moves those to the CPU) */
    int place_all;

    atomic_long runs, submits, to_host, from_host, live, streams_begun, weight_uploads, arenas,
        half_weights;

    /* The most estimated work one dispatch may carry (vk_stream.c splits
     * larger ones); 0 until set at creation. Lowered by the driver
     * denylist (a dispatch-size rule) and by the dispatch_budget option. */
    uint64_t dispatch_budget;

    /* The driver denylist (vk_denylist.c): the rules matching this device,
     * from the "denylist" option, ONYX_VK_DENYLIST or the embedded file.
     * supports() refuses the nodes they disable; their features are
     * masked and their dispatch budget applied at creation. deny_note says
     * what they disabled, logged once per creation (ox_ep_ops.notice). */
    ox_vk_denylist denylist;
    char *deny_note;

    /* ---- device faults (vk_fault.c) ---- */
    /* runs hold it shared from run_begin to run_end; recovery alone */
    pthread_rwlock_t use_lock;
    atomic_ullong fault_count;
    atomic_int lost;       /* the device must be remade before more work */
    atomic_int dead;       /* remaking it failed: nothing runs on it again */
    atomic_int gone;       /* an injected fault forbids the remake (VK_FAULT_GONE) */
    pthread_mutex_t fault_lock;
    ox_ep_fault last_fault; /* under fault_lock */
    /* ONYX_VK_INJECT / option inject (a testing aid): dispatches of these
     * nodes fail as a driver's would */
    struct vk_inject {
        int kind; /* VK_FAULT_* */
        char *node;
    } injects[8];
    int n_injects;
    uint64_t memory_budget; /* option memory_budget: tensor bytes at most; 0: none */
    atomic_ullong live_bytes;
    atomic_long kept_buffers; /* idle streams' kept buffers (in live and live_bytes) */
    atomic_long allocations;  /* tensor buffers allocated so far */
    atomic_long recoveries;
    char device_key[96]; /* ox_vk_device_key, made on first use */

    /* Bounded work (vk_limits.c, vk_stream.c). submit_budget: the most
     * estimated work one submission carries before the stream submits and
     * waits (a few dispatch budgets). fence_timeout_ns: how long a
     * submission may take before the run fails (option fence_timeout_ms).
     * split: dispatches recorded as several slices; slices: those slices. */
    uint64_t submit_budget;
    uint64_t fence_timeout_ns;
    atomic_long split, slices;
} vk_ep;

/* Kinds of device fault (vk_fault.c). */
#define VK_FAULT_LOST 1
#define VK_FAULT_OOM 2
#define VK_FAULT_TIMEOUT 3
/* injected only: the device is lost and cannot be remade */
#define VK_FAULT_GONE 4

/* "VK_ERROR_OUT_OF_DEVICE_MEMORY" etc. */
const char *ox_vk_result_name(VkResult r);
/* Fails err with "vulkan: <call> failed: <VkResult name>". */
int ox_vk_fail(ox_error *err, const char *call, VkResult r);

/* vk_device.c: loader, instance, device choice and capability record. */
/* device: index among the usable devices, or -1 for the best kind (a
 * discrete GPU first); disable: capabilities masked besides ONYX_VK_DISABLE. */
/* denylist: a file replacing the embedded driver denylist, or NULL. */
int ox_vk_device_open(vk_ep *v, int device, const char *disable, const char *denylist, ox_error *err);
/* The loader and an instance (enumeration without a provider uses them too). */
int ox_vk_instance_open(vk_ep *v, ox_error *err);
/* Why a device cannot serve onyx, or NULL (its compute family to *family). */
const char *ox_vk_unsuitable(vk_ep *v, VkPhysicalDevice pd, const VkPhysicalDeviceProperties *p,
                             uint32_t *family);
/* vk_caps.c: the capability record of a device from real queries, less
 * `mask`, then ONYX_VK_FAKE_DEVICE's overrides (fails on a malformed one). */
int ox_vk_query_caps(vk_ep *v, VkPhysicalDevice pd, unsigned mask, ox_vk_caps *c, ox_error *err);

void ox_vk_device_close(vk_ep *v);
/* Parses ONYX_VK_DISABLE into OX_VK_MASK_* bits. */
int ox_vk_parse_mask(const char *s, unsigned *mask, ox_error *err);

/* vk_limits.c: ONYX_VK_LIMITS and the options limits, max_buffer,
 * dispatch_budget and fence_timeout_ms, applied to the open device's
 * capability record and the provider's budgets (see vk_ep.h). */
int ox_vk_limits_apply(vk_ep *v, const ox_ep_options *opts, ox_error *err);
/* The workgroup sizes for these limits: the largest power of two up to
 * VK_WG_MAX within the invocations and the x size, and the largest
 * square tile within them and the y size (*tile). 0 when that is under
 * VK_WG_MIN (a device that cannot serve). */
uint32_t ox_vk_pick_wg(uint32_t invocations, uint32_t size_x, uint32_t size_y, uint32_t *tile);
/* Whether the (possibly masked) workgroup limits admit VK_WG_MIN
 * invocations (v->wg set); when not, the provider claims no node
 * (ox_vk_claims) and declines any kernel (ox_vk_run). */
int ox_vk_wg_ok(const vk_ep *v);

/* What a buffer of `bytes` takes: at least 16 bytes (an empty tensor is
 * still bound), whole 16-byte units; below `bytes` only on overflow. */
static inline VkDeviceSize ox_vk_buf_bytes(VkDeviceSize bytes) {
    return bytes < 16 ? 16 : (bytes + 15) & ~(VkDeviceSize)15;
}

/* vk_exec.c: buffers, synchronous copies and pipelines. */
int ox_vk_exec_init(vk_ep *v, ox_error *err);
void ox_vk_exec_free(vk_ep *v);
/* map: keep the memory mapped (host-visible types only). */
int ox_vk_buf_make(vk_ep *v, VkDeviceSize bytes, uint32_t mem_type, int map, vk_buf *b,
                   ox_error *err);
void ox_vk_buf_drop(vk_ep *v, vk_buf *b);
/* vk_pipeline_cache.c: the pipeline cache and its file. */
int ox_vk_pipeline_cache_open(vk_ep *v, ox_error *err);
/* Writes the file (when the option names one) and destroys the cache. */
void ox_vk_pipeline_cache_close(vk_ep *v);
/* The pipeline for a shader, made on first use. */
VkPipeline ox_vk_pipeline(vk_ep *v, const vk_shader *sh, ox_error *err);
/* Host <-> device bytes at an offset into b, completed before returning
 * (outside any stream: weights, reads after a stream's wait). */
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
    /* NULL: the dummy buffer. The last, VK_FLAG_BINDING, only for a
     * dispatch without an index check (the check's flag block goes there) */
    const vk_buf *bufs[VK_BINDINGS];
    const void *push;
    uint32_t push_bytes;
    uint32_t groups[3];
    /* When set, binding VK_FLAG_BINDING is a flag block
     * {uint flag; uint first_bad;} set to {0, 0xffffffff} before the
     * dispatch. */
    const vk_index_check *check;
    /* Estimated work of one invocation (e.g. K for a MatMul output, the
     * window for a convolution), 0 meaning 1: a dispatch's work is groups x
     * invocations x cost, split into slices of at most the dispatch budget. */
    uint64_t cost;
    /* Invocations per workgroup: 0 for the provider's wg (one-dimensional
     * shaders); a tiled shader gives tile x tile. */
    uint32_t invocations;
    /* A window into bufs[i], in bytes (a multiple of the device's offset
     * alignment) and its length, 0 meaning to the buffer's end: a tensor
     * larger than one storage buffer's range is processed window by window
     * (the elementwise unary kernels). */
    VkDeviceSize offset[VK_BINDINGS], range[VK_BINDINGS];
} vk_dispatch;
/* ---- streams (vk_stream.c) ----
 * One run's command recording: its own command buffer, fence, descriptor
 * pool, flag blocks and staging. Every command is followed by a full
 * compute/transfer barrier, so work runs in recording order and a buffer
 * freed by the run can serve a later allocation in it at once. Submitted
 * and waited for at a synchronization point (ox_vk_stream_flush): a copy
 * to the host, a read-back, a full descriptor pool or flag table, the run's
 * end. */
#define VK_STREAM_SETS 512   /* dispatches per submission, at most */
#define VK_STREAM_CHECKS 64  /* index checks per submission, at most */

typedef struct vk_check_rec {
    const vk_buf *indices; /* kept alive until the check is read */
    int idx64;
    int64_t n_indices, axis_size;
    int axis;
    char what[300]; /* "node 'x' (Gather)" */
} vk_check_rec;

typedef struct vk_buf_list {
    vk_buf **items;
    int n, cap;
} vk_buf_list;

typedef struct vk_stream {
    VkCommandPool pool;
    VkCommandBuffer cmd;
    VkFence fence;
    VkDescriptorPool desc_pool;
    uint32_t sets_used;
    int recording;
    vk_buf flags; /* VK_STREAM_CHECKS flag blocks, host-visible */
    vk_check_rec checks[VK_STREAM_CHECKS];
    int n_checks;
    vk_buf staging; /* recorded uploads, made on first use */
    size_t staging_used;
    vk_buf_list spare;    /* freed by this run; reusable in it */
    /* freed by the stream's previous run, which the device has finished:
     * the next run takes its buffers before allocating (device memory
     * allocation costs tens of microseconds on a discrete GPU's driver,
     * per tensor per run without this); what that run leaves unused is
     * freed when it ends, so a stream keeps at most one run's buffers */
    vk_buf_list kept;
    vk_buf_list deferred; /* freed, but read by a pending check: kept until the wait */
    /* the device arena of the stream's last run (ox_vk_arena_free), given
     * to its next run when large enough; destroyed with the stream, so a
     * remade device takes it along */
    vk_buf *arena;
    int arena_used; /* the current run handed an arena back */
    struct vk_stream *next;
    const ir_node *node;  /* whose dispatch was recorded last (for fault reports) */
    int inject;           /* VK_FAULT_* an injected fault fails the next submission with */
    const ir_node *inject_node;
    uint64_t pending_work; /* estimated work recorded since the last submission */
    /* the node of the heaviest dispatch since then, which a failed
     * submission is blamed on */
    const ir_node *heavy_node;
    uint64_t heavy_work;
} vk_stream;

/* A stream for one run (reused from an earlier run when one is idle). */
vk_stream *ox_vk_stream_get(vk_ep *v, ox_error *err);
/* Waits for everything recorded, releases the run's buffers and keeps the
 * stream for the next run; fails when the device reported a bad index. */
int ox_vk_stream_put(vk_ep *v, vk_stream *s, ox_error *err);
/* Submits what is recorded, waits, and reads the index checks. */
int ox_vk_stream_flush(vk_ep *v, vk_stream *s, ox_error *err);
void ox_vk_streams_destroy(vk_ep *v);
/* Records one dispatch; `what` names the node for a failed index check. */
int ox_vk_record(vk_ep *v, vk_stream *s, const vk_dispatch *d, const char *what, ox_error *err);
/* Tensor memory within a run (reusing what the run freed) and its release. */
vk_buf *ox_vk_stream_alloc(vk_ep *v, vk_stream *s, size_t bytes, ox_error *err);
void ox_vk_stream_free(vk_ep *v, vk_stream *s, vk_buf *b);
/* Host -> device within a run: direct into mapped memory while nothing is
 * pending, else recorded through the stream's staging buffer. */
int ox_vk_stream_upload(vk_ep *v, vk_stream *s, vk_buf *b, const void *src, size_t bytes,
                        ox_error *err);
/* A new buffer (outside any stream) and its release. */
vk_buf *ox_vk_buf_new(vk_ep *v, size_t bytes, ox_error *err);
/* A device arena (ox_ep_ops.arena_new): the one stream s kept when large
 * enough, else a buffer like a tensor's (whose failure records no fault),
 * made after the stream's kept buffers and arena are freed. s may be NULL. */
vk_buf *ox_vk_arena_new(vk_ep *v, vk_stream *s, size_t bytes, ox_error *err);
/* Keeps the arena with s for its next run (s NULL: frees it). */
void ox_vk_arena_free(vk_ep *v, vk_stream *s, vk_buf *arena);
/* Fills *view with the bytes at offset of arena. */
void ox_vk_arena_view(const vk_buf *arena, size_t offset, size_t bytes, vk_buf *view);
void ox_vk_buf_free(vk_ep *v, vk_buf *b);

/* ---- device faults (vk_fault.c) ----
 * A device fault (lost, out of device memory, a fence timeout) is
 * recorded (fault_count, last_fault) for the session, which reruns the
 * failed run on the CPU and then calls recover; until then the device is
 * `lost` and every call on it fails at once. */
/* Reads ONYX_VK_INJECT and the options inject and memory_budget. */
int ox_vk_fault_setup(vk_ep *v, const ox_ep_options *opts, ox_error *err);
void ox_vk_fault_free(vk_ep *v);
/* Records a fault from VkResult r in `call` (the node may be NULL) and
 * fills err; remake: the device must be remade (not for a failed
 * allocation, which leaves it sound). Returns -1. */
int ox_vk_fault(vk_ep *v, VkResult r, const char *call, const ir_node *node, int injected,
                int remake, ox_error *err);
/* 1 for the results that mean a device fault rather than a bug or a bad input. */
int ox_vk_is_fault(VkResult r);
/* Fails err when the device is lost (a fault not yet recovered). */
int ox_vk_check_usable(vk_ep *v, ox_error *err);
/* Before recording node's dispatch into s: arms an injected fault. */
void ox_vk_inject_arm(vk_ep *v, vk_stream *s, const ir_node *node);
/* Fails the submission of s for its armed injected fault, as the driver
 * would (nothing is submitted). */
int ox_vk_inject_fire(vk_ep *v, vk_stream *s, ox_error *err);
/* The ox_ep_ops fault functions. */
uint64_t ox_vk_fault_count(ox_ep *ep);
int ox_vk_last_fault(ox_ep *ep, ox_ep_fault *out);
int ox_vk_recover(ox_ep *ep, void (*drop)(void *user, ox_ep *ep), void *user, ox_error *err);
const char *ox_vk_device_key(ox_ep *ep);
/* vk_device.c: destroys the logical device and makes it again. */
int ox_vk_device_remake(vk_ep *v, ox_error *err);

/* Fails err for an index check whose flag was raised: reads the index at
 * position first_bad back from the device to name it. */
int ox_vk_index_fail(vk_ep *v, const vk_check_rec *ck, uint32_t first_bad, ox_error *err);

/* vk_weights.c: weights stored as float16 where that is exact. */
int ox_vk_reads_compact(ox_ep *ep, const ir_node *node, int input);
void *ox_vk_upload_weight(ox_ep *ep, const ox_tensor *host, int compact, ox_error *err);
/* A tensor's bytes to the host (a float16-stored weight widened back). */
int ox_vk_read_tensor(vk_ep *v, const vk_buf *b, void *dst, size_t bytes, ox_error *err);

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
