/* Streams: one run's command recording (see vk_internal.h). A run records
 * every dispatch and mid-run upload into its stream's command buffer and
 * submits only at synchronization points, so a model costs a handful of
 * submissions instead of one per node. Streams are kept by the provider
 * after their run and reused by the next one: their command pool,
 * descriptor pool, flag blocks and staging buffer are made once. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ep/vulkan/vk_internal.h"

static int list_push(vk_buf_list *l, vk_buf *b) {
    if (l->n == l->cap) {
        int ncap = l->cap ? l->cap * 2 : 32;
        vk_buf **ni = realloc(l->items, (size_t)ncap * sizeof *ni);
        if (!ni) return -1;
        l->items = ni;
        l->cap = ncap;
    }
    l->items[l->n++] = b;
    return 0;
}

static void list_release(vk_ep *v, vk_buf_list *l) {
    for (int i = 0; i < l->n; i++) ox_vk_buf_free(v, l->items[i]);
    l->n = 0;
}

/* The smallest buffer of l that holds bytes without wasting more than
 * half of it, taken out of l; NULL when none does. */
static vk_buf *list_take_fit(vk_buf_list *l, size_t bytes) {
    int best = -1;
    for (int i = 0; i < l->n; i++) {
        VkDeviceSize sz = l->items[i]->size;
        if (sz >= bytes && sz / 2 <= bytes + 16 && (best < 0 || sz < l->items[best]->size)) best = i;
    }
    if (best < 0) return NULL;
    vk_buf *b = l->items[best];
    l->items[best] = l->items[--l->n];
    return b;
}

/* Frees what the previous run left and the current one did not take. */
static void release_kept(vk_ep *v, vk_stream *s) {
    atomic_fetch_sub(&v->kept_buffers, s->kept.n);
    list_release(v, &s->kept);
}

/* A tensor buffer (or an arena: `fault` 0), counted against the memory
 * budget. A tensor the device cannot hold is a fault the session recovers
 * from on the CPU; an arena it cannot hold only means the run allocates
 * per tensor. */
static vk_buf *buf_new(vk_ep *v, size_t bytes, int fault, ox_error *err) {
    if (ox_vk_check_usable(v, err) != 0) return NULL;
    /* the memory budget: what the caller lets onyx take of the device */
    uint64_t live = atomic_fetch_add(&v->live_bytes, bytes) + bytes;
    if (v->memory_budget && live > v->memory_budget) {
        atomic_fetch_sub(&v->live_bytes, bytes);
        if (fault)
            ox_vk_fault(v, VK_ERROR_OUT_OF_DEVICE_MEMORY, "the memory_budget option", NULL, 0, 0, err);
        else
            ox_fail(err, ONYX_OUT_OF_MEMORY, "vulkan: over the memory_budget option");
        ox_error_prefix(err, "%zu bytes asked, %llu of the budget's %llu in use", bytes,
                        (unsigned long long)(live - bytes), (unsigned long long)v->memory_budget);
        return NULL;
    }
    vk_buf *b = malloc(sizeof *b);
    if (!b) {
        atomic_fetch_sub(&v->live_bytes, bytes);
        ox_fail(err, ONYX_OUT_OF_MEMORY, "out of memory");
        return NULL;
    }
    if (ox_vk_buf_make(v, bytes, v->mem_type_device, v->caps.host_mapped, b, err) != 0) {
        atomic_fetch_sub(&v->live_bytes, bytes);
        free(b);
        /* the device is full: a fault the session recovers from on the
         * CPU, though the device itself is sound */
        if (fault && err->code == ONYX_OUT_OF_MEMORY) {
            char why[OX_ERROR_MSG_MAX];
            snprintf(why, sizeof why, "%s", err->msg);
            ox_vk_fault(v, VK_ERROR_OUT_OF_DEVICE_MEMORY, "vkAllocateMemory", NULL, 0, 0, err);
            ox_error_prefix(err, "%s", why);
        }
        return NULL;
    }
    b->accounted = bytes;
    atomic_fetch_add(&v->live, 1);
    atomic_fetch_add(&v->allocations, 1);
    return b;
}

