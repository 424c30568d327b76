/* The Vulkan provider's interface to onyx: creation, the allocator (a
 * tensor's data pointer is its vk_buf record, its own buffer or a view of
 * the run's arena), copies, placement. */
#include <stdio.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ep/vulkan/vk_internal.h"

static const ox_kernel_def *vk_find_kernel(ox_ep *ep, const ir_node *node) {
    (void)ep;
    const ox_kernel_table tables[] = {ox_vk_kernels, ox_vk_kernels_nn, ox_vk_kernels_data,
                                      ox_vk_kernels_index};
    return ox_kernel_lookup(tables, sizeof tables / sizeof tables[0], node);
}

uint32_t ox_vk_host_inputs(ox_ep *ep, const ir_node *node) {
    (void)ep;
    if (node->domain[0] != '\0') return 0;
    return ox_vk_core_host_inputs(node) | ox_vk_nn_host_inputs(node) |
           ox_vk_data_host_inputs(node) | ox_vk_index_host_inputs(node);
}

static int vk_supports(ox_ep *ep, const ir_node *node, const ir_type *const *in, int n) {
    const ox_kernel_def *k = vk_find_kernel(ep, node);
    /* a node the driver denylist disables never reaches the device */
    return k && (!k->supports || k->supports(node, in, n)) &&
           ox_vk_claims((const vk_ep *)ep, node, in, n) &&
           !ox_vk_deny_node(&((const vk_ep *)ep)->denylist, node, in, n);
}

/* A run holds the device (use_lock, shared) from its first command to
 * its last wait, so a recovery never remakes the device under it. */
static void *vk_run_begin(ox_ep *ep, ox_error *err) {
    vk_ep *v = (vk_ep *)ep;
    atomic_fetch_add(&v->streams_begun, 1);
    pthread_rwlock_rdlock(&v->use_lock);
    vk_stream *s = ox_vk_check_usable(v, err) == 0 ? ox_vk_stream_get(v, err) : NULL;
    if (!s) pthread_rwlock_unlock(&v->use_lock);
    return s;
}

static int vk_run_end(ox_ep *ep, void *stream, ox_error *err) {
    vk_ep *v = (vk_ep *)ep;
    int rc = ox_vk_stream_put(v, stream, err);
    pthread_rwlock_unlock(&v->use_lock);
    return rc;
}

static void *vk_alloc(ox_ep *ep, void *stream, size_t bytes) {
    vk_ep *v = (vk_ep *)ep;
    /* the interface has no error channel here: the executor reports an
     * allocation failure as out of memory, which is what it nearly always is */
    ox_error err = {0};
    return stream ? ox_vk_stream_alloc(v, stream, bytes, &err) : ox_vk_buf_new(v, bytes, &err);
}

static void vk_free(ox_ep *ep, void *stream, void *ptr) {
    vk_ep *v = (vk_ep *)ep;
    if (!ptr) return;
    if (stream) ox_vk_stream_free(v, stream, ptr);
    else ox_vk_buf_free(v, ptr);
}

/* Device arenas: one buffer per run, tensors as (buffer, offset) views
 * (vk_buf.offset) at offsets the device accepts for storage buffers. */
static void *vk_arena_new(ox_ep *ep, void *stream, size_t bytes, ox_error *err) {
    return ox_vk_arena_new((vk_ep *)ep, stream, bytes, err);
}

static void vk_arena_free(ox_ep *ep, void *stream, void *arena) {
    ox_vk_arena_free((vk_ep *)ep, stream, arena);
}

static void *vk_arena_view(ox_ep *ep, void *arena, size_t offset, size_t bytes, void *storage) {
    (void)ep;
    ox_vk_arena_view(arena, offset, bytes, storage);
    return storage;
}

static size_t vk_arena_align(ox_ep *ep) {
    uint64_t a = ((vk_ep *)ep)->caps.min_storage_offset_alignment;
    return a > 16 ? (size_t)a : 16;
}

/* The index operators' shaders check their indices (input 1) and the
 * message naming a bad one reads it back once the stream is waited for. */
static uint32_t vk_inputs_read_late(ox_ep *ep, const ir_node *node) {
    (void)ep;
    static const char *const CHECKED[] = {"Gather", "GatherElements", "GatherND", "ScatterND",
                                          "ScatterElements"};
    if (node->domain[0] != '\0') return 0;
    for (size_t i = 0; i < sizeof CHECKED / sizeof CHECKED[0]; i++)
        if (strcmp(node->op_type, CHECKED[i]) == 0) return 1u << 1;
    return 0;
}

static int vk_to_host(ox_ep *ep, void *stream, void *dst, const void *src, size_t bytes,
                      ox_error *err) {
    vk_ep *v = (vk_ep *)ep;
    atomic_fetch_add(&v->to_host, 1);
    if (stream && ox_vk_stream_flush(v, stream, err) != 0) return -1;
    return ox_vk_read_tensor(v, src, dst, bytes, err);
}

static int vk_from_host(ox_ep *ep, void *stream, void *dst, const void *src, size_t bytes,
                        ox_error *err) {
    vk_ep *v = (vk_ep *)ep;
    if (stream) {
        atomic_fetch_add(&v->from_host, 1);
        return ox_vk_stream_upload(v, stream, dst, src, bytes, err);
    }
    /* outside a run: a weight uploaded to stay */
    atomic_fetch_add(&v->weight_uploads, 1);
    return ox_vk_write(v, dst, 0, src, bytes, err);
}

static void vk_destroy(ox_ep *ep) {
    vk_ep *v = (vk_ep *)ep;
    if (!v) return;
    ox_vk_exec_free(v);
    ox_vk_device_close(v);
    free(v->pipeline_cache_path);
    free(v->cache_dir);
    free(v->refused_shaders);
    ox_vk_fault_free(v);
    ox_vk_denylist_free(&v->denylist);
    free(v->deny_note);
    pthread_mutex_destroy(&v->lock);
    free(v);
}

static void vk_get_stats(ox_ep *ep, onyx_provider_stats *out) {
    vk_ep *v = (vk_ep *)ep;
    out->runs = (uint64_t)atomic_load(&v->streams_begun);
    out->kernel_launches = (uint64_t)atomic_load(&v->runs);
    out->submits = (uint64_t)atomic_load(&v->submits);
    out->copies_to_host = (uint64_t)atomic_load(&v->to_host);
    out->copies_from_host = (uint64_t)atomic_load(&v->from_host);
    out->weight_uploads = (uint64_t)atomic_load(&v->weight_uploads);
    out->device_recoveries = (uint64_t)atomic_load(&v->recoveries);
    out->split_dispatches = (uint64_t)atomic_load(&v->split);
    out->dispatch_slices = (uint64_t)atomic_load(&v->slices);
    out->device_bytes = (uint64_t)atomic_load(&v->live_bytes);
}

/* Nodes whose arithmetic outweighs copying their tensors: products and
 * convolutions (onyx's fused ones too), and the attention and recurrent
 * blocks built on them. */
static int vk_worth_placing(ox_ep *ep, const ir_node *node) {
    if (((vk_ep *)ep)->place_all) return 1;
    static const char *const DENSE[] = {"Conv", "ConvTranspose", "MatMul", "Gemm", "Attention",
                                        "DeformConv", "Einsum"};
    if (strcmp(node->domain, "onyx") == 0)
        return strcmp(node->op_type, "FusedConv") == 0 || strcmp(node->op_type, "FusedMatMul") == 0;
    if (node->domain[0] != '\0') return 0;
    for (size_t i = 0; i < sizeof DENSE / sizeof DENSE[0]; i++)
        if (strcmp(node->op_type, DENSE[i]) == 0) return 1;
    return 0;
}

static int vk_output_views_input(ox_ep *ep, const ir_node *node) {
    (void)ep;
    return ox_op_output_is_reshape(node);
}

static const char *vk_notice(ox_ep *ep) { return ((vk_ep *)ep)->deny_note; }

static const ox_ep_ops VK_OPS = {
    .notice = vk_notice,
    .supports = vk_supports,
    .find_kernel = vk_find_kernel,
    .host_inputs = ox_vk_host_inputs,
    .worth_placing = vk_worth_placing,
    .output_views_input = vk_output_views_input,
    .run_begin = vk_run_begin,
    .run_end = vk_run_end,
    .alloc = vk_alloc,
    .free = vk_free,
    .arena_new = vk_arena_new,
    .arena_free = vk_arena_free,
    .arena_view = vk_arena_view,
    .arena_align = vk_arena_align,
    .view_bytes = sizeof(vk_buf),
    .inputs_read_late = vk_inputs_read_late,
    .reads_compact = ox_vk_reads_compact,
    .upload_weight = ox_vk_upload_weight,
    .copy_to_host = vk_to_host,
    .copy_from_host = vk_from_host,
    .fault_count = ox_vk_fault_count,
    .last_fault = ox_vk_last_fault,
    .recover = ox_vk_recover,
    .device_key = ox_vk_device_key,
    .get_stats = vk_get_stats,
    .destroy = vk_destroy,
};

/* The "device" option: a non-negative decimal index, or -1 when absent. */
static int device_option(const ox_ep_options *opts, int *device, ox_error *err) {
    const char *s = ox_ep_option(opts, "device");
    *device = -1;
    if (!s) return 0;
    char *end = NULL;
    errno = 0;
    long d = strtol(s, &end, 10);
    if (!s[0] || *end || errno || d < 0 || d > 1000)
        return ox_fail(err, ONYX_INVALID_ARGUMENT,
                       "vulkan: option device='%s' is not a device index (0, 1, ...)", s);
    *device = (int)d;
    return 0;
}

ox_ep *ox_vulkan_ep_create(const ox_ep_options *opts, ox_error *err) {
    static const char *const KNOWN[] = {
        "device",          "disable",          "place",  "pipeline_cache", "max_buffer", "limits",
        "dispatch_budget", "fence_timeout_ms", "inject", "memory_budget",  "denylist"};
    int device;
    if (ox_ep_options_allow(opts, "vulkan", KNOWN, sizeof KNOWN / sizeof KNOWN[0], err) != 0 ||
        device_option(opts, &device, err) != 0)
        return NULL;
    const char *place = ox_ep_option(opts, "place");
    if (place && strcmp(place, "all") != 0 && strcmp(place, "dense") != 0) {
        ox_fail(err, ONYX_INVALID_ARGUMENT,
                "vulkan: option place='%s' must be 'dense' (the default) or 'all'", place);
        return NULL;
    }
    vk_ep *v = calloc(1, sizeof *v);
    if (!v) {
        ox_fail(err, ONYX_OUT_OF_MEMORY, "out of memory");
        return NULL;
    }
    pthread_mutex_init(&v->lock, NULL);
    if (ox_vk_fault_setup(v, opts, err) != 0) {
        vk_destroy(&v->base);
        return NULL;
    }
    v->base.name = "vulkan";
    v->place_all = place && strcmp(place, "all") == 0;
    const char *cache = ox_ep_option(opts, "pipeline_cache");
    if (cache && !cache[0]) {
        ox_fail(err, ONYX_INVALID_ARGUMENT, "vulkan: option pipeline_cache needs a file name");
        vk_destroy(&v->base);
        return NULL;
    }
    if ((cache && !(v->pipeline_cache_path = strdup(cache))) ||
        (!cache && opts && opts->cache_dir && !(v->cache_dir = strdup(opts->cache_dir)))) {
        ox_fail(err, ONYX_OUT_OF_MEMORY, "out of memory");
        vk_destroy(&v->base);
        return NULL;
    }
    v->base.device = OX_VULKAN_DEVICE;
    v->base.ops = &VK_OPS;
    v->base.impl = v;
    const char *denylist = ox_ep_option(opts, "denylist");
    if (denylist && !denylist[0]) {
        ox_fail(err, ONYX_INVALID_ARGUMENT, "vulkan: option denylist needs a file name (or none)");
        vk_destroy(&v->base);
        return NULL;
    }
    /* masked limits and budgets apply to the open device, before anything
     * sized by them is made */
    if (ox_vk_device_open(v, device, ox_ep_option(opts, "disable"), denylist, err) != 0 ||
        ox_vk_limits_apply(v, opts, err) != 0 || ox_vk_exec_init(v, err) != 0) {
        vk_destroy(&v->base);
        return NULL;
    }
    /* a dispatch-size rule only lowers the budget the provider set */
    uint64_t n = ox_vk_deny_dispatch(&v->denylist);
    if (n && (!v->dispatch_budget || n < v->dispatch_budget)) v->dispatch_budget = n;
    if (v->denylist.n) {
        size_t len = ox_vk_denylist_describe(&v->denylist, NULL, 0);
        const char *pre = "driver denylist: ";
        v->deny_note = malloc(strlen(pre) + len + 1);
        if (!v->deny_note) {
            ox_fail(err, ONYX_OUT_OF_MEMORY, "out of memory");
            vk_destroy(&v->base);
            return NULL;
        }
        strcpy(v->deny_note, pre);
        ox_vk_denylist_describe(&v->denylist, v->deny_note + strlen(pre), len + 1);
    }
    return &v->base;
}

