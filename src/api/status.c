#include "api/status.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct onyx_status {
    onyx_code code;
    char msg[];
};

/* Returned when even the status cannot be allocated, so callers still see
 * a failure rather than NULL (success). It is never freed. */
static const struct {
    onyx_code code;
    char msg[32];
} OOM_STATUS = {ONYX_OUT_OF_MEMORY, "out of memory"};

static onyx_status *make(onyx_code code, const char *msg) {
    size_t n = strlen(msg) + 1;
    onyx_status *s = malloc(sizeof *s + n);
    if (!s) return (onyx_status *)&OOM_STATUS;
    s->code = code;
    memcpy(s->msg, msg, n);
    return s;
}

onyx_status *ox_status_from_error(const ox_error *err) {
    if (!err || err->code == ONYX_OK) return NULL;
    return make(err->code, err->msg[0] ? err->msg : "unknown error");
}

onyx_status *ox_status_new(onyx_code code, const char *fmt, ...) {
    char buf[OX_ERROR_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    return make(code, buf);
}

onyx_code onyx_status_code(const onyx_status *s) { return s ? s->code : ONYX_OK; }

const char *onyx_status_message(const onyx_status *s) { return s ? s->msg : ""; }

void onyx_status_free(onyx_status *s) {
    if (s && s != (const onyx_status *)&OOM_STATUS) free(s);
}
