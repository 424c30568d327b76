/* Tensors and types into their protobuf-c messages, and the arena that
 * owns the messages of one write. */
#include <limits.h>
#include <stdio.h>
#include <stdalign.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/dtype.h"
#include "format/write_internal.h"

struct wr_block {
    wr_block *next;
    size_t used, cap;
    alignas(max_align_t) unsigned char data[];
};

enum { WR_BLOCK_SIZE = 64 * 1024 };

void *wr_alloc(wr_ctx *c, size_t size) {
    if (size > SIZE_MAX - sizeof(wr_block) - alignof(max_align_t)) {
        ox_fail(c->err, ONYX_OUT_OF_MEMORY, "out of memory writing the model (%zu bytes)", size);
        return NULL;
    }
    size = (size + alignof(max_align_t) - 1) & ~(alignof(max_align_t) - 1);
    if (size == 0) size = alignof(max_align_t);
    wr_block *b = c->blocks;
    if (!b || b->cap - b->used < size) {
        /* big requests (repacked weights) get a block of their own, kept
         * behind the current one so its free space stays usable */
        size_t cap = size > WR_BLOCK_SIZE / 4 ? size : WR_BLOCK_SIZE;
        wr_block *nb = malloc(sizeof(wr_block) + cap);
        if (!nb) {
            ox_fail(c->err, ONYX_OUT_OF_MEMORY, "out of memory writing the model (%zu bytes)", size);
            return NULL;
        }
        nb->used = 0;
        nb->cap = cap;
        if (b && cap != WR_BLOCK_SIZE) {
            nb->next = b->next;
            b->next = nb;
        } else {
            nb->next = b;
            c->blocks = nb;
        }
        b = nb;
    }
    void *p = b->data + b->used;
    b->used += size;
    memset(p, 0, size);
    return p;
}

void *wr_alloc_array(wr_ctx *c, size_t n, size_t elem) {
    if (n > SIZE_MAX / (elem ? elem : 1)) {
        ox_fail(c->err, ONYX_OUT_OF_MEMORY, "out of memory");
        return NULL;
    }
    return wr_alloc(c, n * elem);
}

void wr_free_all(wr_ctx *c) {
    while (c->blocks) {
        wr_block *n = c->blocks->next;
        free(c->blocks);
        c->blocks = n;
    }
}

static int host_is_little_endian(void) {
    const uint16_t one = 1;
    return *(const unsigned char *)&one == 1;
}

/* raw_data for a numeric tensor: the tensor's own bytes on a little-endian
 * host; else each component (a complex number's halves separately)
 * byte-swapped into a copy. */
static int numeric_raw(wr_ctx *c, const ox_tensor *t, ProtobufCBinaryData *raw) {
    size_t es = ox_dtype_size(t->dtype);
    if (t->dtype == ONYX_COMPLEX64 || t->dtype == ONYX_COMPLEX128) es /= 2;
    raw->len = t->nbytes;
    if (host_is_little_endian() || es <= 1 || t->nbytes == 0) {
        raw->data = t->data;
        return 0;
    }
    uint8_t *dst = wr_alloc(c, t->nbytes);
    if (!dst) return -1;
    const uint8_t *src = t->data;
    for (size_t i = 0; i < t->nbytes; i += es)
        for (size_t k = 0; k < es; k++) dst[i + k] = src[i + es - 1 - k];
    raw->data = dst;
    return 0;
}

/* A TensorProto with the tensor's name, type and shape, and no data yet. */
static Onnx__TensorProto *tensor_header(wr_ctx *c, const ox_tensor *t, const char *name) {
    Onnx__TensorProto *tp = wr_alloc(c, sizeof *tp);
    if (!tp) return NULL;
    onnx__tensor_proto__init(tp);
    tp->name = name && name[0] ? (char *)name : NULL;
    tp->has_data_type = 1;
    tp->data_type = (int32_t)t->dtype;
    tp->n_dims = (size_t)t->rank;
    tp->dims = wr_alloc_array(c, tp->n_dims, sizeof(int64_t));
    if (!tp->dims) return NULL;
    if (t->rank > 0) memcpy(tp->dims, t->dims, (size_t)t->rank * sizeof(int64_t));
    return tp;
}

