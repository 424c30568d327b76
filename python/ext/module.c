/* onyx._onyx: module init, the onyx_env, version, providers and devices.
 * The Python package onyx (onyx/__init__.py) builds the onnxruntime-style
 * API on these. */
#define ONYX_EXT_MODULE_C
#include "onyx_ext.h"

#include <string.h>

const char ext_env_capsule_name[] = "onyx._onyx.env";

static void env_destructor(PyObject *capsule) {
    onyx_env_free(PyCapsule_GetPointer(capsule, ext_env_capsule_name));
}

onyx_env *ext_env_of(PyObject *capsule) {
    return PyCapsule_GetPointer(capsule, ext_env_capsule_name);
}

/* new_env() -> capsule: sessions keep theirs alive */
static PyObject *new_env(PyObject *self, PyObject *unused) {
    (void)self;
    (void)unused;
    onyx_env *env = NULL;
    onyx_status *st = onyx_env_create(&env);
    if (st) return ext_raise(st);
    PyObject *capsule = PyCapsule_New(env, ext_env_capsule_name, env_destructor);
    if (!capsule) onyx_env_free(env);
    return capsule;
}

/* providers(env) -> the provider names of this build, in priority order */
static PyObject *providers(PyObject *self, PyObject *capsule) {
    (void)self;
    onyx_env *env = ext_env_of(capsule);
    if (!env) return NULL;
    size_t n = onyx_env_provider_count(env);
    PyObject *list = PyList_New((Py_ssize_t)n);
    for (size_t i = 0; list && i < n; i++) {
        PyObject *name = PyUnicode_FromString(onyx_env_provider_name(env, i));
        if (!name) Py_CLEAR(list);
        else PyList_SET_ITEM(list, (Py_ssize_t)i, name);
    }
    return list;
}

static PyObject *device_dict(const onyx_device_list *list, size_t device) {
    PyObject *d = PyDict_New();
    size_t n = onyx_device_property_count(list, device);
    for (size_t k = 0; d && k < n; k++) {
        const char *key, *value;
        onyx_status *st = onyx_device_property(list, device, k, &key, &value);
        if (st) {
            Py_DECREF(d);
            return ext_raise(st);
        }
        PyObject *v = PyUnicode_DecodeUTF8(value, (Py_ssize_t)strlen(value), "replace");
        if (!v || PyDict_SetItemString(d, key, v) < 0) Py_CLEAR(d);
        Py_XDECREF(v);
    }
    return d;
}

/* list_devices(env, provider) -> [{key: value}] per device */
static PyObject *list_devices(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *capsule;
    const char *provider;
    if (!PyArg_ParseTuple(args, "Os", &capsule, &provider)) return NULL;
    onyx_env *env = ext_env_of(capsule);
    if (!env) return NULL;
    onyx_device_list *list = NULL;
    onyx_status *st;
    Py_BEGIN_ALLOW_THREADS st = onyx_env_list_devices(env, provider, &list);
    Py_END_ALLOW_THREADS
    if (st) return ext_raise(st);
    size_t n = onyx_device_list_count(list);
    PyObject *result = PyList_New((Py_ssize_t)n);
    for (size_t i = 0; result && i < n; i++) {
        PyObject *d = device_dict(list, i);
        if (!d) Py_CLEAR(result);
        else PyList_SET_ITEM(result, (Py_ssize_t)i, d);
    }
    onyx_device_list_free(list);
    return result;
}

static PyObject *dtype_for(PyObject *self, PyObject *arg) {
    (void)self;
    long t = PyLong_AsLong(arg);
    if (t == -1 && PyErr_Occurred()) return NULL;
    return (PyObject *)ext_descr_for((onyx_dtype)t);
}

/* compile_model(env, model_path, out_path, level, format, external_data_min) */
static PyObject *compile_model(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *capsule;
    const char *src, *dst;
    int level, format;
    unsigned long long external_min;
    if (!PyArg_ParseTuple(args, "OssiiK", &capsule, &src, &dst, &level, &format, &external_min))
        return NULL;
    onyx_env *env = ext_env_of(capsule);
    if (!env) return NULL;
    onyx_status *st;
    Py_BEGIN_ALLOW_THREADS st = onyx_compile_model(env, src, dst, (onyx_opt_level)level,
                                                   (onyx_model_format)format, (size_t)external_min);
    Py_END_ALLOW_THREADS
    if (st) return ext_raise(st);
    Py_RETURN_NONE;
}

static PyMethodDef module_methods[] = {
    {"compile_model", compile_model, METH_VARARGS,
     "compile_model(env, model_path, out_path, level, format, external_data_min)"},
    {"new_env", new_env, METH_NOARGS, "a new onyx_env, as a capsule"},
    {"providers", providers, METH_O, "providers(env): the providers of this build"},
    {"list_devices", list_devices, METH_VARARGS,
     "list_devices(env, provider): a dict of properties per device"},
    {"dtype_for", dtype_for, METH_O, "the numpy dtype of an onyx element type (its number)"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT, "onyx._onyx", "The C side of the onyx package (include/onyx.h).",
    -1, module_methods, NULL, NULL, NULL, NULL,
};

static int add_type(PyObject *m, PyTypeObject *type, const char *name) {
    if (PyType_Ready(type) < 0) return -1;
    return PyModule_AddObjectRef(m, name, (PyObject *)type);
}

PyMODINIT_FUNC PyInit__onyx(void) {
    import_array();
    PyObject *m = PyModule_Create(&module_def);
    if (!m) return NULL;
    if (ext_errors_init(m) < 0 || ext_dtypes_init(m) < 0 ||
        add_type(m, &ext_tensor_type, "Tensor") < 0 ||
        add_type(m, &ext_session_type, "Session") < 0 ||
        add_type(m, &ext_run_options_type, "RunOptions") < 0 ||
        PyModule_AddStringConstant(m, "version", onyx_version()) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
