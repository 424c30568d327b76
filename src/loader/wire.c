#include "loader/wire.h"

#include <stdlib.h>
#include <string.h>

enum { WT_VARINT = 0, WT_I64 = 1, WT_LEN = 2, WT_I32 = 5 };
enum { MODEL_GRAPH = 7, GRAPH_INITIALIZER = 5, TENSOR_RAW_DATA = 9 };

typedef struct reader {
    const uint8_t *base, *p, *end;
} reader;

typedef struct writer {
    uint8_t *buf;
    size_t len, cap;
    ox_raw_slice *slices;
    size_t n_slices, cap_slices;
} writer;

static int read_varint(reader *r, uint64_t *v) {
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
    size_t ncap = w->cap ? w->cap : 4096;
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

/* Reads one field's key and the extent of its payload. */
static int next_field(reader *r, uint64_t *field, int *wt, const uint8_t **start,
                      const uint8_t **payload, size_t *plen) {
    *start = r->p;
    uint64_t key, v;
    if (read_varint(r, &key) != 0) return -1;
    *field = key >> 3;
    *wt = (int)(key & 7);
    *payload = r->p;
    switch (*wt) {
    case WT_VARINT:
        if (read_varint(r, &v) != 0) return -1;
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
        if (read_varint(r, &v) != 0 || v > (uint64_t)(r->end - r->p)) return -1;
        *payload = r->p;
        r->p += v;
        break;
    default: return -1;
    }
    *plen = (size_t)(r->p - *payload);
    return 0;
}

typedef int (*rewrite_fn)(writer *w, reader *body);

/* Writes a length-delimited field whose payload is rewritten by fn: the
 * payload goes to a scratch writer first since its length prefixes it. */
static int rewrite_len_field(writer *w, uint64_t field, const uint8_t *base, const uint8_t *payload,
                             size_t plen, rewrite_fn fn) {
    writer inner = {0};
    inner.slices = w->slices;
    inner.n_slices = w->n_slices;
    inner.cap_slices = w->cap_slices;
    reader body = {base, payload, payload + plen};
    int rc = fn(&inner, &body);
    w->slices = inner.slices;
    w->n_slices = inner.n_slices;
    w->cap_slices = inner.cap_slices;
    if (rc == 0)
        rc = put_varint(w, field << 3 | WT_LEN) || put_varint(w, inner.len) ||
                     put_bytes(w, inner.buf, inner.len)
                 ? -1
                 : 0;
    free(inner.buf);
    return rc;
}

static int add_slice(writer *w, ox_raw_slice s) {
    if (w->n_slices == w->cap_slices) {
        size_t ncap = w->cap_slices ? w->cap_slices * 2 : 64;
        ox_raw_slice *ns = realloc(w->slices, ncap * sizeof *ns);
        if (!ns) return -1;
        w->slices = ns;
        w->cap_slices = ncap;
    }
    w->slices[w->n_slices++] = s;
    return 0;
}

static int rewrite_tensor(writer *w, reader *r) {
    ox_raw_slice s = {0, 0, 0};
    while (r->p < r->end) {
        uint64_t field;
        int wt;
        const uint8_t *start, *payload;
        size_t plen;
        if (next_field(r, &field, &wt, &start, &payload, &plen) != 0) return -1;
        if (field == TENSOR_RAW_DATA && wt == WT_LEN) {
            /* the last occurrence wins, as in protobuf */
            s.offset = (size_t)(payload - r->base);
            s.length = plen;
            s.present = 1;
            continue;
        }
        if (put_bytes(w, start, (size_t)(r->p - start)) != 0) return -1;
    }
    return add_slice(w, s);
}

static int rewrite_graph(writer *w, reader *r) {
    while (r->p < r->end) {
        uint64_t field;
        int wt;
        const uint8_t *start, *payload;
        size_t plen;
        if (next_field(r, &field, &wt, &start, &payload, &plen) != 0) return -1;
        if (field == GRAPH_INITIALIZER && wt == WT_LEN) {
            if (rewrite_len_field(w, field, r->base, payload, plen, rewrite_tensor) != 0) return -1;
            continue;
        }
        if (put_bytes(w, start, (size_t)(r->p - start)) != 0) return -1;
    }
    return 0;
}

static int rewrite_model(writer *w, reader *r) {
    while (r->p < r->end) {
        uint64_t field;
        int wt;
        const uint8_t *start, *payload;
        size_t plen;
        if (next_field(r, &field, &wt, &start, &payload, &plen) != 0) return -1;
        if (field == MODEL_GRAPH && wt == WT_LEN) {
            if (rewrite_len_field(w, field, r->base, payload, plen, rewrite_graph) != 0) return -1;
            continue;
        }
        if (put_bytes(w, start, (size_t)(r->p - start)) != 0) return -1;
    }
    return 0;
}

int ox_strip_initializer_data(const uint8_t *model, size_t size, uint8_t **stripped,
                              size_t *stripped_size, ox_raw_slice **slices, size_t *n_slices,
                              ox_error *err) {
    *stripped = NULL;
    *slices = NULL;
    *stripped_size = *n_slices = 0;
    writer w = {0};
    reader r = {model, model, model + size};
    if (reserve(&w, 1) != 0 || rewrite_model(&w, &r) != 0) {
        free(w.buf);
        free(w.slices);
        return ox_fail(err, ONYX_INVALID_MODEL, "not an ONNX model: malformed protobuf data");
    }
    *stripped = w.buf;
    *stripped_size = w.len;
    *slices = w.slices;
    *n_slices = w.n_slices;
    return 0;
}
