#include "core/dtype.h"

#include <float.h>
#include <math.h>
#include <string.h>
#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#endif

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
    /* named as ONNX spells them in type strings, e.g. tensor(float8e4m3fn);
     * all held one element per byte */
    [ONYX_FLOAT8E4M3FN] = {"float8e4m3fn", 1}, [ONYX_FLOAT8E4M3FNUZ] = {"float8e4m3fnuz", 1},
    [ONYX_FLOAT8E5M2] = {"float8e5m2", 1},     [ONYX_FLOAT8E5M2FNUZ] = {"float8e5m2fnuz", 1},
    [ONYX_UINT4] = {"uint4", 1},               [ONYX_INT4] = {"int4", 1},
    [ONYX_FLOAT4E2M1] = {"float4e2m1", 1},     [ONYX_FLOAT8E8M0] = {"float8e8m0", 1},
    [ONYX_UINT2] = {"uint2", 1},               [ONYX_INT2] = {"int2", 1},
    [ONYX_FLOAT6E2M3] = {"float6e2m3", 1},     [ONYX_FLOAT6E3M2] = {"float6e3m2", 1},
};

/* Other spellings accepted by ox_dtype_from_name: ONNX's DataType names
 * and ml_dtypes' (as .npy descr names and Python code write them). */
static const struct {
    const char *name;
    ox_dtype t;
} ALIASES[] = {
    {"float", ONYX_FLOAT32},           {"double", ONYX_FLOAT64},
    {"float8_e4m3fn", ONYX_FLOAT8E4M3FN}, {"float8_e4m3fnuz", ONYX_FLOAT8E4M3FNUZ},
    {"float8_e5m2", ONYX_FLOAT8E5M2},  {"float8_e5m2fnuz", ONYX_FLOAT8E5M2FNUZ},
    {"float4_e2m1fn", ONYX_FLOAT4E2M1}, {"float8_e8m0fnu", ONYX_FLOAT8E8M0},
    {"float6_e2m3fn", ONYX_FLOAT6E2M3}, {"float6_e3m2fn", ONYX_FLOAT6E3M2},
};

int ox_dtype_valid(int t) { return t > 0 && t < OX_DTYPE_COUNT; }

size_t ox_dtype_size(ox_dtype t) { return ox_dtype_valid((int)t) ? DESCS[t].size : 0; }

const char *ox_dtype_name(ox_dtype t) {
    return ox_dtype_valid((int)t) ? DESCS[t].name : "undefined";
}

