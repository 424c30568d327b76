/* Corrupted models: thousands of deterministic mutations of a real model
 * (flipped bytes, truncations, splices, forged varints) must each load
 * or fail with a status; a crash, a hang or a sanitizer report is a bug.
 * Mutants that still load are run once on a valid input. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "mutate.h"

#define MUTANTS 3000

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: test_corrupt_models MODEL INPUT\n");
        return 2;
    }
    size_t n;
    uint8_t *model = mutate_read_file(argv[1], &n);
    CHECK(model != NULL && n > 0);
    if (!model) CHECK_DONE();
    onyx_env *env = NULL;
    CHECK_OK(onyx_env_create(&env));
    onyx_tensor *x = NULL;
    CHECK_OK(onyx_tensor_load(argv[2], &x));
    uint8_t *buf = malloc(n);
    uint64_t rng = 0x2545f4914f6cdd1dULL;
    int loaded = 0, rejected = 0;
    for (int i = 0; i < MUTANTS; i++) {
        size_t len = mutate_bytes(model, n, buf, &rng);
        onyx_session *s = NULL;
        onyx_status *st = onyx_session_create_from_buffer(env, buf, len, NULL, &s);
        if (st) {
            /* a failure must say something and leave no session behind */
            CHECK(s == NULL);
            CHECK(onyx_status_message(st)[0] != '\0');
            CHECK(onyx_status_code(st) != ONYX_OK);
            onyx_status_free(st);
            rejected++;
            continue;
        }
        loaded++;
        onyx_value_info info;
        if (onyx_session_input_count(s) == 1 && onyx_session_output_count(s) >= 1 &&
            !onyx_session_input_info(s, 0, &info)) {
            onyx_value_info oinfo;
            onyx_status *os = onyx_session_output_info(s, 0, &oinfo);
            onyx_status_free(os);
            onyx_tensor *y = NULL;
            const char *in = info.name, *out = oinfo.name;
            onyx_status *rs = onyx_session_run(s, &in, (const onyx_tensor *const *)&x, 1, &out, &y, 1);
            onyx_status_free(rs); /* a mutated model may reject the input: fine */
            onyx_tensor_free(y);
        }
        onyx_session_free(s);
    }
    printf("%d mutants: %d loaded, %d rejected with a status\n", MUTANTS, loaded, rejected);
    CHECK(rejected > 0);
    free(buf);
    free(model);
    onyx_tensor_free(x);
    onyx_env_free(env);
    CHECK_DONE();
}
