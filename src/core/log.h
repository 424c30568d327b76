/* Diagnostics to stderr, filtered by the session's (or environment's)
 * log level. Messages carry their level so they can be grepped. */
#ifndef ONYX_CORE_LOG_H
#define ONYX_CORE_LOG_H

#include "onyx.h"

void ox_log(onyx_log_level configured, onyx_log_level level, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif
