/* CPU kernels of the text operators.
 *
 * StringNormalizer maps case per code point with the simple (one to one)
 * Unicode mappings of ASCII, Latin-1, Latin Extended-A, Greek and
 * Cyrillic; other code points and invalid UTF-8 bytes pass through
 * unchanged. That is the "en_US" behaviour; other locales are refused by
 * the schema's inference.
 *
 * TfIdfVectorizer turns the attribute pool into a hash table of n-grams
 * once per session (kernel state); a run looks up every n-gram of every
 * row with every allowed skip.
 *
 * RegexFullMatch takes RE2 syntax (the spec's) and runs it as a POSIX
 * extended regular expression through the C library, after rewriting the
 * RE2 constructs POSIX spells differently (\d, escapes inside brackets,
 * non-capturing groups, lazy quantifiers); constructs with no POSIX
 * equivalent (flags, Unicode classes, look-around) are refused with an
 * error naming them. Whether a whole string matches does not depend on
 * RE2's leftmost-first versus POSIX's leftmost-longest preference, so
 * the answers agree. */
#include <regex.h>
#include <stdio.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ep/cpu/kernels/broadcast.h"
#include "ep/cpu/kernels/kernel_util.h"
#include "ep/ep.h"

extern const ox_kernel_table ox_cpu_kernels_text;

/* ================================================================== */
/* StringNormalizer                                                    */

static uint32_t lower_cp(uint32_t c) {
    if (c >= 'A' && c <= 'Z') return c + 32;
    if (c < 0xC0) return c;
    if (c <= 0xDE) return c == 0xD7 ? c : c + 32;
    if (c >= 0x100 && c <= 0x12F) return c | 1;
    if (c == 0x130) return 'i';
    if (c >= 0x132 && c <= 0x137) return c | 1;
    if (c >= 0x139 && c <= 0x148) return (c & 1) ? c + 1 : c;
    if (c >= 0x14A && c <= 0x177) return c | 1;
    if (c == 0x178) return 0xFF;
    if (c >= 0x179 && c <= 0x17E) return (c & 1) ? c + 1 : c;
    if (c == 0x386) return 0x3AC;
    if (c >= 0x388 && c <= 0x38A) return c + 37;
    if (c == 0x38C) return 0x3CC;
    if (c == 0x38E || c == 0x38F) return c + 63;
    if (c >= 0x391 && c <= 0x3A9) return c == 0x3A2 ? c : c + 32;
    if (c >= 0x400 && c <= 0x40F) return c + 80;
    if (c >= 0x410 && c <= 0x42F) return c + 32;
    if ((c >= 0x460 && c <= 0x481) || (c >= 0x48A && c <= 0x4BF) || (c >= 0x4D0 && c <= 0x52F)) return c | 1;
    if (c == 0x4C0) return 0x4CF;
    if (c >= 0x4C1 && c <= 0x4CE) return (c & 1) ? c + 1 : c;
    return c;
}

static uint32_t upper_cp(uint32_t c) {
    if (c >= 'a' && c <= 'z') return c - 32;
    if (c < 0xB5) return c;
    if (c == 0xB5) return 0x39C;
    if (c >= 0xE0 && c <= 0xFE) return c == 0xF7 ? c : c - 32;
    if (c == 0xFF) return 0x178;
    if (c >= 0x100 && c <= 0x12F) return c & ~1u;
    if (c == 0x131) return 'I';
    if (c >= 0x132 && c <= 0x137) return c & ~1u;
    if (c >= 0x139 && c <= 0x148) return (c & 1) ? c : c - 1;
    if (c >= 0x14A && c <= 0x177) return c & ~1u;
    if (c >= 0x179 && c <= 0x17E) return (c & 1) ? c : c - 1;
    if (c == 0x17F) return 'S';
    if (c == 0x3AC) return 0x386;
    if (c >= 0x3AD && c <= 0x3AF) return c - 37;
    if (c == 0x3C2) return 0x3A3;
    if (c >= 0x3B1 && c <= 0x3C9) return c - 32;
    if (c == 0x3CC) return 0x38C;
    if (c == 0x3CD || c == 0x3CE) return c - 63;
    if (c >= 0x430 && c <= 0x44F) return c - 32;
    if (c >= 0x450 && c <= 0x45F) return c - 80;
    if ((c >= 0x460 && c <= 0x481) || (c >= 0x48A && c <= 0x4BF) || (c >= 0x4D0 && c <= 0x52F)) return c & ~1u;
    if (c == 0x4CF) return 0x4C0;
    if (c >= 0x4C1 && c <= 0x4CE) return (c & 1) ? c : c - 1;
    return c;
}

enum { CASE_NONE = 0, CASE_LOWER = 1, CASE_UPPER = 2, CASE_FOLD = 3 };