const ox_vk_caps *ox_vulkan_ep_caps(const ox_ep *ep) { return &((const vk_ep *)ep)->caps; }

uint32_t ox_vulkan_ep_workgroup(const ox_ep *ep, uint32_t *tile) {
    const vk_ep *v = (const vk_ep *)ep;
    if (tile) *tile = v->tile;
    return v->wg;
}

void ox_vulkan_ep_get_stats(const ox_ep *ep, ox_vk_stats *out) {
    vk_ep *v = (vk_ep *)ep;
    out->kernel_runs = atomic_load(&v->runs);
    out->submits = atomic_load(&v->submits);
    out->copies_to_host = atomic_load(&v->to_host);
    out->copies_from_host = atomic_load(&v->from_host);
    out->live_buffers = atomic_load(&v->live);
    out->kept_buffers = atomic_load(&v->kept_buffers);
    out->buffer_allocations = atomic_load(&v->allocations);
    out->arenas = atomic_load(&v->arenas);
    out->half_weights = atomic_load(&v->half_weights);
    out->live_bytes = atomic_load(&v->live_bytes);
    out->pipeline_cache_loaded = v->pipeline_cache_loaded;
    out->split_dispatches = atomic_load(&v->split);
    out->dispatch_slices = atomic_load(&v->slices);
}

void ox_vulkan_ep_describe(const ox_ep *ep, char *buf, size_t size) {
    const ox_vk_caps *c = ox_vulkan_ep_caps(ep);
    snprintf(buf, size,
             "%s (Vulkan %u.%u.%u, vendor 0x%04x device 0x%04x, driver %s %s); int64 %s, fp16 %s, "
             "16-bit storage %s, subgroups of %u%s; workgroups of %u (tiles %ux%u); storage buffers "
             "up to %llu bytes; %s copies",
             c->device_name, VK_API_VERSION_MAJOR(c->api_version),
             VK_API_VERSION_MINOR(c->api_version), VK_API_VERSION_PATCH(c->api_version),
             c->vendor_id, c->device_id, c->driver_name[0] ? c->driver_name : "?", c->driver_info,
             c->shader_int64 ? "yes" : "no", c->shader_float16 ? "yes" : "no",
             c->storage_buffer_16bit ? "yes" : "no", c->subgroup_size,
             c->subgroup_reduce ? " with arithmetic" : "", ((const vk_ep *)ep)->wg,
             ((const vk_ep *)ep)->tile, ((const vk_ep *)ep)->tile,
             (unsigned long long)c->max_storage_buffer_range,
             c->host_mapped ? "mapped-memory" : "staged");
}
