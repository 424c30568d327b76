/* Arena packing (see pack.h). The greedy placement needs, for each block,
 * the blocks already placed whose lifetimes meet its own: a segment tree
 * over steps holds each placed lifetime at the O(log steps) tree nodes
 * that cover it exactly, and a lifetime meets a query span exactly when
 * one of its nodes is an ancestor of, or inside, one of the span's nodes.
 * Scanning only those blocks, sorted by offset, finds the lowest gap. */
#include "planner/pack.h"

#include <stdlib.h>
#include <string.h>

#include "core/checked.h"

#define NO_ENTRY SIZE_MAX

static int aligned(size_t size, size_t *out) {
    if (!ox_add_size(size, OX_ARENA_ALIGN - 1, out)) return 0;
    *out = *out / OX_ARENA_ALIGN * OX_ARENA_ALIGN;
    return 1;
}

/* ---- lifetime index ---- */

typedef struct life_index {
    size_t leaves;      /* a power of two covering every step */
    size_t *head;       /* per tree node: its first entry, NO_ENTRY when none */
    size_t *in_subtree; /* per tree node: entries held at or below it */
    int *node_stamp;    /* per tree node: last query that visited it */
    size_t *entry_next;
    int *entry_block;
    size_t n_entries, cap_entries;
    int *block_stamp; /* per block: last query that reported it */
    int stamp;
    size_t visits;    /* entries looked at, for the budget (the tree nodes
                         around them are O(log steps) per entry and query) */
} life_index;

static void index_free(life_index *ix) {
    free(ix->head);
    free(ix->in_subtree);
    free(ix->node_stamp);
    free(ix->entry_next);
    free(ix->entry_block);
    free(ix->block_stamp);
}

static int index_init(life_index *ix, int n_blocks, int last_step) {
    memset(ix, 0, sizeof *ix);
    ix->leaves = 1;
    while (ix->leaves < (size_t)last_step + 1) ix->leaves <<= 1;
    size_t nodes = 2 * ix->leaves;
    ix->head = malloc(nodes * sizeof *ix->head);
    ix->in_subtree = calloc(nodes, sizeof *ix->in_subtree);
    ix->node_stamp = calloc(nodes, sizeof *ix->node_stamp);
    ix->block_stamp = calloc((size_t)n_blocks + 1, sizeof *ix->block_stamp);
    if (!ix->head || !ix->in_subtree || !ix->node_stamp || !ix->block_stamp) return -1;
    for (size_t i = 0; i < nodes; i++) ix->head[i] = NO_ENTRY;
    return 0;
}

static int store(life_index *ix, size_t node, int block) {
    if (ix->n_entries == ix->cap_entries) {
        size_t cap = ix->cap_entries ? ix->cap_entries * 2 : 1024;
        size_t *nn = realloc(ix->entry_next, cap * sizeof *nn);
        if (!nn) return -1;
        ix->entry_next = nn;
        int *nb = realloc(ix->entry_block, cap * sizeof *nb);
        if (!nb) return -1;
        ix->entry_block = nb;
        ix->cap_entries = cap;
    }
    ix->entry_block[ix->n_entries] = block;
    ix->entry_next[ix->n_entries] = ix->head[node];
    ix->head[node] = ix->n_entries++;
    for (size_t x = node; x >= 1; x >>= 1) ix->in_subtree[x]++;
    return 0;
}

/* The tree nodes that exactly cover steps first..last, bottom-up. */
static int cover(const life_index *ix, int first, int last, size_t *nodes) {
    int k = 0;
    for (size_t l = (size_t)first + ix->leaves, r = (size_t)last + ix->leaves + 1; l < r;
         l >>= 1, r >>= 1) {
        if (l & 1) nodes[k++] = l++;
        if (r & 1) nodes[k++] = --r;
    }
    return k;
}

static int index_add(life_index *ix, int block, int first, int last) {
    size_t nodes[130];
    int k = cover(ix, first, last, nodes);
    for (int i = 0; i < k; i++)
        if (store(ix, nodes[i], block) != 0) return -1;
    return 0;
}