static uint32_t map_cp(uint32_t c, int how) {
    switch (how) {
    case CASE_LOWER: return lower_cp(c);
    case CASE_UPPER: return upper_cp(c);
    /* Lower of upper also unifies letters with two lower forms (s/ſ, σ/ς). */
    case CASE_FOLD: return lower_cp(upper_cp(c));
    default: return c;
    }
}

/* Heap copy of s with its case changed. Every mapped code point is below
 * U+0800, so its encoding is never longer than the source's and the
 * result fits in strlen(s) bytes. */
static char *change_case(const char *s, int how) {
    size_t n = strlen(s);
    char *out = malloc(n + 1);
    if (!out) return NULL;
    const unsigned char *p = (const unsigned char *)s;
    size_t i = 0, o = 0;
    while (i < n) {
        unsigned char b = p[i];
        if (how == CASE_NONE || b < 0xC2 || b > 0xDF || i + 1 >= n || (p[i + 1] & 0xC0) != 0x80) {
            /* ASCII, or anything that is not a two-byte sequence: only
             * ASCII changes, everything else is copied byte for byte. */
            out[o++] = (char)(b < 0x80 ? map_cp(b, how) : b);
            i++;
            continue;
        }
        uint32_t cp = ((uint32_t)(b & 0x1F) << 6) | (p[i + 1] & 0x3F);
        uint32_t m = map_cp(cp, how);
        if (m < 0x80) {
            out[o++] = (char)m;
        } else {
            out[o++] = (char)(0xC0 | (m >> 6));
            out[o++] = (char)(0x80 | (m & 0x3F));
        }
        i += 2;
    }
    out[o] = '\0';
    return out;
}

typedef struct strnorm_state {
    int action;         /* CASE_NONE / CASE_LOWER / CASE_UPPER */
    int case_sensitive;
    size_t n_stop;
    char **stop; /* sorted; case-folded when matching ignores case */
} strnorm_state;

static void strnorm_release(void *state) {
    strnorm_state *st = state;
    if (!st) return;
    for (size_t i = 0; i < st->n_stop; i++) free(st->stop[i]);
    free(st->stop);
    free(st);
}

static int cmp_str(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static strnorm_state *strnorm_build(const ir_node *node, ox_error *err) {
    strnorm_state *st = calloc(1, sizeof *st);
    if (!st) {
        ox_fail(err, ONYX_OUT_OF_MEMORY, "out of memory");
        return NULL;
    }
    const char *action = ir_attr_string(node, "case_change_action", "NONE");
    st->action = strcmp(action, "LOWER") == 0 ? CASE_LOWER : strcmp(action, "UPPER") == 0 ? CASE_UPPER : CASE_NONE;
    st->case_sensitive = ir_attr_int(node, "is_case_sensitive", 0) != 0;
    const ir_attr *sw = ir_node_attr(node, "stopwords");
    if (sw && sw->type == IR_ATTR_STRINGS && sw->n > 0) {
        st->stop = calloc(sw->n, sizeof *st->stop);
        if (!st->stop) goto oom;
        for (size_t i = 0; i < sw->n; i++) {
            const char *w = sw->strings[i] ? sw->strings[i] : "";
            st->stop[i] = change_case(w, st->case_sensitive ? CASE_NONE : CASE_FOLD);
            if (!st->stop[i]) goto oom;
            st->n_stop = i + 1;
        }
        qsort(st->stop, st->n_stop, sizeof *st->stop, cmp_str);
    }
    return st;
oom:
    strnorm_release(st);
    ox_fail(err, ONYX_OUT_OF_MEMORY, "out of memory");
    return NULL;
}

static int strnorm_init(const ox_kernel_init *in, void **state, ox_error *err) {
    const ir_node *node = in->node;
    *state = strnorm_build(node, err);
    return *state ? 0 : -1;
}

static int is_stopword(const strnorm_state *st, const char *s, int *oom) {
    if (st->n_stop == 0) return 0;
    char *folded = NULL;
    if (!st->case_sensitive) {
        folded = change_case(s, CASE_FOLD);
        if (!folded) {
            *oom = 1;
            return 0;
        }
        s = folded;
    }
    const char *key = s;
    int hit = bsearch(&key, st->stop, st->n_stop, sizeof *st->stop, cmp_str) != NULL;
    free(folded);
    return hit;
}

static int k_string_normalizer(ox_kernel_ctx *ctx) {
    const ox_tensor *x = ctx->n_inputs > 0 ? ctx->inputs[0] : NULL;
    if (!x || x->kind != OX_KIND_TENSOR || x->dtype != ONYX_STRING)
        return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT, "StringNormalizer: X must be a string tensor");
    if (!(x->rank == 1 || (x->rank == 2 && x->dims[0] == 1))) {
        char buf[128];
        return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT, "StringNormalizer: X must have shape [C] or [1, C], got %s",
                              ox_shape_str(x->dims, x->rank, buf, sizeof buf));
    }
    strnorm_state *own = NULL;
    const strnorm_state *st = ctx->state;
    if (!st) {
        own = strnorm_build(ctx->node, ctx->err);
        if (!own) return -1;
        st = own;
    }
    int64_t n = ox_tensor_numel(x);
    char *const *in = x->data;
    int64_t *keep = malloc((size_t)(n > 0 ? n : 1) * sizeof *keep);
    if (!keep) {
        strnorm_release(own);
        return ox_kernel_fail(ctx, ONYX_OUT_OF_MEMORY, "out of memory");
    }
    int64_t m = 0;
    int oom = 0;
    for (int64_t i = 0; i < n && !oom; i++)
        if (!is_stopword(st, in[i] ? in[i] : "", &oom)) keep[m++] = i;
    int rc = 0;
    if (oom) {
        rc = ox_kernel_fail(ctx, ONYX_OUT_OF_MEMORY, "out of memory");
        goto done;
    }
    /* With nothing left the spec keeps one empty string, shaped [1] or
     * [1, 1] after the input. */
    int64_t dims[2] = {1, m > 0 ? m : 1};
    ox_tensor *y = x->rank == 1 ? ox_kernel_output(ctx, 0, ONYX_STRING, dims + 1, 1)
                                : ox_kernel_output(ctx, 0, ONYX_STRING, dims, 2);
    if (!y) {
        rc = -1;
        goto done;
    }
    char **out = y->data;
    for (int64_t j = 0; j < (m > 0 ? m : 1); j++) {
        char *s = m > 0 ? change_case(in[keep[j]] ? in[keep[j]] : "", st->action) : change_case("", CASE_NONE);
        if (!s) {
            rc = ox_kernel_fail(ctx, ONYX_OUT_OF_MEMORY, "out of memory");
            goto done;
        }
        free(out[j]);
        out[j] = s;
    }
