#include "loader/tensor_proto.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "loader/external_data.h"
#include "loader/nesting.h"
#include "loader/wire.h"
#include "onnx.pb-c.h"

static const char *tensor_name(const Onnx__TensorProto *tp) {
    return tp->name && tp->name[0] ? tp->name : "<unnamed>";
}

/* TensorProto.external_data -> ox_external_ref; offset and length must be
 * non-negative decimal integers. */
static int parse_external(const Onnx__TensorProto *tp, ox_external_ref *ref, ox_error *err) {
    *ref = (ox_external_ref){tensor_name(tp), NULL, 0, -1};
    for (size_t i = 0; i < tp->n_external_data; i++) {
        const Onnx__StringStringEntryProto *kv = tp->external_data[i];
        if (!kv->key || !kv->value) continue;
        if (strcmp(kv->key, "location") == 0) {
            ref->location = kv->value;
        } else if (strcmp(kv->key, "offset") == 0 || strcmp(kv->key, "length") == 0) {
            char *end = NULL;
            errno = 0;
            long long v = strtoll(kv->value, &end, 10);
            if (errno || !end || end == kv->value || *end || v < 0)
                return ox_fail(err, ONYX_INVALID_MODEL,
                               "tensor '%s': external data %s '%s' is not a non-negative integer",
                               tensor_name(tp), kv->key, kv->value);
            if (kv->key[0] == 'o')
                ref->offset = v;
            else
                ref->length = v;
        }
    }
    if (!ref->location)
        return ox_fail(err, ONYX_INVALID_MODEL, "tensor '%s': external data without a location",
                       tensor_name(tp));
    return 0;
}

/* Number of values in the typed field that carries dtype. */
static size_t typed_count(const Onnx__TensorProto *tp, int dt) {
    switch (dt) {
    case ONYX_FLOAT32: return tp->n_float_data;
    case ONYX_COMPLEX64: return tp->n_float_data / 2;
    case ONYX_FLOAT64: return tp->n_double_data;
    case ONYX_COMPLEX128: return tp->n_double_data / 2;
    case ONYX_INT64: return tp->n_int64_data;
    case ONYX_UINT32:
    case ONYX_UINT64: return tp->n_uint64_data;
    case ONYX_STRING: return tp->n_string_data;
    default: return tp->n_int32_data;
    }
}

/* Values of int32_data a tensor of n elements needs: 4-bit types pack two
 * elements into each value and 2-bit types four (float6 keeps one). */
static size_t int32_values_for(ox_dtype t, size_t n) {
    int b = ox_dtype_bits(t);
    return b == 4 || b == 2 ? ox_packed_bytes(t, n) : n;
}

