/* onyx: an ONNX inference runtime.
 *
 * Conventions
 * - Every fallible call returns an onyx_status pointer: NULL on success,
 *   otherwise a status the caller frees with onyx_status_free. No call
 *   aborts on bad input.
 * - Handles are opaque. Strings returned by a handle stay valid for the
 *   handle's lifetime.
 * - Thread safety: an onyx_env and an onyx_session may be shared between
 *   threads. onyx_session_run may be called concurrently on one session;
 *   each call has its own working memory. Session options and tensors are
 *   not synchronised: do not modify one from two threads at once. Run
 *   options may be cancelled from any thread (see onyx_run_options).
 */
#ifndef ONYX_H
#define ONYX_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define ONYX_VERSION_STRING "0.1.0"

typedef enum onyx_code {
    ONYX_OK = 0,
    ONYX_INVALID_ARGUMENT = 1, /* bad argument or input tensor */
    ONYX_INVALID_MODEL = 2,    /* malformed or inconsistent model */
    ONYX_NOT_IMPLEMENTED = 3,  /* valid ONNX that onyx cannot run yet */
    ONYX_IO_ERROR = 4,
    ONYX_OUT_OF_MEMORY = 5,
    ONYX_RUNTIME_ERROR = 6, /* failure while running, e.g. index out of range */
    ONYX_NOT_FOUND = 7,
    ONYX_CANCELLED = 8, /* the run was cancelled through its run options */
    ONYX_TIMEOUT = 9,   /* the run exceeded its run options' time limit */
} onyx_code;

/* Element types; the values are ONNX TensorProto.DataType.
 *
 * The 8-bit float formats (FLOAT8*) hold one byte per element with the
 * format's bit pattern. The sub-byte types (UINT4, INT4, FLOAT4E2M1,
 * UINT2, INT2, FLOAT6E2M3, FLOAT6E3M2) are held UNPACKED in memory: one
 * element per byte, so onyx_tensor_nbytes is numel for them and data is
 * indexed like uint8. INT4 and INT2 bytes are sign-extended two's
 * complement (int8 values -8..7 and -2..1); UINT4/UINT2 bytes hold 0..15
 * and 0..3; FLOAT4E2M1 and FLOAT6* bytes hold the element's bit pattern in
 * their low 4 or 6 bits, upper bits zero. Packing happens only at the file
 * boundary: TensorProto raw_data and int32_data carry them packed as the
 * ONNX spec says (4-bit: two per byte, first element in the low nibble;
 * 2-bit: four per byte from the low bits; 6-bit: four per three bytes,
 * least significant bits first), and .npy files carry one element per
 * byte as ml_dtypes saves them (see onyx_tensor_save_npy). */
typedef enum onyx_dtype {
    ONYX_UNDEFINED = 0,
    ONYX_FLOAT32 = 1,
    ONYX_UINT8 = 2,
    ONYX_INT8 = 3,
    ONYX_UINT16 = 4,
    ONYX_INT16 = 5,
    ONYX_INT32 = 6,
    ONYX_INT64 = 7,
    ONYX_STRING = 8,
    ONYX_BOOL = 9,
    ONYX_FLOAT16 = 10,
    ONYX_FLOAT64 = 11,
    ONYX_UINT32 = 12,
    ONYX_UINT64 = 13,
    ONYX_COMPLEX64 = 14,
    ONYX_COMPLEX128 = 15,
    ONYX_BFLOAT16 = 16,
    ONYX_FLOAT8E4M3FN = 17,   /* 1-4-3, bias 7, no inf, NaN S.1111.111 */
    ONYX_FLOAT8E4M3FNUZ = 18, /* 1-4-3, bias 8, no inf or -0, NaN 0x80 */
    ONYX_FLOAT8E5M2 = 19,     /* 1-5-2, bias 15, IEEE-like inf and NaN */
    ONYX_FLOAT8E5M2FNUZ = 20, /* 1-5-2, bias 16, no inf or -0, NaN 0x80 */
    ONYX_UINT4 = 21,
    ONYX_INT4 = 22,
    ONYX_FLOAT4E2M1 = 23, /* 1-2-1, bias 1, finite only (max 6) */
    ONYX_FLOAT8E8M0 = 24, /* unsigned power of two 2^(e-127), 0xFF NaN */
    ONYX_UINT2 = 25,
    ONYX_INT2 = 26,
    ONYX_FLOAT6E2M3 = 27, /* 1-2-3, bias 1, finite only (max 7.5) */
    ONYX_FLOAT6E3M2 = 28, /* 1-3-2, bias 3, finite only (max 28) */
} onyx_dtype;

