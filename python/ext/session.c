/* onyx._onyx.Session: one onyx_session. Made from a path or bytes and the
 * options the Python layer gathered; run() converts the feed, releases
 * the GIL for onyx_session_run_with_options (several threads may run one
 * session at once, as the C API allows) and returns the outputs without
 * copying them. */
#include "onyx_ext.h"

#include <string.h>

typedef struct {
    PyObject_HEAD onyx_session *session;
    PyObject *env;  /* the capsule of the onyx_env the session was made in */
    Py_ssize_t runs; /* runs in progress (counted under the GIL): close waits for none */
    size_t n_inputs, n_outputs;
    onyx_dtype *input_dtypes;   /* declared element type of each input */
    const char **input_names;   /* the session's strings */
    const char **output_names;  /* the session's strings */
} session_object;

/* ---- creation ---- */

static int set_options(onyx_session_options *o, PyObject *cfg) {
    /* cfg: (threads, opt_level, log_level, providers, provider_options,
     *       memory_limit, external_data_dir or None, cache_dir or None,
     *       (verify runs, atol, rtol)) */
    int threads, opt_level, log_level;
    unsigned long long memory_limit, verify_runs;
    double verify_atol, verify_rtol;
    PyObject *providers, *provider_options, *data_dir, *cache_dir;
    if (!PyArg_ParseTuple(cfg, "iiiOOKOO(Kdd)", &threads, &opt_level, &log_level, &providers,
                          &provider_options, &memory_limit, &data_dir, &cache_dir, &verify_runs,
                          &verify_atol, &verify_rtol))
        return -1;
    onyx_status *st = onyx_session_options_set_threads(o, threads);
    if (!st) st = onyx_session_options_set_optimization_level(o, (onyx_opt_level)opt_level);
    if (!st) st = onyx_session_options_set_log_level(o, (onyx_log_level)log_level);
    if (!st) st = onyx_session_options_set_memory_limit(o, (size_t)memory_limit);
    if (!st && data_dir != Py_None) {
        const char *dir = PyUnicode_AsUTF8(data_dir);
        if (!dir) return -1;
        st = onyx_session_options_set_external_data_dir(o, dir);
    }
    if (!st && cache_dir != Py_None) {
        const char *dir = PyUnicode_AsUTF8(cache_dir);
        if (!dir) return -1;
        st = onyx_session_options_set_cache_dir(o, dir);
    }
    if (!st && verify_runs > 0)
        st = onyx_session_options_set_verify_first_runs(o, (uint64_t)verify_runs, verify_atol,
                                                        verify_rtol);
    if (st) {
        ext_raise(st);
        return -1;
    }
    Py_ssize_t n = PySequence_Size(providers);
    if (n < 0) return -1;
    if (n > 0) {
        const char *names[16];
        if (n > 16) {
            ext_raise_code(ONYX_INVALID_ARGUMENT, "too many providers (%zd)", n);
            return -1;
        }
        PyObject *items = PySequence_Fast(providers, "providers must be a sequence");
        if (!items) return -1;
        for (Py_ssize_t i = 0; i < n; i++) {
            names[i] = PyUnicode_AsUTF8(PySequence_Fast_GET_ITEM(items, i));
            if (!names[i]) {
                Py_DECREF(items);
                return -1;
            }
        }
        st = onyx_session_options_set_providers(o, names, (size_t)n);
        Py_DECREF(items);
        if (st) {
            ext_raise(st);
            return -1;
        }
    }
    PyObject *opts = PySequence_Fast(provider_options, "provider options must be a sequence");
    if (!opts) return -1;
    for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(opts); i++) {
        const char *provider, *key, *value;
        if (!PyArg_ParseTuple(PySequence_Fast_GET_ITEM(opts, i), "sss", &provider, &key, &value)) {
            Py_DECREF(opts);
            return -1;
        }
        st = onyx_session_options_set_provider_option(o, provider, key, value);
        if (st) {
            Py_DECREF(opts);
            ext_raise(st);
            return -1;
        }
    }
    Py_DECREF(opts);
    return 0;
}

