/* onyx devices: the devices each provider sees, usable or not, as the
 * public API lists them (onyx_env_list_devices): a table per device, or a
 * JSON array of objects for tools. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

void usage_devices(void) {
    printf("usage: onyx devices [options]\n"
           "\n"
           "Lists the devices of every provider (or of one), without loading a\n"
           "model: for the CPU its model, cores and the instruction-set levels\n"
           "its kernels choose from; for Vulkan every device the driver offers,\n"
           "usable or not (with the reason), its driver and version, features,\n"
           "compute limits, memory heaps and types, and the driver denylist\n"
           "rules that match it. ONYX_VK_FAKE_DEVICE shows a faked record.\n"
           "\n"
           "options:\n"
           "  --json           one JSON array of objects (string values), one per\n"
           "                   device; a provider that cannot list its devices is\n"
           "                   an object with \"provider\" and \"error\"\n"
           "  --provider NAME  only this provider (cpu, vulkan); its failure to\n"
           "                   list (no loader, no driver) is then an error\n"
           "  -h, --help       show this help\n"
           "\n"
           "Without --provider, a provider that cannot list its devices is\n"
           "reported (a note, or a JSON error object) and the exit status is 0\n"
           "as long as one provider listed its devices.\n");
}

/* A JSON string: quotes, backslashes and control characters escaped,
 * and bytes that are not UTF-8 written as U+FFFD, so any driver text
 * gives valid JSON. */
static void json_string(const char *s) {
    const unsigned char *p = (const unsigned char *)s;
    putchar('"');
    while (*p) {
        unsigned c = *p;
        if (c == '"' || c == '\\') {
            printf("\\%c", c);
            p++;
        } else if (c < 0x20 || c == 0x7f) {
            printf("\\u%04x", c);
            p++;
        } else if (c < 0x80) {
            putchar((int)c);
            p++;
        } else {
            int n = c >= 0xf0 && c < 0xf5 ? 3 : c >= 0xe0 ? 2 : c >= 0xc2 && c < 0xe0 ? 1 : -1;
            int ok = n > 0;
            for (int k = 1; ok && k <= n; k++) ok = (p[k] & 0xc0) == 0x80;
            if (!ok) {
                printf("\\ufffd");
                p++;
            } else {
                fwrite(p, 1, (size_t)n + 1, stdout);
                p += n + 1;
            }
        }
    }
    putchar('"');
}

/* Prints one provider's devices; returns the status of the listing. */
static onyx_status *show(const onyx_env *env, const char *provider, int json, int *first) {
    onyx_device_list *l = NULL;
    onyx_status *st = onyx_env_list_devices(env, provider, &l);
    if (st) return st;
    for (size_t d = 0; d < onyx_device_list_count(l); d++) {
        size_t n = onyx_device_property_count(l, d), width = 0;
        const char *key, *value;
        for (size_t k = 0; k < n; k++) {
            onyx_status *e = onyx_device_property(l, d, k, &key, &value);
            if (e) {
                onyx_device_list_free(l);
                return e;
            }
            if (strlen(key) > width) width = strlen(key);
        }
        if (json) {
            printf("%s\n  {", *first ? "" : ",");
            *first = 0;
        } else {
            const char *name = onyx_device_property_find(l, d, "name");
            char *shown = cli_escape(name ? name : "?");
            printf("%s%s device %zu: %s\n", *first ? "" : "\n", provider, d, shown);
            free(shown);
            *first = 0;
        }
        for (size_t k = 0; k < n; k++) {
            onyx_status *e = onyx_device_property(l, d, k, &key, &value);
            if (e) {
                onyx_device_list_free(l);
                return e;
            }
            if (json) {
                printf("%s\n    ", k ? "," : "");
                json_string(key);
                printf(": ");
                json_string(value);
            } else {
                /* driver text is not ours: escaped like model text */
                char *shown = cli_escape(value);
                printf("  %-*s  %s\n", (int)width, key, shown);
                free(shown);
            }
        }
        if (json) printf("\n  }");
    }
    onyx_device_list_free(l);
    return NULL;
}

int cmd_devices(int argc, char **argv) {
    int json = 0;
    const char *only = NULL;
    for (int i = 1; i < argc; i++) {
        if (cli_is_help(argv[i])) {
            usage_devices();
            return CLI_OK;
        }
        int r = cli_option_value(argc, argv, &i, "--provider", &only);
        if (r < 0) return CLI_FAIL;
        if (r > 0) continue;
        if (strcmp(argv[i], "--json") == 0) json = 1;
        else if (argv[i][0] == '-') return cli_error("unknown option '%s' (see 'onyx devices --help')", argv[i]);
        else return cli_error("onyx devices takes no arguments, got '%s'", argv[i]);
    }
    onyx_env *env = NULL;
    onyx_status *st = onyx_env_create(&env);
    if (st) return cli_status(st);
    int first = 1, listed = 0, rc = CLI_OK;
    if (json) printf("[");
    if (only) {
        st = show(env, only, json, &first);
        if (st) {
            if (json) printf("]\n");
            onyx_env_free(env);
            return cli_status(st);
        }
        listed = 1;
    } else {
        for (size_t p = 0; p < onyx_env_provider_count(env); p++) {
            const char *name = onyx_env_provider_name(env, p);
            st = show(env, name, json, &first);
            if (!st) {
                listed++;
                continue;
            }
            if (json) {
                printf("%s\n  {\"provider\": ", first ? "" : ",");
                json_string(name);
                printf(", \"error\": ");
                json_string(onyx_status_message(st));
                printf("}");
                first = 0;
            } else {
                cli_note("provider %s lists no devices: %s", name, onyx_status_message(st));
            }
            onyx_status_free(st);
        }
    }
    if (json) printf("\n]\n");
    fflush(stdout);
    if (!listed) rc = cli_error("no provider could list its devices");
    else cli_flush_notes();
    onyx_env_free(env);
    return rc;
}