typedef enum onyx_value_kind {
    ONYX_KIND_TENSOR = 0,
    ONYX_KIND_SEQUENCE = 1,
    ONYX_KIND_OPTIONAL = 2,
} onyx_value_kind;

typedef enum onyx_log_level {
    ONYX_LOG_ERROR = 0,
    ONYX_LOG_WARNING = 1,
    ONYX_LOG_INFO = 2,
    ONYX_LOG_VERBOSE = 3,
} onyx_log_level;

typedef enum onyx_opt_level {
    ONYX_OPT_NONE = 0,  /* run the graph as loaded */
    /* semantics-preserving clean-ups: constant folding (shape chains
     * included), common subexpressions, dead code, Transpose/Reshape pairs */
    ONYX_OPT_BASIC = 1,
    /* also fusions (the default): BatchNormalization folded into a Conv
     * with constant weights, MatMul + bias + activation, LayerNormalization
     * and GELU written out in elementary operators */
    ONYX_OPT_ALL = 2,
} onyx_opt_level;

typedef struct onyx_status onyx_status;
typedef struct onyx_env onyx_env;
typedef struct onyx_session_options onyx_session_options;
typedef struct onyx_session onyx_session;
typedef struct onyx_tensor onyx_tensor;
typedef struct onyx_run_options onyx_run_options;

const char *onyx_version(void);

/* ---- status ---- */
onyx_code onyx_status_code(const onyx_status *status);
const char *onyx_status_message(const onyx_status *status);
void onyx_status_free(onyx_status *status);

/* ---- environment ----
 * Holds the registry of execution providers and the log settings. */
onyx_status *onyx_env_create(onyx_env **out);
void onyx_env_free(onyx_env *env);
onyx_status *onyx_env_set_log_level(onyx_env *env, onyx_log_level level);
/* Names of the providers this build offers, in default priority order. */
size_t onyx_env_provider_count(const onyx_env *env);
const char *onyx_env_provider_name(const onyx_env *env, size_t index);

/* ---- devices ----
 * What each provider's devices are, without a session: a snapshot taken
 * by onyx_env_list_devices (it opens and closes the driver; nothing is
 * kept in the env), read as (key, value) strings per device, freed by
 * the caller. Every device is listed, usable or not: key "usable" is
 * "yes" or "no", and "unusable_reason" says why not (too old a Vulkan,
 * no compute queue, a driver denylist rule disabling it). Keys common to
 * all providers: provider, index, name, usable. cpu: one device, with
 * cores_online, isa_levels (the instruction-set variants its kernels
 * choose from on this machine) and isa_used. vulkan: device_option (the
 * index the "device" option takes), type, vendor_id, device_id,
 * api_version, driver_name, driver_info, driver_id, driver_version (in
 * the vendor's encoding), faked (only under ONYX_VK_FAKE_DEVICE),
 * conformance_version, pipeline_cache_uuid, features (shader_int64,
 * shader_float16, shader_int8, ...), compute limits, subgroup size,
 * stages and operations, memory_heap.N, memory_type.N, and denylist (the
 * driver denylist rules matching the device). Fails with
 * ONYX_INVALID_ARGUMENT for a provider this build does not offer, and
 * with ONYX_NOT_IMPLEMENTED (a message saying which) when the provider
 * cannot look: no Vulkan loader, no driver, no device. Strings stay valid
 * until the list is freed. */
