"""The lowering of SPEC §18's isa calls (docs/NKI.md "Lowering"): each call
becomes the model's instruction(s) of the same name on the engine NKI names,
its operands walked as lower.py walks a copy's (the dimensions all views are
affine in, up to three per instruction as t3d(...) patterns, the rest a loop
of instructions), NKI's operator and function names mapped to the model's.
The instructions and their footprints come from tpbsim.program.instructions.
"""

from ..program import instructions as ins
from . import patterns
from .dtypes import ARCH_VERSION
from .errors import NKIError
from .lowerbase import MAX_PIECES, PSUM_BANK, encode, model_dtype, too_many
from .tensor import NkiTensor

# NKI's ALU operators the model has (docs/ASM.md "ALU operators"): the same names.
ALU = {"bypass", "add", "subtract", "multiply", "divide", "maximum", "minimum", "equal",
       "not_equal", "greater_equal", "greater", "less_equal", "less", "power", "abs_max",
       "abs_min", "abs", "square", "rsqrt", "reciprocal"}
# NKI's activation functions -> the model's (docs/ASM.md "Activation functions").
FUNCS = {"copy": "copy", "identity": "copy", "exp": "exp", "log": "log", "sqrt": "sqrt",
         "rsqrt": "rsqrt", "reciprocal": "reciprocal", "tanh": "tanh", "sigmoid": "sigmoid",
         "relu": "relu", "gelu": "gelu", "gelu_apprx_tanh": "gelu_apprx_tanh", "silu": "silu",
         "square": "square", "abs": "abs", "sign": "sign", "erf": "erf", "softplus": "softplus"}
REDUCE = {"add": "add", "maximum": "max"}
POOL_TT = {"add", "subtract", "multiply", "maximum", "minimum", "power"}
ACT_TS = {("multiply", "add"), ("multiply", "bypass"), ("add", "bypass")}


def queue(lw, call):
    """The queue of a compute call: its engine's; the Scalar engine's on
    MAVERICK is the DVE (seed 003 folds the ACT into it)."""
    return "dve" if call.engine == "act" and lw.arch == "maverick" else call.engine


def lacks(call, what, rule="instruction the model lacks"):
    raise NKIError(rule, f"{call.op}: {what}", call.loc)


def _fits(n, ss):
    return n <= 0xFFFF and all(-0x8000 <= s <= 0x7FFF for s in ss)


def _operand(lw, call, v, what, dims, byte_off=0):
    p0, _, off, _ = v.partition_form()
    return (v.buffer.kind, p0, v.storage.addr + off + byte_off, dims,
            model_dtype(call, v, what))


def walk(lw, call, views, names, most=3):
    """The instructions' operands of views walked in step: a list (one per
    instruction) of operand tuples (tpbsim.program.instructions), one per view."""
    forms = [v.partition_form() for v in views]
    inner, outer = patterns.joint_n([f[3] for f in forms])
    taken, rest = patterns.split(inner, _fits, most)
    pieces = patterns.expand_n(outer, rest)
    if len(pieces) > MAX_PIECES:
        too_many(call, MAX_PIECES, "instructions")
    dims = [[(ss[k], n) for n, ss in taken] for k in range(len(views))]
    return [tuple(_operand(lw, call, v, w, dims[k], offs[k] * v.dtype.itemsize)
                  for k, (v, w) in enumerate(zip(views, names))) for offs in pieces]


def one(lw, call, views, names):
    """walk() of a call that must be one instruction (a reduction or a scan:
    splitting it would change its summation order)."""
    pieces = walk(lw, call, views, names)
    if len(pieces) != 1:
        raise NKIError("access pattern", f"{call.op}: the operands need more than the three "
                       "dimensions of one instruction; make their free dimensions contiguous",
                       call.loc)
    return pieces[0]


def single(lw, call, v, what):
    """The operand of a view whose free dimensions one instruction takes."""
    dims = patterns.squeeze(v.partition_form()[3])
    if len(dims) > 3 or not all(_fits(n, (s,)) for s, n in dims):
        raise NKIError("access pattern", f"{call.op}: {what} needs more than the three "
                       "dimensions of one instruction", call.loc)
    return _operand(lw, call, v, what, dims)


