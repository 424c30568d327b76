/* The model writer (src/format): every model of the ONNX 1.23 suite
 * survives load -> write -> load -> write as a fixed point and runs to
 * bitwise the same outputs as the file it came from (unseeded random
 * operators: the same kinds, types and shapes); an optimized session's
 * graph saves and runs to the same bits; subsets of a graph (plain, and an
 * If whose branches read outer values) run as models of their own and
 * reproduce the full model's values; sub-byte and string initializers are
 * packed as ONNX says; every attribute kind is written field by field;
 * what the writer cannot write is refused with a message. */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "check.h"
#include "format/writer.h"
#include "loader/loader.h"
#include "model_builder.h"
#include "session_util.h"
#include "onnx.pb-c.h"
#include "runtime/session.h"

static uint8_t *read_file(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *buf = malloc(n > 0 ? (size_t)n : 1);
    if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
        free(buf);
        buf = NULL;
    }
    fclose(f);
    *len = (size_t)n;
    return buf;
}

static onyx_status *open_session(onyx_env *env, const uint8_t *model, size_t len, const char *dir,
                                 onyx_session **s) {
    onyx_session_options *o = NULL;
    *s = NULL;
    onyx_status *st = onyx_session_options_create(&o);
    if (!st) st = onyx_session_options_set_threads(o, 1);
    if (!st && dir) st = onyx_session_options_set_external_data_dir(o, dir);
    if (!st) st = onyx_session_create_from_buffer(env, model, len, o, s);
    onyx_session_options_free(o);
    return st;
}

/* Bitwise equality of two values (tensors, sequences, optionals); with
 * shape_only, equal kinds, types and shapes. */
static int same_value(const onyx_tensor *a, const onyx_tensor *b, int shape_only) {
    if (!a || !b) return a == b;
    if (onyx_tensor_kind(a) != onyx_tensor_kind(b) || onyx_tensor_dtype(a) != onyx_tensor_dtype(b))
        return 0;
    if (onyx_tensor_kind(a) != ONYX_KIND_TENSOR) {
        size_t n = onyx_tensor_item_count(a);
        if (n != onyx_tensor_item_count(b)) return 0;
        for (size_t i = 0; i < n; i++)
            if (!same_value(onyx_tensor_item(a, i), onyx_tensor_item(b, i), shape_only)) return 0;
        return 1;
    }
    int r = onyx_tensor_rank(a);
    if (r != onyx_tensor_rank(b) ||
        (r > 0 && memcmp(onyx_tensor_dims(a), onyx_tensor_dims(b), (size_t)r * sizeof(int64_t))))
        return 0;
    if (shape_only) return 1;
    if (onyx_tensor_dtype(a) == ONYX_STRING) {
        for (int64_t i = 0; i < onyx_tensor_numel(a); i++)
            if (strcmp(onyx_tensor_string(a, i), onyx_tensor_string(b, i)) != 0) return 0;
        return 1;
    }
    size_t n = onyx_tensor_nbytes(a);
    return n == onyx_tensor_nbytes(b) &&
           (n == 0 || memcmp(onyx_tensor_data((onyx_tensor *)a), onyx_tensor_data((onyx_tensor *)b),
                             n) == 0);
}

typedef struct run_result {
    onyx_code code; /* ONYX_OK when the run succeeded */
    size_t n;
    onyx_tensor **outputs;
} run_result;

static int same_outputs(const run_result *a, const run_result *b, int shape_only) {
    if (a->n != b->n) return 0;
    for (size_t i = 0; i < a->n; i++)
        if (!same_value(a->outputs[i], b->outputs[i], shape_only)) return 0;
    return 1;
}

static void result_free(run_result *r) {
    for (size_t i = 0; i < r->n; i++) onyx_tensor_free(r->outputs[i]);
    free(r->outputs);
}

/* Runs s on test_data_set_0's inputs, bound as the conformance runner
 * binds them (by declared kind; bfloat16 stored as uint16 relabelled). */
static run_result run_dataset(onyx_session *s, const char *dir) {
    run_result r = {ONYX_OK, 0, NULL};
    size_t nin = onyx_session_input_count(s), nout = onyx_session_output_count(s);
    onyx_tensor **in = calloc(nin + 1, sizeof *in), **bound = calloc(nin + 1, sizeof *bound);
    const onyx_tensor **args = calloc(nin + 1, sizeof *args);
    const char **in_names = calloc(nin + 1, sizeof *in_names);
    const char **out_names = calloc(nout + 1, sizeof *out_names);
    r.outputs = calloc(nout + 1, sizeof *r.outputs);
    r.n = nout;
    onyx_status *st = NULL;
    for (size_t i = 0; i < nin && !st; i++) {
        onyx_value_info info;
        st = onyx_session_input_info(s, i, &info);
        if (st) break;
        in_names[i] = info.name;
        char path[4096];
        snprintf(path, sizeof path, "%s/test_data_set_0/input_%zu.pb", dir, i);
        st = onyx_tensor_load_kind(path, info.kind, &in[i]);
        if (st) break;
        args[i] = in[i];
        if (info.dtype == ONYX_BFLOAT16 && onyx_tensor_kind(in[i]) == ONYX_KIND_TENSOR &&
            onyx_tensor_dtype(in[i]) == ONYX_UINT16) {
            st = onyx_tensor_wrap(ONYX_BFLOAT16, onyx_tensor_dims(in[i]), onyx_tensor_rank(in[i]),
                                  onyx_tensor_data(in[i]), onyx_tensor_nbytes(in[i]), &bound[i]);
            args[i] = bound[i];
        }
    }
    for (size_t i = 0; i < nout && !st; i++) {
        onyx_value_info info;
        st = onyx_session_output_info(s, i, &info);
        if (!st) out_names[i] = info.name;
    }
    if (!st) st = onyx_session_run(s, in_names, args, nin, out_names, r.outputs, nout);
    if (st) {
        r.code = onyx_status_code(st);
        onyx_status_free(st);
    }
    for (size_t i = 0; i < nin; i++) {
        onyx_tensor_free(in[i]);
        onyx_tensor_free(bound[i]);
    }
    free(in);
    free(bound);
    free(args);
    free(in_names);
    free(out_names);
    return r;
}