vk_buf *ox_vk_buf_new(vk_ep *v, size_t bytes, ox_error *err) { return buf_new(v, bytes, 1, err); }

vk_buf *ox_vk_arena_new(vk_ep *v, vk_stream *s, size_t bytes, ox_error *err) {
    if (s && s->arena && s->arena->size >= bytes) {
        vk_buf *b = s->arena;
        s->arena = NULL;
        return b;
    }
    /* the arena takes over the tensors those buffers would have served;
     * held beside it they would only raise the peak */
    if (s) {
        release_kept(v, s);
        ox_vk_buf_free(v, s->arena);
        s->arena = NULL;
    }
    vk_buf *b = buf_new(v, bytes, 0, err);
    if (b) atomic_fetch_add(&v->arenas, 1);
    return b;
}

void ox_vk_arena_free(vk_ep *v, vk_stream *s, vk_buf *arena) {
    if (!s) {
        ox_vk_buf_free(v, arena);
        return;
    }
    /* the stream's next run comes after this one's wait */
    ox_vk_buf_free(v, s->arena);
    s->arena = arena;
    s->arena_used = 1;
}

void ox_vk_arena_view(const vk_buf *arena, size_t offset, size_t bytes, vk_buf *view) {
    /* sized as a buffer of its own; the arena's offsets are multiples of
     * the storage offset alignment, at least 64, so it stays inside */
    *view = (vk_buf){.buf = arena->buf, .size = ox_vk_buf_bytes(bytes), .offset = arena->offset + offset,
                     .mapped = arena->mapped ? (char *)arena->mapped + offset : NULL};
}

void ox_vk_buf_free(vk_ep *v, vk_buf *b) {
    if (!b) return;
    atomic_fetch_sub(&v->live_bytes, b->accounted);
    ox_vk_buf_drop(v, b);
    free(b);
    atomic_fetch_sub(&v->live, 1);
}

/* ---- making and destroying streams ---- */

static void stream_destroy(vk_ep *v, vk_stream *s) {
    if (!s) return;
    list_release(v, &s->spare);
    list_release(v, &s->deferred);
    release_kept(v, s);
    ox_vk_buf_free(v, s->arena);
    free(s->spare.items);
    free(s->deferred.items);
    free(s->kept.items);
    ox_vk_buf_drop(v, &s->flags);
    ox_vk_buf_drop(v, &s->staging);
    if (s->desc_pool) v->f.vkDestroyDescriptorPool(v->device, s->desc_pool, NULL);
    if (s->fence) v->f.vkDestroyFence(v->device, s->fence, NULL);
    if (s->pool) v->f.vkDestroyCommandPool(v->device, s->pool, NULL); /* frees cmd */
    free(s);
}

static vk_stream *stream_new(vk_ep *v, ox_error *err) {
    vk_stream *s = calloc(1, sizeof *s);
    if (!s) {
        ox_fail(err, ONYX_OUT_OF_MEMORY, "out of memory");
        return NULL;
    }
    VkResult r;
    VkCommandPoolCreateInfo pi = {.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
                                  .flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT,
                                  .queueFamilyIndex = v->queue_family};
    if ((r = v->f.vkCreateCommandPool(v->device, &pi, NULL, &s->pool)) != VK_SUCCESS) {
        s->pool = VK_NULL_HANDLE;
        ox_vk_fail(err, "vkCreateCommandPool", r);
        goto fail;
    }
    VkCommandBufferAllocateInfo ci = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
                                      .commandPool = s->pool,
                                      .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY,
                                      .commandBufferCount = 1};
    if ((r = v->f.vkAllocateCommandBuffers(v->device, &ci, &s->cmd)) != VK_SUCCESS) {
        ox_vk_fail(err, "vkAllocateCommandBuffers", r);
        goto fail;
    }
    VkFenceCreateInfo fi = {.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    if ((r = v->f.vkCreateFence(v->device, &fi, NULL, &s->fence)) != VK_SUCCESS) {
        s->fence = VK_NULL_HANDLE;
        ox_vk_fail(err, "vkCreateFence", r);
        goto fail;
    }
    VkDescriptorPoolSize ps = {.type = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
                               .descriptorCount = VK_STREAM_SETS * VK_BINDINGS};
    VkDescriptorPoolCreateInfo dpi = {.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO,
                                      .maxSets = VK_STREAM_SETS, .poolSizeCount = 1,
                                      .pPoolSizes = &ps};
    if ((r = v->f.vkCreateDescriptorPool(v->device, &dpi, NULL, &s->desc_pool)) != VK_SUCCESS) {
        s->desc_pool = VK_NULL_HANDLE;
        ox_vk_fail(err, "vkCreateDescriptorPool", r);
        goto fail;
    }
    if (ox_vk_buf_make(v, (VkDeviceSize)v->flag_stride * VK_STREAM_CHECKS, v->mem_type_staging, 1,
                       &s->flags, err) != 0)
        goto fail;
    return s;
fail:
    stream_destroy(v, s);
    return NULL;
}

