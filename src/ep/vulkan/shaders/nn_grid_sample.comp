#version 450
// GridSample over 4-D data (N, C, H, W) with a grid (N, Ho, Wo, 2) of
// (x, y) points in [-1, 1]: bilinear or nearest, zeros, border or
// reflection padding, as the CPU kernel computes it (PyTorch's
// grid_sample). One invocation per output point: its taps and weights
// are resolved once, then applied to every channel. Coordinates are
// `precise`, so every step rounds to float as on the CPU and nearest
// mode breaks ties the same way.

layout(local_size_x = 256) in;
layout(std430, binding = 0) readonly buffer X { float x[]; };
layout(std430, binding = 1) readonly buffer G { float grid[]; };
layout(std430, binding = 2) writeonly buffer Y { float y[]; };
layout(push_constant) uniform P {
    uint N, C, H, W; // input
    uint Ho, Wo;     // output points per image
    uint mode;       // 0 bilinear, 1 nearest
    uint pad;        // 0 zeros, 1 border, 2 reflection
    uint align;      // align_corners
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
    uint npix = p.Ho * p.Wo, plane = p.H * p.W;
    uint total = p.N * npix;
    float fh = float(p.H), fw = float(p.W);
    uint stride = gl_NumWorkGroups.x * 256u;
    for (uint i = gl_GlobalInvocationID.x; i < total; i += stride) {
        uint n = i / npix, pix = i % npix;
        float vx = axis_coord(grid[2u * i], fw), vy = axis_coord(grid[2u * i + 1u], fh);
        // taps: rows y0, y0 + 1 and columns x0, x0 + 1 (nearest: one)
        int iy[2], ix[2];
        float wy[2], wx[2];
        bool finite = !isnan(vx) && !isinf(vx) && !isnan(vy) && !isinf(vy);
        uint taps = p.mode == 1u ? 1u : 2u;
        if (!finite) {
            iy[0] = iy[1] = ix[0] = ix[1] = -1;
            wy[0] = wy[1] = wx[0] = wx[1] = 0.0;
        } else if (p.mode == 1u) {
            iy[0] = axis_index(roundEven(vy), fh);
            ix[0] = axis_index(roundEven(vx), fw);
            wy[0] = wx[0] = 1.0;
        } else {
            precise float fy = floor(vy), fx = floor(vx);
            precise float ey = vy - fy, ex = vx - fx;
            wy[0] = 1.0 - ey;
            wy[1] = ey;
            wx[0] = 1.0 - ex;
            wx[1] = ex;
            // far outside, both taps miss (and the int conversion stays defined)
            bool oy = fy > -2.0 && fy < fh + 1.0, ox = fx > -2.0 && fx < fw + 1.0;
            iy[0] = oy ? axis_index(fy, fh) : -1;
            iy[1] = oy ? axis_index(fy + 1.0, fh) : -1;
            ix[0] = ox ? axis_index(fx, fw) : -1;
            ix[1] = ox ? axis_index(fx + 1.0, fw) : -1;
        }
        uint off[4];
        float wt[4];
        for (uint a = 0u; a < taps; a++)
            for (uint b = 0u; b < taps; b++) {
                uint t = a * taps + b;
                bool ok = iy[a] >= 0 && ix[b] >= 0;
                precise float w = wy[a] * wx[b];
                off[t] = ok ? uint(iy[a]) * p.W + uint(ix[b]) : 0u;
                wt[t] = ok ? w : 0.0;
            }
        uint nt = taps * taps;
        for (uint c = 0u; c < p.C; c++) {
            uint xb = (n * p.C + c) * plane;
            // a tap outside reads the plane's first element with weight 0,
            // as on the CPU (NaN there still poisons the sum); an empty
            // plane has no first element
            precise float s = 0.0;
            if (plane != 0u) {
                s = wt[0] * x[xb + off[0]];
                for (uint t = 1u; t < nt; t++) s += wt[t] * x[xb + off[t]];
            }
            y[(n * p.C + c) * npix + pix] = s;
        }
    }
}
