/* Device buffers, synchronous copies between host and device (weights,
 * reads after a stream's wait) and pipelines made from the embedded
 * SPIR-V. The provider's own command buffer and the queue are used under
 * its lock; runs record into their streams (vk_stream.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ep/vulkan/vk_internal.h"

int ox_vk_buf_make(vk_ep *v, VkDeviceSize bytes, uint32_t mem_type, int map, vk_buf *b,
                   ox_error *err) {
    memset(b, 0, sizeof *b);
    VkDeviceSize size = ox_vk_buf_bytes(bytes);
    if (size < bytes) return ox_fail(err, ONYX_OUT_OF_MEMORY, "vulkan: buffer size overflows");
    if (v->caps.max_allocation_size && size > v->caps.max_allocation_size)
        return ox_fail(err, ONYX_OUT_OF_MEMORY,
                       "vulkan: %llu bytes exceed the device's largest allocation (%llu)",
                       (unsigned long long)size, (unsigned long long)v->caps.max_allocation_size);
    VkBufferCreateInfo bi = {.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO,
                             .size = size,
                             .usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT |
                                      VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
                                      VK_BUFFER_USAGE_TRANSFER_DST_BIT,
                             .sharingMode = VK_SHARING_MODE_EXCLUSIVE};
    VkResult r = v->f.vkCreateBuffer(v->device, &bi, NULL, &b->buf);
    if (r != VK_SUCCESS) {
        b->buf = VK_NULL_HANDLE;
        return ox_vk_fail(err, "vkCreateBuffer", r);
    }
    VkMemoryRequirements req;
    v->f.vkGetBufferMemoryRequirements(v->device, b->buf, &req);
    if (!(req.memoryTypeBits & (1u << mem_type))) {
        ox_vk_buf_drop(v, b);
        return ox_fail(err, ONYX_NOT_IMPLEMENTED,
                       "vulkan: storage buffers cannot use memory type %u", mem_type);
    }
    VkMemoryAllocateInfo ai = {.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO,
                               .allocationSize = req.size, .memoryTypeIndex = mem_type};
    r = v->f.vkAllocateMemory(v->device, &ai, NULL, &b->mem);
    if (r != VK_SUCCESS) {
        b->mem = VK_NULL_HANDLE;
        ox_vk_buf_drop(v, b);
        return ox_vk_fail(err, "vkAllocateMemory", r);
    }
    r = v->f.vkBindBufferMemory(v->device, b->buf, b->mem, 0);
    if (r != VK_SUCCESS) {
        ox_vk_buf_drop(v, b);
        return ox_vk_fail(err, "vkBindBufferMemory", r);
    }
    b->size = size;
    if (map) {
        r = v->f.vkMapMemory(v->device, b->mem, 0, VK_WHOLE_SIZE, 0, &b->mapped);
        if (r != VK_SUCCESS) {
            b->mapped = NULL;
            ox_vk_buf_drop(v, b);
            return ox_vk_fail(err, "vkMapMemory", r);
        }
    }
    return 0;
}

void ox_vk_buf_drop(vk_ep *v, vk_buf *b) {
    /* freeing the memory unmaps it */
    if (b->buf) v->f.vkDestroyBuffer(v->device, b->buf, NULL);
    if (b->mem) v->f.vkFreeMemory(v->device, b->mem, NULL);
    memset(b, 0, sizeof *b);
}

/* ---- command submission (lock held) ---- */

static int begin(vk_ep *v, ox_error *err) {
    VkResult r = v->f.vkResetCommandBuffer(v->cmd, 0);
    if (r != VK_SUCCESS) return ox_vk_fail(err, "vkResetCommandBuffer", r);
    VkCommandBufferBeginInfo bi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
                                   .flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT};
    r = v->f.vkBeginCommandBuffer(v->cmd, &bi);
    if (r != VK_SUCCESS) return ox_vk_fail(err, "vkBeginCommandBuffer", r);
    return 0;
}

