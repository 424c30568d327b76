#include "io/npy.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Offsets of the fixed preamble: magic, major, minor, then the header
 * length as uint16 (version 1) or uint32 (versions 2 and 3). */
#define NPY_PREAMBLE_V1 10
#define NPY_PREAMBLE_V2 12
/* np.save pads the header so the data starts on this boundary. */
#define NPY_ALIGN 64

static int host_is_big_endian(void) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    return 1;
#else
    return 0;
#endif
}

/* ---------------------------------------------------------------------
 * Header parsing. The header is a Python dict literal written by
 * repr(); only the subset numpy emits is accepted: string, bool and
 * tuple-of-int values under the keys descr, fortran_order and shape. */

typedef struct hparser {
    const char *s;
    size_t pos, len;
    ox_error *err;
} hparser;

static int hfail(hparser *p, const char *what) {
    return ox_fail(p->err, ONYX_INVALID_ARGUMENT, "invalid .npy header: %s at offset %zu", what,
                   p->pos);
}

static void hskip_ws(hparser *p) {
    while (p->pos < p->len) {
        char c = p->s[p->pos];
        if (c != ' ' && c != '\t' && c != '\n' && c != '\r') break;
        p->pos++;
    }
}

static int hpeek(hparser *p) { return p->pos < p->len ? (unsigned char)p->s[p->pos] : -1; }

static int hexpect(hparser *p, char c, const char *what) {
    hskip_ws(p);
    if (hpeek(p) != (unsigned char)c) return hfail(p, what);
    p->pos++;
    return 0;
}

/* Quoted string without escapes (descr codes and key names never need
 * them); copied into buf. */
static int hstring(hparser *p, char *buf, size_t cap) {
    hskip_ws(p);
    int q = hpeek(p);
    if (q != '\'' && q != '"') return hfail(p, "expected a quoted string");
    p->pos++;
    size_t n = 0;
    for (;;) {
        int c = hpeek(p);
        if (c < 0) return hfail(p, "unterminated string");
        p->pos++;
        if (c == q) break;
        if (c == '\\') return hfail(p, "escape sequences are not supported");
        if (n + 1 >= cap) return hfail(p, "string too long");
        buf[n++] = (char)c;
    }
    buf[n] = '\0';
    return 0;
}

static int hword(hparser *p, const char *w) {
    size_t n = strlen(w);
    if (p->len - p->pos < n || memcmp(p->s + p->pos, w, n) != 0) return 0;
    /* "Truex" must not match "True" */
    if (p->pos + n < p->len) {
        char c = p->s[p->pos + n];
        if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_')
            return 0;
    }
    p->pos += n;
    return 1;
}

static int hbool(hparser *p, int *out) {
    hskip_ws(p);
    if (hword(p, "True")) *out = 1;
    else if (hword(p, "False")) *out = 0;
    else return hfail(p, "fortran_order must be True or False");
    return 0;
}

static int hint(hparser *p, int64_t *out) {
    hskip_ws(p);
    int c = hpeek(p);
    if (c == '-') return hfail(p, "negative dimension");
    if (c < '0' || c > '9') return hfail(p, "expected a dimension");
    int64_t v = 0;
    while ((c = hpeek(p)) >= '0' && c <= '9') {
        if (v > (INT64_MAX - (c - '0')) / 10) return hfail(p, "dimension too large");
        v = v * 10 + (c - '0');
        p->pos++;
    }
    /* Python 2 wrote long integers with an L suffix */
    if (c == 'L' || c == 'l') p->pos++;
    *out = v;
    return 0;
}

/* Python tuple: "()", "(n,)", "(a, b)" or "(a, b,)"; "(n)" is an int in
 * Python and numpy rejects it, so do we. */