typedef struct onyx_device_list onyx_device_list;
onyx_status *onyx_env_list_devices(const onyx_env *env, const char *provider, onyx_device_list **out);
size_t onyx_device_list_count(const onyx_device_list *list);
/* 0 when device is out of range. */
size_t onyx_device_property_count(const onyx_device_list *list, size_t device);
onyx_status *onyx_device_property(const onyx_device_list *list, size_t device, size_t index,
                                  const char **key, const char **value);
/* The value of `key` for the device, or NULL when it has none. */
const char *onyx_device_property_find(const onyx_device_list *list, size_t device, const char *key);
void onyx_device_list_free(onyx_device_list *list);

/* ---- session options ---- */
onyx_status *onyx_session_options_create(onyx_session_options **out);
void onyx_session_options_free(onyx_session_options *opts);
/* Intra-op threads; 0 (the default) means one per online core. */
onyx_status *onyx_session_options_set_threads(onyx_session_options *opts, int threads);
/* Providers in priority order, e.g. {"vulkan", "cpu"}. A node goes to the
 * first provider that supports it; "cpu" is always the final fallback and
 * is appended when not named. At most 8 names (the appended "cpu" does not
 * count); a name listed twice is refused here. */
onyx_status *onyx_session_options_set_providers(onyx_session_options *opts,
                                                const char *const *names, size_t count);
/* An option for one provider, as a string; set again to replace. Each
 * provider documents its keys; session creation fails naming the key when
 * the provider does not know it, or when the session's providers do not
 * name that provider. vulkan: "device" (index among the usable Vulkan
 * devices, in the driver's order; default: a discrete GPU first),
 * "disable" (capabilities to mask: int64, fp16, subgroup, hostmap,
 * separated by ',' or '+'; added to ONYX_VK_DISABLE), "place" ("dense",
 * the default: connected groups of Vulkan nodes with no convolution or
 * matrix product run on the CPU instead, as their copies would cost more
 * than they save; "all": every node the provider can run stays on it),
 * "pipeline_cache" (a file keeping compiled pipelines between processes:
 * read at session creation when written for the same device, driver and
 * onyx version, otherwise ignored; written when the session is freed),
 * "denylist" (a driver denylist file replacing the embedded one, or
 * "none"; see docs/VULKAN_DENYLIST.md; ONYX_VK_DENYLIST does the same). */
onyx_status *onyx_session_options_set_provider_option(onyx_session_options *opts, const char *provider,
                                                      const char *key, const char *value);
onyx_status *onyx_session_options_set_optimization_level(onyx_session_options *opts,
                                                         onyx_opt_level level);
onyx_status *onyx_session_options_set_log_level(onyx_session_options *opts,
                                                onyx_log_level level);
/* Folder against which external-data locations are resolved when the
 * model is loaded from a buffer. Loading from a path uses the model's own
 * folder unless this is set. */
onyx_status *onyx_session_options_set_external_data_dir(onyx_session_options *opts,
                                                        const char *dir);
/* Caps the run-time memory the session holds across all its runs at once
 * (one count shared by concurrent runs); 0, the default, is unlimited.
 * Counted: the arenas runs take their intermediates from (including idle
 * ones kept for the next run, which are freed first when the limit is in
 * the way), every tensor a run allocates outside them (outputs whose size
 * depends on the data, outputs being built for the caller), values that
 * kernels build (sequences, optionals) and what Loop and Scan accumulate
 * (loop-carried values, per-iteration scan outputs). A run that would go
 * over the limit fails with ONYX_OUT_OF_MEMORY naming the node and the
 * numbers, before allocating; bytes return to the count when freed, and
 * outputs leave it when handed to the caller.
 * Not counted: the model's weights (initializers, loaded once at session
 * creation; see onyx_session_parameter_bytes), the caller's inputs and
 * output buffers, a kernel's internal scratch buffers (e.g. packed GEMM
 * panels), staging buffers of device copies, and small bookkeeping. */
