/* Comparing a tensor under test with its reference: error statistics and
 * the pass/fail rule of onyx check. */
#ifndef ONYX_CLI_COMPARE_H
#define ONYX_CLI_COMPARE_H

#include <stdint.h>

#include "onyx.h"

/* Which statistic of the per-element errors decides pass or fail. */
typedef enum cmp_stat {
    CMP_ELEMENTWISE, /* every element: |t - r| <= atol + rtol * |r| */
    CMP_MAX,         /* max abs error <= atol, or max rel error <= rtol */
    CMP_MEAN,        /* the same with means */
    CMP_MEDIAN,      /* ... medians */
    CMP_QUANTILE,    /* ... the q-quantile */
} cmp_stat;

typedef struct cmp_rule {
    double atol, rtol;
    cmp_stat stat;
    double q; /* CMP_QUANTILE */
} cmp_rule;

/* Parses --stat's value: elementwise, max, mean, median, quantile:Q. */
int cmp_parse_stat(const char *s, cmp_rule *rule);
/* "|t - r| <= 1e-04 + 1e-03 * |r| per element" and the like. */
void cmp_describe_rule(const cmp_rule *rule, char *buf, size_t size);

typedef struct cmp_result {
    int compared;   /* 0: could not be compared (why says why) */
    int pass;
    int64_t count;  /* elements compared (complex: real and imaginary parts) */
    double max_abs, max_rel;
    int64_t at_abs, at_rel; /* element index of each maximum, -1 if none */
    double stat_abs, stat_rel; /* the rule's statistic (max for elementwise) */
    int64_t bad;    /* elements outside atol + rtol * |r| */
    char why[96];
} cmp_result;

/* Compares t against ref under rule. Fails (returns -1) only when out of
 * memory; a type or shape mismatch is a failed comparison. */
int cmp_tensors(const onyx_tensor *t, const onyx_tensor *ref, const cmp_rule *rule,
                cmp_result *out);

/* A deep copy of a captured value (tensors, strings included); NULL for
 * sequences and optionals, and when out of memory. */
onyx_tensor *cmp_clone(const onyx_tensor *t);

/* "[0,3,17]": element index i (as cmp_result counts them) of a tensor of
 * dtype and dims as a multi-index. */
void cmp_format_index(onyx_dtype dtype, const int64_t *dims, int rank, int64_t i, char *buf,
                      size_t size);

#endif