static int cache_io(session_object *self) {
    self->n_inputs = onyx_session_input_count(self->session);
    self->n_outputs = onyx_session_output_count(self->session);
    self->input_dtypes = PyMem_Calloc(self->n_inputs + 1, sizeof *self->input_dtypes);
    self->input_names = PyMem_Calloc(self->n_inputs + 1, sizeof *self->input_names);
    self->output_names = PyMem_Calloc(self->n_outputs + 1, sizeof *self->output_names);
    if (!self->input_dtypes || !self->input_names || !self->output_names) {
        PyErr_NoMemory();
        return -1;
    }
    for (size_t i = 0; i < self->n_inputs; i++) {
        onyx_value_info info;
        onyx_status *st = onyx_session_input_info(self->session, i, &info);
        if (st) {
            ext_raise(st);
            return -1;
        }
        /* sequences and optionals cannot be fed from numpy: their type is
         * left for onyx to check */
        self->input_names[i] = info.name;
        self->input_dtypes[i] = info.kind == ONYX_KIND_TENSOR ? info.dtype : ONYX_UNDEFINED;
    }
    for (size_t i = 0; i < self->n_outputs; i++) {
        onyx_value_info info;
        onyx_status *st = onyx_session_output_info(self->session, i, &info);
        if (st) {
            ext_raise(st);
            return -1;
        }
        self->output_names[i] = info.name;
    }
    return 0;
}

/* Session(env, model, cfg): model is a path (str or os.PathLike) or bytes */
static int session_init(session_object *self, PyObject *args, PyObject *kwds) {
    PyObject *env, *model, *cfg;
    (void)kwds;
    if (self->session) {
        PyErr_SetString(PyExc_RuntimeError, "Session is already initialised");
        return -1;
    }
    if (!PyArg_ParseTuple(args, "O!OO!", &PyCapsule_Type, &env, &model, &PyTuple_Type, &cfg))
        return -1;
    onyx_env *e = ext_env_of(env);
    if (!e) return -1;
    onyx_session_options *o = NULL;
    onyx_status *st = onyx_session_options_create(&o);
    if (st) {
        ext_raise(st);
        return -1;
    }
    if (set_options(o, cfg) < 0) {
        onyx_session_options_free(o);
        return -1;
    }
    onyx_session *s = NULL;
    if (PyBytes_Check(model)) {
        /* the bytes object is immutable and our caller holds it */
        const char *data = PyBytes_AS_STRING(model);
        size_t size = (size_t)PyBytes_GET_SIZE(model);
        Py_BEGIN_ALLOW_THREADS st = onyx_session_create_from_buffer(e, data, size, o, &s);
        Py_END_ALLOW_THREADS
    } else {
        PyObject *path = NULL;
        if (!PyUnicode_FSConverter(model, &path)) {
            onyx_session_options_free(o);
            return -1;
        }
        const char *p = PyBytes_AS_STRING(path);
        Py_BEGIN_ALLOW_THREADS st = onyx_session_create(e, p, o, &s);
        Py_END_ALLOW_THREADS
        Py_DECREF(path);
    }
    onyx_session_options_free(o);
    if (st) {
        ext_raise(st);
        return -1;
    }
    self->session = s;
    Py_INCREF(env);
    self->env = env;
    return cache_io(self);
}

static void release(session_object *self) {
    onyx_session_free(self->session);
    self->session = NULL;
    PyMem_Free(self->input_dtypes);
    PyMem_Free(self->input_names);
    PyMem_Free(self->output_names);
    self->input_dtypes = NULL;
    self->input_names = NULL;
    self->output_names = NULL;
    self->n_inputs = self->n_outputs = 0;
}