onyx_status *onyx_session_options_set_memory_limit(onyx_session_options *opts, size_t bytes);
/* A TESTING AID: perturbs one node's outputs in every run, by more than
 * any tolerance, so that cross-checking (onyx check) can be shown to find
 * a wrong node. spec is "[fused:]<node name>[@<provider>]": the model's
 * node name (a node that optimization merged into another, e.g. a Relu
 * fused into a Conv, selects the node that now computes it) and,
 * optionally, the provider it must run on. With "fused:" only a node that
 * optimization merged is perturbed, the same node unfused is not (a
 * stand-in for a wrong fusion). Floats become x + 1 + |x|; integers and
 * booleans have their lowest bit flipped. By default a session takes the
 * spec from the environment variable ONYX_INJECT_FAULT; setting it here
 * overrides that, and "" turns injection off (as reference sessions do). */
onyx_status *onyx_session_options_set_fault_injection(onyx_session_options *opts,
                                                      const char *spec);
/* The folder where onyx keeps what it learns about this machine's devices
 * between processes: today the nodes whose device failed them (a device
 * lost, out of memory, a timeout; see onyx_provider_stats), in
 * DIR/device-faults/<provider>-<device>-onyx-<version>.txt, one line per
 * node; deleting the file forgets them. By default the folder is
 * $ONYX_CACHE_DIR, else $XDG_CACHE_HOME/onyx, else ~/.cache/onyx; ""
 * keeps nothing on disk. */
onyx_status *onyx_session_options_set_cache_dir(onyx_session_options *opts, const char *dir);
/* Shadow runs: the session's first `runs` runs also run on a reference
 * (the CPU provider, no graph optimization, no fault injection: a second
 * copy of the model, loaded at session creation), and each output must
 * match it element by element, |test - ref| <= atol + rtol * |ref|. On a
 * mismatch the run is repeated on both with every node's outputs
 * captured, the first node whose outputs diverge is logged as a warning,
 * the caller receives the reference's outputs (the run succeeds), and the
 * session stops trusting that node: a node on a device provider runs on
 * the CPU from then on, and a node the CPU provider runs (a wrong graph
 * optimization) sends every later run to the reference.
 * onyx_session_verify_stats and onyx_session_verify_report tell what
 * happened. Each verified run costs a reference run; 0 runs (the
 * default) turns shadow runs off. Negative or NaN tolerances are refused. */
onyx_status *onyx_session_options_set_verify_first_runs(onyx_session_options *opts,
                                                        uint64_t runs, double atol, double rtol);

/* onyx_session_create_from_buffer with an optimized file (.onyx): set,
 * the caller keeps the buffer alive and unchanged for the session's life
 * and its weights are used in place (when the buffer is 64-byte aligned;
 * otherwise they are copied once); unset (the default), the session
 * keeps its own copy. Plain ONNX bytes are always copied from. */
onyx_status *onyx_session_options_set_borrow_buffer(onyx_session_options *opts, int borrow);

/* ---- optimized model files ---- */
typedef enum onyx_model_format {
    ONYX_FORMAT_ONYX = 0, /* the optimized file (docs/FORMAT.md): mapped, weights used in place */
    ONYX_FORMAT_ONNX = 1, /* the same optimized graph as a standard ONNX model */
} onyx_model_format;

/* Loads the ONNX model at model_path, optimizes it at `level` for any
 * provider, infers its shapes and writes it to out_path. No provider
 * placement is saved: the file runs on every provider, and the session
 * that loads it places its nodes (and, when the CPU is its only provider,
 * adds the fusions only the CPU runs). onyx_session_create and
 * onyx_session_create_from_buffer accept both formats (an optimized file
 * is told by its magic bytes). For ONYX_FORMAT_ONNX, weights of at least
 * external_data_min bytes go to the external-data file `<out_path>.data`
 * (0: every weight inline). Files are replaced atomically. */
