#include "core/dtype.h"

#include <math.h>
#include <string.h>

typedef struct dtype_desc {
    const char *name;
    size_t size;
} dtype_desc;

static const dtype_desc DESCS[] = {
    [ONYX_UNDEFINED] = {"undefined", 0}, [ONYX_FLOAT32] = {"float32", 4},
    [ONYX_UINT8] = {"uint8", 1},         [ONYX_INT8] = {"int8", 1},
    [ONYX_UINT16] = {"uint16", 2},       [ONYX_INT16] = {"int16", 2},
    [ONYX_INT32] = {"int32", 4},         [ONYX_INT64] = {"int64", 8},
    [ONYX_STRING] = {"string", sizeof(char *)},
    [ONYX_BOOL] = {"bool", 1},           [ONYX_FLOAT16] = {"float16", 2},
    [ONYX_FLOAT64] = {"float64", 8},     [ONYX_UINT32] = {"uint32", 4},
    [ONYX_UINT64] = {"uint64", 8},       [ONYX_COMPLEX64] = {"complex64", 8},
    [ONYX_COMPLEX128] = {"complex128", 16}, [ONYX_BFLOAT16] = {"bfloat16", 2},
};

int ox_dtype_valid(int t) { return t > 0 && t <= ONYX_BFLOAT16; }

size_t ox_dtype_size(ox_dtype t) { return ox_dtype_valid((int)t) ? DESCS[t].size : 0; }

const char *ox_dtype_name(ox_dtype t) {
    return ox_dtype_valid((int)t) ? DESCS[t].name : "undefined";
}

ox_dtype ox_dtype_from_name(const char *name) {
    for (int t = 1; t <= ONYX_BFLOAT16; t++)
        if (strcmp(DESCS[t].name, name) == 0) return (ox_dtype)t;
    if (strcmp(name, "float") == 0) return ONYX_FLOAT32;
    if (strcmp(name, "double") == 0) return ONYX_FLOAT64;
    return ONYX_UNDEFINED;
}

int ox_dtype_is_float(ox_dtype t) {
    return t == ONYX_FLOAT32 || t == ONYX_FLOAT64 || t == ONYX_FLOAT16 || t == ONYX_BFLOAT16;
}

int ox_dtype_is_signed_int(ox_dtype t) {
    return t == ONYX_INT8 || t == ONYX_INT16 || t == ONYX_INT32 || t == ONYX_INT64;
}

int ox_dtype_is_unsigned_int(ox_dtype t) {
    return t == ONYX_UINT8 || t == ONYX_UINT16 || t == ONYX_UINT32 || t == ONYX_UINT64;
}

int ox_dtype_is_integer(ox_dtype t) { return ox_dtype_is_signed_int(t) || ox_dtype_is_unsigned_int(t); }

static uint32_t f2u(float f) {
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}

static float u2f(uint32_t u) {
    float f;
    memcpy(&f, &u, 4);
    return f;
}

float ox_half_to_float(uint16_t h) {
    uint32_t sign = (uint32_t)(h & 0x8000) << 16;
    uint32_t exp = (h >> 10) & 0x1f;
    uint32_t man = h & 0x3ff;
    if (exp == 0) {
        /* zero or subnormal: value = man * 2^-24 */
        float v = (float)man * 5.9604644775390625e-08f;
        return sign ? -v : v;
    }
    if (exp == 31) return u2f(sign | 0x7f800000u | (man << 13));
    return u2f(sign | ((exp + 112) << 23) | (man << 13));
}

uint16_t ox_float_to_half(float f) {
    uint32_t u = f2u(f);
    uint16_t sign = (uint16_t)((u >> 16) & 0x8000);
    uint32_t absu = u & 0x7fffffffu;
    if (absu >= 0x7f800000u) /* inf or nan */
        return (uint16_t)(sign | 0x7c00 | (absu > 0x7f800000u ? 0x200 : 0));
    if (absu >= 0x477ff000u) return (uint16_t)(sign | 0x7c00); /* rounds to >= 65520: inf */
    if (absu < 0x38800000u) {
        /* subnormal half: round(|f| / 2^-24) to nearest even */
        float a = u2f(absu) * 16777216.0f;
        float r = nearbyintf(a);
        return (uint16_t)(sign | (uint16_t)r);
    }
    uint32_t exp = (absu >> 23) - 112;
    uint32_t man = absu & 0x7fffff;
    uint32_t half = (exp << 10) | (man >> 13);
    uint32_t rest = man & 0x1fff;
    if (rest > 0x1000 || (rest == 0x1000 && (half & 1))) half++;
    return (uint16_t)(sign | half);
}

