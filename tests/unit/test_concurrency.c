/* One session, many threads: concurrent onyx_session_run calls on the
 * same session, each thread changing its input shape from run to run,
 * give exactly what a single-threaded run of the same shape gives.
 *
 * Shapes change so that runs of different shapes overlap: the memory-plan
 * cache (one plan per input-shape signature, the most recent kept) and
 * the arena pool are shared by all runs of a session. Under
 * ThreadSanitizer (ONYX_TSAN) this is the data-race test of the runtime.
 *
 * Usage: test_concurrency [--require-zoo] [ZOO_DIR]
 * The in-memory model always runs. With ZOO_DIR (the model zoo, see
 * models/CMakeLists.txt) the zoo models with a dynamic batch run too;
 * missing files are skipped unless --require-zoo is given. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "model_builder.h"

#define THREADS 4
#define MAX_SHAPES 10
#define MAX_OUTPUTS 4
#define K 1024 /* the in-memory model's feature width */

/* One model and the input shapes its threads cycle through. */
typedef struct shape_case {
    const char *file; /* in the zoo folder; NULL for the in-memory model */
    int runs;         /* per thread */
    int n_shapes;
    int rank;
    int64_t shapes[MAX_SHAPES][4];
} shape_case;

/* Small zoo models whose first dimension is dynamic: a transformer
 * classifier, DETR-style detectors (TopK, GatherElements; RT-DETR's
 * deformable attention with GridSample) and PaddleOCR's classifier, whose
 * width is dynamic too. */
static const shape_case zoo_cases[] = {
    {"vit_tiny_dynamo.onnx", 6, 3, 4, {{1, 3, 64, 64}, {2, 3, 64, 64}, {3, 3, 64, 64}}},
    {"detr_dynamo.onnx", 4, 2, 4, {{1, 3, 128, 128}, {2, 3, 128, 128}}},
    {"rtdetr_v2_small_dynamo.onnx", 2, 2, 4, {{1, 3, 256, 256}, {2, 3, 256, 256}}},
    {"ch_ppocr_mobile_v2.0_cls_infer.onnx", 6, 3, 4,
     {{1, 3, 48, 64}, {2, 3, 48, 96}, {3, 3, 48, 32}}},
};

/* More shapes than the session keeps memory plans for (8), so plans are
 * evicted and rebuilt while other runs use them. */
static const shape_case matmul_case = {
    NULL, 25, 10, 2,
    {{1, K}, {4, K}, {2, K}, {7, K}, {3, K}, {9, K}, {5, K}, {10, K}, {6, K}, {8, K}}};

/* The outputs of one run, owned. */
typedef struct result {
    size_t n;
    onyx_tensor *out[MAX_OUTPUTS];
} result;

typedef struct test_ctx {
    onyx_session *session;
    const shape_case *sc;
    const char *input_name;
    size_t n_outputs;
    const char *output_names[MAX_OUTPUTS];
    result expected[THREADS][MAX_SHAPES];
    int failures[THREADS];
} test_ctx;

typedef struct worker_arg {
    test_ctx *ctx;
    int thread;
} worker_arg;

static int64_t numel_of(const int64_t *dims, int rank) {
    int64_t n = 1;
    for (int i = 0; i < rank; i++) n *= dims[i];
    return n;
}

/* Inputs in [-1, 1) that differ by thread and shape, so a run that read
 * another run's memory could not produce the expected output. */
static float *make_input(int thread, int shape, int64_t n) {
    float *x = malloc(sizeof(float) * (size_t)n);
    if (!x) return NULL;
    for (int64_t i = 0; i < n; i++)
        x[i] = (float)((i * 7 + thread * 13 + shape * 29) % 101) / 50.5f - 1.0f;
    return x;
}

static void result_free(result *r) {
    for (size_t i = 0; i < r->n; i++) onyx_tensor_free(r->out[i]);
    r->n = 0;
}

/* Runs the session on thread `thread`'s input of shape `shape`. */
static int run_once(test_ctx *c, int thread, int shape, result *r) {
    const int64_t *dims = c->sc->shapes[shape];
    int64_t n = numel_of(dims, c->sc->rank);
    float *x = make_input(thread, shape, n);
    onyx_tensor *tx = NULL;
    onyx_status *st = x ? onyx_tensor_wrap(ONYX_FLOAT32, dims, c->sc->rank, x,
                                           sizeof(float) * (size_t)n, &tx)
                        : NULL;
    memset(r, 0, sizeof *r);
    r->n = c->n_outputs;
    if (!st && x)
        st = onyx_session_run(c->session, &c->input_name, (const onyx_tensor *const *)&tx, 1,
                              c->output_names, r->out, c->n_outputs);
    int rc = st || !x ? -1 : 0;
    if (st) {
        fprintf(stderr, "run (thread %d, shape %d) failed: %s\n", thread, shape,
                onyx_status_message(st));
        onyx_status_free(st);
    }
    onyx_tensor_free(tx);
    free(x);
    return rc;
}

static int same_tensor(const onyx_tensor *a, const onyx_tensor *b) {
    if (!a || !b || onyx_tensor_dtype(a) != onyx_tensor_dtype(b) ||
        onyx_tensor_rank(a) != onyx_tensor_rank(b) ||
        onyx_tensor_nbytes(a) != onyx_tensor_nbytes(b))
        return 0;
    int rank = onyx_tensor_rank(a);
    if (rank && memcmp(onyx_tensor_dims(a), onyx_tensor_dims(b), sizeof(int64_t) * (size_t)rank))
        return 0;
    return memcmp(onyx_tensor_data((onyx_tensor *)a), onyx_tensor_data((onyx_tensor *)b),
                  onyx_tensor_nbytes(a)) == 0;
}

