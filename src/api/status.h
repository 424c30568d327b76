/* Conversion between internal ox_error and the public onyx_status. */
#ifndef ONYX_API_STATUS_H
#define ONYX_API_STATUS_H

#include "core/error.h"
#include "onyx.h"

/* NULL when err->code is ONYX_OK. */
onyx_status *ox_status_from_error(const ox_error *err);
onyx_status *ox_status_new(onyx_code code, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#endif
