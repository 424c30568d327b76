/* Planning: intermediates share arena memory once their lifetimes end,
 * the memory plan is built once per input shape and reused, and a new
 * shape gets its own plan. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "check.h"
#include "model_builder.h"
#include "planner/pack.h"
#include "runtime/session.h"

/* A chain of 8 elementwise ops: at most two intermediates are alive at
 * once, so the arena needs about two buffers, not seven. */
static onyx_session *chain(onyx_env *env) {
    mb_model *m = mb_new(13);
    int64_t d[] = {-1, 256};
    mb_input(m, "x", ONYX_FLOAT32, d, 2);
    mb_output(m, "y", ONYX_FLOAT32, d, 2);
    const char *ops[] = {"Relu", "Sigmoid", "Tanh", "Relu", "Sigmoid", "Tanh", "Relu", "Sigmoid"};
    char in[16] = "x", out[16];
    for (int i = 0; i < 8; i++) {
        snprintf(out, sizeof out, i == 7 ? "y" : "t%d", i);
        mb_node(m, ops[i], in, out);
        snprintf(in, sizeof in, "%s", out);
    }
    size_t len;
    uint8_t *buf = mb_serialize(m, &len);
    mb_free(m);
    onyx_session *s = NULL;
    onyx_session_options *o = NULL;
    CHECK_OK(onyx_session_options_create(&o));
    CHECK_OK(onyx_session_options_set_threads(o, 1));
    CHECK_OK(onyx_session_create_from_buffer(env, buf, len, o, &s));
    onyx_session_options_free(o);
    free(buf);
    return s;
}

static void run(onyx_session *s, int64_t batch, float fill, float *first_out) {
    int64_t d[] = {batch, 256};
    float *x = malloc((size_t)batch * 256 * sizeof *x);
    for (int64_t i = 0; i < batch * 256; i++) x[i] = fill;
    onyx_tensor *tx = NULL, *ty = NULL;
    CHECK_OK(onyx_tensor_wrap(ONYX_FLOAT32, d, 2, x, (size_t)batch * 256 * sizeof *x, &tx));
    const char *in = "x", *out = "y";
    CHECK_OK(onyx_session_run(s, &in, (const onyx_tensor *const *)&tx, 1, &out, &ty, 1));
    if (ty) *first_out = ((float *)onyx_tensor_data(ty))[0];
    onyx_tensor_free(tx);
    onyx_tensor_free(ty);
    free(x);
}

static float reference(float v) {
    v = v > 0 ? v : 0;
    v = 1.0f / (1.0f + expf(-v));
    v = tanhf(v);
    v = v > 0 ? v : 0;
    v = 1.0f / (1.0f + expf(-v));
    v = tanhf(v);
    v = v > 0 ? v : 0;
    return 1.0f / (1.0f + expf(-v));
}

/* ---- arena packing against the plain quadratic greedy placement ---- */

static size_t span(size_t bytes) { return (bytes + OX_ARENA_ALIGN - 1) / OX_ARENA_ALIGN * OX_ARENA_ALIGN; }

/* Largest first (ties by index), each at the lowest offset clear of every
 * placed block whose lifetime meets its own: what ox_pack_greedy must
 * reproduce exactly, by scanning every placed block. */
static size_t reference_pack(int n, const size_t *sizes, const int *life, size_t *offset) {
    int *idx = malloc((size_t)n * sizeof *idx), m = 0;
    for (int s = 0; s < n; s++) {
        offset[s] = SIZE_MAX;
        if (sizes[s]) idx[m++] = s;
    }
    for (int i = 1; i < m; i++)
        for (int j = i; j > 0 && sizes[idx[j]] > sizes[idx[j - 1]]; j--) {
            int t = idx[j];
            idx[j] = idx[j - 1];
            idx[j - 1] = t;
        }
    size_t total = 0;
    for (int i = 0; i < m; i++) {
        int s = idx[i];
        size_t cand = 0;
        for (int moved = 1; moved;) {
            moved = 0;
            for (int j = 0; j < i; j++) {
                int o = idx[j];
                if (life[2 * s + 1] < life[2 * o] || life[2 * o + 1] < life[2 * s]) continue;
                if (cand < offset[o] + span(sizes[o]) && offset[o] < cand + span(sizes[s])) {
                    cand = offset[o] + span(sizes[o]);
                    moved = 1;
                }
            }
        }
        offset[s] = cand;
        if (cand + span(sizes[s]) > total) total = cand + span(sizes[s]);
    }
    free(idx);
    return total;
}

