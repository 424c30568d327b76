/* Loading: from a path and from a buffer give the same session and the
 * same outputs; external data resolves against the model's folder, or a
 * folder the caller names when loading from memory; broken files fail
 * with clear errors. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "model_builder.h"

static char tmpdir[256];

/* y = x * w + b, with w stored as external data in weights.bin. */
static mb_model *external_model(void) {
    mb_model *m = mb_new(13);
    int64_t d[] = {2, 3};
    mb_input(m, "x", ONYX_FLOAT32, d, 2);
    mb_output(m, "y", ONYX_FLOAT32, d, 2);
    mb_init_external(m, "w", d, 2, "weights.bin", 24);
    float b[6] = {0.5f, 0.5f, 0.5f, 0.5f, 0.5f, 0.5f};
    mb_init_float(m, "b", d, 2, b);
    mb_node(m, "Mul", "x,w", "xw");
    mb_node(m, "Add", "xw,b", "y");
    return m;
}

static void write_weights(void) {
    char path[512];
    snprintf(path, sizeof path, "%s/weights.bin", tmpdir);
    float w[6] = {1, 2, 3, 4, 5, 6};
    FILE *f = fopen(path, "wb");
    CHECK(f && fwrite(w, sizeof w, 1, f) == 1);
    if (f) fclose(f);
}

static void run_xy(onyx_session *s, float *y) {
    float x[6] = {1, 1, 1, 2, 2, 2};
    int64_t d[] = {2, 3};
    onyx_tensor *tx = NULL, *ty = NULL;
    CHECK_OK(onyx_tensor_wrap(ONYX_FLOAT32, d, 2, x, sizeof x, &tx));
    const char *in = "x", *out = "y";
    CHECK_OK(onyx_session_run(s, &in, (const onyx_tensor *const *)&tx, 1, &out, &ty, 1));
    if (ty) memcpy(y, onyx_tensor_data(ty), 6 * sizeof(float));
    onyx_tensor_free(tx);
    onyx_tensor_free(ty);
}

static void test_external_data(onyx_env *env) {
    mb_model *m = external_model();
    char path[512];
    snprintf(path, sizeof path, "%s/ext.onnx", tmpdir);
    CHECK(mb_save(m, path) == 0);
    write_weights();

    onyx_session *s = NULL;
    CHECK_OK(onyx_session_create(env, path, NULL, &s));
    float y[6] = {0};
    if (s) run_xy(s, y);
    float expect[6] = {1.5f, 2.5f, 3.5f, 8.5f, 10.5f, 12.5f};
    for (int i = 0; i < 6; i++) CHECK_NEAR(y[i], expect[i], 0);
    onyx_session_free(s);

    /* From memory: without a folder the error names the tensor. */
    size_t len;
    uint8_t *buf = mb_serialize(m, &len);
    s = NULL;
    CHECK_FAILS(onyx_session_create_from_buffer(env, buf, len, NULL, &s), ONYX_INVALID_ARGUMENT,
                "tensor 'w' keeps its data in external file 'weights.bin'");
    CHECK(s == NULL);
    onyx_session_options *o = NULL;
    CHECK_OK(onyx_session_options_create(&o));
    CHECK_OK(onyx_session_options_set_external_data_dir(o, tmpdir));
    CHECK_OK(onyx_session_create_from_buffer(env, buf, len, o, &s));
    memset(y, 0, sizeof y);
    if (s) run_xy(s, y);
    for (int i = 0; i < 6; i++) CHECK_NEAR(y[i], expect[i], 0);
    onyx_session_free(s);
    onyx_session_options_free(o);
    free(buf);
    mb_free(m);

    /* A location that escapes the folder is refused. */
    m = mb_new(13);
    int64_t d[] = {2, 3};
    mb_input(m, "x", ONYX_FLOAT32, d, 2);
    mb_output(m, "y", ONYX_FLOAT32, d, 2);
    mb_init_external(m, "w", d, 2, "../etc/weights.bin", 24);
    mb_node(m, "Mul", "x,w", "y");
    CHECK(mb_save(m, path) == 0);
    s = NULL;
    CHECK_FAILS(onyx_session_create(env, path, NULL, &s), ONYX_INVALID_MODEL, "leaves the model folder");
    mb_free(m);
    /* A short external file is an I/O error naming the tensor. */
    m = mb_new(13);
    mb_input(m, "x", ONYX_FLOAT32, d, 2);
    mb_output(m, "y", ONYX_FLOAT32, d, 2);
    int64_t big[] = {4, 3};
    mb_init_external(m, "w", big, 2, "weights.bin", 48);
    mb_node(m, "Mul", "x,w", "y");
    CHECK(mb_save(m, path) == 0);
    CHECK_FAILS(onyx_session_create(env, path, NULL, &s), ONYX_IO_ERROR, "tensor 'w'");
    mb_free(m);
}

