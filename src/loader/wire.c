#include "loader/wire.h"

#include <stdlib.h>
#include <string.h>

enum { WT_VARINT = 0, WT_I64 = 1, WT_LEN = 2, WT_I32 = 5 };
enum {
    MODEL_GRAPH = 7,
    GRAPH_NODE = 1,
    GRAPH_INITIALIZER = 5,
    NODE_ATTRIBUTE = 5,
    ATTRIBUTE_T = 5,
    TENSOR_RAW_DATA = 9
};

typedef ox_wire_reader reader;

/* Where recorded slices go; shared by the nested writers. */
typedef struct sink {
    ox_stripped_model *m;
    size_t cap_inits, cap_attrs;
    size_t node, attr;    /* indices of the node/attribute being rewritten */
    int in_attr;          /* the tensor being rewritten is an attribute */
    ox_raw_slice *tensor; /* raw_data found in the tensor being rewritten */
} sink;

typedef struct writer {
    uint8_t *buf;
    size_t len, cap;
    sink *s;
} writer;

int ox_wire_varint(ox_wire_reader *r, uint64_t *v) {
    *v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
        if (r->p >= r->end) return -1;
        uint8_t b = *r->p++;
        *v |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) return 0;
    }
    return -1;
}

static int reserve(writer *w, size_t extra) {
    if (w->len + extra <= w->cap) return 0;
    size_t ncap = w->cap ? w->cap : 256;
    while (ncap < w->len + extra) ncap *= 2;
    uint8_t *nb = realloc(w->buf, ncap);
    if (!nb) return -1;
    w->buf = nb;
    w->cap = ncap;
    return 0;
}

static int put_bytes(writer *w, const uint8_t *p, size_t n) {
    if (reserve(w, n) != 0) return -1;
    if (n) memcpy(w->buf + w->len, p, n);
    w->len += n;
    return 0;
}

static int put_varint(writer *w, uint64_t v) {
    uint8_t tmp[10];
    size_t n = 0;
    do {
        tmp[n] = (uint8_t)(v & 0x7f);
        v >>= 7;
        if (v) tmp[n] |= 0x80;
        n++;
    } while (v);
    return put_bytes(w, tmp, n);
}

int ox_wire_next(ox_wire_reader *r, ox_wire_field *f) {
    f->start = r->p;
    uint64_t key, v;
    if (ox_wire_varint(r, &key) != 0) return -1;
    f->number = key >> 3;
    f->wt = (int)(key & 7);
    f->payload = r->p;
    switch (f->wt) {
    case WT_VARINT:
        if (ox_wire_varint(r, &v) != 0) return -1;
        break;
    case WT_I64:
        if (r->end - r->p < 8) return -1;
        r->p += 8;
        break;
    case WT_I32:
        if (r->end - r->p < 4) return -1;
        r->p += 4;
        break;
    case WT_LEN:
        if (ox_wire_varint(r, &v) != 0 || v > (uint64_t)(r->end - r->p)) return -1;
        f->payload = r->p;
        r->p += v;
        break;
    default: return -1;
    }
    f->len = (size_t)(r->p - f->payload);
    return 0;
}

/* Reads one field's key and the extent of its payload. */
static int next_field(reader *r, uint64_t *field, int *wt, const uint8_t **start,
                      const uint8_t **payload, size_t *plen) {
    ox_wire_field f;
    if (ox_wire_next(r, &f) != 0) return -1;
    *field = f.number;
    *wt = f.wt;
    *start = f.start;
    *payload = f.payload;
    *plen = f.len;
    return 0;
}

typedef int (*rewrite_fn)(writer *w, reader *body);

/* Rewrites a length-delimited field's payload with fn; the new payload is
 * built first because its length prefixes it. */
