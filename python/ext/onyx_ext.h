/* The extension module onyx._onyx: shared declarations of its files.
 * module.c (init, the env, devices), errors.c (onyx_status -> Python
 * exceptions), dtypes.c (onyx element types <-> numpy dtypes), tensors.c
 * (numpy arrays <-> onyx tensors, without copies where possible),
 * session.c (the Session type and run), run_options.c (RunOptions).
 * Only include/onyx.h is used: the binding is a client of the public API. */
#ifndef ONYX_EXT_H
#define ONYX_EXT_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

/* one numpy C-API table for all the files of the module */
#define PY_ARRAY_UNIQUE_SYMBOL onyx_ext_numpy_api
#ifndef ONYX_EXT_MODULE_C
#define NO_IMPORT_ARRAY
#endif
#include <numpy/arrayobject.h>

#include "onyx.h"

/* ---- errors.c ---- */
int ext_errors_init(PyObject *module);
/* Raises the exception class of the status's code with its message, frees
 * the status, returns NULL. */
PyObject *ext_raise(onyx_status *status);
/* Raises onyx's exception class for code with a formatted message. */
PyObject *ext_raise_code(onyx_code code, const char *fmt, ...);

/* ---- dtypes.c ---- */
/* Looks up ml_dtypes (optional) once at import. */
int ext_dtypes_init(PyObject *module);
/* The numpy dtype arrays of this onyx type have (new reference): the
 * ml_dtypes type for bfloat16, float8, int4... when ml_dtypes is
 * installed, else their storage (uint8/int8/uint16 bits); object for
 * strings. NULL with an exception for an unknown type. */
PyArray_Descr *ext_descr_for(onyx_dtype dtype);
/* Whether an array of descr can be handed to onyx as this type as is
 * (the type's dtype, or for the ml_dtypes types also their storage). */
int ext_descr_matches(PyArray_Descr *descr, onyx_dtype dtype);
/* The onyx type of a numpy dtype; ONYX_UNDEFINED when none. */
onyx_dtype ext_dtype_of_descr(PyArray_Descr *descr);
/* 'tensor(float)' style names: the element part ("float", "int64"). */
const char *ext_onnx_type_name(onyx_dtype dtype);

/* ---- tensors.c ---- */
/* An onyx tensor for a Python value fed as input `name`. want is the
 * input's declared type (ONYX_UNDEFINED: the array's own). *keep receives
 * the object owning the memory the tensor reads (the caller's array when
 * it is C-contiguous, aligned and of the right dtype: no copy), to be
 * released after the run. 0 on success; -1 with an exception. */
int ext_tensor_from_value(const char *name, PyObject *value, onyx_dtype want,
                          onyx_tensor **out, PyObject **keep);
/* The Python value of a tensor onyx returned, taking ownership of it:
 * a numpy array over onyx's memory (its base an onyx._onyx.Tensor that
 * frees the tensor), an object array of str, a list for a sequence,
 * None or a value for an optional. */
PyObject *ext_value_from_tensor(onyx_tensor *tensor);
extern PyTypeObject ext_tensor_type;

/* ---- session.c ---- */
extern PyTypeObject ext_session_type;

/* ---- run_options.c ---- */
extern PyTypeObject ext_run_options_type;
/* The onyx_run_options of a RunOptions object, NULL for None; -1 with an
 * exception for anything else. */
int ext_run_options_get(PyObject *obj, const onyx_run_options **out);

/* ---- module.c ---- */
/* The env capsule's onyx_env (sessions hold a reference to the capsule). */
onyx_env *ext_env_of(PyObject *capsule);
extern const char ext_env_capsule_name[];

#endif