onyx_status *onyx_compile_model(onyx_env *env, const char *model_path, const char *out_path,
                                onyx_opt_level level, onyx_model_format format,
                                size_t external_data_min);

/* ---- sessions ---- */
onyx_status *onyx_session_create(onyx_env *env, const char *model_path,
                                 const onyx_session_options *opts, onyx_session **out);
onyx_status *onyx_session_create_from_buffer(onyx_env *env, const void *data, size_t size,
                                             const onyx_session_options *opts,
                                             onyx_session **out);
void onyx_session_free(onyx_session *session);

/* Description of a graph input or output. dims[i] is -1 when unknown;
 * dim_params[i] is its symbolic name ("batch") or NULL. Pointers stay
 * valid while the session lives. */
typedef struct onyx_value_info {
    const char *name;
    onyx_value_kind kind;
    onyx_dtype dtype; /* element type; of the elements for sequences */
    int rank;         /* -1 when the rank is unknown */
    const int64_t *dims;
    const char *const *dim_params;
} onyx_value_info;

size_t onyx_session_input_count(const onyx_session *session);
size_t onyx_session_output_count(const onyx_session *session);
onyx_status *onyx_session_input_info(const onyx_session *session, size_t index,
                                     onyx_value_info *out);
onyx_status *onyx_session_output_info(const onyx_session *session, size_t index,
                                      onyx_value_info *out);
/* The session's graph after optimization, node by node in execution
 * order. Each getter returns NULL when node_index is out of range. */
size_t onyx_session_node_count(const onyx_session *session);
const char *onyx_session_node_name(const onyx_session *session, size_t node_index);
const char *onyx_session_node_op_type(const onyx_session *session, size_t node_index);
const char *onyx_session_node_domain(const onyx_session *session, size_t node_index);
/* Name of the provider the node was assigned to ("cpu", ...). */
const char *onyx_session_node_provider(const onyx_session *session, size_t node_index);
/* The node's inputs and outputs by value name ("" for an omitted one);
 * counts are 0 and names NULL when an index is out of range. */
size_t onyx_session_node_input_count(const onyx_session *session, size_t node_index);
const char *onyx_session_node_input_name(const onyx_session *session, size_t node_index,
                                         size_t input_index);
size_t onyx_session_node_output_count(const onyx_session *session, size_t node_index);
const char *onyx_session_node_output_name(const onyx_session *session, size_t node_index,
                                          size_t output_index);
/* When optimization merged model nodes into this one (a fusion, a folded
 * BatchNormalization, a duplicate removed): their names, this node's own
 * first. 0 for a node that computes only itself. */
size_t onyx_session_node_origin_count(const onyx_session *session, size_t node_index);
const char *onyx_session_node_origin(const onyx_session *session, size_t node_index,
                                     size_t origin_index);
/* Text for people, written snprintf-style into buf (may be NULL when
 * size is 0); each returns the length the whole text needs, 0 when the
 * index is out of range. attributes: "axis=1 pads=[1,1,1,1]", long lists
 * shortened. kernel: the provider and kernel running the node, with the
 * variant the kernel chose at session creation where it has several
 * ("cpu Conv: im2col gemm, avx2"). */
size_t onyx_session_node_attributes(const onyx_session *session, size_t node_index, char *buf,
                                    size_t size);
size_t onyx_session_node_kernel(const onyx_session *session, size_t node_index, char *buf,
                                size_t size);

/* Writes an ONNX model made of the named nodes of the session's graph
 * (as onyx_session_node_name lists them, after optimization: with
 * optimization level none they are the model's own nodes) to path. Its
 * inputs are the values those nodes read that none of them makes, typed
 * as the session knows them; constants they read become initializers;
 * its outputs are the values they make that none of them reads. Fails
 * naming a node that is not in the graph. onyx check --save-subgraph
 * writes the nodes around a divergence this way. */
