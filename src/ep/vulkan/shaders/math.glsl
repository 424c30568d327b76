// Float functions GLSL lacks or computes too loosely for onyx's
// tolerances (included by the elementwise shaders).

// erfc with a relative error below 1.2e-7 everywhere (the Chebyshev fit
// of Numerical Recipes' erfcc): no cancellation in the tails, where
// 1 - erf would keep nothing.
float ox_erfc(float x) {
    float z = abs(x);
    float t = 1.0 / (1.0 + 0.5 * z);
    float s = 0.17087277;
    s = s * t - 0.82215223;
    s = s * t + 1.48851587;
    s = s * t - 1.13520398;
    s = s * t + 0.27886807;
    s = s * t - 0.18628806;
    s = s * t + 0.09678418;
    s = s * t + 0.37409196;
    s = s * t + 1.00002368;
    s = s * t - 1.26551223;
    float r = t * exp(s - z * z);
    return x >= 0.0 ? r : 2.0 - r;
}

// erf: near 0 the rational approximation Eigen and XLA use for float,
// x * P(x^2) / Q(x^2), whose relative error stays at float rounding as
// P/Q tends to 2/sqrt(pi); from 0.5 on, 1 - erfc, where erfc's error is
// small against 1.
float ox_erf(float v) {
    if (isnan(v)) return v;
    if (abs(v) >= 0.5) return v < 0.0 ? ox_erfc(-v) - 1.0 : 1.0 - ox_erfc(v);
    float x2 = v * v;
    float p = -2.72614225801306e-10;
    p = p * x2 + 2.77068142495902e-08;
    p = p * x2 - 2.10102402082508e-06;
    p = p * x2 - 5.69250639462346e-05;
    p = p * x2 - 7.34990630326855e-04;
    p = p * x2 - 2.95459980854025e-03;
    p = p * x2 - 1.60960333262415e-02;
    float q = -1.45660718464996e-05;
    q = q * x2 - 2.13374055278905e-04;
    q = q * x2 - 1.68282697438203e-03;
    q = q * x2 - 7.37332916720468e-03;
    q = q * x2 - 1.42647390514189e-02;
    return v * p / q;
}

// Gelu, x * Phi(x) = x/2 * erfc(-x / sqrt(2)): for negative x, erfc keeps
// the small probabilities that 1 + erf would cancel away.
float ox_gelu(float x) { return 0.5 * x * ox_erfc(-x * 0.70710678118654752440); }

// tanh without the overflow of (e^x - e^-x) / (e^x + e^-x) at large |x|
// and without the cancellation of 1 - e^-2|x| near 0 (a Taylor series
// there: its first omitted term is below 1e-9 relative at |x| = 0.3).
float ox_tanh(float x) {
    float a = abs(x);
    if (a < 0.3) {
        float x2 = x * x;
        float s = 21844.0 / 6081075.0;
        s = s * x2 - 1382.0 / 155925.0;
        s = s * x2 + 62.0 / 2835.0;
        s = s * x2 - 17.0 / 315.0;
        s = s * x2 + 2.0 / 15.0;
        s = s * x2 - 1.0 / 3.0;
        return x + x * x2 * s;
    }
    float t = exp(-2.0 * a);
    float r = (1.0 - t) / (1.0 + t);
    return x < 0.0 ? -r : r;
}

// 1 / (1 + e^-x) on both sides without overflow: e^x / (1 + e^x) for
// negative x keeps the tiny results exact instead of flushing them.
float ox_sigmoid(float x) {
    if (x >= 0.0) return 1.0 / (1.0 + exp(-x));
    float e = exp(x);
    return e / (1.0 + e);
}

// sin(x + shift * pi/2) for shift 0 (sin) or 1 (cos), odd: x's sign
// flips the result (sin). Vulkan bounds sin and cos only on [-pi, pi]
// (and loosely: 2^-11); NVIDIA's are off by 3e-5 at |x| = 1000. Here: x
// reduced by multiples of pi/2 in three parts (Cody and Waite; the
// products are exact up to |x| ~ 5e4), then minimax polynomials on
// [-pi/4, pi/4]: under 1e-7 absolute for |x| up to 1e4, 5e-7 at 1e5.
float ox_sin_shift(float x, uint shift, bool odd) {
    float ax = abs(x);
    if (!(ax < 8388608.0)) return odd ? sin(x) : cos(x); // NaN, inf, no fraction left
    precise float y = floor(ax * 1.27323954473516);
    uint j = uint(y);
    if ((j & 1u) != 0u) {
        j++;
        y += 1.0;
    }
    precise float r = ((ax - y * 0.78515625) - y * 2.4187564849853515625e-4) - y * 3.77489497744594108e-8;
    float z = r * r;
    uint q = ((j >> 1) + shift) & 3u;
    float v = (q & 1u) != 0u
                  ? 1.0 - 0.5 * z + z * z * ((2.443315711809948e-5 * z - 1.388731625493765e-3) * z + 4.166664568298827e-2)
                  : r + r * z * ((-1.9515295891e-4 * z + 8.3321608736e-3) * z - 1.6666654611e-1);
    if ((q & 2u) != 0u) v = -v;
    return odd && x < 0.0 ? -v : v;
}
float ox_sin(float x) { return ox_sin_shift(x, 0u, true); }
float ox_cos(float x) { return ox_sin_shift(x, 1u, false); }