/* No two blocks alive at a common step share a byte, all inside the arena. */
static int layout_valid(int n, const size_t *sizes, const int *life, const size_t *offset,
                        size_t arena) {
    for (int a = 0; a < n; a++) {
        if (!sizes[a]) continue;
        if (offset[a] == SIZE_MAX || offset[a] + span(sizes[a]) > arena) return 0;
        for (int b = a + 1; b < n; b++) {
            if (!sizes[b] || life[2 * a + 1] < life[2 * b] || life[2 * b + 1] < life[2 * a]) continue;
            if (offset[a] < offset[b] + span(sizes[b]) && offset[b] < offset[a] + span(sizes[a]))
                return 0;
        }
    }
    return 1;
}

static uint32_t next_random(uint32_t *state) {
    *state = *state * 1664525u + 1013904223u;
    return *state >> 8;
}

/* Random graphs' worth of lifetimes (short, long, repeated sizes, unused
 * slots): the indexed greedy gives the very offsets of the plain one. */
static void check_pack_matches_reference(void) {
    enum { N = 400, STEPS = 300 };
    static size_t sizes[N], got[N], want[N];
    static int life[2 * N];
    uint32_t rng = 12345;
    for (int round = 0; round < 20; round++) {
        for (int s = 0; s < N; s++) {
            int first = (int)(next_random(&rng) % STEPS);
            int len = next_random(&rng) % 4 == 0 ? (int)(next_random(&rng) % STEPS) : (int)(next_random(&rng) % 5);
            life[2 * s] = first;
            life[2 * s + 1] = first + len < STEPS ? first + len : STEPS - 1;
            uint32_t kind = next_random(&rng) % 8;
            sizes[s] = kind == 0 ? 0 : kind < 4 ? 1024 * kind : 1 + next_random(&rng) % 100000;
        }
        size_t ref = reference_pack(N, sizes, life, want), arena = 0;
        CHECK(ox_pack_greedy(N, sizes, life, STEPS - 1, SIZE_MAX, got, &arena) == 0);
        CHECK(arena == ref);
        CHECK(memcmp(got, want, sizeof got) == 0);
        CHECK(layout_valid(N, sizes, life, got, arena));
        /* the step-order strategy is valid too, if looser */
        CHECK(ox_pack_by_step(N, sizes, life, got, &arena) == 0);
        CHECK(layout_valid(N, sizes, life, got, arena));
        CHECK(arena >= ref);
    }
}

/* Thousands of blocks alive at once exceed the greedy budget: the public
 * packer still returns a valid layout, here the exact sum. */
static void check_pack_many_alive(void) {
    enum { N = 4000 };
    size_t *sizes = malloc(N * sizeof *sizes), *offset = malloc(N * sizeof *offset), arena = 0;
    int *life = malloc(2 * N * sizeof *life);
    for (int s = 0; s < N; s++) {
        sizes[s] = 100;
        life[2 * s] = s % 2;
        life[2 * s + 1] = 2;
    }
    CHECK(ox_pack_greedy(N, sizes, life, 2, 1000, offset, &arena) == 1); /* over budget */
    arena = ox_pack_arena(N, sizes, life, 2, offset);
    CHECK(arena == (size_t)N * 128);
    CHECK(layout_valid(N, sizes, life, offset, arena));
    /* after the step each block ends, the next generation reuses it */
    for (int s = 0; s < N; s++) {
        life[2 * s] = s;
        life[2 * s + 1] = s + 1;
        sizes[s] = s % 3 == 0 ? 64 : 4096;
    }
    CHECK(ox_pack_by_step(N, sizes, life, offset, &arena) == 0);
    CHECK(layout_valid(N, sizes, life, offset, arena));
    CHECK(arena <= 3 * 4096);
    free(sizes);
    free(offset);
    free(life);
}

static onyx_session *session_from(onyx_env *env, mb_model *m) {
    size_t len;
    uint8_t *buf = mb_serialize(m, &len);
    mb_free(m);
    onyx_session *s = NULL;
    onyx_session_options *o = NULL;
    CHECK_OK(onyx_session_options_create(&o));
    CHECK_OK(onyx_session_options_set_threads(o, 1));
    CHECK_OK(onyx_session_create_from_buffer(env, buf, len, o, &s));
    onyx_session_options_free(o);
    free(buf);
    return s;
}