ox_dtype ox_dtype_from_name(const char *name) {
    if (!name) return ONYX_UNDEFINED;
    for (int t = 1; t < OX_DTYPE_COUNT; t++)
        if (strcmp(DESCS[t].name, name) == 0) return (ox_dtype)t;
    for (size_t i = 0; i < sizeof ALIASES / sizeof ALIASES[0]; i++)
        if (strcmp(ALIASES[i].name, name) == 0) return ALIASES[i].t;
    /* ONNX's upper-case DataType names: FLOAT, INT64, FLOAT8E4M3FN... */
    char low[32];
    size_t n = strlen(name);
    if (n == 0 || n >= sizeof low) return ONYX_UNDEFINED;
    for (size_t i = 0; i <= n; i++) {
        char c = name[i];
        if (c >= 'a' && c <= 'z') return ONYX_UNDEFINED; /* mixed case is no DataType name */
        low[i] = (char)(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
    }
    for (int t = 1; t < OX_DTYPE_COUNT; t++)
        if (strcmp(DESCS[t].name, low) == 0) return (ox_dtype)t;
    if (strcmp(low, "float") == 0) return ONYX_FLOAT32;
    if (strcmp(low, "double") == 0) return ONYX_FLOAT64;
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

#if defined(__x86_64__) && defined(__GNUC__)
/* vcvtph2ps converts exactly, but quiets a signalling NaN (sets the top
 * mantissa bit) where ox_half_to_float keeps the bits: a block of eight
 * holding a NaN or an infinity takes the scalar loop. */
__attribute__((target("avx,f16c"))) static void half_to_float_f16c(const uint16_t *h, float *f, int64_t n) {
    const __m128i expo = _mm_set1_epi16(0x7c00);
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m128i v = _mm_loadu_si128((const __m128i *)(h + i));
        if (_mm_movemask_epi8(_mm_cmpeq_epi16(_mm_and_si128(v, expo), expo))) {
            for (int k = 0; k < 8; k++) f[i + k] = ox_half_to_float(h[i + k]);
            continue;
        }
        _mm256_storeu_ps(f + i, _mm256_cvtph_ps(v));
    }
    for (; i < n; i++) f[i] = ox_half_to_float(h[i]);
}

/* From the C library's CPU model, read once at start-up: CPUID itself
 * traps in a virtual machine (7.6 us a call here, more than converting
 * thousands of values), and kernels convert float16 tensors on every
 * run. clang 14 knows no "f16c" there; every AVX2 processor has F16C
 * (Intel from Ivy Bridge, AMD from Piledriver). */
static int has_f16c(void) {
#if defined(__clang__)
    return __builtin_cpu_supports("avx2");
#else
    return __builtin_cpu_supports("f16c") && __builtin_cpu_supports("avx");
#endif
}
#endif

void ox_half_to_float_n(const uint16_t *h, float *f, int64_t n) {
#if defined(__x86_64__) && defined(__GNUC__)
    if (n >= 8 && has_f16c()) {
        half_to_float_f16c(h, f, n);
        return;
    }
#endif
    for (int64_t i = 0; i < n; i++) f[i] = ox_half_to_float(h[i]);
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
    case ONYX_INT4:
    case ONYX_INT2: return ((const int8_t *)d)[i];
    case ONYX_UINT4:
    case ONYX_UINT2: return ((const uint8_t *)d)[i];
    default:
        if (ox_dtype_is_narrow_float(t)) return ox_narrow_to_float(t, ((const uint8_t *)d)[i]);
        return 0.0;
    }
}

void ox_set_f64(void *d, ox_dtype t, size_t i, double v) {
    switch (t) {
    case ONYX_FLOAT32: ((float *)d)[i] = (float)v; break;
    case ONYX_FLOAT64: ((double *)d)[i] = v; break;
    case ONYX_FLOAT16: ((uint16_t *)d)[i] = ox_float_to_half((float)v); break;
    case ONYX_BFLOAT16: ((uint16_t *)d)[i] = ox_float_to_bf16((float)v); break;
    case ONYX_BOOL: ((uint8_t *)d)[i] = v != 0.0; break;
    default:
        if (ox_dtype_is_narrow_float(t)) {
            ((uint8_t *)d)[i] = ox_float_to_narrow(t, v, 1);
        } else if (ox_dtype_is_narrow_int(t)) {
            /* through a saturating int64 so no conversion is undefined */
            int64_t w = v != v ? 0 : v >= 9223372036854775807.0 ? INT64_MAX
                        : v <= -9223372036854775808.0 ? INT64_MIN : (int64_t)v;
            ((int8_t *)d)[i] = ox_narrow_int_wrap(t, w);
        } else {
            ox_set_i64(d, t, i, (int64_t)v);
        }
        break;
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
    case ONYX_INT4:
    case ONYX_INT2: return ((const int8_t *)d)[i];
    case ONYX_UINT4:
    case ONYX_UINT2: return ((const uint8_t *)d)[i];
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
    case ONYX_INT4:
    case ONYX_INT2:
    case ONYX_UINT4:
    case ONYX_UINT2: ((int8_t *)d)[i] = ox_narrow_int_wrap(t, v); break;
    default:
        /* only floating types are left, so this cannot come back here */
        if (ox_dtype_is_float(t) || ox_dtype_is_narrow_float(t)) ox_set_f64(d, t, i, (double)v);
        break;
    }
}

/* ---------------------------------------------------------------------
 * Narrow types (ONNX DataType 17..28). */