def vec(lw, call, x, what, fp32=True):
    """A scalar (float) or a [P, 1] tile as an instruction's operand."""
    if not isinstance(x, NkiTensor):
        return x
    if fp32 and x.dtype.name != "float32":
        raise NKIError("dtype", f"{call.op}: {what} is {x.dtype.name}; the model's per-partition "
                       "operand is float32", call.loc)
    p0, _, off, _ = x.partition_form()
    return (x.buffer.kind, p0, x.storage.addr + off, model_dtype(call, x, what))


def alu(call, name):
    if name not in ALU:
        lacks(call, f"operator {name} is not one of the model's ALU operators (docs/ASM.md)",
              "operator the model lacks")
    return name


def emit(lw, call, instr, q=None):
    lw.emit(q or queue(lw, call), *instr, call)


def channels(v):
    return v.partition_form()[1]


# ------------------------------------------------------------------ element-wise

def tensor_copy(lw, call):
    dst, (src,) = call.dst, call.srcs
    if call.engine == "act" and ARCH_VERSION[lw.arch] < 3:
        lacks(call, "the NeuronCore-v2 Scalar engine has no tensor_copy (nki.isa)",
              "instruction the generation lacks")
    for d, s in walk(lw, call, [dst, src], ["dst", "src"]):
        emit(lw, call, ins.unary("tensor_copy", channels(dst), s, d))


def tensor_tensor(lw, call):
    dst, (a, b) = call.dst, call.srcs
    op = alu(call, call.params["op"])
    if call.engine == "pool" and op not in POOL_TT:
        lacks(call, f"the GpSimd engine runs {', '.join(sorted(POOL_TT))}, not {op}", "engine")
    if call.engine == "dve" and op == "power":
        lacks(call, "power runs on the GpSimd engine (engine=nisa.gpsimd_engine)", "engine")
    for d, s, s1 in walk(lw, call, [dst, a, b], ["dst", "data1", "data2"]):
        emit(lw, call, ins.tensor_tensor(channels(dst), op, s, s1, d))


def tensor_scalar(lw, call):
    dst, data = call.dst, call.srcs[0]
    p = call.params
    op0, op1 = alu(call, p["op0"]), alu(call, p["op1"] or "bypass")
    if call.engine == "act" and (op0, op1) not in ACT_TS:
        lacks(call, f"the Scalar engine runs (multiply, add), (multiply, -), (add, -), not "
              f"({op0}, {op1})", "engine")
    if call.engine == "pool" and (op0, op1) != ("rsqrt", "bypass"):
        lacks(call, "the GpSimd engine's tensor_scalar is rsqrt alone", "engine")
    v0 = vec(lw, call, p["operand0"], "operand0")
    v1 = vec(lw, call, p["operand1"] if p["operand1"] is not None else 0.0, "operand1")
    for d, s in walk(lw, call, [dst, data], ["dst", "data"]):
        emit(lw, call, ins.tensor_scalar(channels(dst), s, d, op0, v0, p["reverse0"], op1, v1,
                                         p["reverse1"]))


def reciprocal(lw, call):
    dst, (data,) = call.dst, call.srcs
    for d, s in walk(lw, call, [dst, data], ["dst", "data"]):
        emit(lw, call, ins.unary("reciprocal", channels(dst), s, d))


def activation(lw, call):
    dst, res = call.dst if isinstance(call.dst, tuple) else (call.dst, None)
    data = call.srcs[0]
    p = call.params
    func = FUNCS.get(p["op"])
    if func is None:
        lacks(call, f"activation function {p['op']} is not in the model's table (docs/ASM.md)",
              "operator the model lacks")
    scale = vec(lw, call, p["scale"], "scale")
    bias = p["bias"]
    if not isinstance(bias, NkiTensor):
        if bias:
            raise NKIError("not modelled", "activation: a scalar bias other than 0 (the model's "
                           "bias is a [P, 1] vector: pass a tile)", call.loc)
        bias = None
    else:
        bias = vec(lw, call, bias, "bias", fp32=False)
    reduce = None
    if p.get("reduce_cmd", "idle") != "idle" or res is not None:
        rop = REDUCE.get(p["reduce_op"] or "add")
        if rop is None:
            lacks(call, f"reduce_op {p['reduce_op']}: the model's activation reduces by add or "
                  "maximum", "operator the model lacks")
        if rop == "max" and ARCH_VERSION[lw.arch] < 3:
            lacks(call, "reduce_op maximum: the NeuronCore-v2 Scalar engine reduces by add only "
                  "(nki.isa; max from NeuronCore-v3)", "instruction the generation lacks")
        cmd = p.get("reduce_cmd", "idle")
        reduce = (rop, "reset_reduce" if cmd == "idle" else cmd,
                  None if res is None else vec(lw, call, res, "reduce_res", fp32=False))
    if reduce is not None:
        d, s = one(lw, call, [dst, data], ["dst", "data"])
        return emit(lw, call, ins.activation(channels(dst), func, s, d, scale, bias, reduce))
    for d, s in walk(lw, call, [dst, data], ["dst", "data"]):
        emit(lw, call, ins.activation(channels(dst), func, s, d, scale, bias))


