/* Provider options: string key/value pairs a caller gives one provider
 * (onyx_session_options_set_provider_option, `onyx run --providers
 * vulkan:device=0`). Each factory says which keys it knows, so a typo is an
 * error that names the known keys rather than a setting silently ignored. */
#include <stdio.h>
#include <string.h>

#include "ep/ep.h"

const char *ox_ep_option(const ox_ep_options *o, const char *key) {
    for (int i = 0; o && i < o->n; i++)
        if (strcmp(o->keys[i], key) == 0) return o->values[i];
    return NULL;
}

int ox_ep_options_allow(const ox_ep_options *o, const char *provider, const char *const *known,
                        int n_known, ox_error *err) {
    for (int i = 0; o && i < o->n; i++) {
        int ok = 0;
        for (int k = 0; k < n_known && !ok; k++) ok = strcmp(o->keys[i], known[k]) == 0;
        if (ok) continue;
        char list[256] = "";
        size_t off = 0;
        for (int k = 0; k < n_known && off < sizeof list; k++)
            off += (size_t)snprintf(list + off, sizeof list - off, "%s%s", k ? ", " : "", known[k]);
        return ox_fail(err, ONYX_INVALID_ARGUMENT, "provider '%s' has no option '%s' (%s%s)", provider,
                       o->keys[i], n_known ? "its options: " : "it takes none", list);
    }
    return 0;
}
