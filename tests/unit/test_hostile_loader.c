/* Hostile model files at the loader: external data that tries to leave
 * the model's folder (symbolic links to files or folders outside, through
 * initializers, Constant attributes and If branches) or names a FIFO or a
 * folder; offsets past the end; messages nested deep enough to exhaust
 * protobuf-c's recursive unpacker (If in If, TypeProto in TypeProto,
 * SequenceProto in SequenceProto); an output typed twice (a leak under
 * LeakSanitizer). Models are written as protobuf wire bytes here, so any
 * shape of message can be made. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"

/* ---- protobuf wire writer ---- */

typedef struct pb {
    uint8_t *b;
    size_t n, cap;
} pb;

static void pb_put(pb *p, const void *data, size_t n) {
    if (p->n + n > p->cap) {
        size_t cap = p->cap ? p->cap : 64;
        while (cap < p->n + n) cap *= 2;
        uint8_t *nb = realloc(p->b, cap);
        if (!nb) {
            fprintf(stderr, "out of memory\n");
            exit(2);
        }
        p->b = nb;
        p->cap = cap;
    }
    if (n) memcpy(p->b + p->n, data, n);
    p->n += n;
}

static void pb_varint(pb *p, uint64_t v) {
    uint8_t tmp[10];
    size_t n = 0;
    do {
        tmp[n] = (uint8_t)(v & 0x7f);
        v >>= 7;
        if (v) tmp[n] |= 0x80;
        n++;
    } while (v);
    pb_put(p, tmp, n);
}

static void pb_int(pb *p, int field, int64_t v) {
    pb_varint(p, (uint64_t)field << 3);
    pb_varint(p, (uint64_t)v);
}

static void pb_bytes(pb *p, int field, const void *data, size_t n) {
    pb_varint(p, (uint64_t)field << 3 | 2);
    pb_varint(p, n);
    pb_put(p, data, n);
}

static void pb_str(pb *p, int field, const char *s) { pb_bytes(p, field, s, strlen(s)); }

/* Appends `inner` as message field `field` and frees it. */
static void pb_msg(pb *p, int field, pb *inner) {
    pb_bytes(p, field, inner->b, inner->n);
    free(inner->b);
    *inner = (pb){0};
}

/* ---- ONNX messages (field numbers from onnx.proto) ---- */

enum { T_FLOAT = 1, T_BOOL = 9 };

/* TypeProto of a float tensor; dim < 0 writes dim_param "batch". */
static pb tensor_type(int elem, const int64_t *dims, int rank) {
    pb shape = {0}, tt = {0}, tp = {0};
    for (int i = 0; i < rank; i++) {
        pb d = {0};
        if (dims[i] < 0)
            pb_str(&d, 2, "batch");
        else
            pb_int(&d, 1, dims[i]);
        pb_msg(&shape, 1, &d);
    }
    pb_int(&tt, 1, elem);
    if (rank >= 0) pb_msg(&tt, 2, &shape);
    free(shape.b);
    pb_msg(&tp, 1, &tt);
    return tp;
}

static pb value_info(const char *name, int elem, const int64_t *dims, int rank) {
    pb vi = {0};
    pb_str(&vi, 1, name);
    pb t = tensor_type(elem, dims, rank);
    pb_msg(&vi, 2, &t);
    return vi;
}

/* A float tensor [n] whose bytes live in `location` at `offset`. */
static pb external_tensor(const char *name, int64_t n, const char *location, const char *offset) {
    pb t = {0}, kv = {0};
    pb_int(&t, 1, n);
    pb_int(&t, 2, T_FLOAT);
    pb_str(&t, 8, name);
    pb_str(&kv, 1, "location");
    pb_str(&kv, 2, location);
    pb_msg(&t, 13, &kv);
    if (offset) {
        pb_str(&kv, 1, "offset");
        pb_str(&kv, 2, offset);
        pb_msg(&t, 13, &kv);
    }
    pb_int(&t, 14, 1); /* data_location EXTERNAL */
    return t;
}