/* Copies the typed repeated field matching dtype into dst. */
static int copy_typed_field(const Onnx__TensorProto *tp, ox_tensor *t, size_t n, ox_error *err) {
    size_t have = 0;
    switch (t->dtype) {
    case ONYX_FLOAT32:
    case ONYX_COMPLEX64:
        have = tp->n_float_data;
        if (have && have == (t->dtype == ONYX_COMPLEX64 ? 2 * n : n))
            memcpy(t->data, tp->float_data, have * sizeof(float));
        if (t->dtype == ONYX_COMPLEX64) have /= 2;
        break;
    case ONYX_FLOAT64:
    case ONYX_COMPLEX128:
        have = tp->n_double_data;
        if (have && have == (t->dtype == ONYX_COMPLEX128 ? 2 * n : n))
            memcpy(t->data, tp->double_data, have * sizeof(double));
        if (t->dtype == ONYX_COMPLEX128) have /= 2;
        break;
    case ONYX_INT64:
        have = tp->n_int64_data;
        if (have && have == n) memcpy(t->data, tp->int64_data, n * sizeof(int64_t));
        break;
    case ONYX_UINT32:
    case ONYX_UINT64:
        have = tp->n_uint64_data;
        if (have == n)
            for (size_t i = 0; i < n; i++) ox_set_i64(t->data, t->dtype, i, (int64_t)tp->uint64_data[i]);
        break;
    case ONYX_STRING:
        have = tp->n_string_data;
        if (have == n) {
            char **s = t->data;
            for (size_t i = 0; i < n; i++) {
                char *c = malloc(tp->string_data[i].len + 1);
                if (!c) return ox_fail(err, ONYX_OUT_OF_MEMORY, "out of memory");
                if (tp->string_data[i].len) memcpy(c, tp->string_data[i].data, tp->string_data[i].len);
                c[tp->string_data[i].len] = '\0';
                free(s[i]);
                s[i] = c;
            }
        }
        break;
    default: /* int8/16/32, uint8/16, bool, float16, bfloat16, the float8s and the
              * sub-byte types travel in int32_data */
        have = tp->n_int32_data;
        if (ox_dtype_bits(t->dtype) == 4 || ox_dtype_bits(t->dtype) == 2) {
            /* one packed byte per value, as in raw_data */
            size_t want = int32_values_for(t->dtype, n);
            if (have != want) {
                return ox_fail(err, ONYX_INVALID_MODEL,
                               "tensor '%s': holds %zu packed %s values but its shape needs %zu",
                               tensor_name(tp), have, ox_dtype_name(t->dtype), want);
            }
            uint8_t *packed = malloc(want ? want : 1);
            if (!packed) return ox_fail(err, ONYX_OUT_OF_MEMORY, "out of memory");
            for (size_t i = 0; i < want; i++) packed[i] = (uint8_t)tp->int32_data[i];
            ox_unpack_subbyte(t->dtype, packed, n, t->data);
            free(packed);
            return 0;
        }
        if (have == n) {
            /* float6 keeps one element per value in its low 6 bits */
            uint32_t mask = ox_dtype_bits(t->dtype) == 6 ? 0x3fu : 0xffffffffu;
            size_t es = ox_dtype_size(t->dtype);
            for (size_t i = 0; i < n; i++) {
                int32_t v = (int32_t)((uint32_t)tp->int32_data[i] & mask);
                if (es == 1)
                    ((uint8_t *)t->data)[i] = (uint8_t)v;
                else if (es == 2)
                    ((uint16_t *)t->data)[i] = (uint16_t)v;
                else
                    ((int32_t *)t->data)[i] = v;
            }
        }
        break;
    }
    if (have != n && !(n == 0 && have == 0))
        return ox_fail(err, ONYX_INVALID_MODEL, "tensor '%s': holds %zu values but its shape needs %zu",
                       tensor_name(tp), have, n);
    return 0;
}

/* Reads an opened external file into t: sub-byte types are packed in the
 * file and unpacked into t, one element per byte. */
static int read_external(const ox_external_ref *ref, const ox_external_file *f, ox_tensor *t,
                         size_t file_bytes, ox_error *err) {
    if (!ox_dtype_is_subbyte(t->dtype)) return ox_external_read(ref, f, t->data, file_bytes, err);
    uint8_t *packed = malloc(file_bytes ? file_bytes : 1);
    if (!packed) return ox_fail(err, ONYX_OUT_OF_MEMORY, "out of memory");
    int rc = ox_external_read(ref, f, packed, file_bytes, err);
    if (rc == 0) ox_unpack_subbyte(t->dtype, packed, (size_t)ox_tensor_numel(t), t->data);
    free(packed);
    return rc;
}

int ox_tensor_from_proto(const Onnx__TensorProto *tp, const char *base_dir, ox_tensor **out,
                         ox_error *err) {
    return ox_tensor_from_proto_raw(tp, NULL, 0, base_dir, out, err);
}

