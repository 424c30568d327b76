/* One-node (or few-node) models run on the Vulkan provider and on the CPU
 * provider, outputs compared (test_vulkan_ep and its case files
 * vulkan_cases_*.c). Float32 outputs are compared with the case's
 * tolerance class, every other type exactly. */
#ifndef ONYX_TESTS_VULKAN_CASE_H
#define ONYX_TESTS_VULKAN_CASE_H

#include <stdint.h>

#include "ep/ep.h"
#include "model_builder.h"
#include "onyx.h"

#define VC_MAX_IN 6
#define VC_MAX_OUT 4

/* |vulkan - cpu| <= rtol * |cpu| + atol, per class:
 * TOL_EW  elementwise, data movement: 1e-5 relative + 1e-6 absolute
 * TOL_MM  MatMul, Gemm, Softmax, Conv, reductions, normalizations (other
 *         summation orders): 1e-4 relative + 1e-5 absolute */
enum { TOL_EW, TOL_MM, VC_TOL_CLASSES };
extern const char *const VC_TOL_NAMES[VC_TOL_CLASSES];

typedef struct vcase {
    const char *label;
    mb_model *m;
    int n_in;
    const char *names[VC_MAX_IN];
    onyx_tensor *ins[VC_MAX_IN];
    int n_out; /* 0: one float32 output "y" */
    const char *out_names[VC_MAX_OUT];
    int out_dtypes[VC_MAX_OUT];
    int tol;
    int n_weights; /* initializers read by device nodes (they stay resident) */
    /* of those, the ones the device must hold as float16 (none where
     * ONYX_VK_DISABLE masks fp16); checked when set */
    int half_weights;
} vcase;

extern onyx_env *env;
extern int n_cases;
/* dispatches split over the budget, and their slices, in every case so far */
extern long vc_split, vc_slices;
/* per tolerance class: the largest |diff| / bound, |diff|, and |diff| /
 * |cpu| where |cpu| > 1e-3 */
extern double worst[VC_TOL_CLASSES], max_abs[VC_TOL_CLASSES], max_rel[VC_TOL_CLASSES];

float frand(float lo, float hi);
int64_t count(const int64_t *dims, int rank);

void vc_begin(vcase *c, const char *label, int opset, int tol);
/* A float32 graph input of this shape, filled from [lo, hi). */
void vc_input(vcase *c, const char *name, const int64_t *dims, int rank, float lo, float hi);
/* An integer (int32/int64) or bool graph input with these values. */
void vc_input_int(vcase *c, const char *name, int dtype, const int64_t *dims, int rank,
                  const int64_t *vals);
/* Declares a graph output (in order); without any, the output is "y",
 * float32. */
void vc_output(vcase *c, const char *name, int dtype);
/* Runs the case both ways; the Vulkan session must place `expect_vk`
 * nodes on the device and dispatch them. With fail_needle, both runs must
 * fail, the Vulkan one with that text in its message. Frees the case. */
void vc_run_expect(vcase *c, int expect_vk, const char *fail_needle);
void vc_run(vcase *c, int expect_vk);
onyx_session *vc_session(const uint8_t *buf, size_t len, int with_vulkan);
int vc_on_vulkan(const onyx_session *s);

/* The case files' entry points. */
void vulkan_nn_cases(void);
/* onyx FusedConv on the device (vulkan_cases_fused.c). */
void vulkan_fused_cases(void);
void vulkan_data_cases(void);
/* Masked limits, the dispatch budget and the fence timeout (vulkan_cases_bounds.c). */
void vulkan_bounds_cases(ox_ep *probe);
void vulkan_index_cases(void);

#endif
