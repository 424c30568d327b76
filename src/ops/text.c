/* Schemas of the text operators: StringNormalizer (stop-word removal and
 * case mapping of a [C] or [1, C] string tensor) and TfIdfVectorizer
 * (n-gram counting against a pool given as attributes). */
#include <string.h>

#include "ops/op.h"

extern const ox_op_table ox_ops_text;

/* ---- StringNormalizer ---- */

static int infer_string_normalizer(ox_infer_ctx *c) {
    const ir_type *x = ox_infer_in(c, 0);
    if (!x) return ox_infer_fail(c, ONYX_INVALID_MODEL, "StringNormalizer: input X is required");
    if (x->kind != OX_KIND_TENSOR || (x->dtype != ONYX_UNDEFINED && x->dtype != ONYX_STRING))
        return ox_infer_fail(c, ox_infer_bad_code(c),
                             "StringNormalizer: X must be a string tensor, got %s",
                             ox_dtype_name(x->dtype));
    const char *action = ir_attr_string(c->node, "case_change_action", "NONE");
    if (strcmp(action, "NONE") != 0 && strcmp(action, "LOWER") != 0 && strcmp(action, "UPPER") != 0)
        return ox_infer_fail(c, ONYX_INVALID_MODEL,
                             "StringNormalizer: case_change_action must be LOWER, UPPER or NONE, got '%s'",
                             action);
    /* The kernel implements the English (locale-neutral) simple case
     * mappings only; refuse locales whose rules differ (e.g. tr_TR's
     * dotted i) rather than silently produce other results. */
    const char *locale = ir_attr_string(c->node, "locale", "");
    if (locale[0] && strcmp(locale, "C") != 0 && strcmp(locale, "POSIX") != 0 &&
        strncmp(locale, "C.", 2) != 0 && strncmp(locale, "en", 2) != 0)
        return ox_infer_fail(c, ONYX_NOT_IMPLEMENTED,
                             "StringNormalizer: locale '%s' is not supported (only en_* and C)", locale);
    /* How many strings survive depends on their values: the kernel sizes
     * the output. */
    c->data_dependent = 1;
    if (x->rank < 0) return ox_infer_set_output(c, 0, ONYX_STRING, NULL, -1);
    if (x->rank == 1) {
        int64_t d[1] = {-1};
        return ox_infer_set_output(c, 0, ONYX_STRING, d, 1);
    }
    if (x->rank == 2 && (x->dims[0] == 1 || x->dims[0] < 0)) {
        int64_t d[2] = {1, -1};
        return ox_infer_set_output(c, 0, ONYX_STRING, d, 2);
    }
    char buf[128];
    return ox_infer_fail(c, ox_infer_bad_code(c),
                         "StringNormalizer: X must have shape [C] or [1, C], got %s",
                         ox_shape_str(x->dims, x->rank, buf, sizeof buf));
}

/* ---- TfIdfVectorizer ---- */

