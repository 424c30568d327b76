#include "io/npy.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/checked.h"

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
static int parse_descr(const char *d, ox_dtype *dtype, int *swap, size_t *chars, ox_error *err) {
    const char *s = d;
    char order = '=';
    *chars = 0;
    if (*s == '<' || *s == '>' || *s == '|' || *s == '=') order = *s++;
    char kind = *s ? *s++ : '\0';
    if (kind == 'U') {
        /* unicode: `chars` UTF-32 code units per element */
        size_t n = 0;
        if (*s < '0' || *s > '9') goto bad;
        while (*s >= '0' && *s <= '9') {
            n = n * 10 + (size_t)(*s++ - '0');
            if (n > (1u << 24)) goto bad;
        }
        if (*s) goto bad;
        /* numpy makes every unicode dtype at least '<U1'; '<U0' elements
         * would take no bytes of the file, so a tiny file could ask for any
         * number of strings */
        if (n == 0)
            return ox_fail(err, ONYX_INVALID_ARGUMENT,
                           "invalid .npy header: unicode dtype '%s' holds no characters", d);
        int file_big = order == '>' || (order != '<' && host_is_big_endian());
        *swap = file_big != host_is_big_endian();
        *chars = n;
        *dtype = ONYX_STRING;
        return 0;
    }
    /* kinds numpy has but onyx does not, whatever follows them ('|O',
     * '|S7', '<M8[ns]') */
    if (kind == 'S' || kind == 'a')
        return ox_fail(err, ONYX_NOT_IMPLEMENTED,
                       ".npy byte-string arrays (dtype '%s') are not supported; save unicode "
                       "('<U') arrays",
                       d);
    if (kind == 'O')
        return ox_fail(err, ONYX_NOT_IMPLEMENTED,
                       ".npy object arrays (dtype '%s') are not supported", d);
    /* ml_dtypes' types (bfloat16, float8, int4, ...) save as opaque 'V1'
     * and 'V2' records of their bits; they read as uint8 / uint16 here and
     * onyx run relabels them by the model's input type */
    if (kind == 'V' && (strcmp(s, "1") == 0 || strcmp(s, "2") == 0)) {
        *dtype = s[0] == '1' ? ONYX_UINT8 : ONYX_UINT16;
        *swap = 0; /* the record holds the type's own little-endian bytes */
        return 0;
    }
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

/* ---------------------------------------------------------------------
 * Unicode arrays: numpy's '<U{n}' holds n UTF-32 code units per element,
 * NUL-padded; onyx strings are UTF-8. */

/* Appends code point c as UTF-8; returns the bytes written (1..4). */
static size_t utf8_put(uint32_t c, char *o) {
    if (c < 0x80) {
        o[0] = (char)c;
        return 1;
    }
    if (c < 0x800) {
        o[0] = (char)(0xc0 | (c >> 6));
        o[1] = (char)(0x80 | (c & 0x3f));
        return 2;
    }
    if (c < 0x10000) {
        o[0] = (char)(0xe0 | (c >> 12));
        o[1] = (char)(0x80 | ((c >> 6) & 0x3f));
        o[2] = (char)(0x80 | (c & 0x3f));
        return 3;
    }
    o[0] = (char)(0xf0 | (c >> 18));
    o[1] = (char)(0x80 | ((c >> 12) & 0x3f));
    o[2] = (char)(0x80 | ((c >> 6) & 0x3f));
    o[3] = (char)(0x80 | (c & 0x3f));
    return 4;
}

/* Decodes one UTF-8 code point from s (at most n bytes); malformed input
 * gives U+FFFD and consumes one byte, so any bytes encode. */
static uint32_t utf8_get(const unsigned char *s, size_t n, size_t *used) {
    unsigned char b = s[0];
    int len = b < 0x80 ? 1 : (b & 0xe0) == 0xc0 ? 2 : (b & 0xf0) == 0xe0 ? 3 : (b & 0xf8) == 0xf0 ? 4 : 0;
    *used = 1;
    if (len == 1) return b;
    if (len == 0 || (size_t)len > n) return 0xfffd;
    uint32_t c = b & (0x7fu >> len);
    for (int k = 1; k < len; k++) {
        if ((s[k] & 0xc0) != 0x80) return 0xfffd;
        c = (c << 6) | (s[k] & 0x3fu);
    }
    /* overlong forms, surrogates and values past Unicode are malformed */
    static const uint32_t min_for_len[5] = {0, 0, 0x80, 0x800, 0x10000};
    if (c < min_for_len[len] || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff)) return 0xfffd;
    *used = (size_t)len;
    return c;
}

