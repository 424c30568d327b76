/* The instruction-set variant of the CPU kernels (see cpu_isa.h). */
#include "ep/cpu/kernels/cpu_isa.h"

#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__) && defined(__GNUC__)
#define OX_ISA_X86 1
#include <cpuid.h>
#endif


ox_cpu_isa ox_cpu_isa_best(void) {
#ifdef OX_ISA_X86
    if (__builtin_cpu_supports("avx512f")) return OX_ISA_AVX512;
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return OX_ISA_AVX2;
#endif
    return OX_ISA_PORTABLE;
}

/* The cap ONYX_CPU_ISA names: 1 when set to a known value, 0 when unset,
 * -1 when set to something else. */
static int isa_cap(ox_cpu_isa *cap) {
    const char *e = getenv("ONYX_CPU_ISA");
    if (!e) return 0;
    if (strcmp(e, "portable") == 0) *cap = OX_ISA_PORTABLE;
    else if (strcmp(e, "avx2") == 0) *cap = OX_ISA_AVX2;
    else if (strcmp(e, "avx512") == 0) *cap = OX_ISA_AVX512;
    else return -1;
    return 1;
}

ox_cpu_isa ox_cpu_isa_active(void) {
    ox_cpu_isa best = ox_cpu_isa_best(), cap;
    return isa_cap(&cap) == 1 && cap < best ? cap : best;
}

int ox_cpu_isa_choose(ox_cpu_isa *out, ox_error *err) {
    ox_cpu_isa best = ox_cpu_isa_best(), cap;
    int r = isa_cap(&cap);
    if (r < 0)
        return ox_fail(err, ONYX_INVALID_ARGUMENT,
                       "ONYX_CPU_ISA is '%s'; expected portable, avx2 or avx512",
                       getenv("ONYX_CPU_ISA"));
    *out = r == 1 && cap < best ? cap : best;
    return 0;
}

/* 1 on an AMD CPU of family 19h (Zen 3 and Zen 4; of these only Zen 4
 * has AVX-512, and its 512-bit operations take two passes through the
 * 256-bit units, AMD's Software Optimization Guide for family 19h). */
static int amd_family_19h(void) {
#ifdef OX_ISA_X86
    unsigned a, b, c, d;
    if (!__get_cpuid(0, &a, &b, &c, &d)) return 0;
    /* "AuthenticAMD" in ebx, edx, ecx */
    if (b != 0x68747541u || d != 0x69746e65u || c != 0x444d4163u) return 0;
    if (!__get_cpuid(1, &a, &b, &c, &d)) return 0;
    unsigned family = (a >> 8) & 0xfu;
    if (family == 0xfu) family += (a >> 20) & 0xffu;
    return family == 0x19u;
#else
    return 0;
#endif
}

int ox_cpu_512_split(int *out, ox_error *err) {
    const char *e = getenv("ONYX_CPU_512");
    if (!e) *out = amd_family_19h();
    else if (strcmp(e, "full") == 0) *out = 0;
    else if (strcmp(e, "split") == 0) *out = 1;
    else return ox_fail(err, ONYX_INVALID_ARGUMENT, "ONYX_CPU_512 is '%s'; expected full or split", e);
    return 0;
}

const char *ox_cpu_isa_name(ox_cpu_isa isa) {
    return isa == OX_ISA_AVX512 ? "avx512" : isa == OX_ISA_AVX2 ? "avx2" : "portable";
}
