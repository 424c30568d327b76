/* onyx._onyx.RunOptions: one onyx_run_options (a time limit and a cancel
 * flag). The Python layer's RunOptions wraps it with onnxruntime's names
 * (terminate). A run holds a reference to the object, so the options are
 * never freed under a run. */
#include "onyx_ext.h"

typedef struct {
    PyObject_HEAD onyx_run_options *opts;
} run_options_object;

static int ro_init(run_options_object *self, PyObject *args, PyObject *kwds) {
    (void)args;
    (void)kwds;
    if (self->opts) return 0;
    onyx_status *st = onyx_run_options_create(&self->opts);
    if (st) {
        ext_raise(st);
        return -1;
    }
    return 0;
}

static void ro_dealloc(run_options_object *self) {
    onyx_run_options_free(self->opts);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

/* a subclass whose __init__ skipped RunOptions.__init__ has no options */
static int ready(run_options_object *self) {
    if (self->opts) return 1;
    ext_raise_code(ONYX_INVALID_ARGUMENT, "RunOptions.__init__ was not called");
    return 0;
}

static PyObject *done(onyx_status *st) {
    if (st) return ext_raise(st);
    Py_RETURN_NONE;
}

static PyObject *ro_set_time_limit_ms(run_options_object *self, PyObject *arg) {
    if (!ready(self)) return NULL;
    unsigned long long ms = PyLong_AsUnsignedLongLong(arg);
    if (ms == (unsigned long long)-1 && PyErr_Occurred()) return NULL;
    return done(onyx_run_options_set_time_limit_ms(self->opts, (uint64_t)ms));
}

static PyObject *ro_cancel(run_options_object *self, PyObject *unused) {
    if (!ready(self)) return NULL;
    (void)unused;
    return done(onyx_run_options_cancel(self->opts));
}

static PyObject *ro_reset_cancel(run_options_object *self, PyObject *unused) {
    if (!ready(self)) return NULL;
    (void)unused;
    return done(onyx_run_options_reset_cancel(self->opts));
}

static PyObject *ro_is_cancelled(run_options_object *self, PyObject *unused) {
    (void)unused;
    return PyBool_FromLong(onyx_run_options_is_cancelled(self->opts));
}

static PyMethodDef ro_methods[] = {
    {"set_time_limit_ms", (PyCFunction)ro_set_time_limit_ms, METH_O, "0: no limit"},
    {"cancel", (PyCFunction)ro_cancel, METH_NOARGS, "stops every run using these options"},
    {"reset_cancel", (PyCFunction)ro_reset_cancel, METH_NOARGS, "clears the cancel flag"},
    {"is_cancelled", (PyCFunction)ro_is_cancelled, METH_NOARGS, "whether the flag is set"},
    {NULL, NULL, 0, NULL},
};

PyTypeObject ext_run_options_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "onyx._onyx.RunOptions",
    .tp_basicsize = sizeof(run_options_object),
    .tp_dealloc = (destructor)ro_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
    .tp_doc = "One onyx_run_options: a time limit and a cancel flag",
    .tp_methods = ro_methods,
    .tp_init = (initproc)ro_init,
    .tp_new = PyType_GenericNew,
};

int ext_run_options_get(PyObject *obj, const onyx_run_options **out) {
    *out = NULL;
    if (obj == Py_None) return 0;
    if (!PyObject_TypeCheck(obj, &ext_run_options_type)) {
        ext_raise_code(ONYX_INVALID_ARGUMENT, "run_options must be an onyx.RunOptions, not %s",
                       Py_TYPE(obj)->tp_name);
        return -1;
    }
    *out = ((run_options_object *)obj)->opts;
    if (!*out) {
        ext_raise_code(ONYX_INVALID_ARGUMENT, "RunOptions.__init__ was not called");
        return -1;
    }
    return 0;
}