done:
    free(keep);
    strnorm_release(own);
    return rc;
}

/* ================================================================== */
/* TfIdfVectorizer                                                     */

enum { MODE_TF = 0, MODE_IDF = 1, MODE_TFIDF = 2 };

typedef struct tfidf_model {
    int mode;
    int is_string;
    int64_t min_n, max_n, max_skip;
    int64_t width;   /* output row length: max(ngram_indexes) + 1 */
    size_t n_grams;  /* n-grams in the pool */
    int64_t *tokens; /* all pool n-grams back to back, as token ids */
    size_t *start;   /* n_grams + 1 offsets into tokens */
    const int64_t *out_index;
    float *weight;   /* NULL: all ones */
    size_t cap;      /* power of two */
    int64_t *slots;  /* n-gram index + 1; 0 = empty */
    /* Strings: token id of a pool string is its first position in
     * pool_strings; input strings outside the pool get id -1. */
    char **vocab; /* borrowed from the attribute */
    size_t vocab_cap;
    int64_t *vocab_slots;
} tfidf_model;

static void tfidf_release(void *state) {
    tfidf_model *m = state;
    if (!m) return;
    free(m->tokens);
    free(m->start);
    free(m->weight);
    free(m->slots);
    free(m->vocab_slots);
    free(m);
}

static uint64_t mix(uint64_t x) {
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ULL;
    return x ^ (x >> 33);
}

static uint64_t hash_str(const char *s) {
    uint64_t h = 0xcbf29ce484222325ULL;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) h = (h ^ *p) * 0x100000001b3ULL;
    return mix(h);
}

/* Hash of the n tokens at toks[0], toks[stride], ... */
static uint64_t hash_gram(const int64_t *toks, int64_t n, int64_t stride) {
    uint64_t h = mix((uint64_t)n);
    for (int64_t k = 0; k < n; k++) h = mix(h ^ (uint64_t)toks[k * stride]) + 0x9e3779b97f4a7c15ULL;
    return h;
}

static size_t pow2_at_least(size_t n) {
    size_t c = 16;
    while (c < n) c <<= 1;
    return c;
}

static int64_t vocab_find(const tfidf_model *m, const char *s) {
    size_t mask = m->vocab_cap - 1;
    for (size_t h = (size_t)hash_str(s) & mask;; h = (h + 1) & mask) {
        int64_t v = m->vocab_slots[h];
        if (v == 0) return -1;
        if (strcmp(m->vocab[v - 1], s) == 0) return v - 1;
    }
}

/* Pool n-gram index of the n tokens at toks[0], toks[stride]...; -1 if
 * absent. */