/* Random operators without a seed attribute draw a new stream every run
 * (src/ep/cpu/kernels/random.c), in g or in any subgraph body. */
static int unseeded_random(const ir_graph *g) {
    static const char *const ops[] = {"RandomNormal", "RandomUniform", "RandomNormalLike",
                                      "RandomUniformLike", "Bernoulli", "Multinomial"};
    for (int i = 0; i < g->n_nodes; i++) {
        const ir_node *n = &g->nodes[i];
        for (size_t k = 0; k < sizeof ops / sizeof *ops; k++)
            if (strcmp(n->op_type, ops[k]) == 0 && !ir_node_attr(n, "seed")) return 1;
        for (int a = 0; a < n->n_attrs; a++) {
            const ir_attr *at = &n->attrs[a];
            if (at->type == IR_ATTR_GRAPH && at->g && unseeded_random(at->g)) return 1;
            for (size_t j = 0; at->type == IR_ATTR_GRAPHS && j < at->n; j++)
                if (unseeded_random(at->graphs[j])) return 1;
        }
    }
    return 0;
}

static int cmp_str(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

typedef struct suite_counts {
    int round_tripped, random, create_fails, run_fails, load_fails;
} suite_counts;

/* One suite model: fixed point of write o load, then both the file and
 * the written bytes run to bitwise-equal outputs. */
static void round_trip(onyx_env *env, const char *dir, const char *name, suite_counts *cnt) {
    char path[4096];
    snprintf(path, sizeof path, "%s/model.onnx", dir);
    size_t len = 0;
    uint8_t *orig = read_file(path, &len);
    if (!orig) return; /* a suite folder without a model */
    ox_error err = {0};
    ir_model *m1 = NULL, *m2 = NULL;
    uint8_t *w1 = NULL, *w2 = NULL;
    size_t l1 = 0, l2 = 0;
    onyx_session *so = NULL, *sw = NULL;
    if (ox_load_model(orig, len, dir, &m1, &err) != 0) {
        onyx_status *st = open_session(env, orig, len, dir, &so);
        if (!st) fprintf(stderr, "%s: the loader fails (%s) but a session opens\n", name, err.msg);
        CHECK(st != NULL);
        onyx_status_free(st);
        onyx_session_free(so);
        cnt->load_fails++;
        free(orig);
        return;
    }
    if (ox_model_write(m1, &w1, &l1, &err) != 0) {
        fprintf(stderr, "%s: write failed: %s\n", name, err.msg);
        CHECK(0);
        goto done;
    }
    if (ox_load_model(w1, l1, dir, &m2, &err) != 0) {
        fprintf(stderr, "%s: the written model does not load: %s\n", name, err.msg);
        CHECK(0);
        goto done;
    }
    if (ox_model_write(m2, &w2, &l2, &err) != 0) {
        fprintf(stderr, "%s: second write failed: %s\n", name, err.msg);
        CHECK(0);
        goto done;
    }
    if (l1 != l2 || memcmp(w1, w2, l1) != 0) {
        fprintf(stderr, "%s: writing is not a fixed point (%zu vs %zu bytes)\n", name, l1, l2);
        CHECK(0);
        goto done;
    }
    onyx_status *sto = open_session(env, orig, len, dir, &so);
    onyx_status *stw = open_session(env, w1, l1, dir, &sw);
    if (sto || stw) {
        /* skipped only when the file fails the same way */
        if (!sto || !stw || onyx_status_code(sto) != onyx_status_code(stw)) {
            fprintf(stderr, "%s: session from the file: %s; from the written model: %s\n", name,
                    sto ? onyx_status_message(sto) : "ok", stw ? onyx_status_message(stw) : "ok");
            CHECK(0);
        } else {
            printf("%s: skipped, no session from the file either: %s\n", name,
                   onyx_status_message(sto));
            cnt->create_fails++;
        }
        onyx_status_free(sto);
        onyx_status_free(stw);
        goto done;
    }
    run_result ro = run_dataset(so, dir), rw = run_dataset(sw, dir);
    if (ro.code != ONYX_OK || rw.code != ONYX_OK) {
        if (ro.code != rw.code) {
            fprintf(stderr, "%s: run of the file: code %d; of the written model: code %d\n", name,
                    (int)ro.code, (int)rw.code);
            CHECK(0);
        } else {
            printf("%s: skipped, the file's run fails the same way (code %d)\n", name, (int)ro.code);
            cnt->run_fails++;
        }
    } else if (unseeded_random(m1->graph)) {
        /* a fresh random stream each run: only the structure (kinds,
         * types, shapes) can be compared */
        CHECK(same_outputs(&ro, &rw, 1));
        cnt->random++;
    } else if (same_outputs(&ro, &rw, 0)) {
        cnt->round_tripped++;
    } else {
        fprintf(stderr, "%s: outputs differ between the file and the written model\n", name);
        CHECK(0);
    }
    result_free(&ro);
    result_free(&rw);
done:
    onyx_session_free(so);
    onyx_session_free(sw);
    ir_model_free(m1);
    ir_model_free(m2);
    free(w1);
    free(w2);
    free(orig);
}

/* Every model of one folder of the suite; returns how many round-tripped
 * with bitwise-equal outputs. */
static int test_folder(onyx_env *env, const char *suite, const char *folder) {
    char node_dir[1024];
    snprintf(node_dir, sizeof node_dir, "%s/%s", suite, folder);
    DIR *d = opendir(node_dir);
    if (!d) return -1;
    size_t n = 0, cap = 2048;
    char **names = malloc(cap * sizeof *names);
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.') continue;
        if (n == cap) names = realloc(names, (cap *= 2) * sizeof *names);
        names[n++] = strdup(e->d_name);
    }
    closedir(d);
    qsort(names, n, sizeof *names, cmp_str);
    suite_counts cnt = {0};
    for (size_t i = 0; i < n; i++) {
        char dir[2048];
        snprintf(dir, sizeof dir, "%s/%s", node_dir, names[i]);
        round_trip(env, dir, names[i], &cnt);
        free(names[i]);
    }
    free(names);
    printf("%s: %zu models: %d round-tripped with bitwise-equal outputs, %d nondeterministic "
           "(unseeded random operators: structure equal); skipped: %d the loader refuses, "
           "%d no session from the file either, %d the file's run fails the same way\n",
           folder, n, cnt.round_tripped, cnt.random, cnt.load_fails, cnt.create_fails,
           cnt.run_fails);
    return cnt.round_tripped;
}

static void test_suite(onyx_env *env, const char *suite) {
    int node = test_folder(env, suite, "node");
    if (node < 0) fprintf(stderr, "no suite at %s/node\n", suite);
    CHECK(node >= 1000);
    /* the suite's other folders, where the build wrote them */
    static const char *const more[] = {"simple", "pytorch-operator", "pytorch-converted", "real"};
    for (size_t i = 0; i < sizeof more / sizeof *more; i++) test_folder(env, suite, more[i]);
}

/* ---- subset ---- */

#define CH 3
#define HW 5

/* Conv -> Relu -> Add(constant) -> Softmax */
static uint8_t *make_chain(size_t *len) {
    mb_model *m = mb_conv_chain(CH, HW);
    uint8_t *buf = m ? mb_serialize(m, len) : NULL;
    mb_free(m);
    return buf;
}

typedef struct captured {
    onyx_tensor *c, *a; /* the Conv's and the Add's outputs */
} captured;

static onyx_tensor *copy_value(const onyx_tensor *v) {
    onyx_tensor *t = NULL;
    CHECK_OK(onyx_tensor_create(onyx_tensor_dtype(v), onyx_tensor_dims(v), onyx_tensor_rank(v), &t));
    if (t) memcpy(onyx_tensor_data(t), onyx_tensor_data((onyx_tensor *)v), onyx_tensor_nbytes(v));
    return t;
}

static void on_capture(void *user, size_t node, size_t out, const char *name,
                       const onyx_tensor *value) {
    (void)node;
    (void)out;
    captured *cap = user;
    if (strcmp(name, "c") == 0 && !cap->c) cap->c = copy_value(value);
    if (strcmp(name, "a") == 0 && !cap->a) cap->a = copy_value(value);
}

static void test_subset(onyx_env *env) {
    size_t len = 0;
    uint8_t *model = make_chain(&len);
    float x[CH * HW * HW];
    for (size_t i = 0; i < sizeof x / sizeof *x; i++) x[i] = (float)((int)(i * 7 % 13) - 6) * 0.3f;
    int64_t xd[4] = {1, CH, HW, HW};

    /* the full model at level none, every node's output captured */
    onyx_session_options *o = NULL;
    onyx_session *full = NULL;
    CHECK_OK(onyx_session_options_create(&o));
    CHECK_OK(onyx_session_options_set_threads(o, 1));
    CHECK_OK(onyx_session_options_set_optimization_level(o, ONYX_OPT_NONE));
    CHECK_OK(onyx_session_create_from_buffer(env, model, len, o, &full));
    captured cap = {0};
    onyx_run_options *ro = NULL;
    CHECK_OK(onyx_run_options_create(&ro));
    CHECK_OK(onyx_run_options_set_capture(ro, on_capture, &cap));
    onyx_tensor *xt = NULL, *y = NULL;
    CHECK_OK(onyx_tensor_wrap(ONYX_FLOAT32, xd, 4, x, sizeof x, &xt));
    const char *xn = "x", *yn = "y";
    CHECK_OK(onyx_session_run_with_options(full, ro, &xn, (const onyx_tensor *const *)&xt, 1, &yn,
                                           &y, 1));
    CHECK(cap.c && cap.a);

    /* keep {Relu, Add} of the session's graph, whose values inference
     * typed (as onyx check has it) */
    ox_error err = {0};
    uint8_t *sub = NULL;
    size_t sub_len = 0;
    if (full) {
        const ir_graph *g = full->graph;
        CHECK(g->n_nodes == 4);
        unsigned char keep[4] = {0};
        for (int i = 0; i < g->n_nodes && i < 4; i++)
            keep[i] = strcmp(g->nodes[i].op_type, "Relu") == 0 || strcmp(g->nodes[i].op_type, "Add") == 0;
        CHECK(keep[0] + keep[1] + keep[2] + keep[3] == 2);
        CHECK(ox_graph_write_subset(full->model, g, keep, &sub, &sub_len, &err) == 0);
        if (!sub) fprintf(stderr, "subset: %s\n", err.msg);
    }
    if (sub) {
        Onnx__ModelProto *mp = onnx__model_proto__unpack(NULL, sub_len, sub);
        CHECK(mp && mp->graph);
        if (mp && mp->graph) {
            const Onnx__GraphProto *gp = mp->graph;
            CHECK(gp->n_node == 2 && strcmp(gp->node[0]->op_type, "Relu") == 0 &&
                  strcmp(gp->node[1]->op_type, "Add") == 0);
            CHECK(gp->n_input == 1 && strcmp(gp->input[0]->name, "c") == 0);
            CHECK(gp->n_input == 1 && gp->input[0]->type && gp->input[0]->type->tensor_type &&
                  gp->input[0]->type->tensor_type->elem_type == ONYX_FLOAT32 &&
                  gp->input[0]->type->tensor_type->shape &&
                  gp->input[0]->type->tensor_type->shape->n_dim == 4 &&
                  gp->input[0]->type->tensor_type->shape->dim[1]->dim_value == CH);
            CHECK(gp->n_output == 1 && strcmp(gp->output[0]->name, "a") == 0);
            CHECK(gp->n_initializer == 1 && strcmp(gp->initializer[0]->name, "k") == 0);
            CHECK(mp->n_opset_import == 1 && mp->opset_import[0]->version == 17);
            CHECK(strcmp(mp->producer_name, "onyx") == 0);
        }
        onnx__model_proto__free_unpacked(mp, NULL);
        /* run the part on the captured Conv output: the Add's value, bitwise */
        onyx_session *part = NULL;
        CHECK_OK(onyx_session_create_from_buffer(env, sub, sub_len, o, &part));
        onyx_tensor *a = NULL;
        const char *cn = "c", *an = "a";
        if (part && cap.c && cap.a) {
            CHECK_OK(onyx_session_run(part, &cn, (const onyx_tensor *const *)&cap.c, 1, &an, &a, 1));
            CHECK(a && onyx_tensor_nbytes(a) == onyx_tensor_nbytes(cap.a) &&
                  memcmp(onyx_tensor_data(a), onyx_tensor_data(cap.a), onyx_tensor_nbytes(a)) == 0);
            /* and the values are what Relu and Add make */
            const float *cv = onyx_tensor_data(cap.c), *av = onyx_tensor_data(a);
            for (int i = 0; a && i < CH * HW * HW; i++)
                CHECK_NEAR(av[i], (cv[i] > 0 ? cv[i] : 0.0f) + ((float)(i % 11) * 0.125f - 0.5f),
                           0.0);
        }
        onyx_tensor_free(a);
        onyx_session_free(part);
    }
    free(sub);
    onyx_tensor_free(xt);
    onyx_tensor_free(y);
    onyx_tensor_free(cap.c);
    onyx_tensor_free(cap.a);
    onyx_run_options_free(ro);
    onyx_session_free(full);
    onyx_session_options_free(o);
    free(model);
}