static int hshape(hparser *p, int64_t *dims, int *rank) {
    if (hexpect(p, '(', "shape must be a tuple") != 0) return -1;
    int n = 0, trailing_comma = 0;
    for (;;) {
        hskip_ws(p);
        if (hpeek(p) == ')') {
            p->pos++;
            break;
        }
        if (n > 0 && !trailing_comma) return hfail(p, "expected ',' or ')' in shape");
        int64_t d = 0;
        if (hint(p, &d) != 0) return -1;
        if (n >= OX_MAX_RANK)
            return ox_fail(p->err, ONYX_NOT_IMPLEMENTED,
                           ".npy shape has more than %d dimensions, onyx's rank limit",
                           OX_MAX_RANK);
        dims[n++] = d;
        hskip_ws(p);
        trailing_comma = 0;
        if (hpeek(p) == ',') {
            p->pos++;
            trailing_comma = 1;
        }
    }
    if (n == 1 && !trailing_comma) return hfail(p, "shape '(n)' is not a tuple; expected '(n,)'");
    *rank = n;
    return 0;
}

typedef struct npy_header {
    char descr[32];
    int fortran_order;
    int64_t dims[OX_MAX_RANK];
    int rank;
} npy_header;

static int parse_header(const char *s, size_t len, npy_header *h, ox_error *err) {
    hparser p = {s, 0, len, err};
    int seen_descr = 0, seen_fortran = 0, seen_shape = 0;
    if (hexpect(&p, '{', "expected '{'") != 0) return -1;
    for (;;) {
        hskip_ws(&p);
        if (hpeek(&p) == '}') {
            p.pos++;
            break;
        }
        char key[32];
        if (hstring(&p, key, sizeof key) != 0) return -1;
        if (hexpect(&p, ':', "expected ':' after key") != 0) return -1;
        if (strcmp(key, "descr") == 0) {
            if (seen_descr++) return hfail(&p, "duplicate key 'descr'");
            hskip_ws(&p);
            if (hpeek(&p) == '[')
                return ox_fail(err, ONYX_NOT_IMPLEMENTED,
                               ".npy files with structured dtypes are not supported");
            if (hstring(&p, h->descr, sizeof h->descr) != 0) return -1;
        } else if (strcmp(key, "fortran_order") == 0) {
            if (seen_fortran++) return hfail(&p, "duplicate key 'fortran_order'");
            if (hbool(&p, &h->fortran_order) != 0) return -1;
        } else if (strcmp(key, "shape") == 0) {
            if (seen_shape++) return hfail(&p, "duplicate key 'shape'");
            if (hshape(&p, h->dims, &h->rank) != 0) return -1;
        } else {
            return ox_fail(err, ONYX_INVALID_ARGUMENT, "invalid .npy header: unexpected key '%s'",
                           key);
        }
        hskip_ws(&p);
        if (hpeek(&p) == ',') {
            p.pos++;
        } else if (hpeek(&p) != '}') {
            return hfail(&p, "expected ',' or '}'");
        }
    }
    hskip_ws(&p);
    if (p.pos != p.len) return hfail(&p, "unexpected text after '}'");
    if (!seen_descr) return ox_fail(err, ONYX_INVALID_ARGUMENT, "invalid .npy header: no 'descr'");
    if (!seen_fortran)
        return ox_fail(err, ONYX_INVALID_ARGUMENT, "invalid .npy header: no 'fortran_order'");
    if (!seen_shape) return ox_fail(err, ONYX_INVALID_ARGUMENT, "invalid .npy header: no 'shape'");
    return 0;
}

/* Maps a descr such as '<f4' or '|b1' to an element type and tells
 * whether the data needs byte-swapping on this host. */
