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
    a, b = squeeze(a), squeeze(b)
    if math.prod(n for _, n in a) != math.prod(n for _, n in b):
        raise ValueError("patterns of different sizes")
    inner = []
    while a and b:
        sa, na = a[-1]
        sb, nb = b[-1]
        g = math.gcd(na, nb)
        if g == 1:
            break
        inner.append((g, sa, sb))
        a.pop()
        b.pop()
        if na > g:
            a.append((sa * g, na // g))
        if nb > g:
            b.append((sb * g, nb // g))
    inner.reverse()
    return _merge(inner), _walk(a, b)


def _merge(inner):
    out = []
    for n, sa, sb in inner:
        if out and out[-1][1] == sa * n and out[-1][2] == sb * n:
            m = out[-1][0]
            out[-1] = (m * n, sa, sb)
        else:
            out.append((n, sa, sb))
    return out


def _offsets(dims):
    """Every base offset of a pattern, in pattern order."""
    if not dims:
        return [0]
    ranges = [range(0, s * n, s) if s else [0] * n for s, n in dims]
    return [sum(t) for t in itertools.product(*ranges)]


def _walk(a, b):
    oa, ob = _offsets(a), _offsets(b)
    return list(zip(oa, ob))


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
    if not rest:
        return outer
    ra = _offsets([(sa, n) for n, sa, _ in rest])
    rb = _offsets([(sb, n) for n, _, sb in rest])
    return [(oa + xa, ob + xb) for oa, ob in outer for xa, xb in zip(ra, rb)]