/* ---- an optimized model ---- */

/* Conv -> Relu -> Reshape -> MatMul -> Add(k), k = b1 + b2 folded at
 * load: at level all the session's graph holds fused onyx-domain nodes
 * and a folded constant, which the writer must save as a model that runs
 * to the same bits. */
static uint8_t *make_foldable(size_t *len) {
    static float w[CH * CH * 9], b[CH], w2[CH * HW * HW * 2], b1[2] = {0.5f, -1.0f},
                                        b2[2] = {0.25f, 2.0f};
    for (size_t i = 0; i < sizeof w / sizeof *w; i++) w[i] = (float)((int)(i % 5) - 2) * 0.25f;
    for (int i = 0; i < CH; i++) b[i] = 0.125f * (float)i;
    for (size_t i = 0; i < sizeof w2 / sizeof *w2; i++) w2[i] = (float)((int)(i % 9) - 4) * 0.0625f;
    mb_model *m = mb_new(17);
    int64_t xd[4] = {1, CH, HW, HW}, wd[4] = {CH, CH, 3, 3}, bd[1] = {CH};
    int64_t w2d[2] = {CH * HW * HW, 2}, kd[1] = {2}, sd[1] = {2}, shape[2] = {1, -1}, yd[2] = {1, 2};
    int64_t pads[4] = {1, 1, 1, 1};
    mb_input(m, "x", 1, xd, 4);
    mb_output(m, "y", 1, yd, 2);
    mb_init_float(m, "w", wd, 4, w);
    mb_init_float(m, "b", bd, 1, b);
    mb_init_float(m, "w2", w2d, 2, w2);
    mb_init_float(m, "b1", kd, 1, b1);
    mb_init_float(m, "b2", kd, 1, b2);
    mb_init_int64(m, "shape", sd, 1, shape);
    mb_node(m, "Add", "b1,b2", "k");
    mb_node(m, "Conv", "x,w,b", "c");
    mb_attr_ints(m, "pads", pads, 4);
    mb_node(m, "Relu", "c", "r");
    mb_node(m, "Reshape", "r,shape", "f");
    mb_node(m, "MatMul", "f,w2", "mm");
    mb_node(m, "Add", "mm,k", "y");
    uint8_t *buf = mb_serialize(m, len);
    mb_free(m);
    return buf;
}

static void run_xy(onyx_session *s, const float *x, float *y) {
    int64_t xd[4] = {1, CH, HW, HW}, yd[2] = {1, 2};
    onyx_tensor *xt = NULL, *yt = NULL;
    CHECK_OK(onyx_tensor_wrap(ONYX_FLOAT32, xd, 4, (void *)x, CH * HW * HW * sizeof *x, &xt));
    CHECK_OK(onyx_tensor_wrap(ONYX_FLOAT32, yd, 2, y, 2 * sizeof *y, &yt));
    const char *xn = "x", *yn = "y";
    CHECK_OK(onyx_session_run(s, &xn, (const onyx_tensor *const *)&xt, 1, &yn, &yt, 1));
    onyx_tensor_free(xt);
    onyx_tensor_free(yt);
}