int ox_tensor_from_proto_raw(const Onnx__TensorProto *tp, const void *raw, size_t raw_len,
                             const char *base_dir, ox_tensor **out, ox_error *err) {
    *out = NULL;
    int has_raw = raw != NULL || tp->has_raw_data;
    const void *raw_data = raw ? raw : tp->raw_data.data;
    if (!raw) raw_len = tp->raw_data.len;
    int dt = tp->has_data_type ? tp->data_type : 0;
    if (!ox_dtype_valid(dt))
        return ox_fail(err, ONYX_INVALID_MODEL, "tensor '%s': unknown data type %d", tensor_name(tp), dt);
    if (tp->n_dims > OX_MAX_RANK)
        return ox_fail(err, ONYX_NOT_IMPLEMENTED, "tensor '%s': rank %zu exceeds onyx's limit of %d",
                       tensor_name(tp), tp->n_dims, OX_MAX_RANK);
    if (tp->segment)
        return ox_fail(err, ONYX_NOT_IMPLEMENTED, "tensor '%s': segmented tensors are not supported",
                       tensor_name(tp));
    for (size_t i = 0; i < tp->n_dims; i++)
        if (tp->dims[i] < 0)
            return ox_fail(err, ONYX_INVALID_MODEL, "tensor '%s': negative dimension %lld",
                           tensor_name(tp), (long long)tp->dims[i]);
    /* Check the payload against the shape before allocating, so a small
     * malformed file cannot request a huge buffer. */
    size_t want_bytes;
    if (ox_bytes_for((ox_dtype)dt, tp->dims, (int)tp->n_dims, &want_bytes, err) != 0) {
        ox_error_prefix(err, "tensor '%s'", tensor_name(tp));
        return -1;
    }
    int external = tp->has_data_location && tp->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL;
    /* Sub-byte types are packed in raw_data and external files but held
     * one element per byte in memory (see onyx.h). */
    size_t numel = want_bytes / ox_dtype_size((ox_dtype)dt);
    int subbyte = ox_dtype_is_subbyte((ox_dtype)dt);
    size_t file_bytes = subbyte ? ox_packed_bytes((ox_dtype)dt, numel) : want_bytes;
    /* ONNX forbids raw_data for strings; refuse before the declared shape
     * is allocated, since no payload size bounds it. */
    if (!external && has_raw && dt == ONYX_STRING)
        return ox_fail(err, ONYX_INVALID_MODEL, "tensor '%s': string tensors cannot use raw_data",
                       tensor_name(tp));
    if (!external && has_raw && raw_len != file_bytes)
        return ox_fail(err, ONYX_INVALID_MODEL,
                       "tensor '%s': raw_data has %zu bytes but shape and type need %zu%s",
                       tensor_name(tp), raw_len, file_bytes, subbyte ? " (packed)" : "");
    if (!external && !has_raw && int32_values_for((ox_dtype)dt, numel) > typed_count(tp, dt))
        return ox_fail(err, ONYX_INVALID_MODEL, "tensor '%s': holds %zu values but its shape needs %zu",
                       tensor_name(tp), typed_count(tp, dt), int32_values_for((ox_dtype)dt, numel));
    /* The external file is opened and its size checked before the tensor
     * is allocated, so a small file cannot request a huge buffer. */
    ox_external_ref ref;
    ox_external_file xf = {-1, 0};
    if (external) {
        if (dt == ONYX_STRING)
            return ox_fail(err, ONYX_INVALID_MODEL, "tensor '%s': string tensors cannot be external",
                           tensor_name(tp));
        if (parse_external(tp, &ref, err) != 0 || ox_external_open(&ref, base_dir, file_bytes, &xf, err) != 0)
            return -1;
    }
    /* raw bytes (in the model or its external file) fill every byte of a
     * tensor of a whole-byte type, which then need not be zeroed first */
    const int fills = (external || has_raw) && !subbyte;
    ox_tensor *t = fills ? ox_tensor_new_unset((ox_dtype)dt, tp->dims, (int)tp->n_dims, err)
                         : ox_tensor_new((ox_dtype)dt, tp->dims, (int)tp->n_dims, err);
    if (!t) {
        ox_external_close(&xf);
        ox_error_prefix(err, "tensor '%s'", tensor_name(tp));
        return -1;
    }
    size_t n = (size_t)ox_tensor_numel(t);
    int rc = 0;
    if (external) {
        rc = read_external(&ref, &xf, t, file_bytes, err);
        ox_external_close(&xf);
    } else if (has_raw) {
        if (subbyte)
            ox_unpack_subbyte((ox_dtype)dt, raw_data, n, t->data);
        else if (t->nbytes)
            memcpy(t->data, raw_data, t->nbytes);
    } else {
        rc = copy_typed_field(tp, t, n, err);
    }
    if (rc != 0) {
        ox_tensor_free(t);
        return rc;
    }
    *out = t;
    return 0;
}

/* ---- SequenceProto / OptionalProto ----
 * onnx.proto does not define these test-data messages (they live in
 * onnx-data.proto), so their few fields are read straight off the wire:
 * 1 name, 2 elem_type, 3 tensor value(s), 5 sequence value(s),
 * 7 optional value(s). */

