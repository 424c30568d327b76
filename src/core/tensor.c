#include "core/checked.h"
#include "core/tensor.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/checked.h"

int64_t ox_numel(const int64_t *dims, int rank) {
    int64_t n;
    return ox_numel_checked(dims, rank, &n) ? n : -1;
}

/* A tensor larger than the machine's memory cannot be backed: refusing it
 * up front turns a crafted or mistaken shape into a clear error instead of
 * an allocation that overcommit grants and the OOM killer later collects.
 * Only sizes above 1 GiB pay for the lookup. */
int ox_check_alloc_size(size_t bytes, ox_error *err) {
    if (bytes <= ((size_t)1 << 30)) return 0;
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    if (pages > 0 && page > 0 && bytes / (size_t)page > (size_t)pages)
        return ox_fail(err, ONYX_OUT_OF_MEMORY,
                       "a tensor of %zu bytes is larger than this machine's memory (%zu bytes)", bytes,
                       (size_t)pages * (size_t)page);
    return 0;
}

int ox_mem_reserve(ox_mem_account *a, size_t bytes, ox_error *err) {
    if (!a || bytes == 0) return 0;
    size_t cur = atomic_load_explicit(&a->in_use, memory_order_relaxed), next;
    do {
        /* a limit is checked and taken in one step, so two runs cannot both
         * pass the check with the last free bytes */
        if (!ox_add_size(cur, bytes, &next) || (a->limit && next > a->limit)) {
            if (a->limit)
                return ox_fail(err, ONYX_OUT_OF_MEMORY,
                               "needs %zu bytes, the session's memory limit is %zu bytes and %zu "
                               "bytes are in use",
                               bytes, a->limit, cur);
            return ox_fail(err, ONYX_OUT_OF_MEMORY, "needs %zu bytes with %zu bytes in use", bytes,
                           cur);
        }
    } while (!atomic_compare_exchange_weak_explicit(&a->in_use, &cur, next, memory_order_relaxed,
                                                    memory_order_relaxed));
    return 0;
}

void ox_mem_unreserve(ox_mem_account *a, size_t bytes) {
    if (a && bytes) atomic_fetch_sub_explicit(&a->in_use, bytes, memory_order_relaxed);
}

/* The bytes one value node holds by itself, items excluded. */
static size_t own_bytes(const ox_tensor *t) {
    size_t n = sizeof *t + (size_t)t->n_items * sizeof *t->items;
    if (t->ownership != OX_OWNED) return n;
    n += t->nbytes;
    if (t->kind == OX_KIND_TENSOR && t->dtype == ONYX_STRING && t->data) {
        char *const *s = t->data;
        size_t count = t->nbytes / sizeof(char *);
        for (size_t i = 0; i < count; i++)
            if (s[i]) n += strlen(s[i]) + 1;
    }
    return n;
}

size_t ox_value_charge_bytes(const ox_tensor *t) {
    if (!t) return 0;
    size_t n = t->account ? 0 : own_bytes(t);
    for (int i = 0; i < t->n_items; i++) n += ox_value_charge_bytes(t->items[i]);
    return n;
}

void ox_value_attach_charge(ox_tensor *t, ox_mem_account *a) {
    if (!t || !a) return;
    if (!t->account) {
        t->account = a;
        t->charged = own_bytes(t);
    }
    for (int i = 0; i < t->n_items; i++) ox_value_attach_charge(t->items[i], a);
}

void ox_value_uncharge(ox_tensor *t) {
    if (!t) return;
    ox_mem_unreserve(t->account, t->charged);
    t->account = NULL;
    t->charged = 0;
    for (int i = 0; i < t->n_items; i++) ox_value_uncharge(t->items[i]);
}

int ox_bytes_for(ox_dtype t, const int64_t *dims, int rank, size_t *out, ox_error *err) {
    if (rank < 0 || rank > OX_MAX_RANK)
        return ox_fail(err, ONYX_NOT_IMPLEMENTED, "rank %d exceeds onyx's limit of %d", rank,
                       OX_MAX_RANK);
    size_t esize = ox_dtype_size(t);
    if (esize == 0) return ox_fail(err, ONYX_INVALID_ARGUMENT, "undefined element type %d", (int)t);
    int empty = 0;
    for (int i = 0; i < rank; i++) {
        if (dims[i] < 0)
            return ox_fail(err, ONYX_INVALID_ARGUMENT, "negative dimension %lld",
                           (long long)dims[i]);
        empty |= dims[i] == 0;
    }
    /* an empty tensor's other axes must still multiply within int64 (see
     * ox_numel_checked); a non-empty one's bytes within SIZE_MAX / 2 */
    int64_t numel = 0;
    size_t total = 0;
    if (!ox_numel_checked(dims, rank, &numel) ||
        (numel > 0 && (!ox_mul_size((size_t)numel, esize, &total) || total > SIZE_MAX / 2))) {
        char shape[128];
        return ox_fail(err, ONYX_OUT_OF_MEMORY, "tensor size overflows: %s %s%s", ox_dtype_name(t),
                       ox_shape_str(dims, rank, shape, sizeof shape),
                       empty ? " is empty, but its other dimensions multiply past int64" : "");
    }
    *out = total;
    return 0;
}