static void test_optimized(onyx_env *env) {
    size_t len = 0;
    uint8_t *model = make_foldable(&len);
    onyx_session *opt = tu_session(env, model, len, ONYX_OPT_ALL, 1);
    free(model);
    if (!opt) return;
    CHECK(opt->graph->n_nodes < 6); /* something was fused and folded */
    ox_error err = {0};
    uint8_t *w = NULL;
    size_t wl = 0;
    CHECK(ox_model_write(opt->model, &w, &wl, &err) == 0);
    if (!w) fprintf(stderr, "writing the optimized model: %s\n", err.msg);
    if (w) {
        Onnx__ModelProto *mp = onnx__model_proto__unpack(NULL, wl, w);
        CHECK(mp && mp->graph);
        int folded = 0, onyx_domain = 0;
        for (size_t i = 0; mp && mp->graph && i < mp->graph->n_initializer; i++)
            folded |= strcmp(mp->graph->initializer[i]->name, "k") == 0;
        for (size_t i = 0; mp && mp->graph && i < mp->graph->n_node; i++)
            onyx_domain |= mp->graph->node[i]->domain && strcmp(mp->graph->node[i]->domain, "onyx") == 0;
        CHECK(folded);      /* the folded Add is an initializer */
        CHECK(onyx_domain); /* fused nodes keep their domain */
        onnx__model_proto__free_unpacked(mp, NULL);
        float x[CH * HW * HW], y_opt[2], y_none[2], y_all[2];
        for (size_t i = 0; i < sizeof x / sizeof *x; i++) x[i] = (float)((int)(i * 5 % 17) - 8) * 0.2f;
        run_xy(opt, x, y_opt);
        /* the saved graph runs as it was, and optimizing it again changes
         * nothing that shows */
        onyx_session *none = tu_session(env, w, wl, ONYX_OPT_NONE, 1);
        onyx_session *all = tu_session(env, w, wl, ONYX_OPT_ALL, 1);
        if (none && all) {
            run_xy(none, x, y_none);
            run_xy(all, x, y_all);
            CHECK(memcmp(y_opt, y_none, sizeof y_opt) == 0);
            CHECK(memcmp(y_opt, y_all, sizeof y_opt) == 0);
        }
        onyx_session_free(none);
        onyx_session_free(all);
    }
    free(w);
    onyx_session_free(opt);
}

/* A kept If whose branches read, from the main graph, a value an
 * unkept node makes (it becomes an input) and a constant (an
 * initializer): x -> Neg -> n; If(cond) then Add(n, k) else Sub(n, k). */
static void test_subset_outer_reads(onyx_env *env) {
    static const float k[2] = {0.5f, -3.0f};
    int64_t d[1] = {2};
    mb_model *then_b = mb_new(17), *else_b = mb_new(17), *m = mb_new(17);
    mb_output(then_b, "to", 1, d, 1);
    mb_node(then_b, "Add", "n,k", "to");
    mb_output(else_b, "eo", 1, d, 1);
    mb_node(else_b, "Sub", "n,k", "eo");
    mb_input(m, "x", 1, d, 1);
    mb_input(m, "cond", ONYX_BOOL, NULL, 0);
    mb_output(m, "y", 1, d, 1);
    mb_init_float(m, "k", d, 1, k);
    mb_node(m, "Neg", "x", "n");
    mb_node(m, "If", "cond", "y");
    mb_attr_graph(m, "then_branch", then_b);
    mb_attr_graph(m, "else_branch", else_b);
    size_t len = 0;
    uint8_t *model = mb_serialize(m, &len);
    mb_free(m);
    onyx_session *full = tu_session(env, model, len, ONYX_OPT_NONE, 1);
    free(model);
    if (!full) return;
    uint8_t *sub = NULL;
    size_t sub_len = 0;
    ox_error err = {0};
    CHECK(full->graph->n_nodes == 2 && strcmp(full->graph->nodes[1].op_type, "If") == 0);
    unsigned char keep[2] = {0, 1};
    CHECK(ox_graph_write_subset(full->model, full->graph, keep, &sub, &sub_len, &err) == 0);
    Onnx__ModelProto *mp = sub ? onnx__model_proto__unpack(NULL, sub_len, sub) : NULL;
    CHECK(mp && mp->graph);
    if (mp && mp->graph) {
        const Onnx__GraphProto *gp = mp->graph;
        /* first use: the node's own input, then what its branches read */
        CHECK(gp->n_input == 2 && strcmp(gp->input[0]->name, "cond") == 0 &&
              strcmp(gp->input[1]->name, "n") == 0);
        CHECK(gp->n_initializer == 1 && strcmp(gp->initializer[0]->name, "k") == 0);
        CHECK(gp->n_output == 1 && strcmp(gp->output[0]->name, "y") == 0);
        CHECK(gp->n_node == 1 && gp->node[0]->n_attribute == 2);
    }
    onnx__model_proto__free_unpacked(mp, NULL);
    onyx_session *part = sub ? tu_session(env, sub, sub_len, ONYX_OPT_NONE, 1) : NULL;
    for (int c = 0; part && c < 2; c++) {
        float x[2] = {1.25f, -2.5f}, n[2] = {-1.25f, 2.5f}, y_full[2], y_part[2];
        uint8_t cond = (uint8_t)c;
        onyx_tensor *xt = NULL, *nt = NULL, *ct = NULL, *yf = NULL, *yp = NULL;
        CHECK_OK(onyx_tensor_wrap(ONYX_FLOAT32, d, 1, x, sizeof x, &xt));
        CHECK_OK(onyx_tensor_wrap(ONYX_FLOAT32, d, 1, n, sizeof n, &nt));
        CHECK_OK(onyx_tensor_wrap(ONYX_BOOL, NULL, 0, &cond, 1, &ct));
        CHECK_OK(onyx_tensor_wrap(ONYX_FLOAT32, d, 1, y_full, sizeof y_full, &yf));
        CHECK_OK(onyx_tensor_wrap(ONYX_FLOAT32, d, 1, y_part, sizeof y_part, &yp));
        const char *full_in[2] = {"x", "cond"}, *part_in[2] = {"cond", "n"}, *yn = "y";
        const onyx_tensor *full_args[2] = {xt, ct}, *part_args[2] = {ct, nt};
        CHECK_OK(onyx_session_run(full, full_in, full_args, 2, &yn, &yf, 1));
        CHECK_OK(onyx_session_run(part, part_in, part_args, 2, &yn, &yp, 1));
        CHECK(memcmp(y_full, y_part, sizeof y_full) == 0);
        CHECK(y_part[1] == (c ? 2.5f + k[1] : 2.5f - k[1]));
        onyx_tensor_free(xt);
        onyx_tensor_free(nt);
        onyx_tensor_free(ct);
        onyx_tensor_free(yf);
        onyx_tensor_free(yp);
    }
    onyx_session_free(part);
    onyx_session_free(full);
    free(sub);
}

