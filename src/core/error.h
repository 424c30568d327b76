/* Internal error reporting: every fallible internal function returns int
 * (0 on success, -1 on failure) and fills an ox_error owned by the caller.
 * The public API turns an ox_error into an onyx_status. */
#ifndef ONYX_CORE_ERROR_H
#define ONYX_CORE_ERROR_H

#include "onyx.h"

#define OX_ERROR_MSG_MAX 1024

typedef struct ox_error {
    onyx_code code;
    char msg[OX_ERROR_MSG_MAX];
} ox_error;

/* Sets err (if not NULL) and returns -1 so callers can write
 * `return ox_fail(err, ONYX_INVALID_ARGUMENT, "...", ...);`. */
int ox_fail(ox_error *err, onyx_code code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Prefixes an existing message, e.g. with the node that failed. */
void ox_error_prefix(ox_error *err, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

void ox_error_clear(ox_error *err);

#endif