static pb node(const char *op, const char *in0, const char *in1, const char *out) {
    pb n = {0};
    if (in0) pb_str(&n, 1, in0);
    if (in1) pb_str(&n, 1, in1);
    pb_str(&n, 2, out);
    pb_str(&n, 4, op);
    return n;
}

static void attr_tensor(pb *n, const char *name, pb *tensor) {
    pb a = {0};
    pb_str(&a, 1, name);
    pb_int(&a, 20, 4); /* TENSOR */
    pb_msg(&a, 5, tensor);
    pb_msg(n, 5, &a);
}

static void attr_graph(pb *n, const char *name, pb *graph) {
    pb a = {0};
    pb_str(&a, 1, name);
    pb_int(&a, 20, 5); /* GRAPH */
    pb_msg(&a, 6, graph);
    pb_msg(n, 5, &a);
}

static pb model(pb *graph) {
    pb m = {0}, os = {0};
    pb_int(&m, 1, 8);
    pb_int(&os, 2, 13);
    pb_msg(&m, 8, &os);
    pb_msg(&m, 7, graph);
    return m;
}

/* ---- files ---- */

static char root[128]; /* mkdtemp folder; the model folder is root/m */
static char mdir[256];

static void write_file(const char *path, const void *data, size_t n) {
    FILE *f = fopen(path, "wb");
    CHECK(f && fwrite(data, 1, n, f) == n);
    if (f) fclose(f);
}

static void write_floats(const char *dir, const char *name, const float *v, size_t n) {
    char path[600];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    write_file(path, v, n * sizeof *v);
}

static const char *model_path(void) {
    static char path[400];
    snprintf(path, sizeof path, "%s/model.onnx", mdir);
    return path;
}

static void save(pb *m) {
    write_file(model_path(), m->b, m->n);
    free(m->b);
    *m = (pb){0};
}

/* y = x + w, x and w float [2], w's bytes in `location`. */
static pb init_model(const char *location, const char *offset) {
    pb g = {0};
    int64_t d[] = {2};
    pb w = external_tensor("w", 2, location, offset);
    pb_msg(&g, 5, &w);
    pb n = node("Add", "x", "w", "y");
    pb_msg(&g, 1, &n);
    pb_str(&g, 2, "g");
    pb x = value_info("x", T_FLOAT, d, 1), y = value_info("y", T_FLOAT, d, 1);
    pb_msg(&g, 11, &x);
    pb_msg(&g, 12, &y);
    return model(&g);
}

/* y = x + c, c from a Constant node whose value attribute is external. */
static pb constant_model(const char *location) {
    pb g = {0};
    int64_t d[] = {2};
    pb t = external_tensor("c_value", 2, location, NULL);
    pb c = node("Constant", NULL, NULL, "c");
    attr_tensor(&c, "value", &t);
    pb_msg(&g, 1, &c);
    pb n = node("Add", "x", "c", "y");
    pb_msg(&g, 1, &n);
    pb_str(&g, 2, "g");
    pb x = value_info("x", T_FLOAT, d, 1), y = value_info("y", T_FLOAT, d, 1);
    pb_msg(&g, 11, &x);
    pb_msg(&g, 12, &y);
    return model(&g);
}

/* y = If(cond) { branch initializer w (external) } else { x } */
static pb if_model(const char *location) {
    int64_t d[] = {2};
    pb then_g = {0}, else_g = {0}, g = {0};
    pb w = external_tensor("w_then", 2, location, NULL);
    pb_msg(&then_g, 5, &w);
    pb n = node("Identity", "w_then", NULL, "t_out");
    pb_msg(&then_g, 1, &n);
    pb_str(&then_g, 2, "then");
    pb to = value_info("t_out", T_FLOAT, d, 1);
    pb_msg(&then_g, 12, &to);
    n = node("Identity", "x", NULL, "e_out");
    pb_msg(&else_g, 1, &n);
    pb_str(&else_g, 2, "else");
    pb eo = value_info("e_out", T_FLOAT, d, 1);
    pb_msg(&else_g, 12, &eo);
    pb iff = node("If", "cond", NULL, "y");
    attr_graph(&iff, "then_branch", &then_g);
    attr_graph(&iff, "else_branch", &else_g);
    pb_msg(&g, 1, &iff);
    pb_str(&g, 2, "g");
    pb c = value_info("cond", T_BOOL, NULL, 0);
    pb x = value_info("x", T_FLOAT, d, 1), y = value_info("y", T_FLOAT, d, 1);
    pb_msg(&g, 11, &c);
    pb_msg(&g, 11, &x);
    pb_msg(&g, 12, &y);
    return model(&g);
}