enum { ELEM_TENSOR = 1, ELEM_SEQUENCE = 3, ELEM_OPTIONAL = 5 };

typedef ox_wire_reader wire;

static int skip_field(wire *w) {
    ox_wire_field f;
    return ox_wire_next(w, &f);
}

static const char CONTAINER_SCHEMA = 0;

/* Fields 5 (sequence values) and 7 (optional values) hold containers;
 * tensors (field 3) are measured when they are unpacked. */
static const void *container_child(const void *schema, uint64_t number) {
    (void)schema;
    return number == 5 || number == 7 ? &CONTAINER_SCHEMA : NULL;
}

static int too_deep(ox_error *err) {
    return ox_fail(err, ONYX_INVALID_ARGUMENT,
                   "sequence/optional nests messages deeper than %d levels", OX_MAX_MESSAGE_DEPTH);
}

int ox_pb_container_check(const void *data, size_t size, ox_error *err) {
    int depth = 0;
    if (ox_wire_nesting_depth(&CONTAINER_SCHEMA, container_child, data, size, OX_MAX_MESSAGE_DEPTH,
                              &depth) != 0)
        return 0; /* malformed: the reader reports it */
    return depth > OX_MAX_MESSAGE_DEPTH ? too_deep(err) : 0;
}

static int value_from_wire(const uint8_t *data, size_t size, ox_kind kind, ox_tensor **out,
                           ox_error *err, int depth);

static int tensor_from_bytes(const uint8_t *data, size_t size, ox_tensor **out, ox_error *err) {
    if (ox_pb_check_nesting(&onnx__tensor_proto__descriptor, data, size, "TensorProto",
                            ONYX_INVALID_ARGUMENT, err) != 0)
        return -1;
    Onnx__TensorProto *tp = onnx__tensor_proto__unpack(NULL, size, data);
    if (!tp) return ox_fail(err, ONYX_INVALID_ARGUMENT, "not a valid serialized TensorProto");
    int rc = ox_tensor_from_proto(tp, NULL, out, err);
    onnx__tensor_proto__free_unpacked(tp, NULL);
    return rc;
}

static int container_from_wire(const uint8_t *data, size_t size, ox_kind kind, ox_tensor **out,
                               ox_error *err, int depth) {
    /* ox_value_from_pb_bytes measured the nesting; this guards the
     * recursion should a caller skip that */
    if (depth > OX_MAX_MESSAGE_DEPTH) return too_deep(err);
    wire w = {data, data, data + size};
    ox_tensor *c = kind == OX_KIND_SEQUENCE ? ox_sequence_new(ONYX_UNDEFINED, err)
                                            : ox_optional_new(ONYX_UNDEFINED, NULL, err);
    if (!c) return -1;
    uint64_t elem_type = 0;
    while (w.p < w.end) {
        uint64_t key;
        const uint8_t *field_start = w.p;
        if (ox_wire_varint(&w, &key) != 0) goto malformed;
        int field = (int)(key >> 3), wt = (int)(key & 7);
        if (field == 2 && wt == 0) {
            if (ox_wire_varint(&w, &elem_type) != 0) goto malformed;
            continue;
        }
        if ((field == 3 || field == 5 || field == 7) && wt == 2) {
            uint64_t len;
            if (ox_wire_varint(&w, &len) != 0 || len > (uint64_t)(w.end - w.p)) goto malformed;
            ox_tensor *item = NULL;
            int rc = field == 3 ? tensor_from_bytes(w.p, (size_t)len, &item, err)
                                : value_from_wire(w.p, (size_t)len,
                                                  field == 5 ? OX_KIND_SEQUENCE : OX_KIND_OPTIONAL,
                                                  &item, err, depth + 1);
            w.p += len;
            if (rc != 0) {
                ox_tensor_free(c);
                return -1;
            }
            if (ox_sequence_push(c, item, err) != 0) {
                ox_tensor_free(c);
                return -1;
            }
            continue;
        }
        w.p = field_start;
        if (skip_field(&w) != 0) goto malformed;
    }
    if (kind == OX_KIND_OPTIONAL && c->n_items > 1) goto malformed;
    if (c->n_items > 0 && c->items[0]->kind == OX_KIND_TENSOR) c->elem_dtype = c->items[0]->dtype;
    c->dtype = c->elem_dtype;
    (void)elem_type;
    *out = c;
    return 0;
malformed:
    ox_tensor_free(c);
    return ox_fail(err, ONYX_INVALID_ARGUMENT, "malformed serialized %s",
                   kind == OX_KIND_SEQUENCE ? "SequenceProto" : "OptionalProto");
}