/* Appends the blocks held at one tree node, each once per query. */
static void report_node(life_index *ix, size_t node, int *found, int *n_found) {
    for (size_t e = ix->head[node]; e != NO_ENTRY; e = ix->entry_next[e]) {
        int b = ix->entry_block[e];
        ix->visits++;
        if (ix->block_stamp[b] == ix->stamp) continue;
        ix->block_stamp[b] = ix->stamp;
        found[(*n_found)++] = b;
    }
}

/* Every stored block whose lifetime meets first..last. */
static int index_query(life_index *ix, int first, int last, int *found) {
    size_t nodes[130], stack[130];
    int k = cover(ix, first, last, nodes), n_found = 0;
    ix->stamp++;
    for (int i = 0; i < k; i++) {
        /* ancestors: lifetimes that contain this whole node */
        for (size_t x = nodes[i] >> 1; x >= 1 && ix->node_stamp[x] != ix->stamp; x >>= 1) {
            ix->node_stamp[x] = ix->stamp;
            report_node(ix, x, found, &n_found);
        }
        /* the node and below: lifetimes that start or end inside it */
        int depth = 0;
        stack[depth++] = nodes[i];
        while (depth > 0) {
            size_t x = stack[--depth];
            if (ix->in_subtree[x] == 0) continue;
            report_node(ix, x, found, &n_found);
            if (x < ix->leaves) {
                stack[depth++] = 2 * x;
                stack[depth++] = 2 * x + 1;
            }
        }
    }
    return n_found;
}

/* ---- greedy placement by size ---- */

typedef struct sized {
    size_t size;
    int block;
} sized;

static int larger_first(const void *a, const void *b) {
    const sized *x = a, *y = b;
    if (x->size != y->size) return x->size > y->size ? -1 : 1;
    return (x->block > y->block) - (x->block < y->block);
}

typedef struct placed {
    size_t begin, end;
} placed;

static int lower_first(const void *a, const void *b) {
    const placed *x = a, *y = b;
    return (x->begin > y->begin) - (x->begin < y->begin);
}

/* The lowest offset where `need` bytes clear all of `around`. */
static size_t lowest_gap(placed *around, int n, size_t need) {
    qsort(around, (size_t)n, sizeof *around, lower_first);
    size_t cand = 0;
    for (int i = 0; i < n && around[i].begin < cand + need; i++)
        if (around[i].end > cand) cand = around[i].end;
    return cand;
}

int ox_pack_greedy(int n, const size_t *sizes, const int *life, int last_step, size_t budget,
                   size_t *offset, size_t *arena) {
    int m = 0, rc = -1;
    sized *order = malloc(((size_t)n + 1) * sizeof *order);
    size_t *span = malloc(((size_t)n + 1) * sizeof *span);
    int *found = malloc(((size_t)n + 1) * sizeof *found);
    placed *around = malloc(((size_t)n + 1) * sizeof *around);
    life_index ix;
    int ix_ok = index_init(&ix, n, last_step) == 0;
    *arena = 0;
    if (!order || !span || !found || !around || !ix_ok) goto done;
    for (int s = 0; s < n; s++) {
        offset[s] = SIZE_MAX;
        if (sizes[s] == 0) continue;
        if (!aligned(sizes[s], &span[s])) goto done;
        order[m++] = (sized){sizes[s], s};
    }
    qsort(order, (size_t)m, sizeof *order, larger_first);
    for (int i = 0; i < m; i++) {
        int s = order[i].block;
        int k = index_query(&ix, life[2 * s], life[2 * s + 1], found);
        if (ix.visits > budget) {
            rc = 1;
            goto done;
        }
        for (int j = 0; j < k; j++)
            around[j] = (placed){offset[found[j]], offset[found[j]] + span[found[j]]};
        size_t end;
        offset[s] = lowest_gap(around, k, span[s]);
        if (!ox_add_size(offset[s], span[s], &end)) goto done;
        if (end > *arena) *arena = end;
        if (index_add(&ix, s, life[2 * s], life[2 * s + 1]) != 0) goto done;
    }
    rc = 0;
done:
    index_free(&ix);
    free(order);
    free(span);
    free(found);
    free(around);
    return rc;
}