/* ---- sub-byte and string initializers ---- */

static const int8_t INT4_VALUES[5] = {1, -2, 3, -8, 7};
static const char *const STRINGS[3] = {"", "onyx", "a longer string, with a comma"};

/* Cast(q: int4[5] -> float) and Identity(s: string[3]), both initializers
 * set in the IR (the builder has no int4 or string initializers). */
static ir_model *make_typed_model(void) {
    mb_model *mb = mb_new(21);
    int64_t qd[1] = {5}, sd[1] = {3};
    mb_output(mb, "f", 1, qd, 1);
    mb_output(mb, "t", ONYX_STRING, sd, 1);
    mb_node(mb, "Cast", "q", "f");
    mb_attr_int(mb, "to", 1);
    mb_node(mb, "Identity", "s", "t");
    size_t len = 0;
    uint8_t *buf = mb_serialize(mb, &len);
    mb_free(mb);
    ox_error err = {0};
    ir_model *m = NULL;
    CHECK(ox_load_model(buf, len, NULL, &m, &err) == 0);
    free(buf);
    if (!m) return NULL;
    ox_tensor *q = ox_tensor_new(ONYX_INT4, qd, 1, &err);
    ox_tensor *s = ox_tensor_new(ONYX_STRING, sd, 1, &err);
    CHECK(q && s);
    if (!q || !s) {
        ox_tensor_free(q);
        ox_tensor_free(s);
        ir_model_free(m);
        return NULL;
    }
    memcpy(q->data, INT4_VALUES, sizeof INT4_VALUES);
    char **sv = s->data;
    for (int i = 0; i < 3; i++) {
        free(sv[i]);
        sv[i] = strdup(STRINGS[i]);
    }
    ir_value_set_constant(m->graph, ir_graph_find(m->graph, "q"), q);
    ir_value_set_constant(m->graph, ir_graph_find(m->graph, "s"), s);
    return m;
}

static void test_typed_initializers(onyx_env *env) {
    ir_model *m = make_typed_model();
    if (!m) return;
    ox_error err = {0};
    uint8_t *w1 = NULL, *w2 = NULL;
    size_t l1 = 0, l2 = 0;
    CHECK(ox_model_write(m, &w1, &l1, &err) == 0);
    Onnx__ModelProto *mp = w1 ? onnx__model_proto__unpack(NULL, l1, w1) : NULL;
    CHECK(mp && mp->graph && mp->graph->n_initializer == 2);
    if (mp && mp->graph && mp->graph->n_initializer == 2) {
        /* two int4 per byte, first in the low nibble; the odd last one
         * leaves the high nibble zero */
        const Onnx__TensorProto *q = mp->graph->initializer[0], *s = mp->graph->initializer[1];
        static const uint8_t packed[3] = {0xE1, 0x83, 0x07};
        CHECK(strcmp(q->name, "q") == 0 && q->data_type == ONYX_INT4 && q->n_dims == 1 &&
              q->dims[0] == 5);
        CHECK(q->has_raw_data && q->raw_data.len == 3 && memcmp(q->raw_data.data, packed, 3) == 0);
        CHECK(strcmp(s->name, "s") == 0 && s->data_type == ONYX_STRING && !s->has_raw_data);
        CHECK(s->n_string_data == 3);
        for (size_t i = 0; i < 3 && i < s->n_string_data; i++)
            CHECK(s->string_data[i].len == strlen(STRINGS[i]) &&
                  (s->string_data[i].len == 0 || /* protobuf-c leaves "" without data */
                   memcmp(s->string_data[i].data, STRINGS[i], s->string_data[i].len) == 0));
    }
    onnx__model_proto__free_unpacked(mp, NULL);
    /* read back: same values, and a fixed point */
    ir_model *back = NULL;
    if (w1) CHECK(ox_load_model(w1, l1, NULL, &back, &err) == 0);
    if (back) {
        const ir_value *q = &back->graph->values[ir_graph_find(back->graph, "q")];
        const ir_value *s = &back->graph->values[ir_graph_find(back->graph, "s")];
        CHECK(q->init && q->init->dtype == ONYX_INT4 && memcmp(q->init->data, INT4_VALUES, 5) == 0);
        CHECK(s->init && s->init->dtype == ONYX_STRING);
        for (int i = 0; s->init && i < 3; i++)
            CHECK(strcmp(((char **)s->init->data)[i], STRINGS[i]) == 0);
        CHECK(ox_model_write(back, &w2, &l2, &err) == 0);
        CHECK(l1 == l2 && w2 && memcmp(w1, w2, l1) == 0);
    }
    /* and it runs */
    onyx_session *s = NULL;
    if (w1) CHECK_OK(open_session(env, w1, l1, NULL, &s));
    if (s) {
        const char *names[2] = {"f", "t"};
        onyx_tensor *out[2] = {NULL, NULL};
        CHECK_OK(onyx_session_run(s, NULL, NULL, 0, names, out, 2));
        for (int i = 0; out[0] && i < 5; i++)
            CHECK(((const float *)onyx_tensor_data(out[0]))[i] == (float)INT4_VALUES[i]);
        for (int i = 0; out[1] && i < 3; i++) CHECK(strcmp(onyx_tensor_string(out[1], i), STRINGS[i]) == 0);
        onyx_tensor_free(out[0]);
        onyx_tensor_free(out[1]);
        onyx_session_free(s);
    }
    ir_model_free(back);
    free(w1);
    free(w2);
    ir_model_free(m);
}

/* ---- every attribute kind ---- */

/* A body graph "bi -> Add(bi, outer_v) -> bo" whose outer_v is defined
 * nowhere in it (an outer-scope read), parented to `parent`. */
