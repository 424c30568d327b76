/* Session creation alone, in a fresh process (the first creation pays
 * what later ones share, as a user's program does): load_bench MODEL
 * [--threads N] prints one JSON object with the creation time, the
 * resident memory it added (peak, VmHWM, and after creation: private
 * (anonymous) and file-backed pages, which processes mapping the same file
 * share) and the model's weight bytes. bench/load runs it on .onnx and
 * .onyx files beside ONNX Runtime. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "onyx.h"

/* A "Name:   N kB" line of /proc/self/status, in bytes; -1 if absent. */
static long long status_bytes(const char *name) {
    FILE *f = fopen("/proc/self/status", "r");
    if (!f) return -1;
    char line[256];
    long long v = -1;
    size_t n = strlen(name);
    while (fgets(line, sizeof line, f))
        if (strncmp(line, name, n) == 0 && line[n] == ':') {
            v = strtoll(line + n + 1, NULL, 10) * 1024;
            break;
        }
    fclose(f);
    return v;
}

static double mib(long long b) { return (double)b / (1024.0 * 1024.0); }

int main(int argc, char **argv) {
    const char *model = NULL;
    int threads = 1;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--threads") == 0 && i + 1 < argc) threads = atoi(argv[++i]);
        else model = argv[i];
    }
    if (!model) {
        fprintf(stderr, "usage: load_bench MODEL [--threads N]\n");
        return 2;
    }
    long long hwm0 = status_bytes("VmHWM"), anon0 = status_bytes("RssAnon");
    long long file0 = status_bytes("RssFile");
    onyx_env *env = NULL;
    onyx_session_options *o = NULL;
    onyx_session *s = NULL;
    onyx_status *st = onyx_env_create(&env);
    if (!st) st = onyx_session_options_create(&o);
    if (!st) st = onyx_session_options_set_threads(o, threads);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    if (!st) st = onyx_session_create(env, model, o, &s);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    if (st) {
        fprintf(stderr, "load_bench: %s\n", onyx_status_message(st));
        return 1;
    }
    double ms = (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
    long long hwm = status_bytes("VmHWM"), anon = status_bytes("RssAnon"), file = status_bytes("RssFile");
    printf("{\"runtime\": \"onyx\", \"version\": \"%s\", \"create_ms\": %.3f, "
           "\"peak_growth_mib\": %.1f, \"anon_growth_mib\": %.1f, \"file_growth_mib\": %.1f, "
           "\"weight_mib\": %.1f}\n",
           onyx_version(), ms, mib(hwm - hwm0), mib(anon - anon0), mib(file - file0),
           mib(onyx_session_parameter_bytes(s)));
    onyx_session_free(s);
    onyx_session_options_free(o);
    onyx_env_free(env);
    return 0;
}