static void *worker(void *p) {
    worker_arg *a = p;
    test_ctx *c = a->ctx;
    for (int r = 0; r < c->sc->runs; r++) {
        /* each thread walks the shapes from a different start */
        int shape = (a->thread + r) % c->sc->n_shapes;
        result got;
        int ok = run_once(c, a->thread, shape, &got) == 0;
        for (size_t i = 0; ok && i < c->n_outputs; i++)
            ok = same_tensor(got.out[i], c->expected[a->thread][shape].out[i]);
        if (!ok) c->failures[a->thread]++;
        result_free(&got);
    }
    return NULL;
}

/* Expected outputs one run at a time, then all threads at once. */
static void run_case(onyx_session *s, const shape_case *sc, const char *label) {
    test_ctx *c = calloc(1, sizeof *c);
    CHECK(c != NULL);
    if (!c) return;
    c->session = s;
    c->sc = sc;
    onyx_value_info info;
    CHECK_OK(onyx_session_input_info(s, 0, &info));
    c->input_name = info.name;
    c->n_outputs = onyx_session_output_count(s);
    if (c->n_outputs > MAX_OUTPUTS) c->n_outputs = MAX_OUTPUTS;
    for (size_t i = 0; i < c->n_outputs; i++) {
        CHECK_OK(onyx_session_output_info(s, i, &info));
        c->output_names[i] = info.name;
    }
    for (int t = 0; t < THREADS; t++)
        for (int k = 0; k < sc->n_shapes; k++) CHECK(run_once(c, t, k, &c->expected[t][k]) == 0);
    pthread_t th[THREADS];
    worker_arg args[THREADS];
    for (int t = 0; t < THREADS; t++) {
        args[t] = (worker_arg){c, t};
        CHECK(pthread_create(&th[t], NULL, worker, &args[t]) == 0);
    }
    for (int t = 0; t < THREADS; t++) pthread_join(th[t], NULL);
    for (int t = 0; t < THREADS; t++) {
        if (c->failures[t])
            fprintf(stderr, "%s: thread %d: %d of %d runs differ from the single-threaded run\n",
                    label, t, c->failures[t], sc->runs);
        CHECK(c->failures[t] == 0);
    }
    for (int t = 0; t < THREADS; t++)
        for (int k = 0; k < sc->n_shapes; k++) result_free(&c->expected[t][k]);
    free(c);
    printf("%s: %d threads x %d runs over %d shapes\n", label, THREADS, sc->runs, sc->n_shapes);
}

static onyx_session_options *two_thread_options(void) {
    onyx_session_options *o = NULL;
    CHECK_OK(onyx_session_options_create(&o));
    CHECK_OK(onyx_session_options_set_threads(o, 2)); /* the intra-op pool is shared too */
    return o;
}

/* MatMul with a 1024x1024 weight, then elementwise ops, batch dynamic. */
static void matmul_model(onyx_env *env) {
    mb_model *m = mb_new(13);
    int64_t d[] = {-1, K}, wd[] = {K, K};
    mb_input(m, "x", ONYX_FLOAT32, d, 2);
    mb_output(m, "y", ONYX_FLOAT32, d, 2);
    float *w = malloc(sizeof(float) * K * K);
    CHECK(w != NULL);
    if (!w) return;
    for (int i = 0; i < K * K; i++) w[i] = (float)(i % 17) / 17.0f - 0.5f;
    mb_init_float(m, "w", wd, 2, w);
    free(w);
    mb_node(m, "MatMul", "x,w", "h");
    mb_node(m, "Relu", "h", "r");
    mb_node(m, "Sigmoid", "r", "s");
    mb_node(m, "Add", "s,x", "y");
    size_t len;
    uint8_t *buf = mb_serialize(m, &len);
    mb_free(m);
    onyx_session_options *o = two_thread_options();
    onyx_session *s = NULL;
    CHECK_OK(onyx_session_create_from_buffer(env, buf, len, o, &s));
    free(buf);
    onyx_session_options_free(o);
    if (s) run_case(s, &matmul_case, "in-memory MatMul model");
    onyx_session_free(s);
}

static void zoo_models(onyx_env *env, const char *dir, int require) {
    for (size_t i = 0; i < sizeof zoo_cases / sizeof zoo_cases[0]; i++) {
        const shape_case *sc = &zoo_cases[i];
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, sc->file);
        FILE *f = fopen(path, "rb");
        if (!f) {
            printf("%s: not found, skipped\n", path);
            CHECK(!require);
            continue;
        }
        fclose(f);
        onyx_session_options *o = two_thread_options();
        onyx_session *s = NULL;
        CHECK_OK(onyx_session_create(env, path, o, &s));
        onyx_session_options_free(o);
        if (s) run_case(s, sc, sc->file);
        onyx_session_free(s);
    }
}

int main(int argc, char **argv) {
    int require_zoo = 0;
    const char *zoo_dir = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--require-zoo") == 0) require_zoo = 1;
        else zoo_dir = argv[i];
    }
    onyx_env *env = NULL;
    CHECK_OK(onyx_env_create(&env));
    if (!env) CHECK_DONE();
    matmul_model(env);
    if (zoo_dir) zoo_models(env, zoo_dir, require_zoo);
    else CHECK(!require_zoo);
    onyx_env_free(env);
    CHECK_DONE();
}
