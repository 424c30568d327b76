#include "core/error.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

int ox_fail(ox_error *err, onyx_code code, const char *fmt, ...) {
    if (!err) return -1;
    err->code = code;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    va_end(ap);
    return -1;
}

void ox_error_prefix(ox_error *err, const char *fmt, ...) {
    if (!err) return;
    char prefix[OX_ERROR_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(prefix, sizeof prefix, fmt, ap);
    va_end(ap);
    /* Prefix and message together may exceed the buffer; the tail of
     * the message is what gets cut. */
    char joined[2 * OX_ERROR_MSG_MAX + 2];
    snprintf(joined, sizeof joined, "%s: %s", prefix, err->msg);
    memcpy(err->msg, joined, OX_ERROR_MSG_MAX - 1);
    err->msg[OX_ERROR_MSG_MAX - 1] = '\0';
}

void ox_error_clear(ox_error *err) {
    if (!err) return;
    err->code = ONYX_OK;
    err->msg[0] = '\0';
}