static int parse_descr(const char *d, ox_dtype *dtype, int *swap, ox_error *err) {
    const char *s = d;
    char order = '=';
    if (*s == '<' || *s == '>' || *s == '|' || *s == '=') order = *s++;
    char kind = *s ? *s++ : '\0';
    /* kinds numpy has but onyx does not, whatever follows them ('|O',
     * '<U7', '<M8[ns]') */
    if (kind == 'U' || kind == 'S' || kind == 'a')
        return ox_fail(err, ONYX_NOT_IMPLEMENTED,
                       ".npy string arrays (dtype '%s') are not supported", d);
    if (kind == 'O')
        return ox_fail(err, ONYX_NOT_IMPLEMENTED,
                       ".npy object arrays (dtype '%s') are not supported", d);
    if (kind == 'V' || kind == 'M' || kind == 'm')
        return ox_fail(err, ONYX_NOT_IMPLEMENTED, ".npy dtype '%s' is not supported", d);
    int size = 0;
    if (kind == '?' && *s == '\0') {
        kind = 'b';
        size = 1;
    } else {
        if (*s < '1' || *s > '9') goto bad;
        while (*s >= '0' && *s <= '9') {
            size = size * 10 + (*s++ - '0');
            if (size > 64) goto bad;
        }
        if (*s) goto bad;
    }
    ox_dtype t = ONYX_UNDEFINED;
    switch (kind) {
    case 'b': t = size == 1 ? ONYX_BOOL : ONYX_UNDEFINED; break;
    case 'i':
        t = size == 1 ? ONYX_INT8 : size == 2 ? ONYX_INT16 : size == 4 ? ONYX_INT32
            : size == 8 ? ONYX_INT64 : ONYX_UNDEFINED;
        break;
    case 'u':
        t = size == 1 ? ONYX_UINT8 : size == 2 ? ONYX_UINT16 : size == 4 ? ONYX_UINT32
            : size == 8 ? ONYX_UINT64 : ONYX_UNDEFINED;
        break;
    case 'f':
        t = size == 2 ? ONYX_FLOAT16 : size == 4 ? ONYX_FLOAT32 : size == 8 ? ONYX_FLOAT64
            : ONYX_UNDEFINED;
        break;
    case 'c': t = size == 8 ? ONYX_COMPLEX64 : size == 16 ? ONYX_COMPLEX128 : ONYX_UNDEFINED; break;
    default: goto bad;
    }
    if (t == ONYX_UNDEFINED)
        return ox_fail(err, ONYX_NOT_IMPLEMENTED, ".npy dtype '%s' is not supported", d);
    /* complex numbers swap each of their two parts, not the pair */
    size_t unit = (t == ONYX_COMPLEX64 || t == ONYX_COMPLEX128) ? (size_t)size / 2 : (size_t)size;
    int file_big = order == '>' || (order != '<' && host_is_big_endian());
    *swap = unit > 1 && file_big != host_is_big_endian();
    *dtype = t;
    return 0;
bad:
    return ox_fail(err, ONYX_INVALID_ARGUMENT, "invalid .npy header: bad descr '%s'", d);
}

static void swap_units(unsigned char *p, size_t nbytes, size_t unit) {
    for (size_t off = 0; off + unit <= nbytes; off += unit)
        for (size_t i = 0, j = unit - 1; i < j; i++, j--) {
            unsigned char c = p[off + i];
            p[off + i] = p[off + j];
            p[off + j] = c;
        }
}

/* Copies column-major src into the row-major dst, walking dst in order
 * and keeping the matching src offset up to date incrementally. */
static void fortran_to_c(unsigned char *dst, const unsigned char *src, const int64_t *dims,
                         int rank, size_t esize) {
    int64_t n = ox_numel(dims, rank);
    if (n == 0) return;
    size_t fstride[OX_MAX_RANK];
    int64_t idx[OX_MAX_RANK] = {0};
    size_t s = esize;
    for (int k = 0; k < rank; k++) {
        fstride[k] = s;
        s *= (size_t)dims[k];
    }
    size_t src_off = 0;
    for (int64_t i = 0; i < n; i++) {
        memcpy(dst + (size_t)i * esize, src + src_off, esize);
        for (int k = rank - 1; k >= 0; k--) {
            if (++idx[k] < dims[k]) {
                src_off += fstride[k];
                break;
            }
            src_off -= fstride[k] * (size_t)(dims[k] - 1);
            idx[k] = 0;
        }
    }
}

static uint32_t read_le(const unsigned char *p, int n) {
    uint32_t v = 0;
    for (int i = n - 1; i >= 0; i--) v = (v << 8) | p[i];
    return v;
}