vk_stream *ox_vk_stream_get(vk_ep *v, ox_error *err) {
    if (ox_vk_check_usable(v, err) != 0) return NULL;
    pthread_mutex_lock(&v->lock);
    vk_stream *s = v->idle_streams;
    if (s) v->idle_streams = s->next;
    pthread_mutex_unlock(&v->lock);
    if (s) {
        s->next = NULL;
        return s;
    }
    return stream_new(v, err);
}

int ox_vk_stream_put(vk_ep *v, vk_stream *s, ox_error *err) {
    int rc = ox_vk_stream_flush(v, s, err);
    if (rc != 0 && s->recording) {
        /* the submission itself failed: nothing of it may still run when
         * its buffers go, and the stream is not reused */
        v->f.vkDeviceWaitIdle(v->device);
        stream_destroy(v, s);
        return rc;
    }
    /* this run's freed buffers become the next run's: the device is done
     * with them (the flush waited); so does its arena, but an arena this
     * run did not use (other shapes, no plan yet) goes */
    release_kept(v, s);
    if (!s->arena_used) {
        ox_vk_buf_free(v, s->arena);
        s->arena = NULL;
    }
    s->arena_used = 0;
    vk_buf_list t = s->kept;
    s->kept = s->spare;
    s->spare = t;
    atomic_fetch_add(&v->kept_buffers, s->kept.n);
    pthread_mutex_lock(&v->lock);
    s->next = v->idle_streams;
    v->idle_streams = s;
    pthread_mutex_unlock(&v->lock);
    return rc;
}

void ox_vk_streams_destroy(vk_ep *v) {
    while (v->idle_streams) {
        vk_stream *s = v->idle_streams;
        v->idle_streams = s->next;
        stream_destroy(v, s);
    }
}

/* ---- recording ---- */

/* A full barrier: every earlier compute or transfer command's writes are
 * done and visible before any later one starts. */
static void barrier_all(vk_ep *v, vk_stream *s) {
    VkMemoryBarrier mb = {.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
                          .srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT,
                          .dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT |
                                           VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT};
    VkPipelineStageFlags st = VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT;
    v->f.vkCmdPipelineBarrier(s->cmd, st, st, 0, 1, &mb, 0, NULL, 0, NULL);
}

static int ensure_recording(vk_ep *v, vk_stream *s, ox_error *err) {
    if (s->recording) return 0;
    VkResult r = v->f.vkResetCommandBuffer(s->cmd, 0);
    if (r != VK_SUCCESS) return ox_vk_fail(err, "vkResetCommandBuffer", r);
    VkCommandBufferBeginInfo bi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
                                   .flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT};
    r = v->f.vkBeginCommandBuffer(s->cmd, &bi);
    if (r != VK_SUCCESS) return ox_vk_fail(err, "vkBeginCommandBuffer", r);
    s->recording = 1;
    s->pending_work = 0; /* a new submission */
    s->heavy_work = 0;
    s->heavy_node = NULL;
    return 0;
}

/* The node a failed submission is blamed on: the one whose dispatch
 * carried the most estimated work in it (a hang or a lost device most
 * likely comes from the longest dispatch), else the last one recorded. */
static const ir_node *blamed(const vk_stream *s) { return s->heavy_node ? s->heavy_node : s->node; }