static ir_graph *make_body(ir_graph *parent, const char *name) {
    mb_model *b = mb_new(21);
    int64_t d[1] = {1};
    mb_input(b, "bi", 1, d, 1);
    mb_output(b, "bo", 1, d, 1);
    mb_node(b, "Add", "bi,outer_v", "bo");
    size_t len = 0;
    uint8_t *buf = mb_serialize(b, &len);
    mb_free(b);
    ox_error err = {0};
    ir_model *m = NULL;
    CHECK(ox_load_model(buf, len, NULL, &m, &err) == 0);
    free(buf);
    if (!m) return NULL;
    ir_graph *g = m->graph;
    m->graph = NULL;
    ir_model_free(m);
    g->parent = parent;
    free(g->name);
    g->name = strdup(name);
    return g;
}

static ox_tensor *small_tensor(float v) {
    int64_t d[1] = {2};
    ox_tensor *t = ox_tensor_new(ONYX_FLOAT32, d, 1, NULL);
    if (t) ((float *)t->data)[0] = v, ((float *)t->data)[1] = -v;
    return t;
}

static const char STRING_WITH_NULS[5] = {'a', 0, 'b', 0, 'c'};

/* Adds one attribute of every kind the writer knows to node n. */
static void add_every_attr(ir_graph *g, ir_node *n) {
    ir_attr *grown = realloc(n->attrs, ((size_t)n->n_attrs + 11) * sizeof *grown);
    CHECK(grown != NULL);
    if (!grown) return;
    n->attrs = grown;
    ir_attr *a = &n->attrs[n->n_attrs];
    memset(a, 0, 11 * sizeof *a);
    a[0] = (ir_attr){.name = strdup("f"), .type = IR_ATTR_FLOAT, .f = 1.5f};
    a[1] = (ir_attr){.name = strdup("i"), .type = IR_ATTR_INT, .i = -7};
    a[2] = (ir_attr){.name = strdup("s"), .type = IR_ATTR_STRING, .s = malloc(6), .s_len = 5};
    memcpy(a[2].s, STRING_WITH_NULS, 5);
    a[2].s[5] = '\0';
    a[3] = (ir_attr){.name = strdup("t"), .type = IR_ATTR_TENSOR, .t = small_tensor(2.0f)};
    a[4] = (ir_attr){.name = strdup("g"), .type = IR_ATTR_GRAPH, .g = make_body(g, "then")};
    a[5] = (ir_attr){.name = strdup("fs"), .type = IR_ATTR_FLOATS, .n = 2,
                     .floats = malloc(2 * sizeof(float))};
    a[5].floats[0] = 0.25f, a[5].floats[1] = -4.0f;
    a[6] = (ir_attr){.name = strdup("is"), .type = IR_ATTR_INTS, .n = 3,
                     .ints = malloc(3 * sizeof(int64_t))};
    a[6].ints[0] = 1, a[6].ints[1] = INT64_MIN, a[6].ints[2] = INT64_MAX;
    a[7] = (ir_attr){.name = strdup("ss"), .type = IR_ATTR_STRINGS, .n = 2,
                     .strings = calloc(2, sizeof(char *))};
    a[7].strings[0] = strdup("x"), a[7].strings[1] = strdup("");
    a[8] = (ir_attr){.name = strdup("ts"), .type = IR_ATTR_TENSORS, .n = 2,
                     .tensors = calloc(2, sizeof(ox_tensor *))};
    a[8].tensors[0] = small_tensor(3.0f), a[8].tensors[1] = small_tensor(4.0f);
    a[9] = (ir_attr){.name = strdup("gs"), .type = IR_ATTR_GRAPHS, .n = 2,
                     .graphs = calloc(2, sizeof(ir_graph *))};
    a[9].graphs[0] = make_body(g, "first"), a[9].graphs[1] = make_body(g, "second");
    a[10] = (ir_attr){.name = strdup("tp"), .type = IR_ATTR_TYPE_PROTO,
                      .type_proto = {.kind = OX_KIND_SEQUENCE, .dtype = ONYX_FLOAT16, .rank = -1}};
    n->n_attrs += 11;
}

static const Onnx__AttributeProto *find_attr(const Onnx__NodeProto *np, const char *name) {
    for (size_t i = 0; i < np->n_attribute; i++)
        if (strcmp(np->attribute[i]->name, name) == 0) return np->attribute[i];
    return NULL;
}

static int body_ok(const Onnx__GraphProto *b, const char *name) {
    /* the outer-scope read stays a name: no input or initializer for it */
    return b && strcmp(b->name, name) == 0 && b->n_input == 1 && strcmp(b->input[0]->name, "bi") == 0 &&
           b->n_initializer == 0 && b->n_node == 1 && b->node[0]->n_input == 2 &&
           strcmp(b->node[0]->input[1], "outer_v") == 0 && b->n_output == 1;
}

static int tensor_ok(const Onnx__TensorProto *t, float v) {
    float want[2] = {v, -v};
    return t && t->data_type == ONYX_FLOAT32 && t->n_dims == 1 && t->dims[0] == 2 &&
           t->raw_data.len == sizeof want && memcmp(t->raw_data.data, want, sizeof want) == 0;
}