int ox_dtype_is_narrow_float(ox_dtype t) {
    return ox_dtype_is_float8(t) || t == ONYX_FLOAT8E8M0 || t == ONYX_FLOAT4E2M1 ||
           t == ONYX_FLOAT6E2M3 || t == ONYX_FLOAT6E3M2;
}

int ox_dtype_is_float8(ox_dtype t) {
    return t == ONYX_FLOAT8E4M3FN || t == ONYX_FLOAT8E4M3FNUZ || t == ONYX_FLOAT8E5M2 ||
           t == ONYX_FLOAT8E5M2FNUZ;
}

int ox_dtype_is_narrow_int(ox_dtype t) {
    return t == ONYX_INT4 || t == ONYX_UINT4 || t == ONYX_INT2 || t == ONYX_UINT2;
}

void ox_narrow_int_range(ox_dtype t, int64_t *lo, int64_t *hi) {
    switch (t) {
    case ONYX_INT4: *lo = -8, *hi = 7; break;
    case ONYX_UINT4: *lo = 0, *hi = 15; break;
    case ONYX_INT2: *lo = -2, *hi = 1; break;
    case ONYX_UINT2: *lo = 0, *hi = 3; break;
    default: *lo = 0, *hi = 0; break;
    }
}

int8_t ox_narrow_int_wrap(ox_dtype t, int64_t v) {
    uint32_t u = (uint32_t)((uint64_t)v & 0xffu);
    switch (t) {
    case ONYX_INT4: return (int8_t)((int)((u & 0xfu) ^ 0x8u) - 8);
    case ONYX_UINT4: return (int8_t)(u & 0xfu);
    case ONYX_INT2: return (int8_t)((int)((u & 0x3u) ^ 0x2u) - 2);
    case ONYX_UINT2: return (int8_t)(u & 0x3u);
    default: return (int8_t)u;
    }
}

int ox_dtype_bits(ox_dtype t) {
    switch (t) {
    case ONYX_UINT4:
    case ONYX_INT4:
    case ONYX_FLOAT4E2M1: return 4;
    case ONYX_UINT2:
    case ONYX_INT2: return 2;
    case ONYX_FLOAT6E2M3:
    case ONYX_FLOAT6E3M2: return 6;
    case ONYX_UNDEFINED:
    case ONYX_STRING: return 0;
    default: return (int)(8 * ox_dtype_size(t));
    }
}

int ox_dtype_is_subbyte(ox_dtype t) {
    int b = ox_dtype_bits(t);
    return b > 0 && b < 8;
}

size_t ox_packed_bytes(ox_dtype t, size_t n) {
    int b = ox_dtype_bits(t);
    if (b <= 0) return 0;
    if (b >= 8) return n * (size_t)(b / 8);
    /* n * b / 8 rounded up, without the product overflowing */
    return n / 8 * (size_t)b + (n % 8 * (size_t)b + 7) / 8;
}

void ox_unpack_subbyte(ox_dtype t, const uint8_t *src, size_t n, uint8_t *dst) {
    int b = ox_dtype_bits(t);
    if (b <= 0 || b >= 8) {
        if (n) memcpy(dst, src, n);
        return;
    }
    uint32_t mask = (1u << b) - 1;
    int sign_extend = t == ONYX_INT4 || t == ONYX_INT2;
    for (size_t i = 0; i < n; i++) {
        /* element i takes bits [b*i, b*i + b) of the little-endian bit
         * stream; a 6-bit element may straddle two bytes */
        size_t bit = i * (size_t)b;
        uint32_t w = src[bit / 8];
        if (bit % 8 + (size_t)b > 8) w |= (uint32_t)src[bit / 8 + 1] << 8;
        uint32_t v = (w >> (bit % 8)) & mask;
        if (sign_extend && (v & (1u << (b - 1)))) v |= ~mask & 0xffu;
        dst[i] = (uint8_t)v;
    }
}

