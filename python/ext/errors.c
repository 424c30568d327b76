/* onyx_status -> Python exceptions: onyx.OnyxError and one subclass per
 * onyx_code, each also deriving from the built-in exception a Python user
 * would catch for it (ValueError for a bad argument, MemoryError...). */
#include "onyx_ext.h"

#include <stdarg.h>

/* Set once when the module is imported, read-only afterwards. */
static PyObject *error_classes[ONYX_TIMEOUT + 1];

static const struct {
    onyx_code code;
    const char *name; /* attribute of onyx._onyx */
    const char *doc;
} error_specs[] = {
    {ONYX_INVALID_ARGUMENT, "InvalidArgument", "A bad argument or input tensor."},
    {ONYX_INVALID_MODEL, "InvalidModel", "A malformed or inconsistent model."},
    {ONYX_NOT_IMPLEMENTED, "NotImplemented", "Valid ONNX that onyx cannot run yet."},
    {ONYX_IO_ERROR, "IOFailure", "A file could not be read or written."},
    {ONYX_OUT_OF_MEMORY, "OutOfMemory", "Memory ran out, or the session's memory limit."},
    {ONYX_RUNTIME_ERROR, "RuntimeFailure", "A failure while running the model."},
    {ONYX_NOT_FOUND, "NotFound", "A named thing does not exist."},
    {ONYX_CANCELLED, "Cancelled", "The run was cancelled through its run options."},
    {ONYX_TIMEOUT, "Timeout", "The run exceeded its run options' time limit."},
};

/* the built-in class each code's exception also derives from, or NULL */
static PyObject *builtin_base(onyx_code code) {
    switch (code) {
    case ONYX_INVALID_ARGUMENT: return PyExc_ValueError;
    case ONYX_IO_ERROR: return PyExc_OSError;
    case ONYX_OUT_OF_MEMORY: return PyExc_MemoryError;
    case ONYX_NOT_FOUND: return PyExc_LookupError;
    case ONYX_TIMEOUT: return PyExc_TimeoutError;
    default: return NULL;
    }
}

int ext_errors_init(PyObject *module) {
    PyObject *base = PyErr_NewExceptionWithDoc(
        "onyx.OnyxError", "Base class of the errors onyx reports; .code is the onyx_code.",
        PyExc_RuntimeError, NULL);
    if (!base || PyModule_AddObjectRef(module, "OnyxError", base) < 0) return -1;
    error_classes[ONYX_OK] = base;
    for (size_t i = 0; i < sizeof error_specs / sizeof error_specs[0]; i++) {
        char qualified[64];
        int n = snprintf(qualified, sizeof qualified, "onyx.%s", error_specs[i].name);
        if (n < 0 || (size_t)n >= sizeof qualified) return -1;
        PyObject *extra = builtin_base(error_specs[i].code);
        PyObject *bases = extra ? PyTuple_Pack(2, base, extra) : PyTuple_Pack(1, base);
        if (!bases) return -1;
        PyObject *cls = PyErr_NewExceptionWithDoc(qualified, error_specs[i].doc, bases, NULL);
        Py_DECREF(bases);
        if (!cls) return -1;
        PyObject *code = PyLong_FromLong(error_specs[i].code);
        int bad = !code || PyObject_SetAttrString(cls, "code", code) < 0;
        Py_XDECREF(code);
        if (bad || PyModule_AddObjectRef(module, error_specs[i].name, cls) < 0) {
            Py_DECREF(cls);
            return -1;
        }
        error_classes[error_specs[i].code] = cls;
    }
    return 0;
}

static PyObject *class_of(onyx_code code) {
    if ((int)code > 0 && (int)code <= ONYX_TIMEOUT && error_classes[code]) return error_classes[code];
    return error_classes[ONYX_OK];
}

PyObject *ext_raise(onyx_status *status) {
    onyx_code code = onyx_status_code(status);
    const char *message = onyx_status_message(status);
    PyErr_SetString(class_of(code), message ? message : "onyx error");
    onyx_status_free(status);
    return NULL;
}

PyObject *ext_raise_code(onyx_code code, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    PyObject *msg = PyUnicode_FromFormatV(fmt, ap);
    va_end(ap);
    if (msg) {
        PyErr_SetObject(class_of(code), msg);
        Py_DECREF(msg);
    }
    return NULL;
}