/* A branch and a join with intermediates of two sizes: the arena the
 * planner found before packing went through the lifetime index (4 KiB
 * tensors a, b alive until the Concat, 8 KiB c, d after it). */
static void check_branch_peak(onyx_env *env) {
    mb_model *m = mb_new(13);
    int64_t dx[] = {4, 256}, dy[] = {8, 256};
    mb_input(m, "x", ONYX_FLOAT32, dx, 2);
    mb_output(m, "y", ONYX_FLOAT32, dy, 2);
    mb_node(m, "Relu", "x", "a");
    mb_node(m, "Sigmoid", "a", "b");
    mb_node(m, "Concat", "a,b", "c");
    mb_attr_int(m, "axis", 0);
    mb_node(m, "Tanh", "c", "d");
    mb_node(m, "Add", "d,d", "y");
    onyx_session *s = session_from(env, m);
    if (!s) return;
    float x[4 * 256];
    for (int i = 0; i < 4 * 256; i++) x[i] = (float)(i % 7) - 3.0f;
    onyx_tensor *tx = NULL, *ty = NULL;
    CHECK_OK(onyx_tensor_wrap(ONYX_FLOAT32, dx, 2, x, sizeof x, &tx));
    const char *in = "x", *out = "y";
    CHECK_OK(onyx_session_run(s, &in, (const onyx_tensor *const *)&tx, 1, &out, &ty, 1));
    if (ty) {
        const float *y = onyx_tensor_data(ty);
        float a = x[5] > 0 ? x[5] : 0, b = 1.0f / (1.0f + expf(-a));
        CHECK_NEAR(y[5], 2 * tanhf(a), 1e-6);
        CHECK_NEAR(y[4 * 256 + 5], 2 * tanhf(b), 1e-6);
    }
    ox_plan_stats st;
    ox_session_plan_stats(s, &st);
    CHECK(st.naive_bytes == (2 * 4096 + 2 * 8192));
    CHECK(st.arena_bytes == 16384);
    onyx_tensor_free(tx);
    onyx_tensor_free(ty);
    onyx_session_free(s);
}

/* Reshaping nodes are views: a (4 KiB) is read as b (Reshape) and c
 * (Flatten of b) after four more 4 KiB intermediates were made and
 * dropped. Were b and c copies, the arena would hold a, b, c and the
 * chain; as views they take no memory, and a lives on until their last
 * reader (the final Add), so the chain's values cannot land on it. */
static void check_views(onyx_env *env) {
    mb_model *m = mb_new(13);
    int64_t dx[] = {4, 256}, shape[] = {2, 2, 256}, ds[] = {3}, dy[] = {4, 256};
    mb_input(m, "x", ONYX_FLOAT32, dx, 2);
    mb_output(m, "y", ONYX_FLOAT32, dy, 2);
    mb_init_int64(m, "shape", ds, 1, shape);
    mb_node(m, "Relu", "x", "a");
    mb_node(m, "Reshape", "a,shape", "b");
    mb_node(m, "Flatten", "b", "c");
    mb_attr_int(m, "axis", 2);
    mb_node(m, "Sigmoid", "x", "t0");
    mb_node(m, "Tanh", "t0", "t1");
    mb_node(m, "Sigmoid", "t1", "t2");
    mb_node(m, "Tanh", "t2", "t3");
    mb_node(m, "Add", "c,t3", "y");
    onyx_session *s = session_from(env, m);
    if (!s) return;
    float x[4 * 256];
    for (int i = 0; i < 4 * 256; i++) x[i] = (float)(i % 7) - 3.0f;
    onyx_tensor *tx = NULL, *ty = NULL;
    CHECK_OK(onyx_tensor_wrap(ONYX_FLOAT32, dx, 2, x, sizeof x, &tx));
    const char *in = "x", *out = "y";
    for (int r = 0; r < 2; r++) { /* the first run measures, the second uses the arena */
        CHECK_OK(onyx_session_run(s, &in, (const onyx_tensor *const *)&tx, 1, &out, &ty, 1));
        for (int i = 0; ty && i < 4 * 256; i++) {
            float t = tanhf(1.0f / (1.0f + expf(-tanhf(1.0f / (1.0f + expf(-x[i]))))));
            CHECK_NEAR(((const float *)onyx_tensor_data(ty))[i], (x[i] > 0 ? x[i] : 0) + t, 1e-6);
        }
        onyx_tensor_free(ty);
        ty = NULL;
    }
    ox_plan_stats st;
    ox_session_plan_stats(s, &st);
    CHECK(st.naive_bytes == 5 * 4096);  /* a and t0..t3; b and c are views */
    CHECK(st.arena_bytes == 3 * 4096);  /* a, and two of the chain at a time */
    onyx_tensor_free(tx);
    onyx_session_free(s);
}

