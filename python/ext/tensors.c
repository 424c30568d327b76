/* numpy arrays <-> onyx tensors. Inputs: an array that is C-contiguous,
 * aligned and of the input's dtype is wrapped (onyx_tensor_wrap: onyx
 * reads the caller's memory in place); anything else is converted once.
 * Outputs: the array is made over the memory of the tensor onyx returned,
 * and its base is an onyx._onyx.Tensor that frees the tensor when the
 * last array over it goes. Strings are copied both ways (onyx keeps them
 * as C strings, numpy as UCS-4 or objects). */
#include "onyx_ext.h"

#include <string.h>

/* ---- the owner of an output tensor ---- */

typedef struct {
    PyObject_HEAD onyx_tensor *tensor;
} tensor_object;

static void tensor_dealloc(tensor_object *self) {
    onyx_tensor_free(self->tensor);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

/* onyx_tensor_data of the tensor: what the zero-copy tests compare the
 * array's address with */
static PyObject *tensor_data_ptr(tensor_object *self, void *closure) {
    (void)closure;
    return PyLong_FromVoidPtr(onyx_tensor_data(self->tensor));
}

static PyObject *tensor_nbytes(tensor_object *self, void *closure) {
    (void)closure;
    return PyLong_FromSize_t(onyx_tensor_nbytes(self->tensor));
}

static PyGetSetDef tensor_getset[] = {
    {"data_ptr", (getter)tensor_data_ptr, NULL, "address of the tensor's data (onyx_tensor_data)",
     NULL},
    {"nbytes", (getter)tensor_nbytes, NULL, "bytes of the tensor's data", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

PyTypeObject ext_tensor_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "onyx._onyx.Tensor",
    .tp_basicsize = sizeof(tensor_object),
    .tp_dealloc = (destructor)tensor_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "A tensor onyx returned; the base of the numpy arrays over its memory.",
    .tp_getset = tensor_getset,
};

/* ---- inputs ---- */

#define MAX_RANK 64 /* numpy's NPY_MAXDIMS (2.x); 1.x allows 32 */

static int dims_of(PyArrayObject *arr, int64_t *dims) {
    int rank = PyArray_NDIM(arr);
    for (int i = 0; i < rank; i++) dims[i] = (int64_t)PyArray_DIM(arr, i);
    return rank;
}

static int string_tensor(const char *name, PyObject *value, onyx_tensor **out) {
    PyArrayObject *arr = (PyArrayObject *)PyArray_FROM_O(value);
    if (!arr) return -1;
    int64_t dims[MAX_RANK];
    int rank = dims_of(arr, dims);
    onyx_status *st = onyx_tensor_create(ONYX_STRING, dims, rank, out);
    if (st) {
        Py_DECREF(arr);
        ext_raise(st);
        return -1;
    }
    PyObject *flat = PyArray_Ravel(arr, NPY_CORDER);
    Py_DECREF(arr);
    if (!flat) goto fail;
    npy_intp n = PyArray_SIZE((PyArrayObject *)flat);
    for (npy_intp i = 0; i < n; i++) {
        PyObject *item = PySequence_GetItem(flat, i);
        if (!item) goto fail_flat;
        /* numpy's str_ is a str subclass: unicode and object arrays alike */
        const char *s = PyUnicode_Check(item) ? PyUnicode_AsUTF8(item) : NULL;
        if (!s) {
            if (!PyErr_Occurred())
                ext_raise_code(ONYX_INVALID_ARGUMENT,
                               "input '%s': element %zd of a string tensor is %s, not str", name,
                               (Py_ssize_t)i, Py_TYPE(item)->tp_name);
            Py_DECREF(item);
            goto fail_flat;
        }
        st = onyx_tensor_set_string(*out, (int64_t)i, s);
        Py_DECREF(item);
        if (st) {
            ext_raise(st);
            goto fail_flat;
        }
    }
    Py_DECREF(flat);
    return 0;
fail_flat:
    Py_DECREF(flat);
fail:
    onyx_tensor_free(*out);
    *out = NULL;
    return -1;
}

/* the array onyx reads: the caller's own when it can be, else one copy */
static PyArrayObject *array_for(const char *name, PyObject *value, onyx_dtype want) {
    if (!PyArray_Check(value)) { /* lists, scalars: numpy converts them to the input's type */
        PyArray_Descr *descr = want ? ext_descr_for(want) : NULL;
        if (want && !descr) return NULL;
        return (PyArrayObject *)PyArray_FromAny(value, descr, 0, 0, NPY_ARRAY_IN_ARRAY, NULL);
    }
    PyArrayObject *arr = (PyArrayObject *)value;
    if (want && !ext_descr_matches(PyArray_DESCR(arr), want)) {
        PyObject *got = PyObject_Str((PyObject *)PyArray_DESCR(arr));
        ext_raise_code(ONYX_INVALID_ARGUMENT,
                       "input '%s': expected tensor(%s), got a numpy array of dtype %S", name,
                       ext_onnx_type_name(want), got ? got : Py_None);
        Py_XDECREF(got);
        return NULL;
    }
    if (PyArray_IS_C_CONTIGUOUS(arr) && PyArray_ISALIGNED(arr)) {
        Py_INCREF(arr);
        return arr;
    }
    return (PyArrayObject *)PyArray_NewCopy(arr, NPY_CORDER);
}

int ext_tensor_from_value(const char *name, PyObject *value, onyx_dtype want,
                          onyx_tensor **out, PyObject **keep) {
    *out = NULL;
    *keep = NULL;
    int is_string = want == ONYX_STRING;
    if (!want && PyArray_Check(value)) {
        want = ext_dtype_of_descr(PyArray_DESCR((PyArrayObject *)value));
        is_string = want == ONYX_STRING;
    }
    if (is_string) return string_tensor(name, value, out);
    PyArrayObject *arr = array_for(name, value, want);
    if (!arr) return -1;
    if (!want) want = ext_dtype_of_descr(PyArray_DESCR(arr));
    if (want == ONYX_STRING) {
        Py_DECREF(arr);
        return string_tensor(name, value, out);
    }
    if (!want || PyArray_NDIM(arr) > MAX_RANK) {
        PyObject *got = PyObject_Str((PyObject *)PyArray_DESCR(arr));
        ext_raise_code(ONYX_INVALID_ARGUMENT, "input '%s': numpy dtype %S has no onnx type", name,
                       got ? got : Py_None);
        Py_XDECREF(got);
        Py_DECREF(arr);
        return -1;
    }
    int64_t dims[MAX_RANK];
    int rank = dims_of(arr, dims);
    onyx_status *st = onyx_tensor_wrap(want, dims, rank, PyArray_DATA(arr),
                                       (size_t)PyArray_NBYTES(arr), out);
    if (st) {
        Py_DECREF(arr);
        ext_raise(st);
        return -1;
    }
    *keep = (PyObject *)arr;
    return 0;
}

/* ---- outputs ---- */

static PyObject *string_array(const onyx_tensor *t, int rank, npy_intp *dims) {
    PyArrayObject *arr = (PyArrayObject *)PyArray_SimpleNew(rank, dims, NPY_OBJECT);
    if (!arr) return NULL;
    PyObject **items = (PyObject **)PyArray_DATA(arr);
    int64_t n = onyx_tensor_numel(t);
    for (int64_t i = 0; i < n; i++) {
        const char *s = onyx_tensor_string(t, i);
        PyObject *u = PyUnicode_DecodeUTF8(s ? s : "", s ? (Py_ssize_t)strlen(s) : 0, "replace");
        if (!u) {
            Py_DECREF(arr);
            return NULL;
        }
        Py_XSETREF(items[i], u); /* the new array holds None's */
    }
    return (PyObject *)arr;
}

/* The array of a dense tensor; owner (a Tensor) keeps its memory alive. */
static PyObject *dense_array(const onyx_tensor *t, PyObject *owner) {
    int rank = onyx_tensor_rank(t);
    if (rank < 0 || rank > MAX_RANK)
        return ext_raise_code(ONYX_NOT_IMPLEMENTED, "a tensor of rank %d", rank);
    npy_intp dims[MAX_RANK];
    const int64_t *d = onyx_tensor_dims(t);
    for (int i = 0; i < rank; i++) dims[i] = (npy_intp)d[i];
    onyx_dtype dtype = onyx_tensor_dtype(t);
    if (dtype == ONYX_STRING) return string_array(t, rank, dims);
    PyArray_Descr *descr = ext_descr_for(dtype);
    if (!descr) return NULL;
    void *data = onyx_tensor_data((onyx_tensor *)t);
    if (!data || onyx_tensor_numel(t) == 0) /* nothing to share: numpy allocates */
        return PyArray_NewFromDescr(&PyArray_Type, descr, rank, dims, NULL, NULL, 0, NULL);
    PyObject *arr = PyArray_NewFromDescr(&PyArray_Type, descr, rank, dims, NULL, data,
                                         NPY_ARRAY_CARRAY, NULL);
    if (!arr) return NULL;
    Py_INCREF(owner);
    if (PyArray_SetBaseObject((PyArrayObject *)arr, owner) < 0) {
        Py_DECREF(arr);
        return NULL;
    }
    return arr;
}

static PyObject *value_of(const onyx_tensor *t, PyObject *owner) {
    switch (onyx_tensor_kind(t)) {
    case ONYX_KIND_TENSOR: return dense_array(t, owner);
    case ONYX_KIND_OPTIONAL:
        if (onyx_tensor_item_count(t) == 0) Py_RETURN_NONE;
        return value_of(onyx_tensor_item(t, 0), owner);
    case ONYX_KIND_SEQUENCE: {
        size_t n = onyx_tensor_item_count(t);
        PyObject *list = PyList_New((Py_ssize_t)n);
        for (size_t i = 0; list && i < n; i++) {
            PyObject *v = value_of(onyx_tensor_item(t, i), owner);
            if (!v) Py_CLEAR(list);
            else PyList_SET_ITEM(list, (Py_ssize_t)i, v);
        }
        return list;
    }
    }
    return ext_raise_code(ONYX_NOT_IMPLEMENTED, "a value of kind %d",
                          (int)onyx_tensor_kind(t));
}

PyObject *ext_value_from_tensor(onyx_tensor *tensor) {
    if (!tensor) Py_RETURN_NONE; /* defensive: no value was produced */
    tensor_object *owner = PyObject_New(tensor_object, &ext_tensor_type);
    if (!owner) {
        onyx_tensor_free(tensor);
        return NULL;
    }
    owner->tensor = tensor;
    /* the items of sequences and optionals live in their parent: every
     * array made from them holds the one owner */
    PyObject *v = value_of(tensor, (PyObject *)owner);
    Py_DECREF(owner);
    return v;
}