static int value_from_wire(const uint8_t *data, size_t size, ox_kind kind, ox_tensor **out,
                           ox_error *err, int depth) {
    if (kind == OX_KIND_TENSOR) return tensor_from_bytes(data, size, out, err);
    return container_from_wire(data, size, kind, out, err, depth);
}

int ox_value_from_pb_bytes(const void *data, size_t size, ox_kind kind, ox_tensor **out,
                           ox_error *err) {
    *out = NULL;
    if (kind != OX_KIND_TENSOR && ox_pb_container_check(data, size, err) != 0) return -1;
    return value_from_wire(data, size, kind, out, err, 0);
}

/* True when tp's data lives in an optimized file's weight section. */
int ox_tensor_proto_in_section(const Onnx__TensorProto *tp, const char *section) {
    if (!tp->has_data_location || tp->data_location != ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL)
        return 0;
    for (size_t i = 0; i < tp->n_external_data; i++) {
        const Onnx__StringStringEntryProto *kv = tp->external_data[i];
        if (kv->key && kv->value && strcmp(kv->key, "location") == 0)
            return strcmp(kv->value, section) == 0;
    }
    return 0;
}

int ox_tensor_from_section(const Onnx__TensorProto *tp, const uint8_t *section, size_t section_size,
                           size_t align, ox_tensor **out, ox_error *err) {
    *out = NULL;
    int dt = tp->has_data_type ? tp->data_type : 0;
    if (!ox_dtype_valid(dt) || dt == ONYX_STRING)
        return ox_fail(err, ONYX_INVALID_MODEL, "weight '%s': data type %d cannot be a stored weight",
                       tensor_name(tp), dt);
    if (tp->n_dims > OX_MAX_RANK)
        return ox_fail(err, ONYX_INVALID_MODEL, "weight '%s': rank %zu exceeds onyx's limit of %d",
                       tensor_name(tp), tp->n_dims, OX_MAX_RANK);
    for (size_t i = 0; i < tp->n_dims; i++)
        if (tp->dims[i] < 0)
            return ox_fail(err, ONYX_INVALID_MODEL, "weight '%s': negative dimension %lld",
                           tensor_name(tp), (long long)tp->dims[i]);
    size_t bytes;
    if (ox_bytes_for((ox_dtype)dt, tp->dims, (int)tp->n_dims, &bytes, err) != 0) {
        ox_error_prefix(err, "weight '%s'", tensor_name(tp));
        return -1;
    }
    ox_external_ref ref;
    if (parse_external(tp, &ref, err) != 0) return -1;
    /* held as onyx holds it in memory, at an aligned offset, inside the
     * section: then it is used where it lies */
    if (ref.length != (int64_t)bytes)
        return ox_fail(err, ONYX_INVALID_MODEL,
                       "weight '%s': its stored length %lld is not the %zu bytes its type and shape "
                       "need",
                       tensor_name(tp), (long long)ref.length, bytes);
    if ((uint64_t)ref.offset > section_size || bytes > section_size - (uint64_t)ref.offset)
        return ox_fail(err, ONYX_INVALID_MODEL,
                       "weight '%s': bytes %lld..%lld lie outside the %zu-byte weight section",
                       tensor_name(tp), (long long)ref.offset, (long long)ref.offset + (long long)bytes,
                       section_size);
    if (align && ref.offset % (int64_t)align != 0)
        return ox_fail(err, ONYX_INVALID_MODEL,
                       "weight '%s': offset %lld is not a multiple of %zu", tensor_name(tp),
                       (long long)ref.offset, align);
    ox_tensor *t = ox_tensor_wrap((ox_dtype)dt, tp->dims, (int)tp->n_dims,
                                  (void *)(uintptr_t)(section + ref.offset), err);
    if (!t) {
        ox_error_prefix(err, "weight '%s'", tensor_name(tp));
        return -1;
    }
    *out = t;
    return 0;
}