static int64_t gram_find(const tfidf_model *m, const int64_t *toks, int64_t n, int64_t stride) {
    size_t mask = m->cap - 1;
    for (size_t h = (size_t)hash_gram(toks, n, stride) & mask;; h = (h + 1) & mask) {
        int64_t v = m->slots[h];
        if (v == 0) return -1;
        size_t g = (size_t)(v - 1);
        if ((int64_t)(m->start[g + 1] - m->start[g]) != n) continue;
        const int64_t *p = m->tokens + m->start[g];
        int64_t k = 0;
        while (k < n && p[k] == toks[k * stride]) k++;
        if (k == n) return (int64_t)g;
    }
}

/* Builds the model from the attributes; the schema has already checked
 * them at load, but this runs on its own too, so it checks again. */
static tfidf_model *tfidf_build(const ir_node *node, ox_error *err) {
    tfidf_model *m = calloc(1, sizeof *m);
    if (!m) goto oom;
    const char *mode = ir_attr_string(node, "mode", "");
    m->mode = strcmp(mode, "TF") == 0 ? MODE_TF : strcmp(mode, "IDF") == 0 ? MODE_IDF
            : strcmp(mode, "TFIDF") == 0                                   ? MODE_TFIDF
                                                                           : -1;
    m->min_n = ir_attr_int(node, "min_gram_length", -1);
    m->max_n = ir_attr_int(node, "max_gram_length", -1);
    m->max_skip = ir_attr_int(node, "max_skip_count", -1);
    const ir_attr *pi = ir_node_attr(node, "pool_int64s"), *ps = ir_node_attr(node, "pool_strings");
    size_t n_counts = 0, n_idx = 0, n_w = 0;
    const int64_t *counts = ir_attr_ints(node, "ngram_counts", &n_counts);
    m->out_index = ir_attr_ints(node, "ngram_indexes", &n_idx);
    const float *w = ir_attr_floats(node, "weights", &n_w);
    if (m->mode < 0 || m->min_n < 1 || m->max_n < m->min_n || m->max_skip < 0 || (pi != NULL) == (ps != NULL) ||
        (pi && pi->type != IR_ATTR_INTS) || (ps && ps->type != IR_ATTR_STRINGS)) {
        ox_fail(err, ONYX_INVALID_MODEL, "TfIdfVectorizer: invalid mode, gram lengths, skip count or pool");
        goto fail;
    }
    m->is_string = ps != NULL;
    size_t pool = pi ? pi->n : ps->n;
    /* Count n-grams level by level (level k holds (k+1)-grams). */
    size_t grams = 0;
    for (size_t k = 0; k < n_counts; k++) {
        int64_t s = counts[k], e = k + 1 < n_counts ? counts[k + 1] : (int64_t)pool;
        if (s < 0 || e < s || e > (int64_t)pool || (e - s) % (int64_t)(k + 1) != 0 || (k == 0 && s != 0)) {
            ox_fail(err, ONYX_INVALID_MODEL, "TfIdfVectorizer: ngram_counts does not split the pool into n-grams");
            goto fail;
        }
        grams += (size_t)(e - s) / (k + 1);
    }
    if (grams != n_idx || (n_counts == 0 && pool > 0) || (w && n_w != n_idx)) {
        ox_fail(err, ONYX_INVALID_MODEL,
                "TfIdfVectorizer: pool n-grams (%zu), ngram_indexes (%zu) and weights (%zu) disagree", grams,
                n_idx, n_w);
        goto fail;
    }
    m->n_grams = grams;
    for (size_t g = 0; g < grams; g++) {
        if (m->out_index[g] < 0) {
            ox_fail(err, ONYX_INVALID_MODEL, "TfIdfVectorizer: negative ngram index");
            goto fail;
        }
        if (m->out_index[g] + 1 > m->width) m->width = m->out_index[g] + 1;
    }
    if (w && n_w) {
        m->weight = malloc(n_w * sizeof *m->weight);
        if (!m->weight) goto oom;
        memcpy(m->weight, w, n_w * sizeof *m->weight);
    }
    if (m->is_string) {
        m->vocab = ps->strings;
        m->vocab_cap = pow2_at_least(2 * pool + 1);
        m->vocab_slots = calloc(m->vocab_cap, sizeof *m->vocab_slots);
        if (!m->vocab_slots) goto oom;
    }
    m->tokens = malloc((pool ? pool : 1) * sizeof *m->tokens);
    m->start = malloc((grams + 1) * sizeof *m->start);
    m->cap = pow2_at_least(2 * grams + 1);
    m->slots = calloc(m->cap, sizeof *m->slots);
    if (!m->tokens || !m->start || !m->slots) goto oom;
    for (size_t i = 0; i < pool; i++) {
        if (!m->is_string) {
            m->tokens[i] = pi->ints[i];
            continue;
        }
        const char *s = ps->strings[i] ? ps->strings[i] : "";
        int64_t id = vocab_find(m, s);
        if (id < 0) {
            size_t mask = m->vocab_cap - 1, h = (size_t)hash_str(s) & mask;
            while (m->vocab_slots[h]) h = (h + 1) & mask;
            m->vocab_slots[h] = (int64_t)i + 1;
            id = (int64_t)i;
        }
        m->tokens[i] = id;
    }
    /* Levels are contiguous from offset 0, so gram g ends where g+1 starts. */
    size_t g = 0;
    m->start[0] = 0;
    for (size_t k = 0; k < n_counts; k++) {
        size_t s = (size_t)counts[k], e = k + 1 < n_counts ? (size_t)counts[k + 1] : pool;
        for (size_t off = s; off < e; off += k + 1, g++) {
            m->start[g + 1] = off + k + 1;
            /* A repeated n-gram keeps its first pool position. */
            if (gram_find(m, m->tokens + off, (int64_t)(k + 1), 1) >= 0) continue;
            size_t mask = m->cap - 1, h = (size_t)hash_gram(m->tokens + off, (int64_t)(k + 1), 1) & mask;
            while (m->slots[h]) h = (h + 1) & mask;
            m->slots[h] = (int64_t)g + 1;
        }
    }
    return m;
oom:
    ox_fail(err, ONYX_OUT_OF_MEMORY, "out of memory");
fail:
    tfidf_release(m);
    return NULL;
}

