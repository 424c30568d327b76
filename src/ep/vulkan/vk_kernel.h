/* What the Vulkan provider's kernel files share (vk_kernel_util.c): the
 * checks every kernel makes on its tensors, workgroup counts, dispatch
 * through the run's command stream, device scratch buffers and index
 * checks. A kernel file includes this header, names its shaders with
 * OX_VK_SHADER(name) and exports one ox_kernel_table.
 *
 * A kernel only records work: ox_vk_run may return before the device has
 * run it, and the provider submits at the run's synchronization points.
 * A kernel that must see a result on the host (a count deciding an output
 * shape) calls ox_vk_read_back, which waits for everything recorded. */
#ifndef ONYX_EP_VULKAN_VK_KERNEL_H
#define ONYX_EP_VULKAN_VK_KERNEL_H

#include <inttypes.h>
#include <string.h>

#include "ep/vulkan/vk_internal.h"

/* Shaders index with 32-bit unsigned integers, with room for sums. */
#define OX_VK_MAX_ELEMS INT32_MAX

static inline vk_ep *ox_vk_of(ox_kernel_ctx *c) { return (vk_ep *)c->ep; }
/* The device buffer behind a tensor on the Vulkan device. */
static inline const vk_buf *ox_vk_buf(const ox_tensor *t) { return t->data; }

/* Element count of a fully known shape, -1 otherwise (INT64_MAX on
 * overflow). */
int64_t ox_vk_known_numel(const ir_type *t);
/* numel elements of `elem` bytes fit one storage buffer and 32-bit
 * indexing (unknown counts, < 0, fit: they are checked at run time). */
int ox_vk_fits(const vk_ep *v, int64_t numel, size_t elem);
/* The same for a kernel that binds its tensors in windows (offset and
 * range, vk_dispatch): one allocation and 32-bit indexing suffice. */
int ox_vk_fits_windowed(const vk_ep *v, int64_t numel, size_t elem);
/* Every input (except those the file reads on the host, `host_mask`) and
 * every output is a tensor in Vulkan memory that fits: fails ctx with a
 * clear message otherwise. */
int ox_vk_check_io(ox_kernel_ctx *c, uint32_t host_mask);
/* ox_vk_check_io for a kernel that binds windows (ox_vk_fits_windowed). */
int ox_vk_check_io_windowed(ox_kernel_ctx *c, uint32_t host_mask);
/* Workgroups for n items, `per` items per group, along dimension dim,
 * clamped to the device's limit (shaders then stride over the rest). */
uint32_t ox_vk_groups(const vk_ep *v, int64_t n, int64_t per, int dim);

/* Records one dispatch into the run's stream (or runs it at once outside
 * a run). An index check fails the run when its flag is read, naming this
 * node. */
int ox_vk_run(ox_kernel_ctx *c, const vk_dispatch *d);
/* A device buffer for the kernel's own use, freed by ox_vk_scratch_free
 * (which may be called right after the last ox_vk_run that uses it: the
 * provider keeps it until the device is done). NULL with ctx->err set. */
vk_buf *ox_vk_scratch(ox_kernel_ctx *c, size_t bytes);
void ox_vk_scratch_free(ox_kernel_ctx *c, vk_buf *b);
/* Fills b (a scratch buffer) from host memory, in order with the
 * recorded work: a recycled buffer may still be read by work recorded
 * earlier, so within a run the bytes go through the stream's staging
 * copy unless nothing is pending. */
int ox_vk_upload(ox_kernel_ctx *c, vk_buf *b, const void *src, size_t bytes);
/* Waits for everything recorded so far, then copies bytes at offset of b
 * to dst. */
int ox_vk_read_back(ox_kernel_ctx *c, const vk_buf *b, size_t offset, void *dst, size_t bytes);

/* Type checks for supports(). */
int ox_vk_is_tensor(const ir_type *t, ox_dtype dtype);
/* Inputs [0, n): each present one float32; `required` of them present. */
int ox_vk_f32_inputs(const ir_type *const *in, int n, int required);

#endif