def memset(lw, call):
    dst = call.dst
    if call.engine == "pool" and dst.buffer.kind == "psum":
        raise NKIError("buffer", "memset on GpSimd cannot reach PSUM", call.loc)
    bits = int.from_bytes(encode(dst.dtype, call.params["value"]), "little")
    for (d,) in walk(lw, call, [dst], ["dst"]):
        emit(lw, call, ins.memset(channels(dst), bits, d))


def iota(lw, call):
    dst = call.dst
    pat = [(s, n) for s, n in call.params["pattern"] if n > 1] or [(0, 1)]
    if len(pat) > 3:
        raise NKIError("access pattern", "iota: a pattern of more than three dimensions of "
                       "more than one element", call.loc)
    inner = list(reversed(pat)) + [(0, 1)] * (3 - len(pat))
    d = single(lw, call, dst, "dst")
    emit(lw, call, ins.iota(channels(dst), [s for s, _ in inner], [n for _, n in inner], d,
                            call.params["offset"], call.params["channel_multiplier"]))


# ------------------------------------------------------------------ reductions, scans

def tensor_reduce(lw, call):
    dst, (data,) = call.dst, call.srcs
    op = alu(call, call.params["op"])
    if op not in ("add", "multiply", "maximum", "minimum"):
        lacks(call, f"the model's tensor_reduce runs add, multiply, maximum, minimum, not {op}",
              "operator the model lacks")
    p0, parts, off, dims = data.partition_form()
    nred = len(call.params["axes"])
    red = patterns.squeeze(dims[len(dims) - nred:]) or [(1, 1)]
    if len(red) > 3 or not all(_fits(n, (s,)) for s, n in red):
        raise NKIError("access pattern", "tensor_reduce: the reduced axes need more than the "
                       "three dimensions of one instruction", call.loc)
    _, _, doff, ddims = dst.partition_form()
    inner, outer = patterns.joint_n([dims[:len(dims) - nred], ddims])
    taken, rest = patterns.split(inner, _fits, 3 - len(red))
    pieces = patterns.expand_n(outer, rest)
    if len(pieces) > MAX_PIECES:
        too_many(call, MAX_PIECES, "instructions")
    for oa, ob in pieces:
        s = _operand(lw, call, data, "data", [(ss[0], n) for n, ss in taken] + red,
                     oa * data.dtype.itemsize)
        d = _operand(lw, call, dst, "dst", [(ss[1], n) for n, ss in taken],
                     ob * dst.dtype.itemsize)
        emit(lw, call, ins.tensor_reduce(parts, op, len(red), s, d, call.params["negate"]))


def tensor_tensor_scan(lw, call):
    dst, (a, b) = call.dst, call.srcs[:2]
    p = call.params
    d, s, s1 = one(lw, call, [dst, a, b], ["dst", "data0", "data1"])
    init = vec(lw, call, p["initial"], "initial")
    emit(lw, call, ins.tensor_tensor_scan(channels(dst), alu(call, p["op0"]),
                                          alu(call, p["op1"]), init, s, s1, d, p["reverse0"],
                                          p["reverse1"]))


def _stats(mnemonic):
    def lower(lw, call):
        dst, (data,) = call.dst, call.srcs
        emit(lw, call, ins.unary(mnemonic, channels(dst), single(lw, call, data, "data"),
                                 single(lw, call, dst, "dst")))
    return lower