int ox_vk_stream_flush(vk_ep *v, vk_stream *s, ox_error *err) {
    int rc = 0;
    /* a failed submission leaves s->recording set: the stream is then
     * destroyed (ox_vk_stream_put), never submitted */
    if (s->recording && s->inject) return ox_vk_inject_fire(v, s, err);
    if (s->recording && ox_vk_check_usable(v, err) != 0) return -1;
    if (s->recording) {
        VkMemoryBarrier mb = {.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
                              .srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT,
                              .dstAccessMask = VK_ACCESS_HOST_READ_BIT};
        v->f.vkCmdPipelineBarrier(s->cmd,
                                  VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT,
                                  VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &mb, 0, NULL, 0, NULL);
        VkResult r = v->f.vkEndCommandBuffer(s->cmd);
        if (r != VK_SUCCESS) return ox_vk_fail(err, "vkEndCommandBuffer", r);
        VkSubmitInfo si = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO, .commandBufferCount = 1,
                           .pCommandBuffers = &s->cmd};
        pthread_mutex_lock(&v->lock);
        r = v->f.vkQueueSubmit(v->queue, 1, &si, s->fence);
        pthread_mutex_unlock(&v->lock);
        if (ox_vk_is_fault(r)) return ox_vk_fault(v, r, "vkQueueSubmit", blamed(s), 0, 1, err);
        if (r != VK_SUCCESS) return ox_vk_fail(err, "vkQueueSubmit", r);
        atomic_fetch_add(&v->submits, 1);
        r = v->f.vkWaitForFences(v->device, 1, &s->fence, VK_TRUE, v->fence_timeout_ns);
        if (r == VK_TIMEOUT) {
            /* the device may be hung: a fault, remade like a lost device */
            char call[128];
            snprintf(call, sizeof call, "vkWaitForFences past %llu ms, option fence_timeout_ms",
                     (unsigned long long)(v->fence_timeout_ns / 1000000));
            return ox_vk_fault(v, r, call, blamed(s), 0, 1, err);
        }
        if (ox_vk_is_fault(r)) return ox_vk_fault(v, r, "vkWaitForFences", blamed(s), 0, 1, err);
        if (r != VK_SUCCESS) return ox_vk_fail(err, "vkWaitForFences", r);
        r = v->f.vkResetFences(v->device, 1, &s->fence);
        s->recording = 0;
        if (r != VK_SUCCESS) rc = ox_vk_fail(err, "vkResetFences", r);
    }
    /* the first check raised fails the run; the rest are moot */
    for (int i = 0; i < s->n_checks; i++) {
        const uint32_t *f = (const uint32_t *)((const char *)s->flags.mapped + (size_t)i * v->flag_stride);
        if (rc == 0 && f[0]) rc = ox_vk_index_fail(v, &s->checks[i], f[1], err);
    }
    s->n_checks = 0;
    list_release(v, &s->deferred);
    s->sets_used = 0;
    s->staging_used = 0;
    VkResult r = v->f.vkResetDescriptorPool(v->device, s->desc_pool, 0);
    if (r != VK_SUCCESS && rc == 0) rc = ox_vk_fail(err, "vkResetDescriptorPool", r);
    return rc;
}

/* ---- bounded dispatches ----
 * A dispatch's estimated work is groups x invocations per group (the
 * provider's wg, or a tiled shader's tile x tile) x the cost the
 * kernel states per invocation. One over the provider's dispatch budget is
 * recorded as several dispatches (vkCmdDispatchBase) over slices of its
 * grid: whole x-rows of groups, then planes, as the budget allows. The
 * shaders read the whole grid from the push constants (shaders/grid.glsl),
 * so their grid-stride loops cover the same items as one dispatch would.
 * The stream submits and waits whenever the work recorded since its last
 * submission would pass the submission budget, so no command buffer
 * carries unbounded work. A single workgroup's own work cannot be split:
 * shaders whose groups loop over a whole row or plane (softmax, reductions,
 * normalization, global pooling, TopK) stay as long as that row is. */

static uint64_t sat_mul(uint64_t a, uint64_t b) {
    return a && b > UINT64_MAX / a ? UINT64_MAX : a * b;
}