static void test_path_and_buffer_agree(onyx_env *env, const char *model_path,
                                       const char *input_path) {
    onyx_session *a = NULL, *b = NULL;
    CHECK_OK(onyx_session_create(env, model_path, NULL, &a));
    FILE *f = fopen(model_path, "rb");
    CHECK(f != NULL);
    if (!f || !a) return;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)n);
    CHECK(fread(buf, 1, (size_t)n, f) == (size_t)n);
    fclose(f);
    CHECK_OK(onyx_session_create_from_buffer(env, buf, (size_t)n, NULL, &b));
    free(buf); /* the session must not keep pointers into the buffer */
    if (!b) {
        onyx_session_free(a);
        return;
    }
    CHECK(onyx_session_input_count(a) == onyx_session_input_count(b));
    CHECK(onyx_session_node_count(a) == onyx_session_node_count(b));
    onyx_tensor *x = NULL;
    CHECK_OK(onyx_tensor_load(input_path, &x));
    onyx_value_info info;
    CHECK_OK(onyx_session_input_info(a, 0, &info));
    onyx_value_info oinfo;
    CHECK_OK(onyx_session_output_info(a, 0, &oinfo));
    onyx_tensor *ya = NULL, *yb = NULL;
    const char *in = info.name, *out = oinfo.name;
    CHECK_OK(onyx_session_run(a, &in, (const onyx_tensor *const *)&x, 1, &out, &ya, 1));
    CHECK_OK(onyx_session_run(b, &in, (const onyx_tensor *const *)&x, 1, &out, &yb, 1));
    if (ya && yb) {
        CHECK(onyx_tensor_nbytes(ya) == onyx_tensor_nbytes(yb));
        CHECK(memcmp(onyx_tensor_data(ya), onyx_tensor_data(yb), onyx_tensor_nbytes(ya)) == 0);
        /* The example is a vertical bar: class 0 wins clearly. */
        const float *p = onyx_tensor_data(ya);
        CHECK(p[0] > 0.9f && p[1] < 0.1f);
        CHECK_NEAR(p[0] + p[1], 1.0, 1e-6);
    }
    onyx_tensor_free(x);
    onyx_tensor_free(ya);
    onyx_tensor_free(yb);
    onyx_session_free(a);
    onyx_session_free(b);
}

static void test_broken_files(onyx_env *env) {
    onyx_session *s = NULL;
    char path[512];
    CHECK_FAILS(onyx_session_create(env, "/nonexistent/model.onnx", NULL, &s), ONYX_IO_ERROR,
                "cannot open");
    snprintf(path, sizeof path, "%s/empty.onnx", tmpdir);
    FILE *f = fopen(path, "wb");
    if (f) fclose(f);
    CHECK_FAILS(onyx_session_create(env, path, NULL, &s), ONYX_INVALID_MODEL, "empty");
    /* random bytes */
    uint8_t junk[4096];
    uint64_t x = 0x9e3779b97f4a7c15ULL;
    for (size_t i = 0; i < sizeof junk; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        junk[i] = (uint8_t)x;
    }
    CHECK_FAILS(onyx_session_create_from_buffer(env, junk, sizeof junk, NULL, &s),
                ONYX_INVALID_MODEL, "ModelProto");
    /* a real model cut in half */
    mb_model *m = external_model();
    size_t len;
    uint8_t *buf = mb_serialize(m, &len);
    for (size_t cut = 1; cut < len; cut += len / 7 + 1) {
        onyx_status *st = onyx_session_create_from_buffer(env, buf, cut, NULL, &s);
        CHECK(st != NULL);
        CHECK(s == NULL);
        onyx_status_free(st);
    }
    free(buf);
    mb_free(m);
    CHECK(s == NULL);
}

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: test_loader EXAMPLE_MODEL EXAMPLE_INPUT\n");
        return 2;
    }
    snprintf(tmpdir, sizeof tmpdir, "/tmp/onyx_test_loader_XXXXXX");
    if (!mkdtemp(tmpdir)) return 2;
    onyx_env *env = NULL;
    CHECK_OK(onyx_env_create(&env));
    test_path_and_buffer_agree(env, argv[1], argv[2]);
    test_external_data(env);
    test_broken_files(env);
    onyx_env_free(env);
    char cmd[512];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", tmpdir);
    CHECK_DONE();
}