static void barrier(vk_ep *v, VkPipelineStageFlags src_stage, VkAccessFlags src,
                    VkPipelineStageFlags dst_stage, VkAccessFlags dst) {
    VkMemoryBarrier mb = {.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER, .srcAccessMask = src,
                          .dstAccessMask = dst};
    v->f.vkCmdPipelineBarrier(v->cmd, src_stage, dst_stage, 0, 1, &mb, 0, NULL, 0, NULL);
}

/* Ends, submits and waits. The last barrier makes the device's writes
 * visible to host reads of mapped memory once the fence signals. */
static int submit_wait(vk_ep *v, ox_error *err) {
    barrier(v, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT,
            VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT, VK_PIPELINE_STAGE_HOST_BIT,
            VK_ACCESS_HOST_READ_BIT);
    VkResult r = v->f.vkEndCommandBuffer(v->cmd);
    if (r != VK_SUCCESS) return ox_vk_fail(err, "vkEndCommandBuffer", r);
    VkSubmitInfo si = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO, .commandBufferCount = 1,
                       .pCommandBuffers = &v->cmd};
    r = v->f.vkQueueSubmit(v->queue, 1, &si, v->fence);
    if (ox_vk_is_fault(r)) return ox_vk_fault(v, r, "vkQueueSubmit", NULL, 0, 1, err);
    if (r != VK_SUCCESS) return ox_vk_fail(err, "vkQueueSubmit", r);
    atomic_fetch_add(&v->submits, 1);
    r = v->f.vkWaitForFences(v->device, 1, &v->fence, VK_TRUE, UINT64_MAX);
    VkResult rr = v->f.vkResetFences(v->device, 1, &v->fence);
    if (ox_vk_is_fault(r)) return ox_vk_fault(v, r, "vkWaitForFences", NULL, 0, 1, err);
    if (r != VK_SUCCESS) return ox_vk_fail(err, "vkWaitForFences", r);
    if (rr != VK_SUCCESS) return ox_vk_fail(err, "vkResetFences", rr);
    return 0;
}

static int ensure_staging(vk_ep *v, ox_error *err) {
    if (v->staging.buf) return 0;
    return ox_vk_buf_make(v, v->staging_bytes, v->mem_type_staging, 1, &v->staging, err);
}

/* One staged chunk: device -> staging (to_host) or staging -> device. */
static int staged_chunk(vk_ep *v, const vk_buf *b, size_t offset, size_t bytes, int to_host,
                        ox_error *err) {
    if (begin(v, err) != 0) return -1;
    VkBufferCopy region = {.srcOffset = to_host ? b->offset + offset : 0,
                           .dstOffset = to_host ? 0 : b->offset + offset, .size = bytes};
    v->f.vkCmdCopyBuffer(v->cmd, to_host ? b->buf : v->staging.buf,
                         to_host ? v->staging.buf : b->buf, 1, &region);
    return submit_wait(v, err);
}

static int check_range(const vk_buf *b, size_t offset, size_t bytes, ox_error *err) {
    if (!b || !b->buf)
        return ox_fail(err, ONYX_RUNTIME_ERROR, "vulkan: copy with a pointer that is no device buffer");
    if (offset > b->size || bytes > b->size - offset)
        return ox_fail(err, ONYX_RUNTIME_ERROR,
                       "vulkan: copy of %zu bytes at %zu past a %llu-byte buffer", bytes, offset,
                       (unsigned long long)b->size);
    return 0;
}

int ox_vk_read(vk_ep *v, const vk_buf *b, size_t offset, void *dst, size_t bytes, ox_error *err) {
    if (ox_vk_check_usable(v, err) != 0 || check_range(b, offset, bytes, err) != 0) return -1;
    if (!bytes) return 0;
    if (b->mapped) {
        memcpy(dst, (const char *)b->mapped + offset, bytes);
        return 0;
    }
    pthread_mutex_lock(&v->lock);
    int rc = ensure_staging(v, err);
    for (size_t done = 0; rc == 0 && done < bytes;) {
        size_t n = bytes - done < v->staging_bytes ? bytes - done : (size_t)v->staging_bytes;
        rc = staged_chunk(v, b, offset + done, n, 1, err);
        if (rc == 0) memcpy((char *)dst + done, v->staging.mapped, n);
        done += n;
    }
    pthread_mutex_unlock(&v->lock);
    return rc;
}

