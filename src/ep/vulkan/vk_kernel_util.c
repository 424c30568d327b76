/* Helpers every Vulkan kernel file uses (see vk_kernel.h). */
#include <stdlib.h>

#include "ep/vulkan/vk_kernel.h"

int64_t ox_vk_known_numel(const ir_type *t) {
    if (!t || t->rank < 0) return -1;
    int64_t n = 1;
    for (int d = 0; d < t->rank; d++) {
        if (t->dims[d] < 0) return -1;
        if (t->dims[d] && n > INT64_MAX / t->dims[d]) return INT64_MAX;
        n *= t->dims[d];
    }
    return n;
}

int ox_vk_fits(const vk_ep *v, int64_t numel, size_t elem) {
    if (numel < 0) return 1;
    if (numel > OX_VK_MAX_ELEMS) return 0;
    uint64_t bytes = ((uint64_t)numel * elem + 15) & ~(uint64_t)15;
    /* one buffer, one allocation (both may be masked: ONYX_VK_LIMITS) */
    return bytes <= v->caps.max_storage_buffer_range &&
           (!v->caps.max_allocation_size || bytes <= v->caps.max_allocation_size);
}

int ox_vk_fits_windowed(const vk_ep *v, int64_t numel, size_t elem) {
    if (numel < 0) return 1;
    if (numel > OX_VK_MAX_ELEMS) return 0;
    uint64_t bytes = ((uint64_t)numel * elem + 15) & ~(uint64_t)15;
    return !v->caps.max_allocation_size || bytes <= v->caps.max_allocation_size;
}

static int check_tensor(ox_kernel_ctx *c, const ox_tensor *t, const char *what, int i, int windowed) {
    vk_ep *v = ox_vk_of(c);
    if (t->kind != OX_KIND_TENSOR || t->device != OX_VULKAN_DEVICE || !t->data)
        return ox_kernel_fail(c, ONYX_RUNTIME_ERROR, "vulkan: %s %d is not in Vulkan memory", what, i);
    int64_t n = ox_tensor_numel(t);
    if (!(windowed ? ox_vk_fits_windowed : ox_vk_fits)(v, n, ox_dtype_size(t->dtype)))
        return ox_kernel_decline(c,
                                 "vulkan: %s %d has %" PRId64 " elements (%zu bytes), more than one "
                                 "storage buffer holds on %s (%llu bytes, 2^31 elements)",
                                 what, i, n, t->nbytes, v->caps.device_name,
                                 (unsigned long long)v->caps.max_storage_buffer_range);
    return 0;
}

static int check_io(ox_kernel_ctx *c, uint32_t host_mask, int windowed) {
    for (int i = 0; i < c->n_inputs; i++) {
        if (!c->inputs[i]) continue;
        if (i < 32 && (host_mask >> i & 1u)) {
            if (c->inputs[i]->device != OX_DEVICE_HOST)
                return ox_kernel_fail(c, ONYX_RUNTIME_ERROR, "vulkan: input %d should be in host memory", i);
            continue;
        }
        if (check_tensor(c, c->inputs[i], "input", i, windowed) != 0) return -1;
    }
    for (int i = 0; i < c->n_outputs; i++) {
        if (!c->outputs[i]) continue; /* omitted optional output, or produced later */
        if (check_tensor(c, c->outputs[i], "output", i, windowed) != 0) return -1;
    }
    return 0;
}

int ox_vk_check_io(ox_kernel_ctx *c, uint32_t host_mask) { return check_io(c, host_mask, 0); }

int ox_vk_check_io_windowed(ox_kernel_ctx *c, uint32_t host_mask) { return check_io(c, host_mask, 1); }

uint32_t ox_vk_groups(const vk_ep *v, int64_t n, int64_t per, int dim) {
    int64_t g = (n + per - 1) / per;
    if (g < 1) g = 1;
    if (g > v->caps.max_workgroup_count[dim]) g = v->caps.max_workgroup_count[dim];
    return (uint32_t)g;
}

int ox_vk_is_tensor(const ir_type *t, ox_dtype dtype) {
    return t && t->kind == OX_KIND_TENSOR && t->dtype == dtype;
}

int ox_vk_f32_inputs(const ir_type *const *in, int n, int required) {
    if (n < required) return 0;
    for (int i = 0; i < n; i++) {
        if (!in[i]) {
            if (i < required) return 0;
            continue;
        }
        if (!ox_vk_is_tensor(in[i], ONYX_FLOAT32)) return 0;
    }
    return 1;
}

int ox_vk_run(ox_kernel_ctx *c, const vk_dispatch *d) {
    vk_ep *v = ox_vk_of(c);
    if (!ox_vk_wg_ok(v))
        return ox_kernel_decline(c,
                                 "vulkan: shader %s needs workgroups of at least %d invocations; %s "
                                 "allows %u (maxComputeWorkGroupInvocations), %u wide, %u tall "
                                 "(maxComputeWorkGroupSize)",
                                 d->shader->name, VK_WG_MIN, v->caps.device_name,
                                 v->caps.max_workgroup_invocations, v->caps.max_workgroup_size[0],
                                 v->caps.max_workgroup_size[1]);
    /* a pipeline the driver will not build leaves the node to the CPU */
    ox_error perr = {0};
    if (!ox_vk_pipeline(v, d->shader, &perr)) return ox_kernel_decline(c, "%s", perr.msg);
    char what[300] = "";
    if (d->check) ir_node_label(c->node, what, sizeof what);
    if (c->stream) {
        ox_vk_inject_arm(v, c->stream, c->node);
        return ox_vk_record(v, c->stream, d, what, c->err);
    }
    /* outside a run: a stream of its own, waited for at once */
    vk_stream *s = ox_vk_stream_get(v, c->err);
    if (!s) return -1;
    ox_error scratch = {0};
    int rc = ox_vk_record(v, s, d, what, c->err);
    if (ox_vk_stream_put(v, s, rc == 0 ? c->err : &scratch) != 0) rc = -1;
    return rc;
}

vk_buf *ox_vk_scratch(ox_kernel_ctx *c, size_t bytes) {
    vk_ep *v = ox_vk_of(c);
    if (c->stream) return ox_vk_stream_alloc(v, c->stream, bytes, c->err);
    return ox_vk_buf_new(v, bytes, c->err);
}

void ox_vk_scratch_free(ox_kernel_ctx *c, vk_buf *b) {
    if (!b) return;
    if (c->stream) ox_vk_stream_free(ox_vk_of(c), c->stream, b);
    else ox_vk_buf_free(ox_vk_of(c), b); /* outside a run every dispatch was waited for */
}

int ox_vk_read_back(ox_kernel_ctx *c, const vk_buf *b, size_t offset, void *dst, size_t bytes) {
    vk_ep *v = ox_vk_of(c);
    if (c->stream && ox_vk_stream_flush(v, c->stream, c->err) != 0) return -1;
    return ox_vk_read(v, b, offset, dst, bytes, c->err);
}

int ox_vk_upload(ox_kernel_ctx *c, vk_buf *b, const void *src, size_t bytes) {
    vk_ep *v = ox_vk_of(c);
    if (c->stream) return ox_vk_stream_upload(v, c->stream, b, src, bytes, c->err);
    return ox_vk_write(v, b, 0, src, bytes, c->err);
}