onyx_status *onyx_session_save_subgraph(const onyx_session *session,
                                        const char *const *node_names, size_t count,
                                        const char *path);

/* What one provider did for this session's runs so far (all runs, all
 * threads). Kernel launches, submissions and copies are counted by device
 * providers; the CPU provider reports zeros. */
typedef struct onyx_provider_stats {
    uint64_t runs;             /* runs that opened a stream on the provider */
    uint64_t kernel_launches;  /* device kernels recorded (Vulkan dispatches) */
    uint64_t submits;          /* submissions to the device's queue */
    uint64_t copies_to_host;   /* tensors copied device -> host during runs */
    uint64_t copies_from_host; /* tensors copied host -> device during runs */
    uint64_t weight_uploads;   /* weights uploaded once to stay on the device */
    uint64_t cpu_fallbacks;    /* nodes the provider declined at run time (a tensor
                                  past its limits) that the CPU ran instead */
    uint64_t split_dispatches; /* kernels whose work exceeded the provider's per-dispatch
                                  budget, recorded as several dispatches over slices of
                                  their grid (Vulkan: option dispatch_budget) */
    uint64_t dispatch_slices;  /* the dispatches those were recorded as */
    /* Device faults: the device was lost, ran out of memory or stopped
     * answering (a fence wait timed out). A run that fails for one is run
     * again on the CPU with the same inputs and succeeds (runs_rescued);
     * the provider remakes its device for later runs (device_recoveries);
     * the node that was running goes to the CPU for the rest of the
     * session and is recorded in the device's cache file (see
     * onyx_session_options_set_cache_dir), so later sessions place it on
     * the CPU (nodes_denied counts both). */
    uint64_t device_faults;
    uint64_t device_recoveries;
    uint64_t runs_rescued;
    uint64_t nodes_denied;
    /* Bytes the provider holds on its device now: resident weights, and
     * the run arenas and buffers it keeps for the next run. 0 for
     * providers that compute in host memory. */
    uint64_t device_bytes;
} onyx_provider_stats;
/* Fails when the session does not use the named provider. */
onyx_status *onyx_session_provider_stats(const onyx_session *session, const char *provider,
                                         onyx_provider_stats *out);

/* What shadow runs (onyx_session_options_set_verify_first_runs) did so
 * far, all threads together. */
typedef struct onyx_verify_stats {
    uint64_t runs_verified;  /* runs compared with the reference */
    uint64_t mismatches;     /* of those, runs whose outputs diverged; their
                                callers received the reference's outputs */
    uint64_t nodes_disabled; /* device nodes moved to the CPU after a mismatch */
    int on_reference;        /* 1 once every run goes to the reference */
} onyx_verify_stats;
onyx_status *onyx_session_verify_stats(const onyx_session *session, onyx_verify_stats *out);
/* The last mismatch as text ("run 1: output 'y' differs from the
 * reference (...); the first divergent node is #3, node 'relu' (Relu) on
 * vulkan (...): its vulkan kernel is disabled for this session, the CPU
 * runs it"), snprintf-style; "" when there was none. */
size_t onyx_session_verify_report(onyx_session *session, char *buf, size_t size);

/* Opset imports of the model: domain ("" is ai.onnx) and version. */
size_t onyx_session_opset_count(const onyx_session *session);
onyx_status *onyx_session_opset(const onyx_session *session, size_t index, const char **domain,
                                int64_t *version);
/* Total elements and bytes of all initializers (the model's weights). */
int64_t onyx_session_parameter_count(const onyx_session *session);
int64_t onyx_session_parameter_bytes(const onyx_session *session);