int ox_vk_write(vk_ep *v, vk_buf *b, size_t offset, const void *src, size_t bytes, ox_error *err) {
    if (ox_vk_check_usable(v, err) != 0 || check_range(b, offset, bytes, err) != 0) return -1;
    if (!bytes) return 0;
    if (b->mapped) {
        memcpy((char *)b->mapped + offset, src, bytes);
        return 0;
    }
    pthread_mutex_lock(&v->lock);
    int rc = ensure_staging(v, err);
    for (size_t done = 0; rc == 0 && done < bytes;) {
        size_t n = bytes - done < v->staging_bytes ? bytes - done : (size_t)v->staging_bytes;
        memcpy(v->staging.mapped, (const char *)src + done, n);
        rc = staged_chunk(v, b, offset + done, n, 0, err);
        done += n;
    }
    pthread_mutex_unlock(&v->lock);
    return rc;
}

/* ---- pipelines ---- */

/* Whether ONYX_VK_REFUSE_SHADERS names this shader. */
static int refused(const vk_ep *v, const char *name) {
    size_t len = strlen(name);
    for (const char *p = v->refused_shaders; p && *p;) {
        const char *end = strchr(p, ',');
        size_t n = end ? (size_t)(end - p) : strlen(p);
        if (n == len && strncmp(p, name, n) == 0) return 1;
        p = end ? end + 1 : p + n;
    }
    return 0;
}

/* The pipeline for shader sh, made on first use (lock held). */
static VkPipeline pipeline_locked(vk_ep *v, const vk_shader *sh, ox_error *err) {
    for (int i = 0; i < v->n_pipes; i++)
        if (v->pipes[i].shader == sh) return v->pipes[i].pipe;
    if (refused(v, sh->name)) {
        ox_vk_fail(err, "vkCreateComputePipelines", VK_ERROR_INITIALIZATION_FAILED);
        ox_error_prefix(err, "shader %s (refused through ONYX_VK_REFUSE_SHADERS)", sh->name);
        return VK_NULL_HANDLE;
    }
    if (v->n_pipes == VK_MAX_PIPES) {
        ox_fail(err, ONYX_RUNTIME_ERROR, "vulkan: more than %d shaders", VK_MAX_PIPES);
        return VK_NULL_HANDLE;
    }
    VkShaderModuleCreateInfo mi = {.sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO,
                                   .codeSize = *sh->size, .pCode = sh->code};
    VkShaderModule mod;
    VkResult r = v->f.vkCreateShaderModule(v->device, &mi, NULL, &mod);
    if (r != VK_SUCCESS) {
        ox_vk_fail(err, "vkCreateShaderModule", r);
        ox_error_prefix(err, "shader %s", sh->name);
        return VK_NULL_HANDLE;
    }
    /* the device's workgroup sizes (wg.glsl); a shader ignores the
     * constants it does not declare. The pipeline cache keys on them too. */
    const uint32_t spec_values[3] = {v->wg, v->tile, v->tile};
    const VkSpecializationMapEntry spec_map[3] = {
        {VK_SPEC_WG, 0, sizeof(uint32_t)},
        {VK_SPEC_TILE_X, sizeof(uint32_t), sizeof(uint32_t)},
        {VK_SPEC_TILE_Y, 2 * sizeof(uint32_t), sizeof(uint32_t)}};
    const VkSpecializationInfo spec = {.mapEntryCount = 3, .pMapEntries = spec_map,
                                       .dataSize = sizeof spec_values, .pData = spec_values};
    VkComputePipelineCreateInfo ci = {
        .sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO,
        /* a dispatch over the budget is recorded in slices with a base group */
        .flags = VK_PIPELINE_CREATE_DISPATCH_BASE,
        .stage = {.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO,
                  .stage = VK_SHADER_STAGE_COMPUTE_BIT, .module = mod, .pName = "main",
                  .pSpecializationInfo = &spec},
        .layout = v->pipe_layout};
    VkPipeline pipe;
    r = v->f.vkCreateComputePipelines(v->device, v->pipeline_cache, 1, &ci, NULL, &pipe);
    v->f.vkDestroyShaderModule(v->device, mod, NULL);
    if (r != VK_SUCCESS) {
        ox_vk_fail(err, "vkCreateComputePipelines", r);
        ox_error_prefix(err, "shader %s", sh->name);
        return VK_NULL_HANDLE;
    }
    v->pipes[v->n_pipes].shader = sh;
    v->pipes[v->n_pipes].pipe = pipe;
    v->n_pipes++;
    return pipe;
}

