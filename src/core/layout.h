/* The channel-blocked layout of float32 activations that the CPU
 * provider's convolutions keep between them (the onyx operators
 * BlockChannels, BlockedConv and UnblockChannels, src/ops/contrib.c): a
 * tensor [N, C, S...] held as [N, ceil(C/16), S..., 16], channel c at
 * block c / 16, lane c % 16. Converting one (image, block) pair at a time
 * lets the kernels split the work over threads and the capture of a run's
 * values (src/runtime/observe.c) report blocked values in the model's
 * own layout. */
#ifndef ONYX_CORE_LAYOUT_H
#define ONYX_CORE_LAYOUT_H

#include <stdint.h>

#include "core/tensor.h"

#define OX_CHANNEL_BLOCK 16

/* Block cb of image n: planar [N, C, S] (S positions per channel) to or
 * from blocked [N, ceil(C/16), S, 16]. Blocking writes zeros in the lanes
 * past C; unblocking never reads them. */
void ox_layout_block(const float *planar, float *blocked, int64_t C, int64_t S, int64_t n, int64_t cb);
/* Where block cb of image n starts: *blk in the blocked tensor, *pl (its
 * first channel's plane) in the planar one; returns its channels (16, or
 * fewer in the last block). For other implementations of the two above
 * (the CPU provider's vector reorders). */
int64_t ox_layout_block_at(int64_t C, int64_t S, int64_t n, int64_t cb, int64_t *blk, int64_t *pl);
void ox_layout_unblock(const float *blocked, float *planar, int64_t C, int64_t S, int64_t n, int64_t cb);

/* A new planar float32 tensor [N, C, S...] of blocked t ([N, ceil(C/16),
 * S..., 16]), or NULL (err set) when t is not that. */
ox_tensor *ox_layout_unblocked_copy(const ox_tensor *t, int64_t C, ox_error *err);

#endif