/* Runs the model. inputs[i] is bound to the graph input named
 * input_names[i]; every graph input without an initializer must be given.
 * For each requested output: if outputs[i] is NULL on entry, onyx
 * allocates a tensor the caller frees with onyx_tensor_free; otherwise
 * outputs[i] must be a tensor of the right dtype and shape (e.g. made with
 * onyx_tensor_wrap over caller memory) and onyx writes the result into it.
 * Inputs are read in place, never copied, and must not change during
 * the call. */
onyx_status *onyx_session_run(onyx_session *session, const char *const *input_names,
                              const onyx_tensor *const *inputs, size_t input_count,
                              const char *const *output_names, onyx_tensor **outputs,
                              size_t output_count);

/* ---- run options ----
 * Control over a run in progress: a time limit and a cancel flag. Any
 * number of runs, on any sessions, may use one onyx_run_options; a run
 * reads its time limit when it starts and watches the cancel flag until
 * it ends. A run checks between nodes, and Loop, Scan and SequenceMap
 * between iterations, so a stop takes effect within one node's (or one
 * iteration's) time. A stopped run returns ONYX_CANCELLED or ONYX_TIMEOUT
 * with a message naming where it stopped ("run cancelled at node 'loop'
 * (Loop), iteration 123456"), has freed all the memory it used, leaves
 * every outputs[i] that was NULL on entry NULL (a caller-provided output
 * tensor may hold partial results), and the session stays usable. */
onyx_status *onyx_run_options_create(onyx_run_options **out);
/* Not while a run uses the options. */
void onyx_run_options_free(onyx_run_options *opts);
/* Wall-clock limit of each run, from the start of the run call, on a
 * monotonic clock of a few milliseconds' resolution; 0 (the default)
 * means none. */
onyx_status *onyx_run_options_set_time_limit_ms(onyx_run_options *opts, uint64_t ms);
/* Asks every run using these options to stop. Any thread may call it at
 * any time (it only sets an atomic flag). The flag stays set, so runs
 * started later with these options stop at their first check, until
 * onyx_run_options_reset_cancel clears it; runs with other options (or
 * none) are not affected. */
onyx_status *onyx_run_options_cancel(onyx_run_options *opts);
onyx_status *onyx_run_options_reset_cancel(onyx_run_options *opts);
/* 1 while the cancel flag is set; 0 otherwise or when opts is NULL. */
int onyx_run_options_is_cancelled(const onyx_run_options *opts);

/* onyx_session_run under run options; run_options NULL is
 * onyx_session_run (no time limit, cannot be cancelled). */
onyx_status *onyx_session_run_with_options(onyx_session *session,
                                           const onyx_run_options *run_options,
                                           const char *const *input_names,
                                           const onyx_tensor *const *inputs, size_t input_count,
                                           const char *const *output_names, onyx_tensor **outputs,
                                           size_t output_count);

/* Capture: a callback each run using these options calls after each
 * node of the model's main graph ran, once per output it produced, with
 * node_index as in onyx_session_node_name and the value on the host (a
 * device value is copied to the host for the call). The value is valid
 * only during the call; copy what you keep. Capture changes neither the
 * plan nor the results, only the time a run takes. Runs on several
 * threads may call it at once. fn NULL turns capture off. Not while a run
 * uses the options. */
typedef void (*onyx_capture_fn)(void *user, size_t node_index, size_t output_index,
                                const char *value_name, const onyx_tensor *value);
onyx_status *onyx_run_options_set_capture(onyx_run_options *opts, onyx_capture_fn fn,
                                          void *user);

/* Node timing, for finding where a run's time goes: each run using these
 * options adds the wall-clock nanoseconds each node of the model's main
 * graph took (a subgraph's nodes count to the If, Loop or Scan that ran
 * them) to ns_per_node[node_index], node_index as in
 * onyx_session_node_name; count is the array's length, and nodes past it
 * are not timed. The times add up over runs; the caller zeroes the array.
 * For a node on a device provider it is the time taken to record its
 * work, not the device's (that shows at the next synchronization point:
 * a copy to the host). Runs on several threads may add at once (the adds
 * are atomic). ns_per_node NULL turns timing off. Not while a run uses
 * the options; the array must outlive the runs that use it. */