static void session_dealloc(session_object *self) {
    release(self);
    Py_XDECREF(self->env);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static int check_open(session_object *self) {
    if (self->session) return 0;
    ext_raise_code(ONYX_INVALID_ARGUMENT, "the session is closed");
    return -1;
}

static PyObject *session_close(session_object *self, PyObject *unused) {
    (void)unused;
    if (self->runs > 0)
        return ext_raise_code(ONYX_INVALID_ARGUMENT,
                              "the session is running in another thread: close it after the run");
    release(self);
    Py_RETURN_NONE;
}

/* ---- description ---- */

static PyObject *shape_of(const onyx_value_info *info) {
    if (info->rank < 0) Py_RETURN_NONE;
    PyObject *shape = PyList_New(info->rank);
    for (int i = 0; shape && i < info->rank; i++) {
        PyObject *d;
        if (info->dims[i] >= 0) d = PyLong_FromLongLong(info->dims[i]);
        else if (info->dim_params && info->dim_params[i]) d = PyUnicode_FromString(info->dim_params[i]);
        else d = Py_NewRef(Py_None);
        if (!d) Py_CLEAR(shape);
        else PyList_SET_ITEM(shape, i, d);
    }
    return shape;
}

/* a list of (name, kind, dtype, element type name, shape or None) */
static PyObject *describe(session_object *self, int outputs) {
    if (check_open(self) < 0) return NULL;
    size_t n = outputs ? self->n_outputs : self->n_inputs;
    PyObject *list = PyList_New((Py_ssize_t)n);
    for (size_t i = 0; list && i < n; i++) {
        onyx_value_info info;
        onyx_status *st = outputs ? onyx_session_output_info(self->session, i, &info)
                                  : onyx_session_input_info(self->session, i, &info);
        if (st) {
            Py_DECREF(list);
            return ext_raise(st);
        }
        PyObject *shape = shape_of(&info);
        PyObject *item = shape ? Py_BuildValue("(siisN)", info.name, (int)info.kind, (int)info.dtype,
                                              ext_onnx_type_name(info.dtype), shape)
                               : NULL;
        if (!item) Py_CLEAR(list);
        else PyList_SET_ITEM(list, (Py_ssize_t)i, item);
    }
    return list;
}

static PyObject *session_inputs(session_object *self, PyObject *unused) {
    (void)unused;
    return describe(self, 0);
}

static PyObject *session_outputs(session_object *self, PyObject *unused) {
    (void)unused;
    return describe(self, 1);
}

/* nodes() -> [(name, op_type, domain, provider)] of the optimized graph */
static PyObject *session_nodes(session_object *self, PyObject *unused) {
    (void)unused;
    if (check_open(self) < 0) return NULL;
    size_t n = onyx_session_node_count(self->session);
    PyObject *list = PyList_New((Py_ssize_t)n);
    for (size_t i = 0; list && i < n; i++) {
        PyObject *t = Py_BuildValue("(ssss)", onyx_session_node_name(self->session, i),
                                    onyx_session_node_op_type(self->session, i),
                                    onyx_session_node_domain(self->session, i),
                                    onyx_session_node_provider(self->session, i));
        if (!t) Py_CLEAR(list);
        else PyList_SET_ITEM(list, (Py_ssize_t)i, t);
    }
    return list;
}

/* save_subgraph(node_names, path): onyx_session_save_subgraph */
static PyObject *session_save_subgraph(session_object *self, PyObject *args) {
    PyObject *names, *path_obj, *path = NULL;
    if (!PyArg_ParseTuple(args, "OO", &names, &path_obj)) return NULL;
    if (check_open(self) < 0) return NULL;
    PyObject *seq = PySequence_Fast(names, "node names must be a list of str");
    if (!seq) return NULL;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    const char **v = PyMem_Calloc((size_t)n + 1, sizeof *v);
    PyObject *result = NULL;
    if (!v) {
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t i = 0; i < n; i++)
        if (!(v[i] = PyUnicode_AsUTF8(PySequence_Fast_GET_ITEM(seq, i)))) goto done;
    if (!PyUnicode_FSConverter(path_obj, &path)) goto done;
    onyx_status *st = onyx_session_save_subgraph(self->session, v, (size_t)n,
                                                 PyBytes_AS_STRING(path));
    result = st ? ext_raise(st) : Py_NewRef(Py_None);
done:
    Py_XDECREF(path);
    PyMem_Free(v);
    Py_DECREF(seq);
    return result;
}

/* provider_stats(provider) -> dict of onyx_provider_stats */
static PyObject *session_provider_stats(session_object *self, PyObject *arg) {
    const char *provider = PyUnicode_AsUTF8(arg);
    if (!provider || check_open(self) < 0) return NULL;
    onyx_provider_stats s;
    onyx_status *st = onyx_session_provider_stats(self->session, provider, &s);
    if (st) return ext_raise(st);
    return Py_BuildValue(
        "{sKsKsKsKsKsKsKsKsKsKsKsKsKsK}", "runs", s.runs, "kernel_launches", s.kernel_launches,
        "submits", s.submits, "copies_to_host", s.copies_to_host, "copies_from_host",
        s.copies_from_host, "weight_uploads", s.weight_uploads, "cpu_fallbacks", s.cpu_fallbacks,
        "split_dispatches", s.split_dispatches, "dispatch_slices", s.dispatch_slices,
        "device_faults", s.device_faults, "device_recoveries", s.device_recoveries,
        "runs_rescued", s.runs_rescued, "nodes_denied", s.nodes_denied, "device_bytes",
        s.device_bytes);
}

/* verify_stats() -> (dict of onyx_verify_stats, report text) */
static PyObject *session_verify_stats(session_object *self, PyObject *unused) {
    (void)unused;
    if (check_open(self) < 0) return NULL;
    onyx_verify_stats s;
    onyx_status *st = onyx_session_verify_stats(self->session, &s);
    if (st) return ext_raise(st);
    size_t need = onyx_session_verify_report(self->session, NULL, 0);
    char *report = PyMem_Malloc(need + 1);
    if (!report) return PyErr_NoMemory();
    onyx_session_verify_report(self->session, report, need + 1);
    PyObject *r = Py_BuildValue("({sKsKsKsi}s)", "runs_verified", s.runs_verified, "mismatches",
                                s.mismatches, "nodes_disabled", s.nodes_disabled, "on_reference",
                                s.on_reference, report);
    PyMem_Free(report);
    return r;
}

/* ---- run ---- */

typedef struct {
    size_t n_in, n_out;
    const char **in_names;
    onyx_tensor **inputs;
    PyObject **keep; /* per input: the array onyx reads, and the key's str */
    const char **out_names;
    onyx_tensor **outputs;
    PyObject *out_list; /* the requested names, held while they are used */
} run_call;

static void call_free(run_call *c) {
    for (size_t i = 0; i < c->n_in; i++) {
        onyx_tensor_free(c->inputs[i]);
        Py_XDECREF(c->keep[2 * i]);
        Py_XDECREF(c->keep[2 * i + 1]);
    }
    for (size_t i = 0; i < c->n_out; i++) onyx_tensor_free(c->outputs[i]);
    Py_XDECREF(c->out_list);
    PyMem_Free(c->in_names);
    PyMem_Free(c->inputs);
    PyMem_Free(c->keep);
    PyMem_Free(c->out_names);
    PyMem_Free(c->outputs);
}

static onyx_dtype declared_dtype(session_object *self, const char *name) {
    for (size_t i = 0; i < self->n_inputs; i++)
        if (strcmp(self->input_names[i], name) == 0) return self->input_dtypes[i];
    return ONYX_UNDEFINED; /* not an input: onyx names the error */
}

static int bind_inputs(session_object *self, PyObject *feed, run_call *c) {
    if (!PyDict_Check(feed)) {
        ext_raise_code(ONYX_INVALID_ARGUMENT, "input_feed must be a dict of name: array, not %s",
                       Py_TYPE(feed)->tp_name);
        return -1;
    }
    /* a snapshot: converting a value may run Python code that changes the dict */
    PyObject *items = PyDict_Items(feed);
    if (!items) return -1;
    size_t n = (size_t)PyList_GET_SIZE(items);
    c->in_names = PyMem_Calloc(n + 1, sizeof *c->in_names);
    c->inputs = PyMem_Calloc(n + 1, sizeof *c->inputs);
    c->keep = PyMem_Calloc(2 * n + 2, sizeof *c->keep);
    if (!c->in_names || !c->inputs || !c->keep) {
        Py_DECREF(items);
        PyErr_NoMemory();
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        PyObject *pair = PyList_GET_ITEM(items, (Py_ssize_t)i);
        PyObject *key = PyTuple_GET_ITEM(pair, 0), *value = PyTuple_GET_ITEM(pair, 1);
        c->n_in = i + 1;
        if (!PyUnicode_Check(key)) {
            ext_raise_code(ONYX_INVALID_ARGUMENT, "input names must be str, not %s",
                           Py_TYPE(key)->tp_name);
            break;
        }
        c->keep[2 * i + 1] = Py_NewRef(key); /* its UTF-8 is used during the run */
        c->in_names[i] = PyUnicode_AsUTF8(key);
        if (!c->in_names[i]) break;
        onyx_dtype want = declared_dtype(self, c->in_names[i]);
        if (ext_tensor_from_value(c->in_names[i], value, want, &c->inputs[i], &c->keep[2 * i]) < 0)
            break;
    }
    Py_DECREF(items);
    return PyErr_Occurred() ? -1 : 0;
}

static int bind_outputs(session_object *self, PyObject *names, run_call *c) {
    if (names == Py_None) {
        c->n_out = self->n_outputs;
        c->out_names = PyMem_Calloc(c->n_out + 1, sizeof *c->out_names);
        if (!c->out_names) return PyErr_NoMemory(), -1;
        memcpy(c->out_names, self->output_names, c->n_out * sizeof *c->out_names);
    } else {
        c->out_list = PySequence_Fast(names, "output_names must be a list of str or None");
        if (!c->out_list) return -1;
        if (PyUnicode_Check(names)) {
            ext_raise_code(ONYX_INVALID_ARGUMENT, "output_names must be a list of str, not a str");
            return -1;
        }
        size_t n = (size_t)PySequence_Fast_GET_SIZE(c->out_list);
        c->out_names = PyMem_Calloc(n + 1, sizeof *c->out_names);
        if (!c->out_names) return PyErr_NoMemory(), -1;
        for (size_t i = 0; i < n; i++) {
            PyObject *name = PySequence_Fast_GET_ITEM(c->out_list, (Py_ssize_t)i);
            if (!PyUnicode_Check(name)) {
                ext_raise_code(ONYX_INVALID_ARGUMENT, "output names must be str, not %s",
                               Py_TYPE(name)->tp_name);
                return -1;
            }
            c->out_names[i] = PyUnicode_AsUTF8(name);
            if (!c->out_names[i]) return -1;
        }
        c->n_out = n;
    }
    c->outputs = PyMem_Calloc(c->n_out + 1, sizeof *c->outputs);
    if (!c->outputs) return PyErr_NoMemory(), -1;
    return 0;
}

static PyObject *collect(run_call *c) {
    PyObject *list = PyList_New((Py_ssize_t)c->n_out);
    for (size_t i = 0; list && i < c->n_out; i++) {
        onyx_tensor *t = c->outputs[i];
        c->outputs[i] = NULL; /* owned by its array now (or freed on failure) */
        PyObject *v = ext_value_from_tensor(t);
        if (!v) Py_CLEAR(list);
        else PyList_SET_ITEM(list, (Py_ssize_t)i, v);
    }
    return list;
}

/* run(output_names or None, input_feed, run_options or None) */
static PyObject *session_run(session_object *self, PyObject *args) {
    PyObject *names, *feed, *ro_obj = Py_None;
    if (!PyArg_ParseTuple(args, "OO|O", &names, &feed, &ro_obj)) return NULL;
    if (check_open(self) < 0) return NULL;
    const onyx_run_options *ro = NULL;
    if (ext_run_options_get(ro_obj, &ro) < 0) return NULL;
    run_call c = {0};
    PyObject *result = NULL;
    if (bind_inputs(self, feed, &c) < 0 || bind_outputs(self, names, &c) < 0) goto done;
    /* converting the feed may have run Python code that closed the session */
    if (check_open(self) < 0) goto done;
    onyx_session *s = self->session;
    onyx_status *st;
    self->runs++;
    Py_BEGIN_ALLOW_THREADS st = onyx_session_run_with_options(
        s, ro, c.in_names, (const onyx_tensor *const *)c.inputs, c.n_in, c.out_names, c.outputs,
        c.n_out);
    Py_END_ALLOW_THREADS
    self->runs--;
    if (st) {
        ext_raise(st);
        goto done;
    }
    result = collect(&c);
done:
    call_free(&c);
    return result;
}

static PyMethodDef session_methods[] = {
    {"run", (PyCFunction)session_run, METH_VARARGS,
     "run(output_names, input_feed, run_options=None) -> list of outputs"},
    {"inputs", (PyCFunction)session_inputs, METH_NOARGS,
     "[(name, kind, dtype, type name, shape)] of the graph inputs"},
    {"outputs", (PyCFunction)session_outputs, METH_NOARGS,
     "[(name, kind, dtype, type name, shape)] of the graph outputs"},
    {"nodes", (PyCFunction)session_nodes, METH_NOARGS,
     "[(name, op_type, domain, provider)] of the optimized graph"},
    {"save_subgraph", (PyCFunction)session_save_subgraph, METH_VARARGS,
     "save_subgraph(node_names, path): those nodes as an ONNX model"},
    {"provider_stats", (PyCFunction)session_provider_stats, METH_O,
     "provider_stats(provider): what the provider did for this session's runs"},
    {"verify_stats", (PyCFunction)session_verify_stats, METH_NOARGS,
     "(stats, report) of the shadow runs"},
    {"close", (PyCFunction)session_close, METH_NOARGS, "frees the session"},
    {NULL, NULL, 0, NULL},
};

PyTypeObject ext_session_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "onyx._onyx.Session",
    .tp_basicsize = sizeof(session_object),
    .tp_dealloc = (destructor)session_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Session(env, path_or_bytes, config): one onyx_session",
    .tp_methods = session_methods,
    .tp_init = (initproc)session_init,
    .tp_new = PyType_GenericNew,
};
