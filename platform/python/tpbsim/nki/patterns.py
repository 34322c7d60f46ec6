"""Access patterns: two views walked in step (element k of one is element k of
the other) as instructions take them.

A pattern is a list of (stride, count) dimensions, outermost first, strides
in elements. :func:`joint` finds dimensions both sides are affine in (the
coarsest common refinement of their shapes, from the innermost out); what is
left outside (where the shapes share no factor) is walked element by element
as a list of base offsets, one instruction (or descriptor) each.
"""

import itertools
import math


def squeeze(dims):
    """Without count-1 dimensions, adjacent contiguous ones merged."""
    out = []
    for s, n in dims:
        if n == 1:
            continue
        if out and out[-1][0] == s * n:
            out[-1] = (s, out[-1][1] * n)
        else:
            out.append((s, n))
    return out


def joint(a, b):
    """(inner, outer): `inner` a list of (count, stride_a, stride_b) dimensions,
    outermost first, in which both patterns are affine; `outer` the list of
    (offset_a, offset_b) base offsets (elements) of the part walked one by one
    (one entry when nothing is)."""
    inner, outer = joint_n([a, b])
    return [(n, s[0], s[1]) for n, s in inner], outer


def joint_n(pats):
    """:func:`joint` of any number of patterns walked in step: (inner [(count,
    (stride of each))], outer [(offset of each)])."""
    pats = [squeeze(p) for p in pats]
    if len({math.prod(n for _, n in p) for p in pats}) > 1:
        raise ValueError("patterns of different sizes")
    inner = []
    while all(pats):
        g = math.gcd(*(p[-1][1] for p in pats))
        if g == 1:
            break
        inner.append((g, tuple(p[-1][0] for p in pats)))
        for p in pats:
            s, n = p.pop()
            if n > g:
                p.append((s * g, n // g))
    inner.reverse()
    return _merge(inner), list(zip(*[_offsets(p) for p in pats]))


def _merge(inner):
    out = []
    for n, ss in inner:
        if out and all(o == s * n for o, s in zip(out[-1][1], ss)):
            out[-1] = (out[-1][0] * n, ss)
        else:
            out.append((n, ss))
    return out


def _offsets(dims):
    """Every base offset of a pattern, in pattern order."""
    if not dims:
        return [0]
    ranges = [range(0, s * n, s) if s else [0] * n for s, n in dims]
    return [sum(t) for t in itertools.product(*ranges)]


def split(inner, fits, most):
    """The innermost dimensions of `inner` that one instruction takes (at most
    `most`, each passing `fits(count, sa, sb)`), and the rest: (taken, rest)."""
    taken = []
    k = len(inner)
    while k > 0 and len(taken) < most and fits(*inner[k - 1]):
        taken.insert(0, inner[k - 1])
        k -= 1
    return taken, inner[:k]


def expand(outer, rest):
    """Base offsets of `outer` x the dimensions `rest` (count, sa, sb)."""
    return expand_n(outer, [(n, (sa, sb)) for n, sa, sb in rest])


def expand_n(outer, rest):
    """Base offsets (a tuple each) of `outer` x the dimensions `rest` (count,
    (stride of each))."""
    if not rest:
        return outer
    cols = [_offsets([(ss[k], n) for n, ss in rest]) for k in range(len(rest[0][1]))]
    return [tuple(o + x for o, x in zip(base, xs)) for base in outer for xs in zip(*cols)]
