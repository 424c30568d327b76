#version 450
#include "grid.glsl"
// GridSample over 4-D data (N, C, H, W) with a grid (N, Ho, Wo, 2) of
// (x, y) points in [-1, 1], or 5-D data (N, C, D, H, W) with a grid
// (N, Do, Ho, Wo, 3) of (x, y, z) points: linear or nearest, zeros, border or
// reflection padding, as the CPU kernel computes it (PyTorch's
// grid_sample). One invocation per output point: its taps and weights
// are resolved once, then applied to every channel. Coordinates are
// `precise`, so every step rounds to float as on the CPU and nearest
// mode breaks ties the same way.

#include "wg.glsl"
layout(std430, binding = 0) readonly buffer X { float x[]; };
layout(std430, binding = 1) readonly buffer G { float grid[]; };
layout(std430, binding = 2) writeonly buffer Y { float y[]; };
layout(push_constant) uniform P {
    uint N, C, D, H, W; // input (D = 1 for 4-D data)
    uint Do, Ho, Wo;    // output points per image
    uint mode;          // 0 linear, 1 nearest
    uint pad;           // 0 zeros, 1 border, 2 reflection
    uint align;         // align_corners
    uint rank;          // spatial axes: 2 or 3
    OX_GRID_MEMBER
} p;

float clip_coord(float v, float size) {
    if (!(v > 0.0)) return isnan(v) ? v : 0.0;
    return min(v, size - 1.0);
}

// v reflected into [lo2 / 2, hi2 / 2], bouncing as often as needed;
// the remainder is exact, like C's fmod
float reflect_coord(float v, float lo2, float hi2) {
    if (lo2 == hi2) return 0.0;
    precise float lo = lo2 / 2.0, span = (hi2 - lo2) / 2.0;
    precise float a = abs(v - lo);
    precise float flips = floor(a / span);
    precise float extra = fma(-flips, span, a);
    if (extra < 0.0) extra += span;
    else if (extra >= span) extra -= span;
    if (mod(flips, 2.0) == 0.0) return extra + lo;
    precise float back = span - extra;
    return back + lo;
}

// Unnormalized, padded coordinate on an axis of `size` elements.
float axis_coord(float c, float size) {
    precise float v;
    if (p.align != 0u) {
        precise float h = (c + 1.0) / 2.0;
        v = h * (size - 1.0);
    } else {
        precise float s = (c + 1.0) * size;
        v = (s - 1.0) / 2.0;
    }
    if (p.pad == 1u) return clip_coord(v, size);
    if (p.pad == 2u) {
        v = p.align != 0u ? reflect_coord(v, 0.0, 2.0 * (size - 1.0))
                          : reflect_coord(v, -1.0, 2.0 * size - 1.0);
        return clip_coord(v, size);
    }
    return v;
}

// Index of an integral coordinate inside [0, size), or -1.
int axis_index(float v, float size) { return v >= 0.0 && v <= size - 1.0 ? int(v) : -1; }

void main() {
    uint r = p.rank;
    uint npix = p.Do * p.Ho * p.Wo, plane = p.D * p.H * p.W;
    uint total = p.N * npix;
    float size[3] = float[3](float(p.D), float(p.H), float(p.W));
    uint stride = OX_NUM_GROUPS.x * OX_WG;
    for (uint i = gl_GlobalInvocationID.x; i < total; i += stride) {
        uint n = i / npix, pix = i % npix;
        // per axis (depth, height, width) up to two taps: input index (-1:
        // outside) and weight; a 4-D input's depth axis is one tap of
        // weight 1 at index 0, which leaves offsets, products and the
        // summation order as the CPU has them
        int idx[3][2];
        float wgt[3][2];
        uint nt[3];
        bool finite = true;
        for (uint a = 0u; a < 3u; a++) {
            idx[a][0] = 0;
            idx[a][1] = -1;
            wgt[a][0] = 1.0;
            wgt[a][1] = 0.0;
            nt[a] = 1u;
            if (a + r < 3u) continue; // the depth axis of a 4-D input
            // grid component k addresses spatial axis r - 1 - k
            float v = axis_coord(grid[r * i + 2u - a], size[a]);
            if (isnan(v) || isinf(v)) {
                finite = false;
            } else if (p.mode == 1u) {
                idx[a][0] = axis_index(roundEven(v), size[a]);
            } else {
                precise float f = floor(v);
                precise float e = v - f;
                wgt[a][0] = 1.0 - e;
                wgt[a][1] = e;
                nt[a] = 2u;
                // far outside, both taps miss (and the int conversion stays defined)
                bool near = f > -2.0 && f < size[a] + 1.0;
                idx[a][0] = near ? axis_index(f, size[a]) : -1;
                idx[a][1] = near ? axis_index(f + 1.0, size[a]) : -1;
            }
        }
        uint off[8];
        float wt[8];
        uint taps = 0u;
        for (uint a = 0u; a < nt[0]; a++)
            for (uint b = 0u; b < nt[1]; b++)
                for (uint c = 0u; c < nt[2]; c++, taps++) {
                    bool ok = finite && idx[0][a] >= 0 && idx[1][b] >= 0 && idx[2][c] >= 0;
                    precise float w0 = wgt[0][a] * wgt[1][b];
                    precise float w = w0 * wgt[2][c];
                    off[taps] = ok ? (uint(idx[0][a]) * p.H + uint(idx[1][b])) * p.W + uint(idx[2][c]) : 0u;
                    wt[taps] = ok ? w : 0.0;
                }
        for (uint c = 0u; c < p.C; c++) {
            uint xb = (n * p.C + c) * plane;
            // a tap outside reads the plane's first element with weight 0,
            // as on the CPU (NaN there still poisons the sum); an empty
            // plane has no first element
            precise float s = 0.0;
            if (plane != 0u) {
                s = wt[0] * x[xb + off[0]];
                for (uint t = 1u; t < taps; t++) s += wt[t] * x[xb + off[t]];
            }
            y[(n * p.C + c) * npix + pix] = s;
        }
    }
}