void ox_pack_subbyte(ox_dtype t, const uint8_t *src, size_t n, uint8_t *dst) {
    int b = ox_dtype_bits(t);
    if (b <= 0 || b >= 8) {
        if (n) memcpy(dst, src, n);
        return;
    }
    size_t nb = ox_packed_bytes(t, n);
    memset(dst, 0, nb);
    uint32_t mask = (1u << b) - 1;
    for (size_t i = 0; i < n; i++) {
        size_t bit = i * (size_t)b;
        uint32_t v = ((uint32_t)src[i] & mask) << (bit % 8);
        dst[bit / 8] |= (uint8_t)(v & 0xffu);
        if (v > 0xffu) dst[bit / 8 + 1] |= (uint8_t)(v >> 8);
    }
}

/* The minifloat formats, by how they spend their special encodings. */
typedef enum mf_kind {
    MF_FN,     /* no infinity; S.1111.111 is NaN (E4M3FN) */
    MF_FNUZ,   /* no infinity, no -0; 0x80 is the only NaN */
    MF_IEEE,   /* all-ones exponent: infinity (mantissa 0) or NaN (E5M2) */
    MF_FINITE, /* every code is a number (float4, float6) */
} mf_kind;

typedef struct mf_format {
    int ebits, mbits, bias;
    mf_kind kind;
} mf_format;

static const mf_format *mf_of(ox_dtype t) {
    static const mf_format e4m3fn = {4, 3, 7, MF_FN}, e4m3fnuz = {4, 3, 8, MF_FNUZ},
                           e5m2 = {5, 2, 15, MF_IEEE}, e5m2fnuz = {5, 2, 16, MF_FNUZ},
                           e2m1 = {2, 1, 1, MF_FINITE}, e2m3 = {2, 3, 1, MF_FINITE},
                           e3m2 = {3, 2, 3, MF_FINITE};
    switch (t) {
    case ONYX_FLOAT8E4M3FN: return &e4m3fn;
    case ONYX_FLOAT8E4M3FNUZ: return &e4m3fnuz;
    case ONYX_FLOAT8E5M2: return &e5m2;
    case ONYX_FLOAT8E5M2FNUZ: return &e5m2fnuz;
    case ONYX_FLOAT4E2M1: return &e2m1;
    case ONYX_FLOAT6E2M3: return &e2m3;
    case ONYX_FLOAT6E3M2: return &e3m2;
    default: return NULL;
    }
}

/* Largest finite magnitude of a format. */
static double mf_max(const mf_format *f) {
    int emax = (1 << f->ebits) - 1, mmax = (1 << f->mbits) - 1;
    switch (f->kind) {
    case MF_FN: return ldexp((double)((1 << f->mbits) + mmax - 1), emax - f->bias - f->mbits);
    case MF_IEEE: return ldexp((double)((1 << f->mbits) + mmax), emax - 1 - f->bias - f->mbits);
    default: return ldexp((double)((1 << f->mbits) + mmax), emax - f->bias - f->mbits);
    }
}

float ox_narrow_to_float(ox_dtype t, uint8_t bits) {
    if (t == ONYX_FLOAT8E8M0) return bits == 0xff ? NAN : ldexpf(1.0f, (int)bits - 127);
    const mf_format *f = mf_of(t);
    if (!f) return 0.0f;
    int nb = 1 + f->ebits + f->mbits;
    uint32_t v = bits & ((1u << nb) - 1);
    int neg = (v >> (nb - 1)) & 1;
    uint32_t e = (v >> f->mbits) & ((1u << f->ebits) - 1), m = v & ((1u << f->mbits) - 1);
    uint32_t emax = (1u << f->ebits) - 1, mmax = (1u << f->mbits) - 1;
    if (f->kind == MF_FNUZ && v == 1u << (nb - 1)) return NAN;
    if (f->kind == MF_FN && e == emax && m == mmax) return neg ? -NAN : NAN;
    if (f->kind == MF_IEEE && e == emax) return m ? (neg ? -NAN : NAN) : (neg ? -INFINITY : INFINITY);
    double a = e == 0 ? ldexp((double)m, 1 - f->bias - f->mbits)
                      : ldexp((double)(m + (1u << f->mbits)), (int)e - f->bias - f->mbits);
    return (float)(neg ? -a : a);
}