static int rewrite_len_field(writer *w, uint64_t field, const uint8_t *base, const uint8_t *payload,
                             size_t plen, rewrite_fn fn) {
    writer inner = {.s = w->s};
    reader body = {base, payload, payload + plen};
    int rc = fn(&inner, &body);
    if (rc == 0 && (put_varint(w, field << 3 | WT_LEN) != 0 || put_varint(w, inner.len) != 0 ||
                    put_bytes(w, inner.buf, inner.len) != 0))
        rc = -1;
    free(inner.buf);
    return rc;
}

static int record(sink *s, ox_raw_slice raw) {
    ox_stripped_model *m = s->m;
    if (s->in_attr) {
        if (!raw.present) return 0;
        if (m->n_attrs == s->cap_attrs) {
            size_t ncap = s->cap_attrs ? s->cap_attrs * 2 : 64;
            ox_attr_slice *na = realloc(m->attrs, ncap * sizeof *na);
            if (!na) return -1;
            m->attrs = na;
            s->cap_attrs = ncap;
        }
        m->attrs[m->n_attrs++] = (ox_attr_slice){s->node, s->attr, raw};
        return 0;
    }
    if (m->n_inits == s->cap_inits) {
        size_t ncap = s->cap_inits ? s->cap_inits * 2 : 64;
        ox_raw_slice *ni = realloc(m->inits, ncap * sizeof *ni);
        if (!ni) return -1;
        m->inits = ni;
        s->cap_inits = ncap;
    }
    m->inits[m->n_inits++] = raw;
    return 0;
}

/* Copies every field of a message except those `skip` claims, which are
 * handed to it instead. */
typedef int (*field_fn)(writer *w, reader *r, uint64_t field, int wt, const uint8_t *payload,
                        size_t plen, int *handled);

static int copy_fields(writer *w, reader *r, field_fn fn) {
    while (r->p < r->end) {
        uint64_t field;
        int wt, handled = 0;
        const uint8_t *start, *payload;
        size_t plen;
        if (next_field(r, &field, &wt, &start, &payload, &plen) != 0) return -1;
        if (fn(w, r, field, wt, payload, plen, &handled) != 0) return -1;
        if (!handled && put_bytes(w, start, (size_t)(r->p - start)) != 0) return -1;
    }
    return 0;
}

static int tensor_field(writer *w, reader *r, uint64_t field, int wt, const uint8_t *payload,
                        size_t plen, int *handled) {
    ox_raw_slice *raw = w->s->tensor;
    if (field == TENSOR_RAW_DATA && wt == WT_LEN) {
        /* the last occurrence wins, as in protobuf */
        raw->offset = (size_t)(payload - r->base);
        raw->length = plen;
        raw->present = 1;
        *handled = 1;
    }
    return 0;
}

static int rewrite_tensor(writer *w, reader *r) {
    ox_raw_slice raw = {0, 0, 0};
    w->s->tensor = &raw;
    int rc = copy_fields(w, r, tensor_field);
    w->s->tensor = NULL;
    return rc == 0 ? record(w->s, raw) : -1;
}

static int attribute_field(writer *w, reader *r, uint64_t field, int wt, const uint8_t *payload,
                           size_t plen, int *handled) {
    if (field != ATTRIBUTE_T || wt != WT_LEN) return 0;
    *handled = 1;
    w->s->in_attr = 1;
    int rc = rewrite_len_field(w, field, r->base, payload, plen, rewrite_tensor);
    w->s->in_attr = 0;
    return rc;
}

static int rewrite_attribute(writer *w, reader *r) { return copy_fields(w, r, attribute_field); }

static int node_field(writer *w, reader *r, uint64_t field, int wt, const uint8_t *payload,
                      size_t plen, int *handled) {
    if (field != NODE_ATTRIBUTE || wt != WT_LEN) return 0;
    *handled = 1;
    int rc = rewrite_len_field(w, field, r->base, payload, plen, rewrite_attribute);
    w->s->attr++;
    return rc;
}

static int rewrite_node(writer *w, reader *r) {
    w->s->attr = 0;
    return copy_fields(w, r, node_field);
}