static ox_tensor *header(ox_dtype t, const int64_t *dims, int rank, ox_error *err) {
    if (rank < 0 || rank > OX_MAX_RANK) {
        ox_fail(err, ONYX_NOT_IMPLEMENTED, "rank %d exceeds onyx's limit of %d", rank, OX_MAX_RANK);
        return NULL;
    }
    ox_tensor *x = calloc(1, sizeof *x);
    if (!x) {
        ox_fail(err, ONYX_OUT_OF_MEMORY, "out of memory");
        return NULL;
    }
    x->kind = OX_KIND_TENSOR;
    x->dtype = t;
    x->rank = rank;
    if (rank) memcpy(x->dims, dims, (size_t)rank * sizeof *dims);
    return x;
}

/* Owned storage on a 64-byte boundary (a cache line, and whole vectors
 * of every width the kernels use), zeroed unless the caller writes every
 * byte: kernels that read a tensor in place (a fully connected layer's
 * weights at batch 1) lose a quarter of their speed when a vector load
 * straddles two lines, which malloc's 16-byte alignment makes every
 * other 32-byte load do. */
static ox_tensor *tensor_alloc(ox_dtype t, const int64_t *dims, int rank, int zero, ox_error *err) {
    size_t nbytes;
    if (ox_bytes_for(t, dims, rank, &nbytes, err) != 0 || ox_check_alloc_size(nbytes, err) != 0)
        return NULL;
    ox_tensor *x = header(t, dims, rank, err);
    if (!x) return NULL;
    /* never zero-sized so data is a valid pointer even for empty tensors;
     * whole lines, as aligned_alloc takes (nbytes is far below SIZE_MAX
     * after ox_check_alloc_size) */
    const size_t alloc = (nbytes + 63) / 64 * 64 + (nbytes ? 0 : 64);
    x->data = aligned_alloc(64, alloc);
    if (!x->data) {
        free(x);
        ox_fail(err, ONYX_OUT_OF_MEMORY, "out of memory allocating %zu bytes", nbytes);
        return NULL;
    }
    if (zero) memset(x->data, 0, alloc);
    x->nbytes = nbytes;
    x->ownership = OX_OWNED;
    return x;
}

ox_tensor *ox_tensor_new_unset(ox_dtype t, const int64_t *dims, int rank, ox_error *err) {
    /* strings start as "", which takes ox_tensor_new */
    return t == ONYX_STRING ? ox_tensor_new(t, dims, rank, err) : tensor_alloc(t, dims, rank, 0, err);
}

ox_tensor *ox_tensor_new(ox_dtype t, const int64_t *dims, int rank, ox_error *err) {
    ox_tensor *x = tensor_alloc(t, dims, rank, 1, err);
    if (!x) return NULL;
    size_t nbytes = x->nbytes;
    if (t == ONYX_STRING) {
        char **s = x->data;
        size_t n = nbytes / sizeof(char *);
        for (size_t i = 0; i < n; i++) {
            s[i] = calloc(1, 1);
            if (!s[i]) {
                ox_tensor_free(x);
                ox_fail(err, ONYX_OUT_OF_MEMORY, "out of memory");
                return NULL;
            }
        }
    }
    return x;
}

ox_tensor *ox_tensor_wrap(ox_dtype t, const int64_t *dims, int rank, void *data, ox_error *err) {
    size_t nbytes;
    if (ox_bytes_for(t, dims, rank, &nbytes, err) != 0) return NULL;
    ox_tensor *x = header(t, dims, rank, err);
    if (!x) return NULL;
    x->data = data;
    x->nbytes = nbytes;
    x->ownership = OX_BORROWED;
    return x;
}

