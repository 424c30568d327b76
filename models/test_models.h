/* What the model test's programs share (test_models.c, the cases and
 * their comparison with ONNX Runtime's references; test_models_compiled.c,
 * optimized files against the models they came from). */
#ifndef ONYX_MODELS_TEST_MODELS_H
#define ONYX_MODELS_TEST_MODELS_H

#include <stddef.h>

#include "onyx.h"

#define PROB_ATOL 1e-4
#define LOGIT_RTOL 1e-3
#define LOGIT_FLOOR 1e-4

typedef enum kind { K_PROB, K_LOGIT, K_INT, K_INT_SET, K_ROW_SET } kind;

typedef struct io {
    char *name;
    char *file; /* resolved against the manifest's folder */
    kind kind;  /* outputs only */
} io;

typedef struct test_case {
    char *name;
    char *model;
    io *inputs, *outputs;
    size_t n_inputs, n_outputs;
} test_case;

typedef struct manifest {
    test_case *cases;
    size_t n;
} manifest;

/* Session options for a case: providers "a,b" in priority order (NULL:
 * the default), opt_level none..all (-1: the default). *out is made even
 * when a setting fails; the caller frees it. */
onyx_status *case_options(const char *providers, int opt_level, onyx_session_options **out);

/* Compares output o of a run with its reference file; prints the
 * differences; 0 when within the output's tolerance. */
int compare_output(const io *o, onyx_tensor *got);
/* Loads the case's inputs and runs s once; outs[i] receives output i. */
int run_inputs(onyx_session *s, const test_case *c, onyx_tensor **outs, const char *what);
/* Prints the failure and frees st; returns -1. */
int fail_status(const char *what, onyx_status *st);
double now_s(void);
/* Keeps s (a session with a device provider) alive to the end of the
 * process when none is kept yet, so that lavapipe stays loaded and its
 * one-time allocation reachable for LeakSanitizer; 1 when s was kept (the
 * caller must not free it). */
int keep_driver_loaded(onyx_session *s);

/* --compiled DIR: the case compiled into DIR (an optimized file and an
 * ONNX twin); each loaded on `providers` must give the .onnx model's
 * outputs bit for bit. */
int compiled_case(onyx_env *env, const test_case *c, const char *providers, const char *dir);

#endif