/* Runs y = f(x) with x = {10, 20} (and cond) and returns y. */
static int run_model(onyx_session *s, int with_cond, int cond, float y[2]) {
    float x[2] = {10, 20};
    uint8_t c = (uint8_t)cond;
    int64_t d[] = {2};
    onyx_tensor *in[2] = {NULL, NULL}, *ty = NULL;
    const char *names[2] = {"x", "cond"}, *out = "y";
    CHECK_OK(onyx_tensor_wrap(ONYX_FLOAT32, d, 1, x, sizeof x, &in[0]));
    CHECK_OK(onyx_tensor_wrap(ONYX_BOOL, NULL, 0, &c, 1, &in[1]));
    onyx_status *st = onyx_session_run(s, names, (const onyx_tensor *const *)in, with_cond ? 2 : 1,
                                       &out, &ty, 1);
    int ok = st == NULL && ty != NULL;
    if (st) {
        fprintf(stderr, "run failed: %s\n", onyx_status_message(st));
        onyx_status_free(st);
    }
    if (ok) memcpy(y, onyx_tensor_data(ty), 2 * sizeof(float));
    onyx_tensor_free(ty);
    onyx_tensor_free(in[0]);
    onyx_tensor_free(in[1]);
    return ok;
}

/* The saved model loads and y == x + {a, b}. */
static void expect_sum_at(int line, onyx_env *env, float a, float b) {
    int before = check_failures;
    onyx_session *s = NULL;
    CHECK_OK(onyx_session_create(env, model_path(), NULL, &s));
    float y[2] = {0, 0};
    if (s && run_model(s, 0, 0, y)) {
        CHECK_NEAR(y[0], 10 + a, 0);
        CHECK_NEAR(y[1], 20 + b, 0);
    } else {
        CHECK(!"model did not run");
    }
    onyx_session_free(s);
    if (check_failures != before) fprintf(stderr, "  (the case at line %d)\n", line);
}

static void expect_fail_at(int line, onyx_env *env, onyx_code code, const char *needle) {
    int before = check_failures;
    onyx_session *s = NULL;
    CHECK_FAILS(onyx_session_create(env, model_path(), NULL, &s), code, needle);
    CHECK(s == NULL);
    onyx_session_free(s);
    if (check_failures != before) fprintf(stderr, "  (the case at line %d)\n", line);
}

#define expect_sum(...) expect_sum_at(__LINE__, __VA_ARGS__)
#define expect_fail(...) expect_fail_at(__LINE__, __VA_ARGS__)

static void path_in(char *buf, size_t n, const char *dir, const char *name) {
    snprintf(buf, n, "%s/%s", dir, name);
}

/* root/m holds the model and w.bin {1, 2}; root/m2 (a sibling whose name
 * starts with the model folder's) and root/out hold files outside it. */