static int tfidf_init(const ox_kernel_init *in, void **state, ox_error *err) {
    const ir_node *node = in->node;
    *state = tfidf_build(node, err);
    return *state ? 0 : -1;
}

typedef struct tfidf_job {
    const tfidf_model *m;
    const ox_tensor *x;
    float *y;
    int64_t cols; /* tokens per row */
    atomic_int failed;
} tfidf_job;

static void tfidf_rows(void *arg, int64_t r0, int64_t r1) {
    tfidf_job *j = arg;
    const tfidf_model *m = j->m;
    int64_t cols = j->cols;
    uint32_t *count = calloc(m->n_grams ? m->n_grams : 1, sizeof *count);
    int64_t *toks = malloc((size_t)(cols ? cols : 1) * sizeof *toks);
    if (!count || !toks) {
        atomic_store(&j->failed, 1);
        free(count);
        free(toks);
        return;
    }
    for (int64_t r = r0; r < r1; r++) {
        size_t base = (size_t)(r * cols);
        for (int64_t c = 0; c < cols; c++) {
            size_t at = base + (size_t)c;
            switch (j->x->dtype) {
            case ONYX_INT32: toks[c] = ((const int32_t *)j->x->data)[at]; break;
            case ONYX_INT64: toks[c] = ((const int64_t *)j->x->data)[at]; break;
            default: {
                const char *s = ((char *const *)j->x->data)[at];
                toks[c] = vocab_find(m, s ? s : "");
                break;
            }
            }
        }
        memset(count, 0, (m->n_grams ? m->n_grams : 1) * sizeof *count);
        for (int64_t n = m->min_n; n <= m->max_n && n <= cols; n++) {
            /* Unigrams have no gaps to vary: count each position once. */
            int64_t max_skip = n == 1 ? 0 : m->max_skip;
            for (int64_t s = 0; s <= max_skip; s++) {
                int64_t stride = s + 1;
                int64_t span = (n - 1) * stride; /* distance from first to last token */
                if (span >= cols) break;
                for (int64_t p = 0; p + span < cols; p++) {
                    int64_t g = gram_find(m, toks + p, n, stride);
                    if (g >= 0 && count[g] < UINT32_MAX) count[g]++;
                }
            }
        }
        float *out = j->y + (size_t)(r * m->width);
        for (int64_t k = 0; k < m->width; k++) out[k] = 0.0f;
        for (size_t g = 0; g < m->n_grams; g++) {
            if (!count[g]) continue;
            float wt = m->weight ? m->weight[g] : 1.0f;
            float v = m->mode == MODE_TF ? (float)count[g] : m->mode == MODE_IDF ? wt : (float)count[g] * wt;
            out[m->out_index[g]] += v;
        }
    }
    free(count);
    free(toks);
}