/* Submits and waits first when `work` more would pass the submission
 * budget (and something is pending): 1 when it did, -1 on failure. */
static int bound_submission(vk_ep *v, vk_stream *s, uint64_t work, ox_error *err) {
    uint64_t bound = v->submit_budget ? v->submit_budget : UINT64_MAX;
    uint64_t room = s->pending_work < bound ? bound - s->pending_work : 0;
    if (!s->recording || !s->pending_work || work <= room) return 0;
    return ox_vk_stream_flush(v, s, err) != 0 ? -1 : 1;
}

/* A descriptor set for d's buffers (and flag block), bound with its
 * pipeline and push constants (the kernel's, then the whole grid at
 * VK_GRID_OFFSET) in the stream's current command buffer. */
static int bind_dispatch(vk_ep *v, vk_stream *s, const vk_dispatch *d, VkPipeline pipe,
                         const char *what, ox_error *err) {
    if (d->check && d->bufs[VK_FLAG_BINDING])
        return ox_fail(err, ONYX_RUNTIME_ERROR, "vulkan %s: a dispatch with an index check leaves binding %d "
                       "to the flag block", what, VK_FLAG_BINDING);
    /* room for one more descriptor set and flag block, or wait first */
    if (s->sets_used == VK_STREAM_SETS || (d->check && s->n_checks == VK_STREAM_CHECKS))
        if (ox_vk_stream_flush(v, s, err) != 0) return -1;
    VkDescriptorSet set;
    VkDescriptorSetAllocateInfo ai = {.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO,
                                      .descriptorPool = s->desc_pool, .descriptorSetCount = 1,
                                      .pSetLayouts = &v->set_layout};
    VkResult r = v->f.vkAllocateDescriptorSets(v->device, &ai, &set);
    if (r != VK_SUCCESS) return ox_vk_fail(err, "vkAllocateDescriptorSets", r);
    s->sets_used++;
    int slot = d->check ? s->n_checks : -1;
    VkDescriptorBufferInfo infos[VK_BINDINGS];
    VkWriteDescriptorSet writes[VK_BINDINGS];
    for (int i = 0; i < VK_BINDINGS; i++) {
        const vk_buf *b = d->bufs[i] ? d->bufs[i] : &v->dummy;
        VkDeviceSize off = 0, range = VK_WHOLE_SIZE;
        if (d->bufs[i]) {
            /* to the end of the tensor's bytes, which for a view is not
             * the end of its (arena's) buffer */
            off = b->offset + d->offset[i];
            range = d->range[i] ? d->range[i] : b->size - d->offset[i];
        }
        if (i == VK_FLAG_BINDING && slot >= 0) {
            b = &s->flags;
            off = (VkDeviceSize)slot * v->flag_stride;
            range = 8;
        }
        infos[i] = (VkDescriptorBufferInfo){.buffer = b->buf, .offset = off, .range = range};
        writes[i] = (VkWriteDescriptorSet){.sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET,
                                           .dstSet = set, .dstBinding = (uint32_t)i,
                                           .descriptorCount = 1,
                                           .descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
                                           .pBufferInfo = &infos[i]};
    }
    v->f.vkUpdateDescriptorSets(v->device, VK_BINDINGS, writes, 0, NULL);
    if (ensure_recording(v, s, err) != 0) return -1;
    if (slot >= 0) {
        /* the flag block starts {0, ~0}: no bad index, none found yet */
        uint32_t *f = (uint32_t *)((char *)s->flags.mapped + (size_t)slot * v->flag_stride);
        f[0] = 0;
        f[1] = ~0u;
        const vk_index_check *ck = d->check;
        vk_check_rec *rec = &s->checks[slot];
        rec->indices = ck->indices->data;
        rec->idx64 = ck->indices->dtype == ONYX_INT64;
        rec->n_indices = ox_tensor_numel(ck->indices);
        rec->axis_size = ck->axis_size;
        rec->axis = ck->axis;
        snprintf(rec->what, sizeof rec->what, "%s", what ? what : "vulkan kernel");
        s->n_checks++;
    }
    v->f.vkCmdBindPipeline(s->cmd, VK_PIPELINE_BIND_POINT_COMPUTE, pipe);
    v->f.vkCmdBindDescriptorSets(s->cmd, VK_PIPELINE_BIND_POINT_COMPUTE, v->pipe_layout, 0, 1, &set,
                                 0, NULL);
    if (d->push_bytes)
        v->f.vkCmdPushConstants(s->cmd, v->pipe_layout, VK_SHADER_STAGE_COMPUTE_BIT, 0,
                                d->push_bytes, d->push);
    /* {z, y, x}, or x alone after a kernel's longer constants (1-D grids) */
    uint32_t grid[3] = {d->groups[2], d->groups[1], d->groups[0]};
    uint32_t skip = d->push_bytes > VK_GRID_OFFSET ? 2 : 0;
    v->f.vkCmdPushConstants(s->cmd, v->pipe_layout, VK_SHADER_STAGE_COMPUTE_BIT,
                            VK_GRID_OFFSET + 4 * skip, 4 * (3 - skip), grid + skip);
    return 0;
}

