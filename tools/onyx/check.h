/* onyx check's pieces: the captured values of a run by name, and the
 * reports (plan, outputs, first divergent node). */
#ifndef ONYX_CLI_CHECK_H
#define ONYX_CLI_CHECK_H

#include <stddef.h>

#include "cli.h"
#include "compare.h"
#include "onyx.h"

/* A value the test run produced, compared with the reference's value of
 * the same name. */
typedef struct check_record {
    size_t node, output; /* execution position in the test session, output index */
    onyx_value_kind kind;
    onyx_dtype dtype;
    int rank;
    int64_t dims[16];
    cmp_result cmp; /* cmp.compared 0: no reference value (cmp.why says why) */
} check_record;

typedef struct check_entry {
    char *name;
    size_t node;        /* execution position of its producer */
    onyx_tensor *value; /* reference runs: the copy; test runs: NULL */
    int has_record;
    check_record record; /* test runs */
} check_entry;

/* Values by name, in capture (execution) order. */
typedef struct check_table {
    check_entry *entries;
    size_t n, cap;
    size_t *slots; /* open addressing: entry index + 1, 0 empty */
    size_t n_slots;
} check_table;

/* Takes value (may be NULL); rec (may be NULL) is copied. A name seen
 * again replaces the earlier entry's contents. -1 when out of memory. */
int check_table_put(check_table *t, const char *name, size_t node, onyx_tensor *value,
                    const check_record *rec);
const check_entry *check_table_get(const check_table *t, const char *name);
void check_table_free(check_table *t);

/* Appends s as one word for a POSIX shell (bash's $'...' for a word
 * with control characters, which single quotes would hold but not show). */
void check_shell_word(cli_buf *b, const char *s);

/* One capturing run. */
typedef struct check_run {
    const char *label;
    size_t n_nodes;
    int show_progress;
    size_t last_pct;
    int failed; /* out of memory while capturing */
    const cmp_rule *rule;               /* test run: the comparison */
    const struct check_run *reference;  /* test run: the reference's values */
    int keep_values;                    /* test run: keep copies (--save-subgraph) */
    check_table values;
} check_run;

/* "none", "basic" or "all" for cli_session_args.opt_level (-1: the
 * library's default, all). */
const char *check_opt_level_name(int opt_level);
void check_print_plan(const onyx_session *s);
void check_print_header(const char *model, const onyx_session *test, const cli_io *io,
                        const cli_session_args *args, const cmp_rule *rule);
/* Compares the outputs and prints one line each; *any_fail set when one
 * fails. -1 when out of memory. */
int check_print_outputs(const cli_io *io, onyx_tensor *const *test, onyx_tensor *const *ref,
                        const cmp_rule *rule, int *any_fail);
/* The test run's first divergent value (lowest node position), or NULL;
 * counts of compared values and of values without a reference. */
const check_entry *check_first_divergent(const check_run *t, size_t *compared,
                                         size_t *unmatched);
/* The fused group at position `group` of the test session, node by node
 * as the unfused session u ran them, and the verdict: a kernel that fails
 * unfused too, or the fusion. */
void check_print_unfused(const onyx_session *unfused, const check_run *u,
                         const onyx_session *test, size_t group);
/* Prints the first divergent node; returns 1 when there is one. */
int check_print_bisect(const onyx_session *test, const cli_io *io, const check_run *t,
                        const check_run *r, double ref_ms, double test_ms);

#endif