static int k_tfidf(ox_kernel_ctx *ctx) {
    const ox_tensor *x = ctx->n_inputs > 0 ? ctx->inputs[0] : NULL;
    ox_tensor *y = ctx->n_outputs > 0 ? ctx->outputs[0] : NULL;
    if (!x || x->kind != OX_KIND_TENSOR)
        return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT, "TfIdfVectorizer: input X is required");
    if (!y) return 0;
    tfidf_model *own = NULL;
    const tfidf_model *m = ctx->state;
    if (!m) {
        own = tfidf_build(ctx->node, ctx->err);
        if (!own) return -1;
        m = own;
    }
    int rc = 0;
    int ok_type = m->is_string ? x->dtype == ONYX_STRING : (x->dtype == ONYX_INT32 || x->dtype == ONYX_INT64);
    if (!ok_type) {
        rc = ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT, "TfIdfVectorizer: X of type %s does not match the %s pool",
                            ox_dtype_name(x->dtype), m->is_string ? "string" : "int64");
        goto done;
    }
    if (x->rank != 1 && x->rank != 2) {
        rc = ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT, "TfIdfVectorizer: X must be 1-D or 2-D, got rank %d",
                            x->rank);
        goto done;
    }
    int64_t rows = x->rank == 1 ? 1 : x->dims[0], cols = x->dims[x->rank - 1];
    if (y->dtype != ONYX_FLOAT32 || ox_tensor_numel(y) != rows * m->width) {
        rc = ox_kernel_fail(ctx, ONYX_RUNTIME_ERROR, "TfIdfVectorizer: output has the wrong type or shape");
        goto done;
    }
    tfidf_job j = {.m = m, .x = x, .y = y->data, .cols = cols};
    atomic_init(&j.failed, 0);
    ox_parallel_for(ctx->pool, rows, 16, tfidf_rows, &j);
    if (atomic_load(&j.failed)) rc = ox_kernel_fail(ctx, ONYX_OUT_OF_MEMORY, "out of memory");
done:
    tfidf_release(own);
    return rc;
}

static int supports_tfidf(const ir_node *node, const ir_type *const *inputs, int n_inputs) {
    if (n_inputs < 1 || !inputs[0] || inputs[0]->dtype == ONYX_UNDEFINED) return 1;
    ox_dtype t = inputs[0]->dtype;
    if (ir_node_attr(node, "pool_strings")) return t == ONYX_STRING;
    return t == ONYX_INT32 || t == ONYX_INT64;
}

/* ---- StringConcat ---- */

typedef struct concat_walk {
    ox_kernel_ctx *ctx;
    char **x, **y, **z;
    atomic_int failed;
} concat_walk;

static void concat_run(void *arg, int64_t out_off, const int64_t *in_off, const int64_t *in_step,
                       int64_t len) {
    concat_walk *w = arg;
    for (int64_t i = 0; i < len; i++) {
        const char *a = w->x[in_off[0] + i * in_step[0]], *b = w->y[in_off[1] + i * in_step[1]];
        size_t la = strlen(a), lb = strlen(b);
        char *s = malloc(la + lb + 1);
        if (!s) {
            atomic_store(&w->failed, 1);
            return;
        }
        memcpy(s, a, la);
        memcpy(s + la, b, lb + 1);
        free(w->z[out_off + i]);
        w->z[out_off + i] = s;
    }
}

static int k_string_concat(ox_kernel_ctx *ctx) {
    ox_bcast plan;
    const ox_tensor *ins[2] = {ctx->inputs[0], ctx->inputs[1]};
    if (ox_bcast_plan_tensors(&plan, 2, ins, ctx->outputs[0]) != 0)
        return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT, "StringConcat: inputs do not broadcast");
    concat_walk w = {ctx, ins[0]->data, ins[1]->data, ctx->outputs[0]->data, 0};
    ox_bcast_walk(&plan, 0, plan.numel, concat_run, &w);
    return atomic_load(&w.failed) ? ox_cpu_oom(ctx) : 0;
}

/* ---- StringSplit ---- */

static int is_space(char ch) {
    return ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r' || ch == '\v' || ch == '\f';
}

/* Splits s into at most maxsplit + 1 pieces (maxsplit < 0: no limit).
 * With an empty delimiter, runs of whitespace separate and leading and
 * trailing whitespace is dropped. Calls emit(piece, len) per piece when
 * emit is set; returns the number of pieces. */
static int64_t split_string(const char *s, const char *delim, int64_t maxsplit,
                            int (*emit)(void *, const char *, size_t), void *arg, int *failed) {
    int64_t count = 0;
    size_t dl = strlen(delim);
    if (dl == 0) {
        const char *p = s;
        while (*p) {
            while (*p && is_space(*p)) p++;
            if (!*p) break;
            const char *start = p;
            if (maxsplit >= 0 && count == maxsplit) {
                /* the rest, without trailing whitespace */
                const char *end = p + strlen(p);
                while (end > start && is_space(end[-1])) end--;
                if (emit && emit(arg, start, (size_t)(end - start))) *failed = 1;
                return count + 1;
            }
            while (*p && !is_space(*p)) p++;
            if (emit && emit(arg, start, (size_t)(p - start))) *failed = 1;
            count++;
        }
        return count;
    }
    const char *p = s;
    for (;;) {
        const char *hit = maxsplit >= 0 && count == maxsplit ? NULL : strstr(p, delim);
        size_t len = hit ? (size_t)(hit - p) : strlen(p);
        if (emit && emit(arg, p, len)) *failed = 1;
        count++;
        if (!hit) return count;
        p = hit + dl;
    }
}