int ox_vk_record(vk_ep *v, vk_stream *s, const vk_dispatch *d, const char *what, ox_error *err) {
    if (ox_vk_check_usable(v, err) != 0) return -1;
    if (d->push_bytes > VK_PUSH_BYTES - 4 ||
        (d->push_bytes > VK_GRID_OFFSET && (d->groups[1] > 1 || d->groups[2] > 1)))
        return ox_fail(err, ONYX_RUNTIME_ERROR,
                       "vulkan: %u bytes of push constants for a %ux%ux%u grid (shader %s; at most "
                       "%u before the grid, %u before a one-dimensional grid's)",
                       d->push_bytes, d->groups[0], d->groups[1], d->groups[2], d->shader->name,
                       VK_GRID_OFFSET, VK_PUSH_BYTES - 4);
    for (int i = 0; i < 3; i++)
        if (d->groups[i] == 0 || d->groups[i] > v->caps.max_workgroup_count[i])
            return ox_fail(err, ONYX_RUNTIME_ERROR, "vulkan: %u workgroups in dimension %d (limit %u)",
                           d->groups[i], i, v->caps.max_workgroup_count[i]);
    VkPipeline pipe = ox_vk_pipeline(v, d->shader, err);
    if (!pipe) return -1;
    /* slices of whole x-rows, then of whole planes, of at most the budget */
    const uint32_t *g = d->groups;
    uint64_t per_group = sat_mul(d->invocations ? d->invocations : v->wg, d->cost ? d->cost : 1);
    uint64_t budget = v->dispatch_budget ? v->dispatch_budget : UINT64_MAX;
    uint64_t fit = budget / per_group ? budget / per_group : 1; /* groups per slice */
    uint32_t cx = fit < g[0] ? (uint32_t)fit : g[0], cy = 1, cz = 1;
    if (cx == g[0]) {
        uint64_t rows = fit / g[0];
        cy = rows < g[1] ? (uint32_t)rows : g[1];
        if (cy == g[1]) {
            uint64_t planes = fit / ((uint64_t)g[0] * g[1]);
            cz = planes < g[2] ? (uint32_t)planes : g[2];
        }
    }
    uint64_t n_slices = (((uint64_t)g[0] + cx - 1) / cx) * (((uint64_t)g[1] + cy - 1) / cy) *
                        (((uint64_t)g[2] + cz - 1) / cz);
    if (bound_submission(v, s, sat_mul(per_group, (uint64_t)cx * cy * cz), err) < 0) return -1;
    if (bind_dispatch(v, s, d, pipe, what, err) != 0) return -1;
    /* 64-bit positions: a slice's end may pass 2^32 - 1 groups */
    for (uint64_t z = 0; z < g[2]; z += cz)
        for (uint64_t y = 0; y < g[1]; y += cy)
            for (uint64_t x = 0; x < g[0]; x += cx) {
                uint32_t bx = (uint32_t)(g[0] - x < cx ? g[0] - x : cx),
                         by = (uint32_t)(g[1] - y < cy ? g[1] - y : cy),
                         bz = (uint32_t)(g[2] - z < cz ? g[2] - z : cz);
                uint64_t work = sat_mul(per_group, (uint64_t)bx * by * bz);
                if (x || y || z) {
                    int rc = bound_submission(v, s, work, err);
                    if (rc < 0 || (rc == 1 && bind_dispatch(v, s, d, pipe, what, err) != 0)) return -1;
                }
                if (n_slices == 1) v->f.vkCmdDispatch(s->cmd, bx, by, bz);
                else v->f.vkCmdDispatchBase(s->cmd, (uint32_t)x, (uint32_t)y, (uint32_t)z, bx, by, bz);
                s->pending_work =
                    s->pending_work > UINT64_MAX - work ? UINT64_MAX : s->pending_work + work;
                if (work >= s->heavy_work) {
                    s->heavy_work = work;
                    s->heavy_node = s->node;
                }
            }
    barrier_all(v, s);
    atomic_fetch_add(&v->runs, 1);
    if (n_slices > 1) {
        atomic_fetch_add(&v->split, 1);
        atomic_fetch_add(&v->slices, (long)n_slices);
    }
    return 0;
}

