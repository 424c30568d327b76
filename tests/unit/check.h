/* Minimal assertion helpers for onyx's unit tests: each failed check
 * prints where and why and marks the test as failed; main returns the
 * failure count so CTest reports it. */
#ifndef ONYX_TESTS_CHECK_H
#define ONYX_TESTS_CHECK_H

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "onyx.h"

/* One counter per test program: a program built from several files
 * (test_vulkan_ep and its case files) defines CHECK_SHARED_COUNTER for
 * all of them and defines the counter once, so a failure in any file
 * fails the program. */
#ifdef CHECK_SHARED_COUNTER
extern int check_failures;
#else
static int check_failures;
#endif

#define CHECK(cond) \
    do { \
        if (!(cond)) { \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
            check_failures++; \
        } \
    } while (0)

#define CHECK_NEAR(a, b, tol) \
    do { \
        double a_ = (a), b_ = (b); \
        if (!(fabs(a_ - b_) <= (tol))) { \
            fprintf(stderr, "%s:%d: %s = %.9g, expected %.9g (tolerance %g)\n", __FILE__, __LINE__, \
                    #a, a_, b_, (double)(tol)); \
            check_failures++; \
        } \
    } while (0)

/* The call must succeed; prints the status message otherwise. */
#define CHECK_OK(call) \
    do { \
        onyx_status *st_ = (call); \
        if (st_) { \
            fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #call, \
                    onyx_status_message(st_)); \
            onyx_status_free(st_); \
            check_failures++; \
        } \
    } while (0)

/* The call must fail with `code` and a message containing `needle`. */
#define CHECK_FAILS(call, code, needle) \
    do { \
        onyx_status *st_ = (call); \
        if (!st_) { \
            fprintf(stderr, "%s:%d: %s succeeded, expected failure\n", __FILE__, __LINE__, #call); \
            check_failures++; \
        } else { \
            if (onyx_status_code(st_) != (code) || !strstr(onyx_status_message(st_), (needle))) { \
                fprintf(stderr, "%s:%d: %s failed with code %d '%s', expected code %d containing '%s'\n", \
                        __FILE__, __LINE__, #call, (int)onyx_status_code(st_), \
                        onyx_status_message(st_), (int)(code), (needle)); \
                check_failures++; \
            } \
            onyx_status_free(st_); \
        } \
    } while (0)

/* x[0, n) against ref[0, n), each within rel * (1 + |ref|): the first
 * few outside it printed (what, name: index, value, reference) and
 * counted as failures. Returns the largest |x - ref| / (1 + |ref|), so a
 * test can report how much of its tolerance it used. */
static inline double check_close_f32(const char *what, const char *name, const float *x, const float *ref, size_t n,
                                     double rel) {
    double worst = 0.0;
    int bad = 0;
    for (size_t i = 0; i < n; i++) {
        double e = fabs((double)x[i] - (double)ref[i]) / (1.0 + fabs((double)ref[i]));
        if (!(e <= rel)) {
            if (bad < 5)
                fprintf(stderr, "%s, %s [%zu]: %.9g, reference %.9g\n", what, name, i, (double)x[i], (double)ref[i]);
            bad++;
            if (e != e) e = INFINITY;
        }
        if (e > worst) worst = e;
    }
    check_failures += bad < 5 ? bad : 5;
    return worst;
}

/* How many nodes of session s run operator op (any domain). */
static inline size_t check_count_op(const onyx_session *s, const char *op) {
    size_t n = 0;
    for (size_t i = 0; i < onyx_session_node_count(s); i++) n += strcmp(onyx_session_node_op_type(s, i), op) == 0;
    return n;
}

#define CHECK_DONE() \
    do { \
        if (check_failures) fprintf(stderr, "%d check(s) failed\n", check_failures); \
        else printf("all checks passed\n"); \
        return check_failures ? 1 : 0; \
    } while (0)

#endif
