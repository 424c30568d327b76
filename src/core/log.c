#include "core/log.h"

#include <stdarg.h>
#include <stdio.h>

void ox_log(onyx_log_level configured, onyx_log_level level, const char *fmt, ...) {
    static const char *const NAMES[] = {"error", "warning", "info", "verbose"};
    if (level > configured) return;
    char line[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    /* one fputs per line keeps lines whole when runs log concurrently */
    char out[1100];
    snprintf(out, sizeof out, "onyx [%s] %s\n", NAMES[level], line);
    fputs(out, stderr);
}