/* ---- memory ---- */

vk_buf *ox_vk_stream_alloc(vk_ep *v, vk_stream *s, size_t bytes, ox_error *err) {
    vk_buf *b = list_take_fit(&s->spare, bytes);
    if (b) return b;
    if ((b = list_take_fit(&s->kept, bytes))) {
        atomic_fetch_sub(&v->kept_buffers, 1);
        return b;
    }
    /* kept buffers no tensor fits give way to one the memory budget
     * would otherwise refuse */
    if (v->memory_budget && (s->kept.n || s->arena) &&
        atomic_load(&v->live_bytes) + bytes > v->memory_budget) {
        release_kept(v, s);
        ox_vk_buf_free(v, s->arena);
        s->arena = NULL;
    }
    return ox_vk_buf_new(v, bytes, err);
}

void ox_vk_stream_free(vk_ep *v, vk_stream *s, vk_buf *b) {
    if (!b) return;
    /* indices a pending check will read back must keep their contents */
    vk_buf_list *to = &s->spare;
    for (int i = 0; i < s->n_checks; i++)
        if (s->checks[i].indices == b) to = &s->deferred;
    if (list_push(to, b) != 0) {
        /* no room to keep it: wait for the device, then free it now */
        ox_error scratch = {0};
        ox_vk_stream_flush(v, s, &scratch);
        ox_vk_buf_free(v, b);
    }
}

int ox_vk_stream_upload(vk_ep *v, vk_stream *s, vk_buf *b, const void *src, size_t bytes,
                        ox_error *err) {
    if (!bytes) return 0;
    if (bytes > b->size) return ox_fail(err, ONYX_RUNTIME_ERROR, "vulkan: upload past a buffer");
    if (!s->recording) return ox_vk_write(v, b, 0, src, bytes, err);
    /* recorded work may still read this buffer's old contents: the new
     * ones go through staging, copied in order with the rest */
    if (!s->staging.buf &&
        ox_vk_buf_make(v, (size_t)v->staging_bytes, v->mem_type_staging, 1, &s->staging, err) != 0)
        return -1;
    for (size_t done = 0; done < bytes;) {
        size_t n = bytes - done;
        if (n > (size_t)v->staging_bytes) n = (size_t)v->staging_bytes;
        if (s->staging_used + n > (size_t)v->staging_bytes) {
            if (ox_vk_stream_flush(v, s, err) != 0) return -1;
            if (!s->recording) return ox_vk_write(v, b, done, (const char *)src + done, bytes - done, err);
        }
        memcpy((char *)s->staging.mapped + s->staging_used, (const char *)src + done, n);
        if (ensure_recording(v, s, err) != 0) return -1;
        VkBufferCopy region = {.srcOffset = s->staging_used, .dstOffset = b->offset + done,
                               .size = n};
        v->f.vkCmdCopyBuffer(s->cmd, s->staging.buf, b->buf, 1, &region);
        barrier_all(v, s);
        s->staging_used += (n + 15) & ~(size_t)15;
        done += n;
    }
    return 0;
}