uint8_t ox_float_to_narrow(ox_dtype t, double v, int saturate) {
    if (t == ONYX_FLOAT8E8M0) {
        /* a double beyond float's range has no defined float conversion */
        float fv = isnan(v) ? NAN : fabs(v) > FLT_MAX ? (v > 0 ? INFINITY : -INFINITY) : (float)v;
        return ox_float_to_e8m0(fv, saturate, OX_ROUND_UP);
    }
    const mf_format *f = mf_of(t);
    if (!f) return 0;
    int nb = 1 + f->ebits + f->mbits;
    uint32_t sign = 1u << (nb - 1), emax = (1u << f->ebits) - 1, mmax = (1u << f->mbits) - 1;
    int neg = signbit(v) != 0;
    uint32_t s = neg ? sign : 0;
    uint32_t nan_code = f->kind == MF_FNUZ ? sign
                        : f->kind == MF_FN ? s | (emax << f->mbits) | mmax
                        : f->kind == MF_IEEE ? s | (emax << f->mbits) | (1u << (f->mbits - 1))
                                             /* ml_dtypes turns NaN into a zero of the
                                              * opposite sign in the finite formats */
                                             : (neg ? 0 : sign);
    if (isnan(v)) return (uint8_t)nan_code;
    double maxv = mf_max(f);
    uint32_t max_code = f->kind == MF_FN ? (emax << f->mbits) | (mmax - 1)
                        : f->kind == MF_IEEE ? ((emax - 1) << f->mbits) | mmax
                                             : (emax << f->mbits) | mmax;
    double a = fabs(v), q = 0.0;
    if (!isinf(a) && a != 0.0) {
        /* round to the format's precision at a's binade (the subnormal
         * spacing below the smallest normal); nearbyint rounds ties to even */
        int ex;
        frexp(a, &ex);
        int e = ex - 1;
        if (e < 1 - f->bias) e = 1 - f->bias;
        int qe = e - f->mbits;
        q = ldexp(nearbyint(ldexp(a, -qe)), qe);
    }
    if (isinf(a) || q > maxv) {
        if (saturate || f->kind == MF_FINITE) return (uint8_t)(s | max_code);
        if (f->kind == MF_IEEE) return (uint8_t)(s | (emax << f->mbits));
        return (uint8_t)nan_code;
    }
    if (q == 0.0) return (uint8_t)(f->kind == MF_FNUZ ? 0 : s);
    int ex;
    frexp(q, &ex);
    int e = ex - 1;
    uint32_t code;
    if (e < 1 - f->bias)
        code = (uint32_t)ldexp(q, f->bias - 1 + f->mbits); /* subnormal: multiples of the spacing */
    else
        code = ((uint32_t)(e + f->bias) << f->mbits) |
               ((uint32_t)ldexp(q, f->mbits - e) - (1u << f->mbits));
    return (uint8_t)(s | code);
}

uint8_t ox_float_to_e8m0(float f, int saturate, ox_round_mode mode) {
    uint32_t u = f2u(f);
    uint32_t e = (u >> 23) & 0xffu;
    if (e == 0xffu) return 0xff; /* NaN and infinities */
    int up = 0;
    switch (mode) {
    case OX_ROUND_NEAREST: {
        /* guard bit set, and a round bit, sticky bits or a non-zero
         * exponent (the reference's tie rule) */
        int g = (u & 0x400000u) != 0, r = (u & 0x200000u) != 0, st = (u & 0x1fffffu) != 0;
        up = g && (r || st || e > 0);
        break;
    }
    case OX_ROUND_UP: up = (u & 0x7fffffu) != 0; break;
    case OX_ROUND_DOWN: up = 0; break;
    }
    if (saturate && e == 0xfeu) up = 0;
    return (uint8_t)(e + (uint32_t)up);
}