float ox_bf16_to_float(uint16_t b) { return u2f((uint32_t)b << 16); }

uint16_t ox_float_to_bf16(float f) {
    uint32_t u = f2u(f);
    if ((u & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((u >> 16) | 0x40);
    u += 0x7fff + ((u >> 16) & 1);
    return (uint16_t)(u >> 16);
}

double ox_get_f64(const void *d, ox_dtype t, size_t i) {
    switch (t) {
    case ONYX_FLOAT32: return ((const float *)d)[i];
    case ONYX_FLOAT64: return ((const double *)d)[i];
    case ONYX_FLOAT16: return ox_half_to_float(((const uint16_t *)d)[i]);
    case ONYX_BFLOAT16: return ox_bf16_to_float(((const uint16_t *)d)[i]);
    case ONYX_INT8: return ((const int8_t *)d)[i];
    case ONYX_INT16: return ((const int16_t *)d)[i];
    case ONYX_INT32: return ((const int32_t *)d)[i];
    case ONYX_INT64: return (double)((const int64_t *)d)[i];
    case ONYX_UINT8: return ((const uint8_t *)d)[i];
    case ONYX_UINT16: return ((const uint16_t *)d)[i];
    case ONYX_UINT32: return ((const uint32_t *)d)[i];
    case ONYX_UINT64: return (double)((const uint64_t *)d)[i];
    case ONYX_BOOL: return ((const uint8_t *)d)[i] ? 1.0 : 0.0;
    default: return 0.0;
    }
}

void ox_set_f64(void *d, ox_dtype t, size_t i, double v) {
    switch (t) {
    case ONYX_FLOAT32: ((float *)d)[i] = (float)v; break;
    case ONYX_FLOAT64: ((double *)d)[i] = v; break;
    case ONYX_FLOAT16: ((uint16_t *)d)[i] = ox_float_to_half((float)v); break;
    case ONYX_BFLOAT16: ((uint16_t *)d)[i] = ox_float_to_bf16((float)v); break;
    case ONYX_BOOL: ((uint8_t *)d)[i] = v != 0.0; break;
    default: ox_set_i64(d, t, i, (int64_t)v); break;
    }
}

int64_t ox_get_i64(const void *d, ox_dtype t, size_t i) {
    switch (t) {
    case ONYX_INT8: return ((const int8_t *)d)[i];
    case ONYX_INT16: return ((const int16_t *)d)[i];
    case ONYX_INT32: return ((const int32_t *)d)[i];
    case ONYX_INT64: return ((const int64_t *)d)[i];
    case ONYX_UINT8: return ((const uint8_t *)d)[i];
    case ONYX_UINT16: return ((const uint16_t *)d)[i];
    case ONYX_UINT32: return ((const uint32_t *)d)[i];
    case ONYX_UINT64: return (int64_t)((const uint64_t *)d)[i];
    case ONYX_BOOL: return ((const uint8_t *)d)[i] != 0;
    default: return (int64_t)ox_get_f64(d, t, i);
    }
}

void ox_set_i64(void *d, ox_dtype t, size_t i, int64_t v) {
    switch (t) {
    case ONYX_INT8: ((int8_t *)d)[i] = (int8_t)v; break;
    case ONYX_INT16: ((int16_t *)d)[i] = (int16_t)v; break;
    case ONYX_INT32: ((int32_t *)d)[i] = (int32_t)v; break;
    case ONYX_INT64: ((int64_t *)d)[i] = v; break;
    case ONYX_UINT8: ((uint8_t *)d)[i] = (uint8_t)v; break;
    case ONYX_UINT16: ((uint16_t *)d)[i] = (uint16_t)v; break;
    case ONYX_UINT32: ((uint32_t *)d)[i] = (uint32_t)v; break;
    case ONYX_UINT64: ((uint64_t *)d)[i] = (uint64_t)v; break;
    case ONYX_BOOL: ((uint8_t *)d)[i] = v != 0; break;
    default: ox_set_f64(d, t, i, (double)v); break;
    }
}
