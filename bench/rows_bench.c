/* The float32 row kernels that have one variant per instruction set
 * (Softmax and LayerNormalization rows): nanoseconds per row for each
 * variant this CPU runs, at the row lengths of the zoo's attention and
 * normalization layers, so the choice per ISA in elementwise_softmax.c
 * and layernorm_row.c rests on a measurement. Prints the median over 201
 * batches of 64 rows. usage: rows_bench */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "bench_clock.h"

#include "ep/cpu/kernels/cpu_isa.h"
#include "ep/cpu/kernels/elementwise.h"
#include "ep/cpu/kernels/layernorm_row.h"

#define ROWS 64
#define BATCHES 201

int main(void) {
    static const int64_t lengths[] = {49, 100, 196, 256, 300, 336, 1024, 4096};
    const size_t nl = sizeof lengths / sizeof lengths[0];
    const int64_t maxn = lengths[nl - 1];
    float *x = malloc(sizeof(float) * (size_t)(ROWS * maxn));
    float *y = malloc(sizeof(float) * (size_t)(ROWS * maxn));
    double *g = malloc(sizeof(double) * (size_t)maxn), *b = malloc(sizeof(double) * (size_t)maxn);
    static double t[BATCHES];
    if (!x || !y || !g || !b) return 1;
    for (int64_t i = 0; i < ROWS * maxn; i++) x[i] = (float)((i * 37) % 101) * 0.05f - 2.5f;
    for (int64_t i = 0; i < maxn; i++) g[i] = 1.0 + 0.001 * (double)i, b[i] = 0.01 * (double)(i % 7);
    const int best = ox_cpu_isa_best();
    size_t ns, nn;
    const ox_softmax_row_variant *sv = ox_softmax_row_variants(&ns);
    const ox_layernorm_row_variant *lv = ox_layernorm_row_variants(&nn);
    printf("ns per row, median of %d batches of %d rows\n%-22s", BATCHES, ROWS, "variant \\ length");
    for (size_t l = 0; l < nl; l++) printf(" %7lld", (long long)lengths[l]);
    printf("\n");
    for (size_t v = 0; v < ns + nn; v++) {
        int isa = v < ns ? sv[v].isa : lv[v - ns].isa;
        if (isa > best) continue;
        printf("%-9s %-12s", v < ns ? "softmax" : "layernorm", v < ns ? sv[v].name : lv[v - ns].name);
        for (size_t l = 0; l < nl; l++) {
            const int64_t n = lengths[l];
            for (int r = 0; r < BATCHES; r++) {
                double t0 = bench_now_ns();
                for (int64_t i = 0; i < ROWS; i++) {
                    if (v < ns) sv[v].row(x + i * n, y + i * n, n, 0);
                    else {
                        double mean, inv;
                        lv[v - ns].row(x + i * n, y + i * n, n, g, b, 1e-5, &mean, &inv);
                    }
                }
                t[r] = (bench_now_ns() - t0) / ROWS;
            }
            qsort(t, BATCHES, sizeof t[0], bench_cmp_double);
            printf(" %7.0f", t[BATCHES / 2]);
        }
        printf("\n");
    }
    free(x);
    free(y);
    free(g);
    free(b);
    return 0;
}