onyx_status *onyx_run_options_set_node_timing(onyx_run_options *opts, uint64_t *ns_per_node,
                                              size_t count);

/* Bytes counted against the session's memory limit now (see
 * onyx_session_options_set_memory_limit), counted also when there is no
 * limit; idle arenas kept for the next run are included. */
size_t onyx_session_memory_in_use(const onyx_session *session);

/* ---- tensors ---- */
/* A tensor that owns zero-filled storage. */
onyx_status *onyx_tensor_create(onyx_dtype dtype, const int64_t *dims, int rank,
                                onyx_tensor **out);
/* A tensor over caller memory of nbytes, which must match dtype and dims.
 * The memory must outlive the tensor; onyx never frees it. Not for
 * strings. */
onyx_status *onyx_tensor_wrap(onyx_dtype dtype, const int64_t *dims, int rank, void *data,
                              size_t nbytes, onyx_tensor **out);
void onyx_tensor_free(onyx_tensor *tensor);
onyx_value_kind onyx_tensor_kind(const onyx_tensor *tensor);
onyx_dtype onyx_tensor_dtype(const onyx_tensor *tensor);
int onyx_tensor_rank(const onyx_tensor *tensor);
const int64_t *onyx_tensor_dims(const onyx_tensor *tensor);
int64_t onyx_tensor_numel(const onyx_tensor *tensor);
void *onyx_tensor_data(onyx_tensor *tensor);
size_t onyx_tensor_nbytes(const onyx_tensor *tensor);
/* String tensors: element i as a NUL-terminated string. */
const char *onyx_tensor_string(const onyx_tensor *tensor, int64_t index);
onyx_status *onyx_tensor_set_string(onyx_tensor *tensor, int64_t index, const char *value);
/* Sequences and optionals: their elements (an optional has 0 or 1). */
size_t onyx_tensor_item_count(const onyx_tensor *tensor);
const onyx_tensor *onyx_tensor_item(const onyx_tensor *tensor, size_t index);

const char *onyx_dtype_name(onyx_dtype dtype);
/* Parses "float32", "int64", ...; ONYX_UNDEFINED when unknown. */
onyx_dtype onyx_dtype_from_name(const char *name);

/* ---- tensor files ----
 * Reading accepts an ONNX TensorProto (.pb), SequenceProto or
 * OptionalProto (as used by the ONNX test suite), or a NumPy .npy file
 * (recognised by its magic bytes). */
onyx_status *onyx_tensor_read(const void *data, size_t size, onyx_tensor **out);
onyx_status *onyx_tensor_load(const char *path, onyx_tensor **out);
/* As above when the caller knows what the file holds: a .pb file's bytes
 * do not say whether they are a TensorProto, a SequenceProto or an
 * OptionalProto, so the auto-detecting forms assume TensorProto. */
onyx_status *onyx_tensor_read_kind(const void *data, size_t size, onyx_value_kind kind,
                                   onyx_tensor **out);
onyx_status *onyx_tensor_load_kind(const char *path, onyx_value_kind kind, onyx_tensor **out);
/* Writes a dense tensor as .npy (version 1.0, little-endian, C order);
 * float16 as '<f2', bfloat16 as '<u2' bits, bool as '|b1', strings as
 * numpy's unicode arrays ('<U{n}', UTF-32LE, n the longest element in code
 * points), int4/int2 as '|i1' values, uint4/uint2 as '|u1' values, and the
 * float8/float4/float6 types as '|u1' bit patterns (one element per byte;
 * view them with ml_dtypes). Reading takes '<U{n}' back as strings and
 * ml_dtypes' opaque 'V1'/'V2' records as uint8/uint16 bits. */
onyx_status *onyx_tensor_save_npy(const onyx_tensor *tensor, const char *path);

#ifdef __cplusplus
}
#endif
#endif