VkPipeline ox_vk_pipeline(vk_ep *v, const vk_shader *sh, ox_error *err) {
    pthread_mutex_lock(&v->lock);
    VkPipeline p = pipeline_locked(v, sh, err);
    pthread_mutex_unlock(&v->lock);
    return p;
}

/* ---- setup ---- */

int ox_vk_index_fail(vk_ep *v, const vk_check_rec *ck, uint32_t first_bad, ox_error *err) {
    int64_t bad = 0;
    if (first_bad >= (uint64_t)ck->n_indices)
        return ox_fail(err, ONYX_INVALID_ARGUMENT, "%s: an index is out of range", ck->what);
    if (ck->idx64) {
        if (ox_vk_read(v, ck->indices, (size_t)first_bad * 8, &bad, 8, err) != 0) return -1;
    } else {
        int32_t b32 = 0;
        if (ox_vk_read(v, ck->indices, (size_t)first_bad * 4, &b32, 4, err) != 0) return -1;
        bad = b32;
    }
    if (ck->axis >= 0 && ck->axis_size >= 0)
        return ox_fail(err, ONYX_INVALID_ARGUMENT,
                       "%s: index %lld (position %u of the indices) is out of range for axis %d "
                       "of size %lld", ck->what, (long long)bad, first_bad, ck->axis,
                       (long long)ck->axis_size);
    if (ck->axis_size >= 0)
        return ox_fail(err, ONYX_INVALID_ARGUMENT,
                       "%s: index %lld (position %u of the indices) is out of range for a "
                       "dimension of size %lld", ck->what, (long long)bad, first_bad,
                       (long long)ck->axis_size);
    return ox_fail(err, ONYX_INVALID_ARGUMENT,
                   "%s: index %lld (position %u of the indices) is out of range for the data's "
                   "shape", ck->what, (long long)bad, first_bad);
}

