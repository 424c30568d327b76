/* Arena packing: offsets for blocks that each live over a span of steps,
 * so that blocks alive at the same step never share bytes. */
#ifndef ONYX_PLANNER_PACK_H
#define ONYX_PLANNER_PACK_H

#include <stddef.h>
#include <stdint.h>

#define OX_ARENA_ALIGN 64

/* Packs n blocks: block i of sizes[i] bytes (0: not in the arena) lives
 * from step life[2i] to step life[2i+1] inclusive (0 <= first <= last <=
 * last_step). Writes offset[i] (SIZE_MAX for size 0) and returns the
 * arena size, or SIZE_MAX when out of memory.
 *
 * Greedy by decreasing size (ties in index order): each block takes the
 * lowest 64-byte-aligned offset clear of every block already placed
 * whose lifetime meets its own. The blocks to avoid come from an index of
 * lifetimes, so the cost is O(n log n + P log P) for P pairs of
 * overlapping lifetimes (a few per block in a chain). When P is far above
 * n (thousands of blocks alive at once) it packs in step order instead,
 * reusing freed blocks by size class, O(n log n). */
size_t ox_pack_arena(int n, const size_t *sizes, const int *life, int last_step, size_t *offset);

/* The two strategies on their own (tests compare them). Both return 0
 * with *arena set, or -1 when out of memory or the arena size overflows;
 * the greedy one returns 1 when it visits more than `budget` overlaps. */
int ox_pack_greedy(int n, const size_t *sizes, const int *life, int last_step, size_t budget,
                   size_t *offset, size_t *arena);
int ox_pack_by_step(int n, const size_t *sizes, const int *life, size_t *offset, size_t *arena);

#endif