# ------------------------------------------------------------------ transposes, matmul

def nc_transpose(lw, call):
    dst, (data,) = call.dst, call.srcs
    if call.engine == "dve":
        emit(lw, call, ins.nc_transpose(channels(data), single(lw, call, data, "data"),
                                        single(lw, call, dst, "dst"), channels(dst)))
        return
    if data.buffer.kind != "sbuf" or dst.buffer.kind != "psum":
        raise NKIError("buffer", "nc_transpose on the Tensor engine reads SBUF and writes PSUM",
                       call.loc)
    k, m = channels(data), channels(dst)
    st = single(lw, call, data, "data")
    # The moving tensor of a PE transpose is the K x K identity, whose values the
    # result does not use (docs/CONVENTIONS.md): read here as the stationary's
    # first column repeated (step 0), the same K elements a partition for the time.
    mv = st[:3] + ([(0, k)], st[4])
    emit(lw, call, ins.ldweights_plain(k, m, st))
    emit(lw, call, ins.matmul_plain(k, 0, mv, single(lw, call, dst, "dst"), m, transpose=True))


def nc_matmul(lw, call):
    dst, (st, mv) = call.dst, call.srcs
    p = call.params
    perf = p.get("perf_mode") or "none"
    k = channels(st)
    m = channels(dst)
    emit(lw, call, ins.ldweights_plain(k, m, single(lw, call, st, "stationary"), perf))
    if p.get("is_transpose"):
        emit(lw, call, ins.matmul_plain(k, 0, single(lw, call, mv, "moving"),
                                        single(lw, call, dst, "dst"), m, True, perf))
        return
    if dst.dtype.name != "float32":
        raise NKIError("dtype", "nc_matmul: the model's matmul writes float32 to PSUM (a "
                       f"{dst.dtype.name} dst is not modelled)", call.loc)
    acc = 1 if p["accumulate"] else 0
    if perf == "double_row":
        # NKI's [K, 2, N]: partition p holds rows 2p (its first N) and 2p + 1.
        emit(lw, call, ins.matmul_plain(k, acc, single(lw, call, mv, "moving"),
                                        single(lw, call, dst, "dst"), m, perf_mode=perf))
        return
    for d, s in _bank_pieces(lw, call, dst, mv):
        emit(lw, call, ins.matmul_plain(k, acc, s, d, m))


def _bank_pieces(lw, call, dst, mv):
    """(dst, moving) operands of the matmuls of one nc_matmul: one per PSUM bank
    the destination spans (a v4 moving tile of up to 4096 columns), each at
    most 512 columns."""
    _, _, doff, ddims = dst.partition_form()
    dd, md = patterns.squeeze(ddims), patterns.squeeze(mv.partition_form()[3])
    n = dst.size // channels(dst)
    ms = md[0][0] if md else 1
    if dd in ([], [(1, n)]) and len(md) <= 1 and _fits(1, (ms,)):
        base = dst.storage.addr + doff
        out, c0 = [], 0
        while c0 < n:
            nc = min(512, n - c0, (PSUM_BANK - (base + 4 * c0) % PSUM_BANK) // 4)
            out.append((_operand(lw, call, dst, "dst", [(1, nc)], 4 * c0),
                        _operand(lw, call, mv, "moving", [(ms, nc)],
                                 c0 * ms * mv.dtype.itemsize)))
            c0 += nc
        return out
    pieces = walk(lw, call, [dst, mv], ["dst", "moving"])
    if len(pieces) != 1 or n > 512:
        raise NKIError("access pattern", "nc_matmul: a moving tile of more than 512 columns, or "
                       "one whose pattern one instruction does not take, must be contiguous",
                       call.loc)
    return pieces


LOWER = {
    "tensor_copy": tensor_copy,
    "nc_matmul": nc_matmul,
    "nc_transpose": nc_transpose,
    "activation": activation,
    "tensor_tensor": tensor_tensor,
    "tensor_scalar": tensor_scalar,
    "tensor_reduce": tensor_reduce,
    "tensor_tensor_scan": tensor_tensor_scan,
    "iota": iota,
    "reciprocal": reciprocal,
    "bn_stats": _stats("bn_stats"),
    "bn_aggr": _stats("bn_aggr"),
}

__all__ = ["LOWER", "walk", "queue"]
