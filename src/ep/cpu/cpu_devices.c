/* The CPU provider's device record: the processor's model name, its
 * online cores, and the instruction-set levels the convolution and GEMM
 * kernels choose from at run time (conv_fast.h), with the one they use. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ep/cpu/kernels/conv_fast.h"
#include "ep/devices.h"

/* "model name" from /proc/cpuinfo (Linux); "unknown" elsewhere. */
static void model_name(char *buf, size_t size) {
    snprintf(buf, size, "unknown");
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f) return;
    char line[512];
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "model name", 10) != 0) continue;
        const char *v = strchr(line, ':');
        if (!v) continue;
        v += 1 + strspn(v + 1, " \t");
        snprintf(buf, size, "%.*s", (int)strcspn(v, "\n"), v);
        break;
    }
    fclose(f);
}

int ox_cpu_list_devices(ox_device_list *out, ox_error *err) {
    char name[256];
    model_name(name, sizeof name);
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    ox_cpu_isa best = ox_cpu_isa_best(), active = ox_cpu_isa_active();
    char levels[64] = "portable";
    for (int i = OX_ISA_AVX2; i <= (int)best; i++) {
        size_t len = strlen(levels);
        snprintf(levels + len, sizeof levels - len, ", %s", ox_cpu_isa_name((ox_cpu_isa)i));
    }
    const char *cap = getenv("ONYX_CPU_ISA");
    if (ox_devlist_add_device(out, err) != 0 || ox_devlist_set(out, err, "provider", "cpu") != 0 ||
        ox_devlist_set(out, err, "index", "0") != 0 || ox_devlist_set(out, err, "name", "%s", name) != 0 ||
        ox_devlist_set(out, err, "usable", "yes") != 0 ||
        ox_devlist_set(out, err, "cores_online", "%ld", cores > 0 ? cores : 1) != 0 ||
        ox_devlist_set(out, err, "isa_levels", "%s", levels) != 0 ||
        ox_devlist_set(out, err, "isa_used", "%s%s%s%s", ox_cpu_isa_name(active), cap ? " (ONYX_CPU_ISA=" : "",
                       cap ? cap : "", cap ? ")" : "") != 0)
        return -1;
    /* whether a 512-bit operation runs whole or in two halves (what the
     * optimizer's channel blocking weighs, cpu_isa.h) */
    int split = 0;
    if (best == OX_ISA_AVX512 &&
        (ox_cpu_512_split(&split, err) != 0 ||
         ox_devlist_set(out, err, "vector_512", "%s", split ? "split (two 256-bit halves)" : "full") != 0))
        return -1;
    return 0;
}