typedef struct split_out {
    char **dst;
    int64_t next;
} split_out;

static int emit_piece(void *arg, const char *s, size_t n) {
    split_out *o = arg;
    char *copy = malloc(n + 1);
    if (!copy) return -1;
    memcpy(copy, s, n);
    copy[n] = '\0';
    free(o->dst[o->next]);
    o->dst[o->next++] = copy;
    return 0;
}

static int k_string_split(ox_kernel_ctx *ctx) {
    const ox_tensor *x = ctx->inputs[0];
    const char *delim = ir_attr_string(ctx->node, "delimiter", "");
    int64_t maxsplit = ir_node_attr(ctx->node, "maxsplit") ? ir_attr_int(ctx->node, "maxsplit", 0)
                                                           : -1;
    int64_t n = ox_tensor_numel(x), widest = 0;
    char **xs = x->data;
    int failed = 0;
    for (int64_t i = 0; i < n; i++) {
        int64_t k = split_string(xs[i], delim, maxsplit, NULL, NULL, &failed);
        if (k > widest) widest = k;
    }
    int64_t dims[OX_MAX_RANK];
    memcpy(dims, x->dims, (size_t)x->rank * sizeof *dims);
    dims[x->rank] = widest;
    ox_tensor *y = ox_kernel_output(ctx, 0, ONYX_STRING, dims, x->rank + 1);
    ox_tensor *counts = y ? ox_kernel_output(ctx, 1, ONYX_INT64, x->dims, x->rank) : NULL;
    if (!y || (ctx->n_outputs > 1 && ctx->outputs[1] == NULL && !counts && ctx->err->code))
        return -1;
    for (int64_t i = 0; i < n && !failed; i++) {
        split_out o = {(char **)y->data + i * widest, 0};
        int64_t k = split_string(xs[i], delim, maxsplit, emit_piece, &o, &failed);
        if (counts) ((int64_t *)counts->data)[i] = k;
    }
    return failed ? ox_cpu_oom(ctx) : 0;
}

/* ---- RegexFullMatch ---- */

/* Appends RE2 pattern p, rewritten as POSIX ERE, to out (size cap).
 * Returns 0, or -1 with *why naming the unsupported construct. */
static int re2_to_posix(const char *p, char *out, size_t cap, const char **why) {
    size_t o = 0;
    /* in_bracket counts the members written so far + 1; an escaped '-'
     * is moved to the end of its bracket, where POSIX reads it literally */
    int in_bracket = 0, literal_dash = 0;
#define PUT(str)                                   \
    do {                                           \
        const char *s_ = (str);                    \
        size_t l_ = strlen(s_);                    \
        if (o + l_ + 1 > cap) {                    \
            *why = "a pattern this long";          \
            return -1;                             \
        }                                          \
        memcpy(out + o, s_, l_);                   \
        o += l_;                                   \
    } while (0)
    for (size_t i = 0; p[i]; i++) {
        char ch = p[i];
        if (in_bracket) {
            if (ch == ']' && in_bracket > 1) {
                in_bracket = 0;
                if (literal_dash) PUT("-");
                literal_dash = 0;
                PUT("]");
            } else if (ch == '\\' && p[i + 1]) {
                char e = p[++i];
                if (e == 'w') PUT("[:alnum:]_");
                else if (e == 'd') PUT("[:digit:]");
                else if (e == 's') PUT("[:space:]");
                else if (e == '-') literal_dash = 1;
                else if (e == ']' || e == '\\' || e == '^' || e == '[') {
                    *why = "an escaped ']', '\\', '^' or '[' inside brackets";
                    return -1;
                } else if (strchr(".$*+?(){}|/", e)) {
                    char lit[2] = {e, 0};
                    PUT(lit);
                } else {
                    *why = "an escape inside brackets other than \\w, \\d, \\s or punctuation";
                    return -1;
                }
                in_bracket++;
            } else {
                char lit[2] = {ch, 0};
                PUT(lit);
                in_bracket++;
            }
            continue;
        }
        if (ch == '[') {
            PUT("[");
            in_bracket = 1;
            if (p[i + 1] == '^') {
                PUT("^");
                i++;
            }
            if (p[i + 1] == ']') { /* a leading ']' is literal in both */
                PUT("]");
                i++;
                in_bracket++;
            }
            continue;
        }
        if (ch == '(' && p[i + 1] == '?') {
            if (p[i + 2] == ':') {
                PUT("(");
                i += 2;
                continue;
            }
            if (p[i + 2] == 'P' && p[i + 3] == '<') { /* named group: keep the group */
                const char *end = strchr(p + i, '>');
                if (!end) {
                    *why = "an unterminated named group";
                    return -1;
                }
                PUT("(");
                i = (size_t)(end - p);
                continue;
            }
            *why = "flags or look-around '(?...)'";
            return -1;
        }
        if ((ch == '*' || ch == '+' || ch == '?' || ch == '}') && p[i + 1] == '?') {
            /* lazy quantifier: same full-match answer as the greedy one */
            char q[2] = {ch, 0};
            PUT(q);
            i++;
            continue;
        }
        if (ch == '\\' && p[i + 1]) {
            char e = p[++i];
            if (e == 'd') PUT("[[:digit:]]");
            else if (e == 'D') PUT("[^[:digit:]]");
            else if (e == 'w' || e == 'W' || e == 's' || e == 'S' || e == 'b' || e == 'B') {
                char g[3] = {'\\', e, 0};
                PUT(g);
            } else if (e == 'p' || e == 'P' || e == 'A' || e == 'z' || e == 'Q' || e == 'x' ||
                       (e >= '0' && e <= '9')) {
                *why = "Unicode classes, \\A/\\z, \\Q, hex escapes or back-references";
                return -1;
            } else if (e == 't') PUT("\t");
            else if (e == 'n') PUT("\n");
            else {
                char g[3] = {'\\', e, 0};
                PUT(g);
            }
            continue;
        }
        char lit[2] = {ch, 0};
        PUT(lit);
    }
    if (in_bracket) {
        *why = "an unterminated '['";
        return -1;
    }
    out[o] = '\0';
    return 0;
#undef PUT
}

