#!/usr/bin/env python3
"""Writes input.npy and the expected outputs of program.tpb, computed
independently of the C++ model: exact rational arithmetic (fractions) on the
FP32 values, one rounding by RMode, then Sat 1 clamp or Sat 0 modulo 256.
No numpy needed (the .npy files are written by hand, format v1.0)."""
import math
import struct
from fractions import Fraction

ROWS, COLS, PHYS_COL = 8, 24, 32


def f32(v):
    return struct.unpack('<f', struct.pack('<f', v))[0]


def f32_bits(v):
    return struct.unpack('<I', struct.pack('<f', v))[0]


def save(path, rows, descr):
    fmt = {'<f4': 'f', '|i1': 'b', '|u1': 'B'}[descr]
    hdr = "{'descr': '%s', 'fortran_order': False, 'shape': (%d, %d), }" % (
        descr, len(rows), len(rows[0]))
    hdr += ' ' * ((64 - (10 + len(hdr) + 1) % 64) % 64) + '\n'
    with open(path, 'wb') as f:
        f.write(b'\x93NUMPY\x01\x00' + struct.pack('<H', len(hdr)) + hdr.encode())
        for row in rows:
            f.write(struct.pack('<%d%s' % (len(row), fmt), *row))


def rnd(v, mode):
    fl = math.floor(v)
    fr = v - fl
    if fr == 0:
        return fl
    half = Fraction(1, 2)
    if mode == 'RNE':
        return fl + 1 if fr > half or (fr == half and fl % 2) else fl
    if mode == 'RMM':
        return fl + 1 if fr > half or (fr == half and v > 0) else fl
    if mode == 'RTZ':
        return fl if v > 0 else fl + 1
    if mode == 'RDN':
        return fl
    return fl + 1  # RUP


def quant(x, m, zp, dtype, mode, sat):
    y = rnd(Fraction(x) * Fraction(m) + zp, mode)
    lo, hi = (-128, 127) if dtype == 'S8' else (0, 255)
    if lo <= y <= hi:
        return y
    if sat:
        return max(lo, min(hi, y))
    y %= 256
    return y - 256 if dtype == 'S8' and y > 127 else y


def main():
    x = []
    for r in range(ROWS):
        row = []
        for c in range(COLS):
            v = ((r * 37 + c * 11) % 101 - 50) * 1.25 + (c % 4) * 0.5
            if (r + c) % 13 == 0:
                v *= 1e6  # far beyond the S8 / U8 ranges
            row.append(f32(v))
        x.append(row)
    save('input.npy', x, '<f4')
    # Block 1: S8, RNE, Sat 1, multiplier 0.37 (r1), zero point -7 (r2).
    m1, zp1 = f32(0.37), -7
    save('expected_t0.npy', [[quant(v, m1, zp1, 'S8', 'RNE', True) for v in row] for row in x],
         '|i1')
    # Block 2: U8, RMM, Sat 0, multiplier 2.5 (r3), zero point 200 (r4).
    m2, zp2 = f32(2.5), 200
    save('expected_t2.npy', [[quant(v, m2, zp2, 'U8', 'RMM', False) for v in row] for row in x],
         '|u1')
    print('r1 = 0x%08x, r3 = 0x%08x' % (f32_bits(m1), f32_bits(m2)))


if __name__ == '__main__':
    main()