int ox_npy_read(const void *data, size_t size, ox_tensor **out, ox_error *err) {
    *out = NULL;
    const unsigned char *b = data;
    if (size < OX_NPY_MAGIC_LEN || memcmp(b, OX_NPY_MAGIC, OX_NPY_MAGIC_LEN) != 0)
        return ox_fail(err, ONYX_INVALID_ARGUMENT, "not a .npy file (bad magic)");
    if (size < 8) return ox_fail(err, ONYX_INVALID_ARGUMENT, "truncated .npy file: no version");
    int major = b[6], minor = b[7];
    if (major < 1 || major > 3 || minor != 0)
        return ox_fail(err, ONYX_NOT_IMPLEMENTED, "unsupported .npy format version %d.%d", major,
                       minor);
    size_t pre = major == 1 ? NPY_PREAMBLE_V1 : NPY_PREAMBLE_V2;
    if (size < pre)
        return ox_fail(err, ONYX_INVALID_ARGUMENT, "truncated .npy file: no header length");
    size_t hlen = read_le(b + 8, major == 1 ? 2 : 4);
    if (hlen > size - pre)
        return ox_fail(err, ONYX_INVALID_ARGUMENT,
                       "truncated .npy file: header of %zu bytes but only %zu follow", hlen,
                       size - pre);
    const char *hs = (const char *)b + pre;
    /* versions 1 and 2 promise latin-1; only ASCII can form a valid dict,
     * and rejecting the rest keeps the version 3 (UTF-8) case simple */
    for (size_t i = 0; i < hlen; i++)
        if ((unsigned char)hs[i] >= 0x80 || hs[i] == '\0')
            return ox_fail(err, ONYX_INVALID_ARGUMENT,
                           "invalid .npy header: non-ASCII byte at offset %zu", i);

    npy_header h;
    memset(&h, 0, sizeof h);
    if (parse_header(hs, hlen, &h, err) != 0) return -1;
    ox_dtype dtype = ONYX_UNDEFINED;
    int swap = 0;
    if (parse_descr(h.descr, &dtype, &swap, err) != 0) return -1;

    size_t nbytes;
    if (ox_bytes_for(dtype, h.dims, h.rank, &nbytes, err) != 0) return -1;
    size_t avail = size - pre - hlen;
    if (avail < nbytes)
        return ox_fail(err, ONYX_INVALID_ARGUMENT,
                       "truncated .npy file: shape needs %zu bytes of data, found %zu", nbytes,
                       avail);
    if (avail > nbytes)
        return ox_fail(err, ONYX_INVALID_ARGUMENT,
                       ".npy file has %zu bytes after the %zu bytes its shape needs",
                       avail - nbytes, nbytes);

    ox_tensor *t = ox_tensor_new(dtype, h.dims, h.rank, err);
    if (!t) return -1;
    const unsigned char *src = b + pre + hlen;
    size_t esize = ox_dtype_size(dtype);
    if (h.fortran_order && h.rank > 1)
        fortran_to_c(t->data, src, h.dims, h.rank, esize);
    else if (nbytes)
        memcpy(t->data, src, nbytes);
    if (swap) {
        size_t unit = (dtype == ONYX_COMPLEX64 || dtype == ONYX_COMPLEX128) ? esize / 2 : esize;
        swap_units(t->data, nbytes, unit);
    }
    if (dtype == ONYX_BOOL) {
        /* kernels assume 0/1 bytes; numpy treats any non-zero as True */
        unsigned char *p = t->data;
        for (size_t i = 0; i < nbytes; i++) p[i] = p[i] != 0;
    }
    *out = t;
    return 0;
}

/* ---------------------------------------------------------------------
 * Writing. */

static const char *descr_for(ox_dtype t) {
    switch (t) {
    case ONYX_FLOAT32: return "<f4";
    case ONYX_UINT8: return "|u1";
    case ONYX_INT8: return "|i1";
    case ONYX_UINT16: return "<u2";
    case ONYX_INT16: return "<i2";
    case ONYX_INT32: return "<i4";
    case ONYX_INT64: return "<i8";
    case ONYX_BOOL: return "|b1";
    case ONYX_FLOAT16: return "<f2";
    case ONYX_FLOAT64: return "<f8";
    case ONYX_UINT32: return "<u4";
    case ONYX_UINT64: return "<u8";
    case ONYX_COMPLEX64: return "<c8";
    case ONYX_COMPLEX128: return "<c16";
    /* numpy has no bfloat16; the bits survive as uint16 */
    case ONYX_BFLOAT16: return "<u2";
    default: return NULL;
    }
}

