/* One session, many threads: concurrent onyx_session_run calls on the
 * same session give the same results as sequential runs. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "model_builder.h"

#define THREADS 4
#define RUNS 25
#define N 4096

static onyx_session *session;
static float expected[THREADS][N];
static int thread_failures[THREADS];

static void input_for(int t, float *x) {
    for (int i = 0; i < N; i++) x[i] = (float)((i * 7 + t * 13) % 101) / 50.0f - 1.0f;
}

static int run_once(int t, float *y) {
    float x[N];
    input_for(t, x);
    int64_t d[] = {4, N / 4};
    onyx_tensor *tx = NULL, *ty = NULL;
    onyx_status *st = onyx_tensor_wrap(ONYX_FLOAT32, d, 2, x, sizeof x, &tx);
    const char *in = "x", *out = "y";
    if (!st) st = onyx_session_run(session, &in, (const onyx_tensor *const *)&tx, 1, &out, &ty, 1);
    int rc = st ? -1 : 0;
    if (st) {
        fprintf(stderr, "run failed: %s\n", onyx_status_message(st));
        onyx_status_free(st);
    } else {
        memcpy(y, onyx_tensor_data(ty), sizeof(float) * N);
    }
    onyx_tensor_free(tx);
    onyx_tensor_free(ty);
    return rc;
}

static void *worker(void *arg) {
    int t = (int)(intptr_t)arg;
    float y[N];
    for (int r = 0; r < RUNS; r++) {
        if (run_once(t, y) != 0 || memcmp(y, expected[t], sizeof y) != 0) thread_failures[t]++;
    }
    return NULL;
}

int main(void) {
    onyx_env *env = NULL;
    CHECK_OK(onyx_env_create(&env));
    mb_model *m = mb_new(13);
    int64_t d[] = {4, N / 4}, wd[] = {N / 4, N / 4};
    mb_input(m, "x", ONYX_FLOAT32, d, 2);
    mb_output(m, "y", ONYX_FLOAT32, d, 2);
    float *w = malloc(sizeof(float) * (N / 4) * (N / 4));
    for (int i = 0; i < (N / 4) * (N / 4); i++) w[i] = (float)(i % 17) / 17.0f - 0.5f;
    mb_init_float(m, "w", wd, 2, w);
    free(w);
    mb_node(m, "MatMul", "x,w", "h");
    mb_node(m, "Relu", "h", "r");
    mb_node(m, "Sigmoid", "r", "s");
    mb_node(m, "Add", "s,x", "y");
    size_t len;
    uint8_t *buf = mb_serialize(m, &len);
    mb_free(m);
    onyx_session_options *o = NULL;
    CHECK_OK(onyx_session_options_create(&o));
    CHECK_OK(onyx_session_options_set_threads(o, 2));
    CHECK_OK(onyx_session_create_from_buffer(env, buf, len, o, &session));
    free(buf);
    onyx_session_options_free(o);
    if (!session) CHECK_DONE();
    for (int t = 0; t < THREADS; t++) CHECK(run_once(t, expected[t]) == 0);
    pthread_t th[THREADS];
    for (int t = 0; t < THREADS; t++) pthread_create(&th[t], NULL, worker, (void *)(intptr_t)t);
    for (int t = 0; t < THREADS; t++) pthread_join(th[t], NULL);
    for (int t = 0; t < THREADS; t++) CHECK(thread_failures[t] == 0);
    onyx_session_free(session);
    onyx_env_free(env);
    CHECK_DONE();
}