typedef struct regex_state {
    regex_t re;
} regex_state;

static int regex_init(const ox_kernel_init *in, void **state, ox_error *err) {
    const ir_node *node = in->node;
    const char *pattern = ir_attr_string(node, "pattern", "");
    size_t cap = strlen(pattern) * 12 + 16;
    char *posix = malloc(cap), *anchored = malloc(cap + 8);
    regex_state *st = calloc(1, sizeof *st);
    const char *why = NULL;
    int rc = -1;
    if (!posix || !anchored || !st) {
        ox_fail(err, ONYX_OUT_OF_MEMORY, "out of memory");
    } else if (re2_to_posix(pattern, posix, cap, &why) != 0) {
        ox_fail(err, ONYX_NOT_IMPLEMENTED,
                "RegexFullMatch: pattern '%s' uses %s, which onyx's regular expressions do not "
                "support",
                pattern, why);
    } else {
        /* a full match: the whole string, whatever alternation the pattern has */
        snprintf(anchored, cap + 8, "^(%s)$", posix);
        int e = regcomp(&st->re, anchored, REG_EXTENDED | REG_NOSUB);
        if (e != 0) {
            char msg[256];
            regerror(e, &st->re, msg, sizeof msg);
            ox_fail(err, ONYX_INVALID_MODEL, "RegexFullMatch: pattern '%s' does not compile: %s",
                    pattern, msg);
        } else {
            rc = 0;
        }
    }
    free(posix);
    free(anchored);
    if (rc != 0) {
        free(st);
        return -1;
    }
    *state = st;
    return 0;
}

static void regex_release(void *state) {
    regex_state *st = state;
    regfree(&st->re);
    free(st);
}

static int k_regex_full_match(ox_kernel_ctx *ctx) {
    regex_state *st = ctx->state;
    if (!st) return ox_kernel_fail(ctx, ONYX_RUNTIME_ERROR, "RegexFullMatch: no compiled pattern");
    const ox_tensor *x = ctx->inputs[0];
    int64_t n = ox_tensor_numel(x);
    char **xs = x->data;
    uint8_t *y = ctx->outputs[0]->data;
    for (int64_t i = 0; i < n; i++) y[i] = regexec(&st->re, xs[i], 0, NULL, 0) == 0;
    return 0;
}

static const ox_kernel_def KERNELS[] = {
    {"", "StringConcat", 20, 20, k_string_concat, NULL, NULL, NULL, NULL},
    {"", "StringSplit", 20, 20, k_string_split, NULL, NULL, NULL, NULL},
    {"", "RegexFullMatch", 20, 20, k_regex_full_match, NULL, regex_init, regex_release, NULL},
    {"", "StringNormalizer", 10, 17, k_string_normalizer, NULL, strnorm_init, strnorm_release, NULL},
    {"", "TfIdfVectorizer", 9, 17, k_tfidf, supports_tfidf, tfidf_init, tfidf_release, NULL},
};

const ox_kernel_table ox_cpu_kernels_text = {KERNELS, sizeof KERNELS / sizeof KERNELS[0]};