/* A graph without nodes still gets a plan and a memory plan, and frees
 * both with the session (LeakSanitizer checks this in sanitized builds). */
static void check_empty_graphs(onyx_env *env) {
    onyx_session *s = session_from(env, mb_new(13));
    if (s) {
        CHECK_OK(onyx_session_run(s, NULL, NULL, 0, NULL, NULL, 0));
        ox_plan_stats st;
        ox_session_plan_stats(s, &st);
        CHECK(st.mem_plans_built == 1);
        CHECK(st.arena_bytes == 0);
        onyx_session_free(s);
    }
    /* an input handed straight out as the output */
    mb_model *m = mb_new(13);
    int64_t d[] = {3};
    mb_input(m, "x", ONYX_FLOAT32, d, 1);
    mb_output(m, "x", ONYX_FLOAT32, d, 1);
    s = session_from(env, m);
    if (!s) return;
    float x[3] = {1.5f, -2.0f, 7.0f};
    onyx_tensor *tx = NULL, *ty = NULL;
    CHECK_OK(onyx_tensor_wrap(ONYX_FLOAT32, d, 1, x, sizeof x, &tx));
    const char *in = "x", *out = "x";
    CHECK_OK(onyx_session_run(s, &in, (const onyx_tensor *const *)&tx, 1, &out, &ty, 1));
    if (ty) CHECK(memcmp(onyx_tensor_data(ty), x, sizeof x) == 0);
    onyx_tensor_free(tx);
    onyx_tensor_free(ty);
    onyx_session_free(s);
}

int main(void) {
    check_pack_matches_reference();
    check_pack_many_alive();
    onyx_env *env = NULL;
    CHECK_OK(onyx_env_create(&env));
    check_branch_peak(env);
    check_views(env);
    check_empty_graphs(env);
    onyx_session *s = chain(env);
    if (!s) CHECK_DONE();
    ox_plan_stats st;
    float y = 0;

    run(s, 4, 0.5f, &y);
    CHECK_NEAR(y, reference(0.5f), 1e-6);
    ox_session_plan_stats(s, &st);
    CHECK(st.mem_plans_built == 1);
    /* 7 intermediates of 4 KiB each; lifetimes allow two at a time */
    CHECK(st.naive_bytes == 7 * 4 * 256 * sizeof(float));
    CHECK(st.arena_bytes == 2 * 4 * 256 * sizeof(float));

    /* same shape: the plan is reused, and the arena results are right */
    for (int i = 0; i < 3; i++) {
        run(s, 4, -1.0f + (float)i, &y);
        CHECK_NEAR(y, reference(-1.0f + (float)i), 1e-6);
    }
    ox_session_plan_stats(s, &st);
    CHECK(st.mem_plans_built == 1);

    /* new batch size: one more plan, then reuse again */
    run(s, 16, 2.0f, &y);
    CHECK_NEAR(y, reference(2.0f), 1e-6);
    run(s, 16, 3.0f, &y);
    CHECK_NEAR(y, reference(3.0f), 1e-6);
    ox_session_plan_stats(s, &st);
    CHECK(st.mem_plans_built == 2);
    CHECK(st.arena_bytes == 2 * 16 * 256 * sizeof(float));

    /* back to the first shape: still cached */
    run(s, 4, 1.0f, &y);
    ox_session_plan_stats(s, &st);
    CHECK(st.mem_plans_built == 2);

    /* the cache keeps the 8 most recent shapes: after 8 new ones, batch 4
     * is planned again, and still computes the right values */
    int before = st.mem_plans_built;
    for (int64_t b = 20; b < 28; b++) run(s, b, 0.25f, &y);
    ox_session_plan_stats(s, &st);
    CHECK(st.mem_plans_built == before + 8);
    run(s, 4, 1.5f, &y);
    CHECK_NEAR(y, reference(1.5f), 1e-6);
    ox_session_plan_stats(s, &st);
    CHECK(st.mem_plans_built == before + 9);

    onyx_session_free(s);
    onyx_env_free(env);
    CHECK_DONE();
}
