/* onyx element types <-> numpy dtypes. The types numpy lacks (bfloat16,
 * the float8/float6/float4 formats, int4/uint4, int2/uint2) are ml_dtypes'
 * when it is installed; without it they come back as their storage: onyx
 * holds each of them one element per byte (two for bfloat16), which is
 * ml_dtypes' layout too, so either way the bytes are shared, not copied. */
#include "onyx_ext.h"

typedef struct {
    const char *onnx;     /* the 'tensor(...)' element name */
    int npy;              /* numpy's type, or its storage for an ml_dtypes one */
    const char *ml_dtype; /* ml_dtypes attribute, NULL for numpy's own */
} dtype_spec;

/* indexed by onyx_dtype (ONNX TensorProto.DataType) */
static const dtype_spec specs[] = {
    [ONYX_FLOAT32] = {"float", NPY_FLOAT32, NULL},
    [ONYX_UINT8] = {"uint8", NPY_UINT8, NULL},
    [ONYX_INT8] = {"int8", NPY_INT8, NULL},
    [ONYX_UINT16] = {"uint16", NPY_UINT16, NULL},
    [ONYX_INT16] = {"int16", NPY_INT16, NULL},
    [ONYX_INT32] = {"int32", NPY_INT32, NULL},
    [ONYX_INT64] = {"int64", NPY_INT64, NULL},
    [ONYX_STRING] = {"string", NPY_OBJECT, NULL},
    [ONYX_BOOL] = {"bool", NPY_BOOL, NULL},
    [ONYX_FLOAT16] = {"float16", NPY_FLOAT16, NULL},
    [ONYX_FLOAT64] = {"double", NPY_FLOAT64, NULL},
    [ONYX_UINT32] = {"uint32", NPY_UINT32, NULL},
    [ONYX_UINT64] = {"uint64", NPY_UINT64, NULL},
    [ONYX_COMPLEX64] = {"complex64", NPY_COMPLEX64, NULL},
    [ONYX_COMPLEX128] = {"complex128", NPY_COMPLEX128, NULL},
    [ONYX_BFLOAT16] = {"bfloat16", NPY_UINT16, "bfloat16"},
    [ONYX_FLOAT8E4M3FN] = {"float8e4m3fn", NPY_UINT8, "float8_e4m3fn"},
    [ONYX_FLOAT8E4M3FNUZ] = {"float8e4m3fnuz", NPY_UINT8, "float8_e4m3fnuz"},
    [ONYX_FLOAT8E5M2] = {"float8e5m2", NPY_UINT8, "float8_e5m2"},
    [ONYX_FLOAT8E5M2FNUZ] = {"float8e5m2fnuz", NPY_UINT8, "float8_e5m2fnuz"},
    [ONYX_UINT4] = {"uint4", NPY_UINT8, "uint4"},
    [ONYX_INT4] = {"int4", NPY_INT8, "int4"},
    [ONYX_FLOAT4E2M1] = {"float4e2m1", NPY_UINT8, "float4_e2m1fn"},
    [ONYX_FLOAT8E8M0] = {"float8e8m0", NPY_UINT8, "float8_e8m0fnu"},
    [ONYX_UINT2] = {"uint2", NPY_UINT8, "uint2"},
    [ONYX_INT2] = {"int2", NPY_INT8, "int2"},
    [ONYX_FLOAT6E2M3] = {"float6e2m3", NPY_UINT8, "float6_e2m3fn"},
    [ONYX_FLOAT6E3M2] = {"float6e3m2", NPY_UINT8, "float6_e3m2fn"},
};
#define N_SPECS ((int)(sizeof specs / sizeof specs[0]))

/* ml_dtypes' dtypes, set once at import (NULL without ml_dtypes) */
static PyArray_Descr *ml_descrs[N_SPECS];

int ext_dtypes_init(PyObject *module) {
    PyObject *ml = PyImport_ImportModule("ml_dtypes");
    int have = ml != NULL;
    if (!ml) {
        PyErr_Clear(); /* optional: the storage types stand in */
    } else {
        for (int t = 0; t < N_SPECS; t++) {
            if (!specs[t].ml_dtype) continue;
            PyObject *type = PyObject_GetAttrString(ml, specs[t].ml_dtype);
            if (!type) { /* an older ml_dtypes without this one */
                PyErr_Clear();
                continue;
            }
            PyArray_Descr *d = NULL;
            int ok = PyArray_DescrConverter(type, &d);
            Py_DECREF(type);
            if (!ok) {
                Py_DECREF(ml);
                return -1;
            }
            ml_descrs[t] = d;
        }
        Py_DECREF(ml);
    }
    return PyModule_AddIntConstant(module, "HAVE_ML_DTYPES", have);
}

static int known(onyx_dtype t) { return (int)t > 0 && (int)t < N_SPECS && specs[t].onnx; }

PyArray_Descr *ext_descr_for(onyx_dtype dtype) {
    if (!known(dtype))
        return (PyArray_Descr *)ext_raise_code(ONYX_NOT_IMPLEMENTED,
                                               "element type %d has no numpy dtype", (int)dtype);
    if (ml_descrs[dtype]) {
        Py_INCREF(ml_descrs[dtype]);
        return ml_descrs[dtype];
    }
    return PyArray_DescrFromType(specs[dtype].npy);
}

int ext_descr_matches(PyArray_Descr *descr, onyx_dtype dtype) {
    if (!known(dtype) || dtype == ONYX_STRING) return 0;
    if (ml_descrs[dtype] && PyArray_EquivTypes(descr, ml_descrs[dtype])) return 1;
    /* numpy's own types: the same kind and size (int64 and longlong are
     * one); the storage of an ml_dtypes type: its bits */
    PyArray_Descr *own = PyArray_DescrFromType(specs[dtype].npy);
    if (!own) {
        PyErr_Clear();
        return 0;
    }
    int same = PyArray_EquivTypes(descr, own);
    Py_DECREF(own);
    return same;
}

onyx_dtype ext_dtype_of_descr(PyArray_Descr *descr) {
    for (int t = 0; t < N_SPECS; t++)
        if (ml_descrs[t] && PyArray_EquivTypes(descr, ml_descrs[t])) return (onyx_dtype)t;
    for (int t = 0; t < N_SPECS; t++) {
        if (!specs[t].onnx || specs[t].ml_dtype || t == ONYX_STRING) continue;
        if (ext_descr_matches(descr, (onyx_dtype)t)) return (onyx_dtype)t;
    }
    if (descr->type_num == NPY_UNICODE || descr->type_num == NPY_OBJECT) return ONYX_STRING;
    return ONYX_UNDEFINED;
}

const char *ext_onnx_type_name(onyx_dtype dtype) {
    return known(dtype) ? specs[dtype].onnx : "undefined";
}