static void make_folders(void) {
    char p[600];
    float inside[2] = {1, 2}, outside[2] = {666, 777};
    snprintf(root, sizeof root, "%s/onyx_hostile_XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    CHECK(mkdtemp(root) != NULL);
    snprintf(mdir, sizeof mdir, "%s/m", root);
    CHECK(mkdir(mdir, 0700) == 0);
    path_in(p, sizeof p, root, "m2");
    CHECK(mkdir(p, 0700) == 0);
    write_floats(p, "w.bin", outside, 2);
    path_in(p, sizeof p, root, "out");
    CHECK(mkdir(p, 0700) == 0);
    write_floats(p, "secret.bin", outside, 2);
    write_floats(mdir, "w.bin", inside, 2);
    write_floats(mdir, "a..b", inside, 2);
    path_in(p, sizeof p, mdir, "sub");
    CHECK(mkdir(p, 0700) == 0);
    /* links out of the folder: a file, a folder, a sibling sharing the
     * folder's name as a prefix */
    path_in(p, sizeof p, mdir, "data.bin");
    CHECK(symlink("../out/secret.bin", p) == 0);
    path_in(p, sizeof p, mdir, "outdir");
    CHECK(symlink("../out", p) == 0);
    path_in(p, sizeof p, mdir, "sibling.bin");
    CHECK(symlink("../m2/w.bin", p) == 0);
    /* links that stay inside, relative and absolute */
    path_in(p, sizeof p, mdir, "link.bin");
    CHECK(symlink("w.bin", p) == 0);
    char target[600];
    path_in(target, sizeof target, mdir, "w.bin");
    path_in(p, sizeof p, mdir, "sub/abs_link.bin");
    CHECK(symlink(target, p) == 0);
    path_in(p, sizeof p, mdir, "fifo");
    CHECK(mkfifo(p, 0600) == 0);
}

static void test_external_escapes(onyx_env *env) {
    pb m = init_model("data.bin", NULL);
    save(&m);
    expect_fail(env, ONYX_INVALID_MODEL,
                "tensor 'w': external data location 'data.bin' resolves outside the model folder");
    m = init_model("outdir/secret.bin", NULL);
    save(&m);
    expect_fail(env, ONYX_INVALID_MODEL,
                "tensor 'w': external data location 'outdir/secret.bin' resolves outside");
    /* component-wise containment: root/m2 is not inside root/m */
    m = init_model("sibling.bin", NULL);
    save(&m);
    expect_fail(env, ONYX_INVALID_MODEL, "'sibling.bin' resolves outside the model folder");
    m = init_model("../out/secret.bin", NULL);
    save(&m);
    expect_fail(env, ONYX_INVALID_MODEL, "'../out/secret.bin' resolves outside the model folder");
    m = init_model("sub/../../out/secret.bin", NULL);
    save(&m);
    expect_fail(env, ONYX_INVALID_MODEL, "resolves outside the model folder");
    char abs[600];
    path_in(abs, sizeof abs, root, "out/secret.bin");
    m = init_model(abs, NULL);
    save(&m);
    expect_fail(env, ONYX_INVALID_MODEL, "is an absolute path");
    /* the same check guards Constant attributes and subgraph tensors */
    m = constant_model("data.bin");
    save(&m);
    expect_fail(env, ONYX_INVALID_MODEL,
                "tensor 'c_value': external data location 'data.bin' resolves outside the model "
                "folder");
    m = if_model("outdir/secret.bin");
    save(&m);
    expect_fail(env, ONYX_INVALID_MODEL,
                "tensor 'w_then': external data location 'outdir/secret.bin' resolves outside");
}

static void test_external_not_files(onyx_env *env) {
    /* a FIFO must neither block (CTest's TIMEOUT catches a hang) nor read */
    pb m = init_model("fifo", NULL);
    save(&m);
    expect_fail(env, ONYX_INVALID_MODEL, "tensor 'w': external data location 'fifo' is not a regular file");
    m = constant_model("fifo");
    save(&m);
    expect_fail(env, ONYX_INVALID_MODEL, "location 'fifo' is not a regular file");
    m = init_model("sub", NULL);
    save(&m);
    expect_fail(env, ONYX_INVALID_MODEL, "location 'sub' is not a regular file");
    m = init_model(".", NULL);
    save(&m);
    expect_fail(env, ONYX_INVALID_MODEL, "location '.' is not a regular file");
    m = init_model("missing.bin", NULL);
    save(&m);
    expect_fail(env, ONYX_IO_ERROR, "tensor 'w': cannot open external data file 'missing.bin'");
}

static void test_external_extent(onyx_env *env) {
    /* w.bin holds 8 bytes: 8 bytes at offset 4 run past its end */
    pb m = init_model("w.bin", "4");
    save(&m);
    expect_fail(env, ONYX_IO_ERROR,
                "tensor 'w': external data file 'w.bin' is too short for 8 bytes at offset 4 (it "
                "has 8 bytes)");
    /* offset + length overflows int64: checked, not wrapped */
    m = init_model("w.bin", "9223372036854775807");
    save(&m);
    expect_fail(env, ONYX_IO_ERROR, "too short for 8 bytes at offset 9223372036854775807");
    m = init_model("w.bin", "-1");
    save(&m);
    expect_fail(env, ONYX_INVALID_MODEL, "external data offset '-1' is not a non-negative integer");
    m = init_model("w.bin", "");
    save(&m);
    expect_fail(env, ONYX_INVALID_MODEL, "external data offset '' is not a non-negative integer");
}

static void test_external_accepted(onyx_env *env) {
    /* `..` inside a name is no parent reference */
    pb m = init_model("a..b", NULL);
    save(&m);
    expect_sum(env, 1, 2);
    /* sub/../w.bin stays inside the folder, so it is accepted */
    m = init_model("sub/../w.bin", NULL);
    save(&m);
    expect_sum(env, 1, 2);
    m = init_model("./w.bin", "0");
    save(&m);
    expect_sum(env, 1, 2);
    /* links whose target stays inside */
    m = init_model("link.bin", NULL);
    save(&m);
    expect_sum(env, 1, 2);
    m = init_model("sub/abs_link.bin", NULL);
    save(&m);
    expect_sum(env, 1, 2);
    m = constant_model("link.bin");
    save(&m);
    expect_sum(env, 1, 2);
    /* a model folder reached through a link resolves the same way */
    char link[200];
    path_in(link, sizeof link, root, "mlink");
    CHECK(symlink("m", link) == 0);
    char saved[256];
    memcpy(saved, mdir, sizeof saved);
    snprintf(mdir, sizeof mdir, "%s", link);
    m = init_model("w.bin", NULL);
    save(&m);
    expect_sum(env, 1, 2);
    m = init_model("data.bin", NULL);
    save(&m);
    expect_fail(env, ONYX_INVALID_MODEL, "resolves outside the model folder");
    memcpy(mdir, saved, sizeof saved);
}

/* ---- nesting ---- */

/* A model whose graph holds an If whose then_branch holds an If ... `depth`
 * levels; the innermost branch is an empty graph. */
static pb nested_if_model(int depth) {
    pb g = {0};
    pb_str(&g, 2, "inner");
    for (int i = 0; i < depth; i++) {
        pb n = node("If", "cond", NULL, "y");
        attr_graph(&n, "then_branch", &g);
        pb_msg(&g, 1, &n);
    }
    return model(&g);
}

static void test_nested_if(onyx_env *env) {
    pb m = nested_if_model(5000);
    onyx_session *s = NULL;
    CHECK(m.n < 256 * 1024); /* a small file */
    CHECK_FAILS(onyx_session_create_from_buffer(env, m.b, m.n, NULL, &s), ONYX_INVALID_MODEL,
                "model nests messages deeper than 100 levels (graph -> node -> attribute -> graph "
                "...)");
    save(&m);
    CHECK_FAILS(onyx_session_create(env, model_path(), NULL, &s), ONYX_INVALID_MODEL,
                "model nests messages deeper than 100 levels");
    CHECK(s == NULL);
}

/* An input typed sequence(sequence(...(tensor))) `depth` levels deep. */
static void test_nested_type(onyx_env *env) {
    pb t = tensor_type(T_FLOAT, NULL, -1);
    for (int i = 0; i < 10000; i++) {
        pb seq = {0}, outer = {0};
        pb_msg(&seq, 1, &t);
        pb_msg(&outer, 4, &seq);
        t = outer;
    }
    pb vi = {0}, g = {0};
    pb_str(&vi, 1, "x");
    pb_msg(&vi, 2, &t);
    pb_msg(&g, 11, &vi);
    pb n = node("Identity", "x", NULL, "y");
    pb_msg(&g, 1, &n);
    pb m = model(&g);
    onyx_session *s = NULL;
    CHECK_FAILS(onyx_session_create_from_buffer(env, m.b, m.n, NULL, &s), ONYX_INVALID_MODEL,
                "model nests messages deeper than 100 levels");
    free(m.b);
}

/* SequenceProto { sequence_values: SequenceProto { ... tensor } } */
static pb nested_sequence(int depth) {
    pb t = {0}, seq = {0};
    float one = 1.0f;
    pb_int(&t, 1, 1);
    pb_int(&t, 2, T_FLOAT);
    pb_bytes(&t, 9, &one, sizeof one);
    pb_int(&seq, 2, 1);
    pb_msg(&seq, 3, &t);
    for (int i = 0; i < depth; i++) {
        pb outer = {0};
        pb_int(&outer, 2, 3);
        pb_msg(&outer, 5, &seq);
        seq = outer;
    }
    return seq;
}

static void test_nested_sequence(void) {
    pb seq = nested_sequence(10000);
    onyx_tensor *t = NULL;
    CHECK_FAILS(onyx_tensor_read(seq.b, seq.n, &t), ONYX_INVALID_ARGUMENT,
                "sequence/optional nests messages deeper than 100 levels");
    CHECK_FAILS(onyx_tensor_read_kind(seq.b, seq.n, ONYX_KIND_SEQUENCE, &t), ONYX_INVALID_ARGUMENT,
                "nests messages deeper than 100 levels");
    CHECK(t == NULL);
    free(seq.b);
    /* within the limit the nesting reads back whole */
    seq = nested_sequence(20);
    CHECK_OK(onyx_tensor_read_kind(seq.b, seq.n, ONYX_KIND_SEQUENCE, &t));
    const onyx_tensor *cur = t;
    int levels = 0;
    while (cur && onyx_tensor_kind(cur) == ONYX_KIND_SEQUENCE && onyx_tensor_item_count(cur) == 1) {
        cur = onyx_tensor_item(cur, 0);
        levels++;
    }
    CHECK(levels == 21);
    CHECK(cur && onyx_tensor_kind(cur) == ONYX_KIND_TENSOR &&
          ((const float *)onyx_tensor_data((onyx_tensor *)cur))[0] == 1.0f);
    onyx_tensor_free(t);
    free(seq.b);
}

/* 15 nested Ifs: cond true runs the innermost then branch (x + x),
 * false the outermost else branch (-x). Real control flow nests this
 * deep at most, far inside the limit. */
static void test_nested_if_runs(onyx_env *env) {
    int64_t d[] = {2};
    pb inner = {0};
    pb n = node("Add", "x", "x", "o15");
    pb_msg(&inner, 1, &n);
    pb_str(&inner, 2, "b15");
    pb o = value_info("o15", T_FLOAT, d, 1);
    pb_msg(&inner, 12, &o);
    for (int k = 14; k >= 0; k--) {
        char out[16], name[16], then_out[16], else_out[16];
        snprintf(out, sizeof out, "o%d", k);
        snprintf(then_out, sizeof then_out, "o%d", k + 1);
        snprintf(else_out, sizeof else_out, "e%d", k);
        pb else_g = {0}, g = {0};
        pb neg = node("Neg", "x", NULL, else_out);
        pb_msg(&else_g, 1, &neg);
        snprintf(name, sizeof name, "else%d", k);
        pb_str(&else_g, 2, name);
        pb eo = value_info(else_out, T_FLOAT, d, 1);
        pb_msg(&else_g, 12, &eo);
        pb iff = node("If", "cond", NULL, k == 0 ? "y" : out);
        attr_graph(&iff, "then_branch", &inner);
        attr_graph(&iff, "else_branch", &else_g);
        pb_msg(&g, 1, &iff);
        if (k == 0) {
            pb c = value_info("cond", T_BOOL, NULL, 0);
            pb x = value_info("x", T_FLOAT, d, 1), y = value_info("y", T_FLOAT, d, 1);
            pb_str(&g, 2, "main");
            pb_msg(&g, 11, &c);
            pb_msg(&g, 11, &x);
            pb_msg(&g, 12, &y);
        } else {
            snprintf(name, sizeof name, "b%d", k);
            pb_str(&g, 2, name);
            pb go = value_info(out, T_FLOAT, d, 1);
            pb_msg(&g, 12, &go);
        }
        inner = g;
    }
    pb m = model(&inner);
    onyx_session *s = NULL;
    CHECK_OK(onyx_session_create_from_buffer(env, m.b, m.n, NULL, &s));
    free(m.b);
    float y[2] = {0, 0};
    if (s && run_model(s, 1, 1, y)) {
        CHECK_NEAR(y[0], 20, 0);
        CHECK_NEAR(y[1], 40, 0);
    } else {
        CHECK(!"15 nested Ifs did not run (cond true)");
    }
    if (s && run_model(s, 1, 0, y)) {
        CHECK_NEAR(y[0], -10, 0);
        CHECK_NEAR(y[1], -20, 0);
    } else {
        CHECK(!"15 nested Ifs did not run (cond false)");
    }
    onyx_session_free(s);
}

/* ---- an output typed twice ---- */

static void test_output_typed_twice(onyx_env *env) {
    int64_t d[] = {-1}; /* dim_param "batch": the string that leaked */
    pb g = {0};
    pb n = node("Relu", "x", NULL, "y");
    pb_msg(&g, 1, &n);
    pb_str(&g, 2, "g");
    pb x = value_info("x", T_FLOAT, d, 1);
    pb_msg(&g, 11, &x);
    for (int i = 0; i < 2; i++) {
        pb y = value_info("y", T_FLOAT, d, 1);
        pb_msg(&g, 12, &y);
    }
    pb m = model(&g);
    onyx_session *s = NULL;
    onyx_status *st = onyx_session_create_from_buffer(env, m.b, m.n, NULL, &s);
    /* whichever the verdict, LeakSanitizer (detect_leaks=1) fails the
     * test if the first output's dim_param is not freed */
    if (st) {
        fprintf(stderr, "note: output listed twice: %s\n", onyx_status_message(st));
        onyx_status_free(st);
    }
    onyx_session_free(s);
    free(m.b);
    /* an input that is also an output, both with dim_params */
    pb g2 = {0};
    pb_str(&g2, 2, "g");
    pb x2 = value_info("x", T_FLOAT, d, 1), y2 = value_info("x", T_FLOAT, d, 1);
    pb_msg(&g2, 11, &x2);
    pb_msg(&g2, 12, &y2);
    m = model(&g2);
    s = NULL;
    st = onyx_session_create_from_buffer(env, m.b, m.n, NULL, &s);
    if (st) {
        fprintf(stderr, "note: input as output: %s\n", onyx_status_message(st));
        onyx_status_free(st);
    }
    onyx_session_free(s);
    free(m.b);
}

static void remove_tree(void) {
    const char *names[] = {"m/model.onnx", "m/w.bin",        "m/a..b",         "m/data.bin",
                           "m/outdir",     "m/sibling.bin",  "m/link.bin",     "m/sub/abs_link.bin",
                           "m/fifo",       "m2/w.bin",       "out/secret.bin", "mlink"};
    char p[600];
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        path_in(p, sizeof p, root, names[i]);
        unlink(p);
    }
    const char *dirs[] = {"m/sub", "m", "m2", "out"};
    for (size_t i = 0; i < sizeof dirs / sizeof *dirs; i++) {
        path_in(p, sizeof p, root, dirs[i]);
        rmdir(p);
    }
    rmdir(root);
}

int main(void) {
    onyx_env *env = NULL;
    CHECK_OK(onyx_env_create(&env));
    if (!env) CHECK_DONE();
    make_folders();
    test_external_escapes(env);
    test_external_not_files(env);
    test_external_extent(env);
    test_external_accepted(env);
    test_nested_if(env);
    test_nested_type(env);
    test_nested_sequence();
    test_nested_if_runs(env);
    test_output_typed_twice(env);
    remove_tree();
    onyx_env_free(env);
    CHECK_DONE();
}
