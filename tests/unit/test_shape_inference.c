/* Static shape and type inference at load: known dims propagate through
 * Conv, Relu, Flatten, MatMul, Reshape; unknown (symbolic) dims stay
 * unknown instead of being guessed; constants feed data-dependent shapes. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "loader/loader.h"
#include "model_builder.h"
#include "ops/attr_table.h"
#include "ops/op.h"

static ir_model *load(mb_model *m) {
    size_t len;
    uint8_t *buf = mb_serialize(m, &len);
    ir_model *im = NULL;
    ox_error err = {0};
    if (ox_load_model(buf, len, NULL, &im, &err) != 0 || ir_validate(im, &err) != 0 ||
        ir_infer_shapes(im->graph, &err) != 0) {
        fprintf(stderr, "load failed: %s\n", err.msg);
        check_failures++;
        ir_model_free(im);
        im = NULL;
    }
    free(buf);
    return im;
}

static void expect_shape(ir_model *m, const char *name, ox_dtype dtype, int rank,
                         const int64_t *dims) {
    int v = ir_graph_find(m->graph, name);
    CHECK(v >= 0);
    if (v < 0) return;
    const ir_value *val = &m->graph->values[v];
    CHECK(val->has_type);
    CHECK(val->type.dtype == dtype);
    CHECK(val->type.rank == rank);
    for (int i = 0; i < rank && val->type.rank == rank; i++)
        if (val->type.dims[i] != dims[i]) {
            fprintf(stderr, "%s: dim %d is %lld, expected %lld\n", name, i,
                    (long long)val->type.dims[i], (long long)dims[i]);
            check_failures++;
        }
}

static mb_model *net(int64_t batch) {
    mb_model *m = mb_new(13);
    int64_t in[] = {batch, 3, 8, 8}, w[] = {4, 3, 3, 3}, w2[] = {64, 10}, out[] = {batch, 10};
    mb_input(m, "x", ONYX_FLOAT32, in, 4);
    mb_output(m, "y", ONYX_FLOAT32, out, 2);
    static float wd[4 * 3 * 3 * 3], w2d[640];
    mb_init_float(m, "w", w, 4, wd);
    mb_init_float(m, "w2", w2, 2, w2d);
    int64_t sd[] = {2}, shape[] = {0, -1};
    mb_init_int64(m, "shape", sd, 1, shape);
    mb_node(m, "Conv", "x,w", "c");
    int64_t pads[] = {1, 1, 1, 1}, strides[] = {2, 2};
    mb_attr_ints(m, "pads", pads, 4);
    mb_attr_ints(m, "strides", strides, 2);
    mb_node(m, "Relu", "c", "r");
    mb_node(m, "Flatten", "r", "f");
    mb_attr_int(m, "axis", 1);
    mb_node(m, "Reshape", "f,shape", "f2");
    mb_node(m, "MatMul", "f2,w2", "y");
    return m;
}

/* ox_attr_schema_find binary-searches the generated table: it must be
 * sorted by (domain, op, since_version), and the search must agree with a
 * plain scan for every entry, for versions between and before entries. */
static void test_attr_table_order(void) {
    for (int i = 1; i < OX_ATTR_SCHEMA_COUNT; i++) {
        const ox_attr_schema *a = &OX_ATTR_SCHEMAS[i - 1], *b = &OX_ATTR_SCHEMAS[i];
        int c = strcmp(a->domain, b->domain);
        if (!c) c = strcmp(a->op, b->op);
        CHECK(c < 0 || (c == 0 && a->since_version < b->since_version));
    }
    for (int i = 0; i < OX_ATTR_SCHEMA_COUNT; i++) {
        const ox_attr_schema *s = &OX_ATTR_SCHEMAS[i];
        for (int v = s->since_version - 1; v <= s->since_version + 1; v++) {
            const ox_attr_schema *want = NULL;
            for (int j = 0; j < OX_ATTR_SCHEMA_COUNT; j++) {
                const ox_attr_schema *t = &OX_ATTR_SCHEMAS[j];
                if (!strcmp(t->domain, s->domain) && !strcmp(t->op, s->op) && t->since_version <= v &&
                    (!want || t->since_version > want->since_version))
                    want = t;
            }
            CHECK(ox_attr_schema_find(s->domain, s->op, v) == want);
        }
    }
    CHECK(ox_attr_schema_find("", "NoSuchOp", 18) == NULL);
    CHECK(ox_attr_schema_find("", "Abs", 0) == NULL);
}

int main(void) {
    test_attr_table_order();
    mb_model *m = net(2);
    ir_model *im = load(m);
    mb_free(m);
    if (im) {
        expect_shape(im, "c", ONYX_FLOAT32, 4, (int64_t[]){2, 4, 4, 4});
        expect_shape(im, "r", ONYX_FLOAT32, 4, (int64_t[]){2, 4, 4, 4});
        expect_shape(im, "f", ONYX_FLOAT32, 2, (int64_t[]){2, 64});
        expect_shape(im, "f2", ONYX_FLOAT32, 2, (int64_t[]){2, 64});
        expect_shape(im, "y", ONYX_FLOAT32, 2, (int64_t[]){2, 10});
        ir_model_free(im);
    }
    /* symbolic batch: the batch stays unknown, the rest is inferred */
    m = net(-1);
    im = load(m);
    mb_free(m);
    if (im) {
        expect_shape(im, "c", ONYX_FLOAT32, 4, (int64_t[]){-1, 4, 4, 4});
        expect_shape(im, "r", ONYX_FLOAT32, 4, (int64_t[]){-1, 4, 4, 4});
        expect_shape(im, "y", ONYX_FLOAT32, 2, (int64_t[]){-1, 10});
        int v = ir_graph_find(im->graph, "x");
        CHECK(v >= 0 && im->graph->values[v].type.dim_params[0] &&
              strcmp(im->graph->values[v].type.dim_params[0], "batch") == 0);
        ir_model_free(im);
    }
    /* a Shape -> Gather -> Concat -> Reshape chain on constants resolves */
    m = mb_new(13);
    int64_t in[] = {2, 3, 4};
    mb_input(m, "x", ONYX_FLOAT32, in, 3);
    mb_output(m, "y", ONYX_FLOAT32, NULL, -1);
    int64_t one[] = {1}, idx0[] = {0}, minus1[] = {-1};
    mb_init_int64(m, "i0", one, 1, idx0);
    mb_init_int64(m, "m1", one, 1, minus1);
    mb_node(m, "Shape", "x", "s");
    mb_node(m, "Gather", "s,i0", "b");
    mb_node(m, "Concat", "b,m1", "target");
    mb_attr_int(m, "axis", 0);
    mb_node(m, "Reshape", "x,target", "y");
    /* inference alone cannot see Shape's value; constant folding can, so
     * this checks the shapes it can infer without running anything */
    im = load(m);
    mb_free(m);
    if (im) {
        expect_shape(im, "s", ONYX_INT64, 1, (int64_t[]){3});
        expect_shape(im, "b", ONYX_INT64, 1, (int64_t[]){1});
        expect_shape(im, "target", ONYX_INT64, 1, (int64_t[]){2});
        int v = ir_graph_find(im->graph, "y");
        CHECK(v >= 0 && im->graph->values[v].type.dtype == ONYX_FLOAT32);
        ir_model_free(im);
    }
    CHECK_DONE();
}