static int graph_field(writer *w, reader *r, uint64_t field, int wt, const uint8_t *payload,
                       size_t plen, int *handled) {
    if (wt != WT_LEN) return 0;
    if (field == GRAPH_INITIALIZER) {
        *handled = 1;
        return rewrite_len_field(w, field, r->base, payload, plen, rewrite_tensor);
    }
    if (field == GRAPH_NODE) {
        *handled = 1;
        int rc = rewrite_len_field(w, field, r->base, payload, plen, rewrite_node);
        w->s->node++;
        return rc;
    }
    return 0;
}

static int rewrite_graph(writer *w, reader *r) { return copy_fields(w, r, graph_field); }

static int model_field(writer *w, reader *r, uint64_t field, int wt, const uint8_t *payload,
                       size_t plen, int *handled) {
    if (field != MODEL_GRAPH || wt != WT_LEN) return 0;
    *handled = 1;
    return rewrite_len_field(w, field, r->base, payload, plen, rewrite_graph);
}

void ox_stripped_model_free(ox_stripped_model *m) {
    free(m->bytes);
    free(m->inits);
    free(m->attrs);
    memset(m, 0, sizeof *m);
}

int ox_strip_weights(const uint8_t *model, size_t size, ox_stripped_model *out, ox_error *err) {
    memset(out, 0, sizeof *out);
    sink s = {.m = out};
    writer w = {.s = &s};
    reader r = {model, model, model + size};
    if (reserve(&w, 1) != 0 || copy_fields(&w, &r, model_field) != 0) {
        free(w.buf);
        ox_stripped_model_free(out);
        return ox_fail(err, ONYX_INVALID_MODEL, "not an ONNX model: malformed protobuf data");
    }
    out->bytes = w.buf;
    out->size = w.len;
    return 0;
}

const ox_raw_slice *ox_stripped_attr(const ox_stripped_model *m, size_t node, size_t attr) {
    /* recorded in node order, so a binary search finds the node's run */
    size_t lo = 0, hi = m->n_attrs;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (m->attrs[mid].node < node || (m->attrs[mid].node == node && m->attrs[mid].attr < attr))
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo < m->n_attrs && m->attrs[lo].node == node && m->attrs[lo].attr == attr)
        return &m->attrs[lo].raw;
    return NULL;
}

/* Depth-first walk with an explicit stack: frame k is the message at
 * nesting level k (the top-level message is level 0). A length-delimited
 * field that `child` maps to a message schema is entered; everything else
 * is stepped over. The stack never holds more than limit + 1 frames, so
 * hostile input costs bounded memory and no recursion. */
typedef struct depth_frame {
    const void *schema;
    ox_wire_reader r;
} depth_frame;

int ox_wire_nesting_depth(const void *schema, ox_wire_child_fn child, const uint8_t *data,
                          size_t size, int limit, int *depth) {
    depth_frame stack[OX_MAX_MESSAGE_DEPTH + 2];
    if (limit < 0 || limit > OX_MAX_MESSAGE_DEPTH) limit = OX_MAX_MESSAGE_DEPTH;
    int top = 0, deepest = 0;
    stack[0] = (depth_frame){schema, {data, data, data + size}};
    while (top >= 0) {
        depth_frame *fr = &stack[top];
        if (fr->r.p >= fr->r.end) {
            top--;
            continue;
        }
        ox_wire_field f;
        if (ox_wire_next(&fr->r, &f) != 0) return -1;
        const void *sub = f.wt == WT_LEN ? child(fr->schema, f.number) : NULL;
        if (!sub) continue;
        if (top + 1 > limit) {
            *depth = top + 1;
            return 0;
        }
        top++;
        if (top > deepest) deepest = top;
        stack[top] = (depth_frame){sub, {data, f.payload, f.payload + f.len}};
    }
    *depth = deepest;
    return 0;
}
