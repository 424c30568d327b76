// Index reading shared by the index shaders. The including shader
// declares `uint ind[]` (the indices, int32 or int64 as word pairs, low
// word first) and the flag block `F { uint flag; uint first_bad; }` on
// binding 5 before including this file.

// Index j, wrapped once when negative, checked against [0, len): false for
// anything outside, including an int64 whose high word is not the sign
// extension of its low word (beyond 32 bits), which must never be
// truncated into range. len stays below 2^31 (32-bit indexing), so the
// int arithmetic cannot overflow.
bool ox_index(uint j, uint is64, uint len, out uint r) {
    int v;
    r = 0u;
    if (is64 != 0u) {
        uint lo = ind[2u * j], hi = ind[2u * j + 1u];
        if (hi != ((lo & 0x80000000u) != 0u ? 0xffffffffu : 0u)) return false;
        v = int(lo);
    } else {
        v = int(ind[j]);
    }
    if (v < 0) v += int(len);
    if (v < 0 || v >= int(len)) return false;
    r = uint(v);
    return true;
}

// Raises the flag the host reads after the dispatch, keeping the lowest
// bad position in the indices so the message names the first one.
void ox_bad_index(uint pos) {
    atomicOr(flag, 1u);
    atomicMin(first_bad, pos);
}
