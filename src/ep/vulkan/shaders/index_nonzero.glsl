// NonZero's element test and block scan (index_nonzero_*.comp). The
// including shader declares `uint x[]` (the input's words) and push
// constants with `n` and `kind`: 0 float32 (+-0 is zero, NaN is not;
// tested on the bits, so denormals count as on the CPU), 1 int32, 2 int64
// (word pairs), 3 bool (bytes, four to a word).
bool ox_nonzero(uint i) {
    if (i >= p.n) return false;
    if (p.kind == 0u) return (x[i] & 0x7fffffffu) != 0u;
    if (p.kind == 1u) return x[i] != 0u;
    if (p.kind == 2u) return (x[2u * i] | x[2u * i + 1u]) != 0u;
    return ((x[i >> 2u] >> ((i & 3u) * 8u)) & 0xffu) != 0u;
}

shared uint ox_sc[OX_WG];

// Exclusive prefix sum of v over the workgroup, the sum in `total`.
uint ox_block_scan(uint v, out uint total) {
    uint t = gl_LocalInvocationID.x;
    ox_sc[t] = v;
    barrier();
    for (uint o = 1u; o < OX_WG; o <<= 1u) {
        uint a = t >= o ? ox_sc[t - o] : 0u;
        barrier();
        ox_sc[t] += a;
        barrier();
    }
    uint incl = ox_sc[t];
    total = ox_sc[OX_WG - 1u];
    barrier(); // ox_sc is reused by the next scan
    return incl - v;
}