int ox_npy_encode(const ox_tensor *t, void **out, size_t *out_size, ox_error *err) {
    *out = NULL;
    *out_size = 0;
    if (t->kind != OX_KIND_TENSOR)
        return ox_fail(err, ONYX_INVALID_ARGUMENT, "cannot save a %s as .npy; only tensors",
                       t->kind == OX_KIND_SEQUENCE ? "sequence" : "optional");
    if (t->dtype == ONYX_STRING)
        return ox_fail(err, ONYX_INVALID_ARGUMENT, "cannot save a string tensor as .npy");
    const char *descr = descr_for(t->dtype);
    if (!descr)
        return ox_fail(err, ONYX_INVALID_ARGUMENT, "cannot save element type %s as .npy",
                       ox_dtype_name(t->dtype));
    if (t->device != 0)
        return ox_fail(err, ONYX_INVALID_ARGUMENT,
                       "cannot save a tensor that is not in host memory");
    size_t nbytes;
    if (ox_bytes_for(t->dtype, t->dims, t->rank, &nbytes, err) != 0) return -1;
    if (t->nbytes < nbytes || (nbytes && !t->data))
        return ox_fail(err, ONYX_INVALID_ARGUMENT, "tensor holds %zu bytes, its shape needs %zu",
                       t->nbytes, nbytes);

    char hdr[1024];
    int n = snprintf(hdr, sizeof hdr, "{'descr': '%s', 'fortran_order': False, 'shape': (", descr);
    for (int i = 0; i < t->rank; i++)
        n += snprintf(hdr + n, sizeof hdr - (size_t)n, "%s%lld", i ? ", " : "",
                      (long long)t->dims[i]);
    n += snprintf(hdr + n, sizeof hdr - (size_t)n, "%s), }", t->rank == 1 ? "," : "");
    /* the newline counts towards the aligned length */
    size_t unpadded = NPY_PREAMBLE_V1 + (size_t)n + 1;
    size_t pad = (NPY_ALIGN - unpadded % NPY_ALIGN) % NPY_ALIGN;
    size_t hlen = (size_t)n + pad + 1;
    size_t total = NPY_PREAMBLE_V1 + hlen + nbytes;
    if (total < nbytes) return ox_fail(err, ONYX_OUT_OF_MEMORY, "tensor too large for .npy");
    unsigned char *buf = malloc(total);
    if (!buf)
        return ox_fail(err, ONYX_OUT_OF_MEMORY, "out of memory encoding %zu bytes as .npy",
                       total);
    memcpy(buf, OX_NPY_MAGIC, OX_NPY_MAGIC_LEN);
    buf[6] = 1;
    buf[7] = 0;
    buf[8] = (unsigned char)(hlen & 0xff);
    buf[9] = (unsigned char)(hlen >> 8);
    unsigned char *h = buf + NPY_PREAMBLE_V1;
    memcpy(h, hdr, (size_t)n);
    memset(h + n, ' ', pad);
    h[hlen - 1] = '\n';
    unsigned char *d = h + hlen;
    if (nbytes) memcpy(d, t->data, nbytes);
    if (t->dtype == ONYX_BOOL) {
        /* '|b1' must hold 0/1 whatever a kernel left in the byte */
        for (size_t i = 0; i < nbytes; i++) d[i] = d[i] != 0;
    }
    if (host_is_big_endian()) {
        size_t esize = ox_dtype_size(t->dtype);
        size_t unit =
            (t->dtype == ONYX_COMPLEX64 || t->dtype == ONYX_COMPLEX128) ? esize / 2 : esize;
        if (unit > 1) swap_units(d, nbytes, unit);
    }
    *out = buf;
    *out_size = total;
    return 0;
}

int ox_npy_write(const ox_tensor *t, const char *path, ox_error *err) {
    void *buf;
    size_t size;
    if (ox_npy_encode(t, &buf, &size, err) != 0) return -1;
    FILE *f = fopen(path, "wb");
    if (!f) {
        int e = errno;
        free(buf);
        return ox_fail(err, ONYX_IO_ERROR, "cannot create '%s': %s", path, strerror(e));
    }
    size_t wrote = fwrite(buf, 1, size, f);
    int e = errno;
    free(buf);
    int bad = wrote != size;
    if (fclose(f) != 0 && !bad) {
        bad = 1;
        e = errno;
    }
    if (bad) {
        unlink(path);
        return ox_fail(err, ONYX_IO_ERROR, "cannot write '%s': %s", path, strerror(e));
    }
    return 0;
}
