/* The run-time value: a dense tensor, a sequence of tensors, or an
 * optional that may be empty. The public onyx_tensor is this struct. */
#ifndef ONYX_CORE_TENSOR_H
#define ONYX_CORE_TENSOR_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "core/dtype.h"
#include "core/error.h"

#define OX_MAX_RANK 16

typedef enum ox_kind {
    OX_KIND_TENSOR = 0,
    OX_KIND_SEQUENCE = 1,
    OX_KIND_OPTIONAL = 2, /* holds at most one element in items[0] */
} ox_kind;

/* Who frees `data`. */
typedef enum ox_ownership {
    OX_BORROWED = 0, /* caller memory, arena memory or an initializer */
    OX_OWNED = 1,    /* allocated by ox_tensor_alloc, freed with the tensor */
} ox_ownership;

/* Run-time memory counted against a session's limit: every run of the
 * session reserves here before it allocates (arenas, run-time tensors,
 * values kernels build) and gives the bytes back when they are freed, so
 * concurrent runs share one budget. */
typedef struct ox_mem_account {
    size_t limit; /* 0: unlimited (bytes are still counted) */
    atomic_size_t in_use;
} ox_mem_account;

/* Reserves bytes, or fails with ONYX_OUT_OF_MEMORY saying how many bytes
 * were needed, the limit and the bytes in use. A NULL account always
 * succeeds. */
int ox_mem_reserve(ox_mem_account *a, size_t bytes, ox_error *err);
void ox_mem_unreserve(ox_mem_account *a, size_t bytes);

typedef struct onyx_tensor {
    ox_kind kind;
    ox_dtype dtype;
    int rank;
    int64_t dims[OX_MAX_RANK];
    void *data;
    size_t nbytes;
    int device; /* index of the device that holds data; 0 = host */
    ox_ownership ownership;
    /* Sequence / optional payload (kind != TENSOR). For an optional,
     * n_items is 0 (None) or 1. */
    int n_items;
    struct onyx_tensor **items;
    ox_dtype elem_dtype; /* element type of a sequence/optional, for empty ones */
    /* The account this value's own bytes are charged to (NULL: none);
     * freeing the value gives `charged` bytes back to it. */
    ox_mem_account *account;
    size_t charged;
} ox_tensor;

/* Product of rank dims; -1 when a dim is negative or the product
 * overflows int64 (never for an existing tensor, whose byte size was
 * checked when it was made). */
int64_t ox_numel(const int64_t *dims, int rank);
static inline int64_t ox_tensor_numel(const ox_tensor *t) { return ox_numel(t->dims, t->rank); }

/* Computes numel * dtype size with overflow checks. */
int ox_bytes_for(ox_dtype t, const int64_t *dims, int rank, size_t *out, ox_error *err);

/* Fails when one allocation of `bytes` could never fit in memory. */
int ox_check_alloc_size(size_t bytes, ox_error *err);

/* Heap tensor with zeroed owned storage (strings set to ""), its data on
 * a 64-byte boundary. */
ox_tensor *ox_tensor_new(ox_dtype t, const int64_t *dims, int rank, ox_error *err);
/* The same without zeroing the bytes, for a caller that writes all of
 * them (a weight read from its file); strings are still set to "". */
ox_tensor *ox_tensor_new_unset(ox_dtype t, const int64_t *dims, int rank, ox_error *err);
/* Tensor header describing memory it does not own. */
ox_tensor *ox_tensor_wrap(ox_dtype t, const int64_t *dims, int rank, void *data, ox_error *err);
ox_tensor *ox_sequence_new(ox_dtype elem, ox_error *err);
int ox_sequence_push(ox_tensor *seq, ox_tensor *item, ox_error *err); /* takes item */
ox_tensor *ox_optional_new(ox_dtype elem, ox_tensor *item_or_null, ox_error *err);
ox_tensor *ox_tensor_clone(const ox_tensor *t, ox_error *err); /* deep copy */
void ox_tensor_free(ox_tensor *t);
/* Frees string payloads and owned data; leaves the header. */
void ox_tensor_release_data(ox_tensor *t);

/* Bytes a value would be charged for: for every tensor, sequence or
 * optional in it not yet charged, its header, its item list and the data
 * it owns (strings with their characters). */
size_t ox_value_charge_bytes(const ox_tensor *t);
/* Marks every uncharged part of the value as charged to `a`, exactly the
 * ox_value_charge_bytes(t) the caller has reserved. */
void ox_value_attach_charge(ox_tensor *t, ox_mem_account *a);
/* Gives back every charge in the value and detaches it from its account
 * (before a value leaves the session, e.g. to the caller). */
void ox_value_uncharge(ox_tensor *t);

int ox_shape_equal(const int64_t *a, int ra, const int64_t *b, int rb);
/* "[1,3,224,224]" into buf. */
const char *ox_shape_str(const int64_t *dims, int rank, char *buf, size_t n);

#endif
