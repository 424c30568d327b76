/* Shared pieces of the onyx command-line tool. It uses only the public
 * API so it doubles as an example client. */
#ifndef ONYX_CLI_H
#define ONYX_CLI_H

#include <stddef.h>
#include <stdint.h>

#include "onyx.h"

/* Exit statuses: every failure, usage errors included, is 1. */
#define CLI_OK 0
#define CLI_FAIL 1

/* Prints the single "onyx: error: ..." line (newlines in the message are
 * flattened so the error stays one line) and returns CLI_FAIL. */
int cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* cli_error with the status's message; frees the status. */
int cli_status(onyx_status *st);
/* Queues a "onyx: note: ..." line; cli_flush_notes prints the queue,
 * cli_error drops it. */
void cli_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void cli_flush_notes(void);

/* Matches "--name VALUE" and "--name=VALUE" at argv[*i]; advances *i past
 * the value. Returns 1 on a match, 0 when argv[*i] is another option and
 * -1 (after printing the error) when the value is missing. */
int cli_option_value(int argc, char **argv, int *i, const char *name, const char **value);
int cli_is_help(const char *arg);

int cli_parse_u64(const char *s, uint64_t *out);
int cli_parse_int(const char *s, int *out);

/* Growable string used to build output lines. */
typedef struct cli_buf {
    char *s;
    size_t len, cap;
} cli_buf;
void cli_buf_printf(cli_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void cli_buf_free(cli_buf *b);
/* Text from a model (names, op types, domains, dim_params, messages
 * quoting them) is untrusted: control characters (C0, DEL and the UTF-8
 * encoded C1 range) are written as \xNN so that they cannot drive the
 * terminal. Every such string the tool prints goes through these. */
void cli_buf_escaped(cli_buf *b, const char *s);
/* A malloc'd escaped copy of s (exits on out of memory, as cli_buf does). */
char *cli_escape(const char *s);

/* "[batch, 3, ?]" from a value info; "[?]" style for unknown rank. */
void cli_format_info_shape(cli_buf *b, const onyx_value_info *info);
void cli_format_dims(cli_buf *b, const int64_t *dims, int rank);
/* "float32", "sequence(float32)", "optional(int64)". */
void cli_format_info_type(cli_buf *b, const onyx_value_info *info);
/* 1234567 -> "1.23M" (decimal) and 4938268 -> "4.71 MiB" (binary). */
void cli_human_count(char *buf, size_t n, int64_t v);
void cli_human_bytes(char *buf, size_t n, int64_t v);

uint16_t cli_float_to_half(float f);
float cli_half_to_float(uint16_t h);
float cli_bf16_to_float(uint16_t b);
uint16_t cli_float_to_bf16(float f);

/* The narrow types (float8, float4, float6, int4/uint4/int2/uint2), held
 * one element per byte (see onyx.h). */
int cli_is_narrow_float(onyx_dtype t);
int cli_is_narrow_int(onyx_dtype t);
/* Value of a narrow float's bit pattern. */
float cli_narrow_to_float(onyx_dtype t, uint8_t bits);
/* Bits of a narrow float in [0, 1) chosen from r (random input data). */
uint8_t cli_narrow_random(onyx_dtype t, uint64_t r);
/* Bits a narrow type uses per element (4, 2, 6 or 8). */
int cli_narrow_bits(onyx_dtype t);

/* Creates the environment and a session over model; on failure prints
 * the error, frees what was made and returns CLI_FAIL. */
int cli_open_session(const char *model, const onyx_session_options *opts, onyx_env **env,
                     onyx_session **session);

/* ---- what onyx run and onyx bench share ---- */

/* --dim NAME=SIZE: the size of a symbolic input dimension in generated
 * inputs. name points into argv; len is the name's length. */
typedef struct cli_dim {
    const char *name;
    size_t len;
    int64_t value;
    int used; /* set when a generated input took it */
} cli_dim;

/* How the session is made and where its inputs come from. */
typedef struct cli_session_args {
    const char *providers; /* --providers list, as given */
    const char **inputs;   /* --input specs: NAME=FILE, or FILE for a one-input model */
    size_t n_inputs;
    cli_dim *dims;
    size_t n_dims;
    uint64_t seed; /* of generated inputs */
    int threads, has_threads;
    int opt_level; /* -1: library default */
} cli_session_args;
void cli_session_args_init(cli_session_args *a);
void cli_session_args_free(cli_session_args *a);
/* argv[*i] as one of the shared options (--input, --dim, --seed,
 * --threads, --providers, --opt-level); cmd prefixes error messages.
 * Returns 1 when taken, 0 when argv[*i] is none of them, -1 after
 * printing an error. */
int cli_session_option(const char *cmd, int argc, char **argv, int *i, cli_session_args *a);
int cli_add_input(cli_session_args *a, const char *spec);
/* Threads, optimization level and providers (with their NAME:KEY=VALUE
 * options) onto opts. */
int cli_apply_session_args(const char *cmd, const cli_session_args *a, onyx_session_options *opts);

/* Generated inputs: floats are seeded values in [0, 1) either way;
 * integers and booleans are seeded small values (CLI_FILL_RANDOM, for
 * onyx run) or zeros (CLI_FILL_ZERO_INTS, for onyx bench: valid as
 * indices and lengths in any model, so a timing never fails on them). */
typedef enum cli_fill { CLI_FILL_RANDOM, CLI_FILL_ZERO_INTS } cli_fill;

/* A session's inputs and outputs, with a tensor for every input. */
typedef struct cli_io {
    onyx_value_info *in_infos, *out_infos;
    const char **in_names, **out_names;
    onyx_tensor **inputs;
    size_t n_in, n_out;
} cli_io;
/* Loads the --input files (relabeling carrier types such as bfloat16
 * stored as uint16) and generates the rest in model order from a.seed.
 * On failure the error is printed; cli_io_free is needed either way. */
int cli_prepare_io(const char *cmd, onyx_session *s, cli_session_args *a, cli_fill fill,
                   cli_io *io);
void cli_io_free(cli_io *io);

double cli_now_ms(void); /* monotonic clock */
int cli_cmp_double(const void *a, const void *b);

/* onyx bench --profile (profile.c): runs `run` `runs` times under run
 * options with node timing on, then prints the time per run of each
 * operator type and the `top` slowest nodes with their kernels. */
int cli_profile_runs(onyx_session *s, int runs, int top,
                     int (*run)(onyx_session *s, onyx_run_options *ro, void *user), void *user);

/* Device providers (all but "cpu") the session uses, with their counters
 * so far and the nodes placed on them; name points into env. */
typedef struct cli_provider_use {
    const char *name;
    onyx_provider_stats stats;
    size_t nodes;
} cli_provider_use;
size_t cli_device_providers(const onyx_env *env, const onyx_session *s, cli_provider_use *out,
                            size_t max);

/* ---- output files (run, check) ---- */
/* Creates dir and its parents; prints the error. */
int cli_mkdir_p(const char *dir);
/* File names already handed out in one folder. */
typedef struct cli_name_set {
    char **names;
    size_t n;
} cli_name_set;
void cli_name_set_free(cli_name_set *set);
/* DIR/<name>.npy with characters other than letters, digits, '.', '_'
 * and '-' replaced by '_', and a numeric suffix when two names sanitize
 * alike; malloc'd, NULL when out of memory. */
char *cli_npy_path(const char *dir, const char *name, cli_name_set *used);
/* Saves t as cli_npy_path names it; prints the error. */
int cli_save_npy(const onyx_tensor *t, const char *dir, const char *name, cli_name_set *used);

int cmd_info(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_bench(int argc, char **argv);
int cmd_check(int argc, char **argv);
int cmd_devices(int argc, char **argv);
int cmd_compile(int argc, char **argv);
void usage_info(void);
void usage_run(void);
void usage_bench(void);
void usage_check(void);
void usage_devices(void);
void usage_compile(void);

#endif
