/* Bad inputs at run time: wrong rank, dtype, shape, unknown or missing
 * names, NULL arguments, wrong caller buffers. Each is a clear error. */
#include <stdlib.h>

#include "check.h"
#include "model_builder.h"

int main(void) {
    onyx_env *env = NULL;
    CHECK_OK(onyx_env_create(&env));
    mb_model *m = mb_new(13);
    int64_t in_dims[] = {-1, 3}; /* symbolic batch */
    mb_input(m, "x", ONYX_FLOAT32, in_dims, 2);
    mb_input(m, "z", ONYX_FLOAT32, in_dims, 2);
    mb_output(m, "y", ONYX_FLOAT32, in_dims, 2);
    mb_node(m, "Add", "x,z", "y");
    size_t len;
    uint8_t *buf = mb_serialize(m, &len);
    mb_free(m);
    onyx_session *s = NULL;
    CHECK_OK(onyx_session_create_from_buffer(env, buf, len, NULL, &s));
    free(buf);
    if (!s) CHECK_DONE();

    /* dimensions named "?" are unknown, not one shared symbol: a [2, 4]
     * image passes where both are "?" (Paddle2ONNX's classifier) */
    {
        mb_model *q = mb_new(13);
        int64_t anon[] = {-2, -2};
        mb_input(q, "img", ONYX_FLOAT32, anon, 2);
        mb_output(q, "r", ONYX_FLOAT32, anon, 2);
        mb_node(q, "Relu", "img", "r");
        size_t qlen;
        uint8_t *qbuf = mb_serialize(q, &qlen);
        mb_free(q);
        onyx_session *qs = NULL;
        CHECK_OK(onyx_session_create_from_buffer(env, qbuf, qlen, NULL, &qs));
        free(qbuf);
        float img[8] = {-1, 2, -3, 4, -5, 6, -7, 8};
        int64_t idims[] = {2, 4};
        onyx_tensor *ti = NULL, *tr = NULL;
        CHECK_OK(onyx_tensor_wrap(ONYX_FLOAT32, idims, 2, img, sizeof img, &ti));
        const char *qin = "img", *qout = "r";
        if (qs) {
            CHECK_OK(onyx_session_run(qs, &qin, (const onyx_tensor *const *)&ti, 1, &qout, &tr, 1));
            if (tr) CHECK(((const float *)onyx_tensor_data(tr))[7] == 8.0f);
        }
        onyx_tensor_free(tr);
        onyx_tensor_free(ti);
        onyx_session_free(qs);
    }

    float data[12] = {0};
    int64_t ok_dims[] = {2, 3}, other_batch[] = {4, 3}, bad_cols[] = {2, 4}, rank3[] = {1, 2, 3};
    onyx_tensor *x = NULL, *z = NULL, *bad = NULL, *y = NULL;
    CHECK_OK(onyx_tensor_wrap(ONYX_FLOAT32, ok_dims, 2, data, 24, &x));
    CHECK_OK(onyx_tensor_wrap(ONYX_FLOAT32, ok_dims, 2, data, 24, &z));
    const char *names[] = {"x", "z"};
    const char *out = "y";
    const onyx_tensor *ins[2] = {x, z};

    CHECK_OK(onyx_session_run(s, names, ins, 2, &out, &y, 1));
    onyx_tensor_free(y);
    y = NULL;

    /* wrong rank */
    CHECK_OK(onyx_tensor_wrap(ONYX_FLOAT32, rank3, 3, data, 24, &bad));
    ins[1] = bad;
    CHECK_FAILS(onyx_session_run(s, names, ins, 2, &out, &y, 1), ONYX_INVALID_ARGUMENT,
                "input 'z' must have rank 2");
    onyx_tensor_free(bad);
    /* wrong fixed dimension */
    CHECK_OK(onyx_tensor_wrap(ONYX_FLOAT32, bad_cols, 2, data, 32, &bad));
    ins[1] = bad;
    CHECK_FAILS(onyx_session_run(s, names, ins, 2, &out, &y, 1), ONYX_INVALID_ARGUMENT,
                "input 'z' must have shape [?,3], got [2,4]");
    onyx_tensor_free(bad);
    /* inconsistent symbolic dimension */
    CHECK_OK(onyx_tensor_wrap(ONYX_FLOAT32, other_batch, 2, data, 48, &bad));
    ins[1] = bad;
    CHECK_FAILS(onyx_session_run(s, names, ins, 2, &out, &y, 1), ONYX_INVALID_ARGUMENT,
                "dimension 'batch' is 2 in input 'x' but 4 in input 'z'");
    onyx_tensor_free(bad);
    /* wrong dtype */
    int32_t idata[6] = {0};
    CHECK_OK(onyx_tensor_wrap(ONYX_INT32, ok_dims, 2, idata, sizeof idata, &bad));
    ins[1] = bad;
    CHECK_FAILS(onyx_session_run(s, names, ins, 2, &out, &y, 1), ONYX_INVALID_ARGUMENT,
                "input 'z' must be float32, got int32");
    onyx_tensor_free(bad);
    ins[1] = z;
    /* wrong buffer size when wrapping */
    CHECK_FAILS(onyx_tensor_wrap(ONYX_FLOAT32, ok_dims, 2, data, 20, &bad), ONYX_INVALID_ARGUMENT,
                "buffer has 20 bytes but a float32 tensor of this shape needs 24");
    /* missing and unknown inputs, unknown outputs */
    CHECK_FAILS(onyx_session_run(s, names, ins, 1, &out, &y, 1), ONYX_INVALID_ARGUMENT,
                "input 'z' was not given");
    const char *wrong[] = {"x", "w"};
    CHECK_FAILS(onyx_session_run(s, wrong, ins, 2, &out, &y, 1), ONYX_INVALID_ARGUMENT,
                "the model has no input 'w' (inputs: 'x', 'z')");
    const char *twice[] = {"x", "x"};
    CHECK_FAILS(onyx_session_run(s, twice, ins, 2, &out, &y, 1), ONYX_INVALID_ARGUMENT,
                "input 'x' is given twice");
    const char *bad_out = "nope";
    CHECK_FAILS(onyx_session_run(s, names, ins, 2, &bad_out, &y, 1), ONYX_INVALID_ARGUMENT,
                "the model has no output 'nope'");
    CHECK_FAILS(onyx_session_run(s, NULL, ins, 2, &out, &y, 1), ONYX_INVALID_ARGUMENT,
                "must not be NULL");
    CHECK_FAILS(onyx_session_run(NULL, names, ins, 2, &out, &y, 1), ONYX_INVALID_ARGUMENT,
                "session is NULL");
    /* caller output buffer of the wrong shape, then the right one */
    float ybuf[6];
    onyx_tensor *yt = NULL;
    int64_t wrong_out[] = {3, 2};
    CHECK_OK(onyx_tensor_wrap(ONYX_FLOAT32, wrong_out, 2, ybuf, sizeof ybuf, &yt));
    CHECK_FAILS(onyx_session_run(s, names, ins, 2, &out, &yt, 1), ONYX_INVALID_ARGUMENT,
                "output 'y': the caller's tensor is float32 [3,2] but the model produces float32 [2,3]");
    onyx_tensor_free(yt);
    float xv[6] = {1, 2, 3, 4, 5, 6};
    onyx_tensor *x2 = NULL;
    CHECK_OK(onyx_tensor_wrap(ONYX_FLOAT32, ok_dims, 2, xv, sizeof xv, &x2));
    const onyx_tensor *ins2[2] = {x2, x2};
    CHECK_OK(onyx_tensor_wrap(ONYX_FLOAT32, ok_dims, 2, ybuf, sizeof ybuf, &yt));
    CHECK_OK(onyx_session_run(s, names, ins2, 2, &out, &yt, 1));
    for (int i = 0; i < 6; i++) CHECK_NEAR(ybuf[i], 2.0 * xv[i], 0);
    CHECK(onyx_tensor_data(yt) == ybuf);
    onyx_tensor_free(yt);
    onyx_tensor_free(x2);

    onyx_tensor_free(x);
    onyx_tensor_free(z);
    onyx_session_free(s);

    /* a shape input asking for 4 TiB is refused before any allocation */
    m = mb_new(13);
    int64_t two[] = {2};
    mb_input(m, "shape", ONYX_INT64, two, 1);
    mb_output(m, "big", ONYX_FLOAT32, NULL, -1);
    mb_node(m, "ConstantOfShape", "shape", "big");
    buf = mb_serialize(m, &len);
    mb_free(m);
    s = NULL;
    CHECK_OK(onyx_session_create_from_buffer(env, buf, len, NULL, &s));
    free(buf);
    int64_t huge[2] = {(int64_t)1 << 20, (int64_t)1 << 20};
    onyx_tensor *ts = NULL, *big = NULL;
    CHECK_OK(onyx_tensor_wrap(ONYX_INT64, two, 1, huge, sizeof huge, &ts));
    const char *sname = "shape", *bname = "big";
    if (s)
        CHECK_FAILS(onyx_session_run(s, &sname, (const onyx_tensor *const *)&ts, 1, &bname, &big, 1),
                    ONYX_OUT_OF_MEMORY, "is larger than this machine's memory");
    CHECK(big == NULL);
    onyx_tensor_free(ts);
    onyx_session_free(s);
    onyx_env_free(env);
    CHECK_DONE();
}