static void test_attribute_kinds(void) {
    ir_model *m = make_typed_model();
    if (!m) return;
    add_every_attr(m->graph, &m->graph->nodes[1]);
    ox_error err = {0};
    uint8_t *w1 = NULL, *w2 = NULL;
    size_t l1 = 0, l2 = 0;
    CHECK(ox_model_write(m, &w1, &l1, &err) == 0);
    Onnx__ModelProto *mp = w1 ? onnx__model_proto__unpack(NULL, l1, w1) : NULL;
    CHECK(mp && mp->graph && mp->graph->n_node == 2);
    if (mp && mp->graph && mp->graph->n_node == 2) {
        const Onnx__NodeProto *np = mp->graph->node[1];
        const Onnx__AttributeProto *a;
        a = find_attr(np, "f");
        CHECK(a && a->type == ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT && a->f == 1.5f);
        a = find_attr(np, "i");
        CHECK(a && a->type == ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT && a->i == -7);
        a = find_attr(np, "s");
        CHECK(a && a->type == ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING && a->s.len == 5 &&
              memcmp(a->s.data, STRING_WITH_NULS, 5) == 0);
        a = find_attr(np, "t");
        CHECK(a && a->type == ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR && tensor_ok(a->t, 2.0f));
        a = find_attr(np, "g");
        CHECK(a && a->type == ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPH && body_ok(a->g, "then"));
        a = find_attr(np, "fs");
        CHECK(a && a->type == ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOATS && a->n_floats == 2 &&
              a->floats[0] == 0.25f && a->floats[1] == -4.0f);
        a = find_attr(np, "is");
        CHECK(a && a->type == ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS && a->n_ints == 3 &&
              a->ints[1] == INT64_MIN && a->ints[2] == INT64_MAX);
        a = find_attr(np, "ss");
        CHECK(a && a->type == ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRINGS && a->n_strings == 2 &&
              a->strings[0].len == 1 && a->strings[0].data[0] == 'x' && a->strings[1].len == 0);
        a = find_attr(np, "ts");
        CHECK(a && a->type == ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSORS && a->n_tensors == 2 &&
              tensor_ok(a->tensors[0], 3.0f) && tensor_ok(a->tensors[1], 4.0f));
        a = find_attr(np, "gs");
        CHECK(a && a->type == ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPHS && a->n_graphs == 2 &&
              body_ok(a->graphs[0], "first") && body_ok(a->graphs[1], "second"));
        a = find_attr(np, "tp");
        CHECK(a && a->type == ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TYPE_PROTO && a->tp &&
              a->tp->value_case == ONNX__TYPE_PROTO__VALUE_SEQUENCE_TYPE &&
              a->tp->sequence_type->elem_type &&
              a->tp->sequence_type->elem_type->value_case == ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE &&
              a->tp->sequence_type->elem_type->tensor_type->elem_type == ONYX_FLOAT16 &&
              !a->tp->sequence_type->elem_type->tensor_type->shape);
    }
    onnx__model_proto__free_unpacked(mp, NULL);
    /* read back and written again: the same bytes */
    ir_model *back = NULL;
    if (w1) CHECK(ox_load_model(w1, l1, NULL, &back, &err) == 0);
    if (back) {
        const ir_attr *s = ir_node_attr(&back->graph->nodes[1], "s");
        CHECK(s && s->s_len == 5 && memcmp(s->s, STRING_WITH_NULS, 5) == 0);
        CHECK(ox_model_write(back, &w2, &l2, &err) == 0);
        CHECK(w2 && l1 == l2 && memcmp(w1, w2, l1) == 0);
    }
    ir_model_free(back);
    free(w1);
    free(w2);
    ir_model_free(m);
}

/* ---- refusals ---- */

static void test_refusals(void) {
    ir_model *m = make_typed_model();
    if (!m) return;
    ox_error err = {0};
    uint8_t *out = NULL;
    size_t len = 0;
    /* past protobuf's 2 GiB: refused before any byte of it is read (the
     * header claims 2 GiB + 4 over a one-element buffer) */
    static float one;
    int64_t big[1] = {((int64_t)1 << 29) + 1};
    ox_tensor *huge = ox_tensor_wrap(ONYX_FLOAT32, big, 1, &one, &err);
    CHECK(huge != NULL);
    int v = ir_graph_value(m->graph, "huge", &err);
    if (huge && v >= 0) {
        ir_value_set_constant(m->graph, v, huge);
        CHECK(ox_model_write(m, &out, &len, &err) != 0 && out == NULL);
        CHECK(err.code == ONYX_NOT_IMPLEMENTED && strstr(err.msg, "2 GiB") && strstr(err.msg, "huge"));
        ox_tensor_free(huge);
        m->graph->values[v].init = NULL;
    }
    /* a sparse tensor attribute */
    ir_node *cast = &m->graph->nodes[0];
    ir_attr_type saved = cast->attrs[0].type;
    cast->attrs[0].type = IR_ATTR_SPARSE_TENSOR;
    memset(&err, 0, sizeof err);
    CHECK(ox_model_write(m, &out, &len, &err) != 0 && out == NULL);
    CHECK(err.code == ONYX_NOT_IMPLEMENTED && strstr(err.msg, "sparse") && strstr(err.msg, "'to'"));
    cast->attrs[0].type = saved;
    /* a subset of a subgraph, or with no mask */
    unsigned char keep[2] = {1, 1};
    CHECK(ox_graph_write_subset(m, m->graph, NULL, &out, &len, &err) != 0);
    ir_graph *sub = ir_graph_new("body", m->graph);
    CHECK(ox_graph_write_subset(m, sub, keep, &out, &len, &err) != 0 && strstr(err.msg, "body"));
    ir_graph_free(sub);
    ir_model_free(m);
}

int main(int argc, char **argv) {
    onyx_env *env = NULL;
    CHECK_OK(onyx_env_create(&env));
    CHECK_OK(onyx_env_set_log_level(env, ONYX_LOG_ERROR));
    test_typed_initializers(env);
    test_refusals();
    test_attribute_kinds();
    test_subset(env);
    test_optimized(env);
    test_subset_outer_reads(env);
    if (argc > 1)
        test_suite(env, argv[1]);
    else {
        fprintf(stderr, "usage: test_format_writer SUITE_DIR\n");
        CHECK(0);
    }
    onyx_env_free(env);
    printf("%s (%d failures)\n", check_failures ? "FAILED" : "ok", check_failures);
    return check_failures ? 1 : 0;
}