static int read_unicode(const unsigned char *src, size_t avail, const npy_header *h, size_t chars,
                        int swap, ox_tensor **out, ox_error *err) {
    int64_t n = 0;
    if (!ox_numel_checked(h->dims, h->rank, &n))
        return ox_fail(err, ONYX_INVALID_ARGUMENT,
                       "invalid .npy shape: its element count overflows int64");
    if ((uint64_t)n > SIZE_MAX / 4 / chars)
        return ox_fail(err, ONYX_INVALID_ARGUMENT, ".npy string array too large");
    size_t need = (size_t)n * chars * 4;
    if (avail != need)
        return ox_fail(err, ONYX_INVALID_ARGUMENT,
                       ".npy string array needs %zu bytes of data, found %zu", need, avail);
    ox_tensor *t = ox_tensor_new(ONYX_STRING, h->dims, h->rank, err);
    if (!t) return -1;
    char **strs = t->data;
    for (int64_t i = 0; i < n; i++) {
        char *s = malloc(chars * 4 + 1);
        if (!s) {
            ox_tensor_free(t);
            return ox_fail(err, ONYX_OUT_OF_MEMORY, "out of memory reading .npy strings");
        }
        /* Fortran order only permutes elements; compute the source element */
        int64_t src_i = i;
        if (h->fortran_order && h->rank > 1) {
            int64_t rem = i, stride = 1;
            src_i = 0;
            int64_t idx[OX_MAX_RANK];
            for (int k = h->rank - 1; k >= 0; k--) {
                idx[k] = rem % h->dims[k];
                rem /= h->dims[k];
            }
            for (int k = 0; k < h->rank; k++) {
                src_i += idx[k] * stride;
                stride *= h->dims[k];
            }
        }
        const unsigned char *e = src + (size_t)src_i * chars * 4;
        size_t len = 0;
        for (size_t k = 0; k < chars; k++) {
            const unsigned char *u = e + k * 4;
            uint32_t c = swap ? (uint32_t)u[0] << 24 | (uint32_t)u[1] << 16 | (uint32_t)u[2] << 8 | u[3]
                              : (uint32_t)u[3] << 24 | (uint32_t)u[2] << 16 | (uint32_t)u[1] << 8 | u[0];
            if (c == 0) break; /* numpy pads with NULs; C strings end at the first */
            if (c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff)) c = 0xfffd;
            len += utf8_put(c, s + len);
        }
        s[len] = '\0';
        free(strs[i]);
        strs[i] = s;
    }
    *out = t;
    return 0;
}

/* Encodes a string tensor as '<U{n}' data (n the longest element in code
 * points, at least 1 as numpy has it). */