int ox_vk_exec_init(vk_ep *v, ox_error *err) {
    VkResult r;
    /* staging buffers: 8 MiB, or the device's largest allocation (a
     * masked limit) when smaller, in whole 16-byte units */
    v->staging_bytes = (VkDeviceSize)8 << 20;
    if (v->caps.max_allocation_size && v->caps.max_allocation_size < v->staging_bytes)
        v->staging_bytes = v->caps.max_allocation_size & ~(VkDeviceSize)15;
    /* flag blocks sit at offsets the device accepts for storage buffers */
    uint32_t align = v->caps.min_storage_offset_alignment;
    v->flag_stride = 16;
    while (v->flag_stride < align && v->flag_stride < 65536) v->flag_stride *= 2;
    VkCommandPoolCreateInfo pi = {.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
                                  .flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT,
                                  .queueFamilyIndex = v->queue_family};
    if ((r = v->f.vkCreateCommandPool(v->device, &pi, NULL, &v->cmd_pool)) != VK_SUCCESS) {
        v->cmd_pool = VK_NULL_HANDLE;
        return ox_vk_fail(err, "vkCreateCommandPool", r);
    }
    VkCommandBufferAllocateInfo ci = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
                                      .commandPool = v->cmd_pool,
                                      .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY,
                                      .commandBufferCount = 1};
    if ((r = v->f.vkAllocateCommandBuffers(v->device, &ci, &v->cmd)) != VK_SUCCESS)
        return ox_vk_fail(err, "vkAllocateCommandBuffers", r);
    VkFenceCreateInfo fi = {.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    if ((r = v->f.vkCreateFence(v->device, &fi, NULL, &v->fence)) != VK_SUCCESS) {
        v->fence = VK_NULL_HANDLE;
        return ox_vk_fail(err, "vkCreateFence", r);
    }
    VkDescriptorSetLayoutBinding binds[VK_BINDINGS];
    for (int i = 0; i < VK_BINDINGS; i++)
        binds[i] = (VkDescriptorSetLayoutBinding){.binding = (uint32_t)i,
                                                  .descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
                                                  .descriptorCount = 1,
                                                  .stageFlags = VK_SHADER_STAGE_COMPUTE_BIT};
    VkDescriptorSetLayoutCreateInfo li = {.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO,
                                          .bindingCount = VK_BINDINGS, .pBindings = binds};
    if ((r = v->f.vkCreateDescriptorSetLayout(v->device, &li, NULL, &v->set_layout)) != VK_SUCCESS) {
        v->set_layout = VK_NULL_HANDLE;
        return ox_vk_fail(err, "vkCreateDescriptorSetLayout", r);
    }
    VkPushConstantRange pr = {.stageFlags = VK_SHADER_STAGE_COMPUTE_BIT, .offset = 0,
                              .size = VK_PUSH_BYTES};
    VkPipelineLayoutCreateInfo pli = {.sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO,
                                      .setLayoutCount = 1, .pSetLayouts = &v->set_layout,
                                      .pushConstantRangeCount = 1, .pPushConstantRanges = &pr};
    if ((r = v->f.vkCreatePipelineLayout(v->device, &pli, NULL, &v->pipe_layout)) != VK_SUCCESS) {
        v->pipe_layout = VK_NULL_HANDLE;
        return ox_vk_fail(err, "vkCreatePipelineLayout", r);
    }
    if (ox_vk_pipeline_cache_open(v, err) != 0) return -1;
    const char *refuse = getenv("ONYX_VK_REFUSE_SHADERS");
    if (refuse && refuse[0] && !(v->refused_shaders = strdup(refuse)))
        return ox_fail(err, ONYX_OUT_OF_MEMORY, "out of memory");
    return ox_vk_buf_make(v, 16, v->mem_type_device, 0, &v->dummy, err);
}

void ox_vk_exec_free(vk_ep *v) {
    /* device functions load in list order, vkDeviceWaitIdle last: when it
     * is there, so is every other (and when it is not, nothing was made) */
    if (!v->device || !v->f.vkDeviceWaitIdle) return;
    /* nothing is in flight (every submission was waited for), but a
     * failed wait may have left work behind */
    v->f.vkDeviceWaitIdle(v->device);
    ox_vk_streams_destroy(v);
    for (int p = 0; p < v->n_pipes; p++) v->f.vkDestroyPipeline(v->device, v->pipes[p].pipe, NULL);
    ox_vk_pipeline_cache_close(v);
    ox_vk_buf_drop(v, &v->staging);
    ox_vk_buf_drop(v, &v->dummy);
    if (v->pipe_layout) v->f.vkDestroyPipelineLayout(v->device, v->pipe_layout, NULL);
    if (v->set_layout) v->f.vkDestroyDescriptorSetLayout(v->device, v->set_layout, NULL);
    if (v->fence) v->f.vkDestroyFence(v->device, v->fence, NULL);
    if (v->cmd_pool) v->f.vkDestroyCommandPool(v->device, v->cmd_pool, NULL);
}
