/* Device records for enumeration without a session (onyx_env_list_devices):
 * each provider that can say what devices it sees fills a list of
 * devices, each a list of (key, value) strings in a fixed order. The list
 * is a temporary object the caller owns, so nothing is kept globally. */
#ifndef ONYX_EP_DEVICES_H
#define ONYX_EP_DEVICES_H

#include "core/error.h"

typedef struct ox_device_prop {
    char *key, *value; /* owned */
} ox_device_prop;

typedef struct ox_device_info {
    ox_device_prop *props;
    int n, cap;
} ox_device_info;

typedef struct ox_device_list {
    ox_device_info *devs;
    int n, cap;
} ox_device_list;

/* Starts a new device record (the one later ox_devlist_set calls fill). */
int ox_devlist_add_device(ox_device_list *l, ox_error *err);
/* Appends key = printf(fmt, ...) to the last device record. */
int ox_devlist_set(ox_device_list *l, ox_error *err, const char *key, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
void ox_devlist_free(ox_device_list *l);

/* A provider's device lister: fills `out` with every device it can see
 * (usable or not); fails when it cannot look (no loader, no driver). */
typedef int (*ox_device_lister)(ox_device_list *out, ox_error *err);

/* The CPU provider's one device (cpu_devices.c). */
int ox_cpu_list_devices(ox_device_list *out, ox_error *err);

#endif