static int encode_unicode(const ox_tensor *t, unsigned char **data, size_t *nbytes, size_t *chars,
                          ox_error *err) {
    int64_t n = ox_tensor_numel(t);
    char *const *strs = t->data;
    size_t width = 1;
    for (int64_t i = 0; i < n; i++) {
        const unsigned char *s = (const unsigned char *)(strs[i] ? strs[i] : "");
        size_t len = strlen((const char *)s), cps = 0, used;
        for (size_t k = 0; k < len; k += used, cps++) utf8_get(s + k, len - k, &used);
        if (cps > width) width = cps;
    }
    if ((uint64_t)n > SIZE_MAX / 4 / width)
        return ox_fail(err, ONYX_OUT_OF_MEMORY, "string tensor too large for .npy");
    size_t total = (size_t)n * width * 4;
    unsigned char *buf = calloc(1, total ? total : 1);
    if (!buf) return ox_fail(err, ONYX_OUT_OF_MEMORY, "out of memory encoding .npy strings");
    for (int64_t i = 0; i < n; i++) {
        const unsigned char *s = (const unsigned char *)(strs[i] ? strs[i] : "");
        size_t len = strlen((const char *)s), used;
        unsigned char *o = buf + (size_t)i * width * 4;
        for (size_t k = 0; k < len; k += used, o += 4) {
            uint32_t c = utf8_get(s + k, len - k, &used);
            o[0] = (unsigned char)c, o[1] = (unsigned char)(c >> 8), o[2] = (unsigned char)(c >> 16);
            o[3] = (unsigned char)(c >> 24);
        }
    }
    *data = buf;
    *nbytes = total;
    *chars = width;
    return 0;
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
    size_t chars = 0;
    if (parse_descr(h.descr, &dtype, &swap, &chars, err) != 0) return -1;
    if (dtype == ONYX_STRING)
        return read_unicode(b + pre + hlen, size - pre - hlen, &h, chars, swap, out, err);

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
    /* narrow types, one element per byte as onyx holds them: int4/int2
     * and uint4/uint2 as their values, the narrow floats as their bit
     * patterns (view them with ml_dtypes, e.g. a.view(float8_e4m3fn)) */
    case ONYX_INT4:
    case ONYX_INT2: return "|i1";
    case ONYX_UINT4:
    case ONYX_UINT2:
    case ONYX_FLOAT8E4M3FN:
    case ONYX_FLOAT8E4M3FNUZ:
    case ONYX_FLOAT8E5M2:
    case ONYX_FLOAT8E5M2FNUZ:
    case ONYX_FLOAT4E2M1:
    case ONYX_FLOAT8E8M0:
    case ONYX_FLOAT6E2M3:
    case ONYX_FLOAT6E3M2: return "|u1";
    default: return NULL;
    }
}

int ox_npy_encode(const ox_tensor *t, void **out, size_t *out_size, ox_error *err) {
    *out = NULL;
    *out_size = 0;
    if (t->kind != OX_KIND_TENSOR)
        return ox_fail(err, ONYX_INVALID_ARGUMENT, "cannot save a %s as .npy; only tensors",
                       t->kind == OX_KIND_SEQUENCE ? "sequence" : "optional");
    if (t->device != 0)
        return ox_fail(err, ONYX_INVALID_ARGUMENT,
                       "cannot save a tensor that is not in host memory");
    size_t nbytes;
    if (ox_bytes_for(t->dtype, t->dims, t->rank, &nbytes, err) != 0) return -1;
    if (t->nbytes < nbytes || (nbytes && !t->data))
        return ox_fail(err, ONYX_INVALID_ARGUMENT, "tensor holds %zu bytes, its shape needs %zu",
                       t->nbytes, nbytes);
    /* strings: numpy's own '<U{n}' layout, UTF-32LE */
    unsigned char *text = NULL;
    char str_descr[32];
    const char *descr = descr_for(t->dtype);
    if (t->dtype == ONYX_STRING) {
        size_t chars = 1;
        if (encode_unicode(t, &text, &nbytes, &chars, err) != 0) return -1;
        snprintf(str_descr, sizeof str_descr, "<U%zu", chars);
        descr = str_descr;
    }
    if (!descr)
        return ox_fail(err, ONYX_INVALID_ARGUMENT, "cannot save element type %s as .npy",
                       ox_dtype_name(t->dtype));

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
    if (total < nbytes) {
        free(text);
        return ox_fail(err, ONYX_OUT_OF_MEMORY, "tensor too large for .npy");
    }
    unsigned char *buf = malloc(total);
    if (!buf) {
        free(text);
        return ox_fail(err, ONYX_OUT_OF_MEMORY, "out of memory encoding %zu bytes as .npy",
                       total);
    }
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
    if (text) {
        if (nbytes) memcpy(d, text, nbytes);
        free(text);
        *out = buf;
        *out_size = total;
        return 0;
    }
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