static int infer_tfidf(ox_infer_ctx *c) {
    const ir_node *n = c->node;
    const ir_type *x = ox_infer_in(c, 0);
    if (!x) return ox_infer_fail(c, ONYX_INVALID_MODEL, "TfIdfVectorizer: input X is required");
    const char *mode = ir_attr_string(n, "mode", NULL);
    if (!mode || (strcmp(mode, "TF") != 0 && strcmp(mode, "IDF") != 0 && strcmp(mode, "TFIDF") != 0))
        return ox_infer_fail(c, ONYX_INVALID_MODEL, "TfIdfVectorizer: mode must be TF, IDF or TFIDF, got '%s'",
                             mode ? mode : "(missing)");
    int64_t mn = ir_attr_int(n, "min_gram_length", -1), mx = ir_attr_int(n, "max_gram_length", -1);
    int64_t skip = ir_attr_int(n, "max_skip_count", -1);
    if (mn < 1 || mx < mn)
        return ox_infer_fail(c, ONYX_INVALID_MODEL,
                             "TfIdfVectorizer: need 1 <= min_gram_length (%lld) <= max_gram_length (%lld)",
                             (long long)mn, (long long)mx);
    if (skip < 0)
        return ox_infer_fail(c, ONYX_INVALID_MODEL, "TfIdfVectorizer: max_skip_count must be >= 0, got %lld",
                             (long long)skip);
    const ir_attr *pi = ir_node_attr(n, "pool_int64s"), *ps = ir_node_attr(n, "pool_strings");
    if ((pi != NULL) == (ps != NULL))
        return ox_infer_fail(c, ONYX_INVALID_MODEL,
                             "TfIdfVectorizer: exactly one of pool_int64s and pool_strings must be set");
    size_t pool = pi ? pi->n : ps->n;
    size_t n_counts = 0, n_idx = 0, n_w = 0;
    const int64_t *counts = ir_attr_ints(n, "ngram_counts", &n_counts);
    const int64_t *idx = ir_attr_ints(n, "ngram_indexes", &n_idx);
    const ir_attr *wa = ir_node_attr(n, "weights");
    ir_attr_floats(n, "weights", &n_w);
    if (!ir_node_attr(n, "ngram_counts") || !ir_node_attr(n, "ngram_indexes"))
        return ox_infer_fail(c, ONYX_INVALID_MODEL,
                             "TfIdfVectorizer: ngram_counts and ngram_indexes are required");
    /* Level k of the pool holds (k+1)-grams between ngram_counts[k] and
     * the next start; it must hold whole n-grams. */
    size_t grams = 0;
    for (size_t k = 0; k < n_counts; k++) {
        int64_t start = counts[k], end = k + 1 < n_counts ? counts[k + 1] : (int64_t)pool;
        if (start < 0 || end < start || end > (int64_t)pool)
            return ox_infer_fail(c, ONYX_INVALID_MODEL,
                                 "TfIdfVectorizer: ngram_counts must be non-decreasing offsets into the pool of "
                                 "%zu items (level %zu spans %lld..%lld)",
                                 pool, k + 1, (long long)start, (long long)end);
        if ((end - start) % (int64_t)(k + 1) != 0)
            return ox_infer_fail(c, ONYX_INVALID_MODEL,
                                 "TfIdfVectorizer: pool level %zu holds %lld items, not a whole number of %zu-grams",
                                 k + 1, (long long)(end - start), k + 1);
        grams += (size_t)(end - start) / (k + 1);
    }
    if (n_counts == 0 && pool > 0)
        return ox_infer_fail(c, ONYX_INVALID_MODEL, "TfIdfVectorizer: ngram_counts is empty but the pool is not");
    if (n_counts > 0 && counts[0] != 0)
        return ox_infer_fail(c, ONYX_INVALID_MODEL, "TfIdfVectorizer: ngram_counts[0] must be 0, got %lld",
                             (long long)counts[0]);
    if (grams != n_idx)
        return ox_infer_fail(c, ONYX_INVALID_MODEL,
                             "TfIdfVectorizer: the pool holds %zu n-grams but ngram_indexes has %zu entries",
                             grams, n_idx);
    if (wa && n_w != n_idx)
        return ox_infer_fail(c, ONYX_INVALID_MODEL,
                             "TfIdfVectorizer: weights has %zu entries, ngram_indexes has %zu", n_w, n_idx);
    int64_t width = 0;
    for (size_t k = 0; k < n_idx; k++) {
        if (idx[k] < 0)
            return ox_infer_fail(c, ONYX_INVALID_MODEL, "TfIdfVectorizer: ngram_indexes[%zu] is negative (%lld)",
                                 k, (long long)idx[k]);
        int64_t end;
        if (ox_infer_add(c, ONYX_INVALID_MODEL, idx[k], 1, &end, "ngram_indexes[%zu] + 1 (the output width)", k))
            return -1;
        if (end > width) width = end;
    }
    if (x->kind != OX_KIND_TENSOR)
        return ox_infer_fail(c, ox_infer_bad_code(c), "TfIdfVectorizer: X must be a tensor");
    if (x->dtype != ONYX_UNDEFINED) {
        if (pi && x->dtype != ONYX_INT32 && x->dtype != ONYX_INT64)
            return ox_infer_fail(c, ox_infer_bad_code(c),
                                 "TfIdfVectorizer: pool_int64s needs an int32 or int64 X, got %s",
                                 ox_dtype_name(x->dtype));
        if (ps && x->dtype != ONYX_STRING)
            return ox_infer_fail(c, ox_infer_bad_code(c),
                                 "TfIdfVectorizer: pool_strings needs a string X, got %s",
                                 ox_dtype_name(x->dtype));
    }
    if (x->rank < 0) return ox_infer_set_output(c, 0, ONYX_FLOAT32, NULL, -1);
    if (x->rank == 1) return ox_infer_set_output(c, 0, ONYX_FLOAT32, &width, 1);
    if (x->rank == 2) {
        int64_t d[2] = {x->dims[0], width};
        return ox_infer_set_output(c, 0, ONYX_FLOAT32, d, 2);
    }
    return ox_infer_fail(c, ox_infer_bad_code(c),
                         "TfIdfVectorizer: X must be 1-D or 2-D, got rank %d", x->rank);
}

static const ox_dtype STRING_ONLY[] = {ONYX_STRING};

/* StringConcat: elementwise concatenation with numpy broadcasting. */
static int infer_string_concat(ox_infer_ctx *c) {
    if (ox_infer_need_tensor(c, 0, "X") || ox_infer_need_tensor(c, 1, "Y") ||
        ox_infer_check_dtype(c, 0, "X", STRING_ONLY, 1) ||
        ox_infer_check_dtype(c, 1, "Y", STRING_ONLY, 1))
        return -1;
    return ox_infer_broadcast(c, 0, 2, ONYX_STRING, ox_infer_out(c, 0));
}

/* RegexFullMatch: bool of the input's shape. */
static int infer_regex_full_match(ox_infer_ctx *c) {
    if (ox_infer_need_tensor(c, 0, "X") || ox_infer_check_dtype(c, 0, "X", STRING_ONLY, 1))
        return -1;
    if (!ir_attr_string(c->node, "pattern", NULL))
        return ox_infer_fail(c, ONYX_INVALID_MODEL, "RegexFullMatch: the pattern attribute is missing");
    const ir_type *x = ox_infer_in(c, 0);
    return ox_infer_set_output(c, 0, ONYX_BOOL, x->rank >= 0 ? x->dims : NULL, x->rank);
}

/* StringSplit: substrings [..., max count] padded with "", and the count
 * per element. The last dimension depends on the data. */
static int infer_string_split(ox_infer_ctx *c) {
    if (ox_infer_need_tensor(c, 0, "X") || ox_infer_check_dtype(c, 0, "X", STRING_ONLY, 1))
        return -1;
    if (ir_attr_int(c->node, "maxsplit", 1) < 0)
        return ox_infer_fail(c, ONYX_INVALID_MODEL, "StringSplit: maxsplit must not be negative");
    const ir_type *x = ox_infer_in(c, 0);
    if (x->rank >= OX_MAX_RANK)
        return ox_infer_fail(c, ONYX_NOT_IMPLEMENTED, "StringSplit: output rank exceeds onyx's limit");
    if (x->rank < 0)
        return ox_infer_set_output(c, 0, ONYX_STRING, NULL, -1) ||
                       ox_infer_set_output(c, 1, ONYX_INT64, NULL, -1)
                   ? -1
                   : 0;
    int64_t d[OX_MAX_RANK];
    memcpy(d, x->dims, (size_t)x->rank * sizeof *d);
    d[x->rank] = -1;
    c->data_dependent = 1;
    return ox_infer_set_output(c, 0, ONYX_STRING, d, x->rank + 1) ||
                   ox_infer_set_output(c, 1, ONYX_INT64, x->dims, x->rank)
               ? -1
               : 0;
}

static const ox_op_schema OPS[] = {
    {"", "StringNormalizer", 10, 17, 1, 1, 1, 1, infer_string_normalizer},
    {"", "StringConcat", 20, 20, 2, 2, 1, 1, infer_string_concat},
    {"", "RegexFullMatch", 20, 20, 1, 1, 1, 1, infer_regex_full_match},
    {"", "StringSplit", 20, 20, 1, 1, 2, 2, infer_string_split},
    {"", "TfIdfVectorizer", 9, 17, 1, 1, 1, 1, infer_tfidf},
};

const ox_op_table ox_ops_text = {OPS, sizeof OPS / sizeof OPS[0]};