/* ---- fallback: placement in step order ---- */

typedef struct timed {
    int step, block;
} timed;

static int earlier_first(const void *a, const void *b) {
    const timed *x = a, *y = b;
    if (x->step != y->step) return (x->step > y->step) - (x->step < y->step);
    return (x->block > y->block) - (x->block < y->block);
}

static int size_class(size_t bytes) { return 63 - __builtin_clzll((unsigned long long)bytes); }

/* Freed blocks by size class (floor log2 of their capacity): any block of
 * a higher class than the request's fits it. */
typedef struct free_lists {
    int head[64];
    int *next;        /* per block */
    size_t *capacity; /* per block */
} free_lists;

static int take_free(free_lists *fl, size_t need) {
    int c = size_class(need), b = fl->head[c];
    if (b >= 0 && fl->capacity[b] >= need) {
        fl->head[c] = fl->next[b];
        return b;
    }
    for (c++; c < 64; c++)
        if ((b = fl->head[c]) >= 0) {
            fl->head[c] = fl->next[b];
            return b;
        }
    return -1;
}

int ox_pack_by_step(int n, const size_t *sizes, const int *life, size_t *offset, size_t *arena) {
    int m = 0, rc = -1;
    timed *starts = malloc(((size_t)n + 1) * sizeof *starts);
    timed *ends = malloc(((size_t)n + 1) * sizeof *ends);
    int *holder = malloc(((size_t)n + 1) * sizeof *holder); /* block whose memory it uses */
    free_lists fl = {.next = malloc(((size_t)n + 1) * sizeof(int)),
                     .capacity = malloc(((size_t)n + 1) * sizeof(size_t))};
    *arena = 0;
    if (!starts || !ends || !holder || !fl.next || !fl.capacity) goto done;
    for (int c = 0; c < 64; c++) fl.head[c] = -1;
    for (int s = 0; s < n; s++) {
        offset[s] = SIZE_MAX;
        if (sizes[s] == 0) continue;
        starts[m] = (timed){life[2 * s], s};
        ends[m++] = (timed){life[2 * s + 1], s};
    }
    qsort(starts, (size_t)m, sizeof *starts, earlier_first);
    qsort(ends, (size_t)m, sizeof *ends, earlier_first);
    for (int i = 0, j = 0; i < m; i++) {
        int s = starts[i].block;
        /* blocks dead before this one's first step give their memory back */
        for (; j < m && ends[j].step < starts[i].step; j++) {
            int b = holder[ends[j].block], c = size_class(fl.capacity[b]);
            fl.next[b] = fl.head[c];
            fl.head[c] = b;
        }
        size_t need;
        if (!aligned(sizes[s], &need)) goto done;
        int b = take_free(&fl, need);
        if (b < 0) { /* a new block at the end of the arena */
            b = s;
            offset[s] = *arena;
            fl.capacity[b] = need;
            if (!ox_add_size(*arena, need, arena)) goto done;
        }
        holder[s] = b;
        offset[s] = offset[b];
    }
    rc = 0;
done:
    free(starts);
    free(ends);
    free(holder);
    free(fl.next);
    free(fl.capacity);
    return rc;
}

size_t ox_pack_arena(int n, const size_t *sizes, const int *life, int last_step, size_t *offset) {
    /* a few dozen overlaps per block is what real graphs have; far more
     * means thousands of blocks alive at once, where greedy placement
     * would grow quadratic */
    size_t budget = (size_t)n * 64 + ((size_t)1 << 22), arena;
    int rc = ox_pack_greedy(n, sizes, life, last_step, budget, offset, &arena);
    if (rc == 1) rc = ox_pack_by_step(n, sizes, life, offset, &arena);
    return rc == 0 ? arena : SIZE_MAX;
}
