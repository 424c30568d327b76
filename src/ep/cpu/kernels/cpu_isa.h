/* Which instruction-set variant of the CPU kernels runs: chosen at run
 * time from the machine (cpu_isa.c), so one build serves AVX-512, AVX2
 * and older x86-64 machines alike. */
#ifndef ONYX_EP_CPU_KERNELS_CPU_ISA_H
#define ONYX_EP_CPU_KERNELS_CPU_ISA_H

#include "core/error.h"

/* Instruction-set variants, best last. The environment variable
 * ONYX_CPU_ISA ("portable", "avx2", "avx512") caps the choice below what
 * the machine has, so tests run every variant on one machine. */
typedef enum ox_cpu_isa { OX_ISA_PORTABLE = 0, OX_ISA_AVX2 = 1, OX_ISA_AVX512 = 2 } ox_cpu_isa;

/* The best variant this machine supports. */
ox_cpu_isa ox_cpu_isa_best(void);
/* ox_cpu_isa_best capped by ONYX_CPU_ISA (an unknown value caps nothing;
 * ox_cpu_isa_choose refuses it). */
ox_cpu_isa ox_cpu_isa_active(void);
/* The same, read once by a kernel's init: fails naming ONYX_CPU_ISA when
 * its value is none of portable, avx2, avx512. */
int ox_cpu_isa_choose(ox_cpu_isa *out, ox_error *err);
/* 1 when this CPU runs a 512-bit vector operation as two 256-bit halves
 * (AMD Zen 4, family 19h): AVX-512 then gives no more multiply-adds per
 * cycle than AVX2, only more registers, and kernels whose only gain is
 * the wider multiply-add lose to ones that do fewer of them. The
 * environment variable ONYX_CPU_512 ("full" or "split") overrides what
 * the CPU says, so tests take both choices on one machine; fails naming
 * it when set to anything else. */
int ox_cpu_512_split(int *out, ox_error *err);
/* "portable", "avx2" or "avx512". */
const char *ox_cpu_isa_name(ox_cpu_isa isa);

#endif