ox_tensor *ox_sequence_new(ox_dtype elem, ox_error *err) {
    ox_tensor *x = header(elem, NULL, 0, err);
    if (!x) return NULL;
    x->kind = OX_KIND_SEQUENCE;
    x->elem_dtype = elem;
    return x;
}

int ox_sequence_push(ox_tensor *seq, ox_tensor *item, ox_error *err) {
    ox_tensor **items = realloc(seq->items, (size_t)(seq->n_items + 1) * sizeof *items);
    if (!items) {
        ox_tensor_free(item);
        return ox_fail(err, ONYX_OUT_OF_MEMORY, "out of memory");
    }
    seq->items = items;
    seq->items[seq->n_items++] = item;
    return 0;
}

ox_tensor *ox_optional_new(ox_dtype elem, ox_tensor *item, ox_error *err) {
    ox_tensor *x = header(elem, NULL, 0, err);
    if (!x) {
        ox_tensor_free(item);
        return NULL;
    }
    x->kind = OX_KIND_OPTIONAL;
    x->elem_dtype = elem;
    if (item) {
        x->items = malloc(sizeof *x->items);
        if (!x->items) {
            ox_tensor_free(item);
            free(x);
            ox_fail(err, ONYX_OUT_OF_MEMORY, "out of memory");
            return NULL;
        }
        x->items[0] = item;
        x->n_items = 1;
    }
    return x;
}

ox_tensor *ox_tensor_clone(const ox_tensor *t, ox_error *err) {
    if (t->kind != OX_KIND_TENSOR) {
        ox_tensor *c = t->kind == OX_KIND_SEQUENCE ? ox_sequence_new(t->elem_dtype, err)
                                                   : ox_optional_new(t->elem_dtype, NULL, err);
        if (!c) return NULL;
        for (int i = 0; i < t->n_items; i++) {
            ox_tensor *it = ox_tensor_clone(t->items[i], err);
            if (!it || ox_sequence_push(c, it, err) != 0) {
                ox_tensor_free(c);
                return NULL;
            }
        }
        return c;
    }
    ox_tensor *c = ox_tensor_new(t->dtype, t->dims, t->rank, err);
    if (!c) return NULL;
    if (t->dtype == ONYX_STRING) {
        char **dst = c->data;
        char *const *src = t->data;
        int64_t n = ox_tensor_numel(t);
        for (int64_t i = 0; i < n; i++) {
            free(dst[i]);
            dst[i] = strdup(src[i] ? src[i] : "");
            if (!dst[i]) {
                ox_tensor_free(c);
                ox_fail(err, ONYX_OUT_OF_MEMORY, "out of memory");
                return NULL;
            }
        }
    } else if (t->nbytes) {
        memcpy(c->data, t->data, t->nbytes);
    }
    return c;
}

void ox_tensor_release_data(ox_tensor *t) {
    if (!t) return;
    ox_mem_unreserve(t->account, t->charged);
    t->account = NULL;
    t->charged = 0;
    for (int i = 0; i < t->n_items; i++) ox_tensor_free(t->items[i]);
    free(t->items);
    t->items = NULL;
    t->n_items = 0;
    if (t->ownership == OX_OWNED) {
        if (t->dtype == ONYX_STRING && t->data && t->kind == OX_KIND_TENSOR) {
            char **s = t->data;
            size_t n = t->nbytes / sizeof(char *);
            for (size_t i = 0; i < n; i++) free(s[i]);
        }
        free(t->data);
    }
    t->data = NULL;
    t->nbytes = 0;
}

void ox_tensor_free(ox_tensor *t) {
    if (!t) return;
    ox_tensor_release_data(t);
    free(t);
}

int ox_shape_equal(const int64_t *a, int ra, const int64_t *b, int rb) {
    if (ra != rb) return 0;
    for (int i = 0; i < ra; i++)
        if (a[i] != b[i]) return 0;
    return 1;
}

const char *ox_shape_str(const int64_t *dims, int rank, char *buf, size_t n) {
    size_t off = 0;
    if (n == 0) return buf;
    buf[0] = '\0';
    if (rank < 0) {
        snprintf(buf, n, "[?]");
        return buf;
    }
    off += (size_t)snprintf(buf + off, n - off, "[");
    for (int i = 0; i < rank && off < n; i++) {
        if (dims[i] < 0)
            off += (size_t)snprintf(buf + off, n - off, "%s?", i ? "," : "");
        else
            off += (size_t)snprintf(buf + off, n - off, "%s%lld", i ? "," : "", (long long)dims[i]);
    }
    if (off < n) snprintf(buf + off, n - off, "]");
    return buf;
}
