/* Open-addressing hash map from strings to ints (value ids, indices). */
#ifndef ONYX_CORE_STRMAP_H
#define ONYX_CORE_STRMAP_H

#include <stddef.h>

typedef struct ox_strmap ox_strmap;

ox_strmap *ox_strmap_new(void);
void ox_strmap_free(ox_strmap *m);
/* Returns 0, or -1 when out of memory. The key is copied. */
int ox_strmap_put(ox_strmap *m, const char *key, int value);
/* Returns 1 and sets *value when found, else 0. */
int ox_strmap_get(const ox_strmap *m, const char *key, int *value);

char *ox_strdup(const char *s); /* NULL in, NULL out */

#endif
