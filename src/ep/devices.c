/* Device record lists (see devices.h). */
#include "ep/devices.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int ox_devlist_add_device(ox_device_list *l, ox_error *err) {
    if (l->n == l->cap) {
        int cap = l->cap ? l->cap * 2 : 4;
        ox_device_info *d = realloc(l->devs, (size_t)cap * sizeof *d);
        if (!d) return ox_fail(err, ONYX_OUT_OF_MEMORY, "out of memory");
        l->devs = d;
        l->cap = cap;
    }
    memset(&l->devs[l->n++], 0, sizeof l->devs[0]);
    return 0;
}

int ox_devlist_set(ox_device_list *l, ox_error *err, const char *key, const char *fmt, ...) {
    if (l->n == 0) return ox_fail(err, ONYX_RUNTIME_ERROR, "device property '%s' before any device", key);
    ox_device_info *d = &l->devs[l->n - 1];
    if (d->n == d->cap) {
        int cap = d->cap ? d->cap * 2 : 32;
        ox_device_prop *p = realloc(d->props, (size_t)cap * sizeof *p);
        if (!p) return ox_fail(err, ONYX_OUT_OF_MEMORY, "out of memory");
        d->props = p;
        d->cap = cap;
    }
    va_list ap;
    va_start(ap, fmt);
    int len = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    char *value = len >= 0 ? malloc((size_t)len + 1) : NULL;
    char *k = strdup(key);
    if (!value || !k) {
        free(value);
        free(k);
        return ox_fail(err, ONYX_OUT_OF_MEMORY, "out of memory");
    }
    va_start(ap, fmt);
    vsnprintf(value, (size_t)len + 1, fmt, ap);
    va_end(ap);
    d->props[d->n].key = k;
    d->props[d->n].value = value;
    d->n++;
    return 0;
}

void ox_devlist_free(ox_device_list *l) {
    if (!l) return;
    for (int i = 0; i < l->n; i++) {
        for (int k = 0; k < l->devs[i].n; k++) {
            free(l->devs[i].props[k].key);
            free(l->devs[i].props[k].value);
        }
        free(l->devs[i].props);
    }
    free(l->devs);
    memset(l, 0, sizeof *l);
}