Onnx__TensorProto *wr_tensor(wr_ctx *c, const ox_tensor *t, const char *name) {
    const char *label = name && name[0] ? name : "<unnamed>";
    if (t->kind != OX_KIND_TENSOR) {
        ox_fail(c->err, ONYX_NOT_IMPLEMENTED,
                "tensor '%s': a sequence or optional cannot be written as a TensorProto", label);
        return NULL;
    }
    if (t->device != 0) {
        ox_fail(c->err, ONYX_INVALID_ARGUMENT, "tensor '%s': its data is on a device, not the host",
                label);
        return NULL;
    }
    Onnx__TensorProto *tp = tensor_header(c, t, name);
    if (!tp) return NULL;
    size_t n = (size_t)ox_tensor_numel(t);
    if (t->dtype == ONYX_STRING) {
        /* ONNX allows strings only in string_data */
        tp->n_string_data = n;
        tp->string_data = wr_alloc_array(c, n, sizeof(ProtobufCBinaryData));
        if (!tp->string_data) return NULL;
        char *const *s = t->data;
        for (size_t i = 0; i < n; i++) {
            const char *v = s && s[i] ? s[i] : "";
            tp->string_data[i].len = strlen(v);
            tp->string_data[i].data = (uint8_t *)v;
        }
        return tp;
    }
    size_t file_bytes = ox_dtype_is_subbyte(t->dtype) ? ox_packed_bytes(t->dtype, n) : t->nbytes;
    /* protobuf messages (and protobuf-c's length fields) stop at 2 GiB;
     * past that a weight needs external data, which the writer lacks */
    if (file_bytes > (size_t)INT32_MAX) {
        ox_fail(c->err, ONYX_NOT_IMPLEMENTED,
                "tensor '%s': %zu bytes do not fit in a protobuf message (2 GiB at most) and "
                "writing external data is not supported",
                label, file_bytes);
        return NULL;
    }
    tp->has_raw_data = 1;
    if (ox_dtype_is_subbyte(t->dtype)) {
        /* held one element per byte in memory, packed in files (onyx.h) */
        uint8_t *packed = wr_alloc(c, file_bytes);
        if (!packed) return NULL;
        ox_pack_subbyte(t->dtype, t->data, n, packed);
        tp->raw_data.data = packed;
        tp->raw_data.len = file_bytes;
        return tp;
    }
    if (numeric_raw(c, t, &tp->raw_data) != 0) return NULL;
    return tp;
}

static Onnx__TypeProto *tensor_type(wr_ctx *c, ox_dtype dtype, const ir_type *shape_or_null) {
    Onnx__TypeProto *tp = wr_alloc(c, sizeof *tp);
    Onnx__TypeProto__Tensor *tt = wr_alloc(c, sizeof *tt);
    if (!tp || !tt) return NULL;
    onnx__type_proto__init(tp);
    onnx__type_proto__tensor__init(tt);
    tp->value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
    tp->tensor_type = tt;
    if (dtype != ONYX_UNDEFINED) {
        tt->has_elem_type = 1;
        tt->elem_type = (int32_t)dtype;
    }
    const ir_type *t = shape_or_null;
    if (!t || t->rank < 0) return tp; /* unknown rank: no shape */
    Onnx__TensorShapeProto *sh = wr_alloc(c, sizeof *sh);
    if (!sh) return NULL;
    onnx__tensor_shape_proto__init(sh);
    sh->n_dim = (size_t)t->rank;
    sh->dim = wr_alloc_array(c, sh->n_dim, sizeof *sh->dim);
    if (!sh->dim) return NULL;
    for (int i = 0; i < t->rank; i++) {
        Onnx__TensorShapeProto__Dimension *d = wr_alloc(c, sizeof *d);
        if (!d) return NULL;
        onnx__tensor_shape_proto__dimension__init(d);
        if (t->dims[i] >= 0) {
            d->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
            d->dim_value = t->dims[i];
        } else if (t->dim_params[i] && t->dim_params[i][0]) {
            d->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM;
            d->dim_param = t->dim_params[i];
        } /* else: an unknown dimension, neither value nor name */
        sh->dim[i] = d;
    }
    tt->shape = sh;
    return tp;
}

Onnx__TypeProto *wr_type(wr_ctx *c, const ir_type *t) {
    if (t->kind == OX_KIND_TENSOR) return tensor_type(c, t->dtype, t);
    /* ir_type keeps only the element type of a sequence or optional, so
     * the element is written as a tensor of unknown shape */
    Onnx__TypeProto *elem = tensor_type(c, t->dtype, NULL);
    Onnx__TypeProto *tp = wr_alloc(c, sizeof *tp);
    if (!elem || !tp) return NULL;
    onnx__type_proto__init(tp);
    if (t->kind == OX_KIND_SEQUENCE) {
        Onnx__TypeProto__Sequence *s = wr_alloc(c, sizeof *s);
        if (!s) return NULL;
        onnx__type_proto__sequence__init(s);
        s->elem_type = elem;
        tp->value_case = ONNX__TYPE_PROTO__VALUE_SEQUENCE_TYPE;
        tp->sequence_type = s;
    } else {
        Onnx__TypeProto__Optional *o = wr_alloc(c, sizeof *o);
        if (!o) return NULL;
        onnx__type_proto__optional__init(o);
        o->elem_type = elem;
        tp->value_case = ONNX__TYPE_PROTO__VALUE_OPTIONAL_TYPE;
        tp->optional_type = o;
    }
    return tp;
}

Onnx__ValueInfoProto *wr_value_info(wr_ctx *c, const char *name, const ir_type *type_or_null) {
    Onnx__ValueInfoProto *vi = wr_alloc(c, sizeof *vi);
    if (!vi) return NULL;
    onnx__value_info_proto__init(vi);
    vi->name = (char *)name;
    if (type_or_null && !(vi->type = wr_type(c, type_or_null))) return NULL;
    return vi;
}

/* One key/value of a TensorProto's external_data. */
static Onnx__StringStringEntryProto *entry(wr_ctx *c, const char *key, const char *value) {
    Onnx__StringStringEntryProto *e = wr_alloc(c, sizeof *e);
    if (!e) return NULL;
    onnx__string_string_entry_proto__init(e);
    e->key = (char *)key;
    size_t n = strlen(value) + 1;
    e->value = wr_alloc(c, n);
    if (!e->value) return NULL;
    memcpy(e->value, value, n);
    return e;
}

Onnx__TensorProto *wr_tensor_external(wr_ctx *c, const ox_tensor *t, const char *name,
                                      int *declined) {
    const ox_weight_sink *sink = c->sink;
    *declined = 1;
    if (t->kind != OX_KIND_TENSOR || t->dtype == ONYX_STRING || t->device != 0 || t->nbytes == 0)
        return NULL;
    size_t n = (size_t)ox_tensor_numel(t);
    int pack = ox_dtype_is_subbyte(t->dtype) && sink->layout == OX_WEIGHTS_ONNX;
    size_t len = pack ? ox_packed_bytes(t->dtype, n) : t->nbytes;
    if (len < sink->min_bytes) return NULL;
    *declined = 0;
    Onnx__TensorProto *tp = tensor_header(c, t, name);
    if (!tp) return NULL;
    const void *bytes = t->data;
    if (pack) {
        uint8_t *packed = wr_alloc(c, len);
        if (!packed) return NULL;
        ox_pack_subbyte(t->dtype, t->data, n, packed);
        bytes = packed;
    } else if (!host_is_little_endian()) {
        ProtobufCBinaryData raw;
        if (numeric_raw(c, t, &raw) != 0) return NULL;
        bytes = raw.data;
    }
    uint64_t offset = 0;
    if (sink->store(sink->ctx, bytes, len, &offset, c->err) != 0) {
        ox_error_prefix(c->err, "weight '%s'", name ? name : "<unnamed>");
        return NULL;
    }
    char off[24], size[24];
    snprintf(off, sizeof off, "%llu", (unsigned long long)offset);
    snprintf(size, sizeof size, "%zu", len);
    tp->has_data_location = 1;
    tp->data_location = ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL;
    tp->n_external_data = 3;
    tp->external_data = wr_alloc_array(c, 3, sizeof *tp->external_data);
    if (!tp->external_data || !(tp->external_data[0] = entry(c, "location", sink->location)) ||
        !(tp->external_data[1] = entry(c, "offset", off)) ||
        !(tp->external_data[2] = entry(c, "length", size)))
        return NULL;
    return tp;
}
