"""The tiling of one GEMM C = A @ W and every size it implies, in closed form
(SPEC §12, docs/KERNELS.md "The tiling"): the Plan, what the core and the host
must hold for it (check_sizes refuses what they cannot, before anything is
made), the messages' naming of arguments.

Orientation: the PE's stationary operand is a tile of A^T (K rows on the
partitions, up to 128 columns m), the moving operand a tile of W (K rows, up
to 512 columns n), so PSUM[m][n] = C[m][n] and the result leaves PSUM row by
row. One K-tile is 512 contraction values: 128 partitions x 4 lanes of an x4
word (SPEC §5).
"""

import collections
import contextlib
import contextvars
import functools
import json
import math

import numpy as np

from .. import _tpbsim
from ..errors import InputError
from . import quant

ARCHS = ("mariana", "maverick")
KTILE, MTILE, NTILE, GROUP = 512, 128, 512, 4   # contraction, stationary, moving, PSUM banks
PSUM_BANK, PSUM_BANKS = 2048, 8   # a PSUM partition: 8 banks of 512 FP32 (16 KiB)
A_RING, C_RING = 12, 6
# DMA transfers (docs/KERNELS.md "Data placement"): a DMA engine moves a
# transfer's 8 partitions at its full bandwidth once they hold at least its
# per-transfer cost's worth of bytes (dma.transfer_cost_ns x the engine's
# bandwidth: 3.4 KiB per partition on mariana), so the activations of
# consecutive K-tiles go in one transfer of about A_CHUNK bytes per partition
# (into a ring of A_RAW_BYTES), the weight panel's K-tiles in transfers of
# about W_CHUNK, and a panel's scale rows in one transfer per quadrant.
A_CHUNK, W_CHUNK, A_RAW_BYTES, A_RESIDENT_BYTES = 4096, 8192, 16384, 32768
PLACEMENTS = ("dma", "sbuf")


class GemmError(InputError):
    """A request the kernel cannot run: the message says why, naming the argument as
    the caller wrote it (``a``, ``w_layout=`` from Python, ``--a`` on the command
    line). A tpbsim.InputError (and so a ValueError); exit 1 on the command line."""


# Whether messages name the command line's flags (python3 -m tpbsim.kernels sets
# it) or run()'s Python arguments (the default).
_CLI = contextvars.ContextVar("tpbsim_kernels_cli", default=False)
_NO_VALUE = object()


def arg(name, value=_NO_VALUE, r=True):
    """An argument as a message names it: ``--name VALUE`` on the command line,
    ``name=VALUE`` from Python (``r``: the value's repr, else its str)."""
    if _CLI.get():
        flag = "--" + name.replace("_", "-")
        return flag if value is _NO_VALUE else f"{flag} {value!r}" if r else f"{flag} {value}"
    return name if value is _NO_VALUE else f"{name}={value!r}"


@contextlib.contextmanager
def cli_messages():
    """Messages name the command line's flags (``--a``) inside, not run()'s
    Python arguments (python3 -m tpbsim.kernels)."""
    token = _CLI.set(True)
    try:
        yield
    finally:
        _CLI.reset(token)


def ceil_div(a, b):
    return -(-a // b)


def lines64(nbytes):
    """A Layout.take of `nbytes`: whole 64-byte lines."""
    return ceil_div(int(math.ceil(nbytes)), 64) * 64


def tiles(total, size):
    """The tile sizes of `total` in tiles of `size`: [(count, size)], the last
    tile short when `size` does not divide `total`."""
    full, last = divmod(total, size)
    return ([(full, size)] if full else []) + ([(1, last)] if last else [])


def size_text(nbytes):
    """A size for a message: GiB, MiB or KiB with the exact bytes, bytes when small."""
    for unit, scale in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if nbytes >= scale:
            return f"{nbytes / scale:.2f} {unit} ({nbytes} bytes)"
    return f"{nbytes} bytes"


def check_int(name, v):
    if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
        raise GemmError(f"{arg(name, v)}: must be a positive integer, not "
                        f"{type(v).__name__}")
    if v < 1:
        raise GemmError(f"{arg(name, v)}: must be a positive integer")
    return int(v)


class Plan:
    """The tiling of one GEMM (all sizes after padding). The counts and sizes are
    arithmetic on the shape; the tile lists (kt, mt, nt, groups) are made when
    first used, after the sizes were checked (check_sizes)."""

    def __init__(self, m, k, n, weights, arch, group=GROUP):
        if not isinstance(weights, str) or weights not in quant.WEIGHT_FORMATS:
            raise GemmError(f"{arg('weights', weights)}: not a weight format "
                            f"({'|'.join(quant.WEIGHT_FORMATS)})")
        if not isinstance(arch, str) or arch not in ARCHS:
            why = {"sunda": "SUNDA (v2) has none of the MX instructions",
                   "cayman": "CAYMAN (v3) has no MX matmul and no QuantizeMX"}.get(arch)
            if why:
                raise GemmError(f"{arg('arch', arch, r=False)}: {why}; the MX GEMM runs on mariana "
                                "(LdweightsMX / MatmulMX) or maverick (LDWEIGHTS / MATMUL in MX "
                                "mode)")
            raise GemmError(f"{arg('arch', arch)}: not a generation with an MX GEMM "
                            "(mariana|maverick)")
        m, k, n = check_int("m", m), check_int("k", k), check_int("n", n)
        self.m, self.k, self.n, self.weights, self.arch = m, k, n, weights, arch
        self.spec = quant.WEIGHT_FORMATS[weights]
        self.group = group
        # K: whole groups of 32 partitions (QuantizeMX and the matmul take 32, 64, 96
        # or 128 rows); N: the format's column granule (POOL chunks), even on
        # maverick (the MXTENSOR_V2 column count n0 x n1 with n0, n1 <= 255).
        self.kpad = ceil_div(self.k, 128) * 128
        gran = self.spec.get("ncols", 1)
        if arch == "maverick":
            gran = max(gran, 2)
        self.npad = ceil_div(self.n, gran) * gran
        self.n_kt, self.n_mt = ceil_div(self.kpad, KTILE), ceil_div(self.m, MTILE)
        self.n_nt = ceil_div(self.npad, NTILE)
        self.n_groups = ceil_div(self.n_nt, group)
        # The last panel in panels of one N-tile when A is resident and there are
        # several M-tiles (docs/KERNELS.md "Data placement"): every M-tile of the
        # last panel runs after its last byte lands, so a narrow last panel
        # shortens the tail; the extra panels fetch nothing again.
        self.n_head, self.tail_nt = self.n_groups, 0
        if group > 1 and self.n_mt > 1 and self.n_groups > 1 and self.a_ring()[2]:
            self.n_head = self.n_groups - 1
            self.tail_nt = self.n_nt - group * self.n_head
            self.n_groups = self.n_head + self.tail_nt
        self.padding = []
        if self.kpad != self.k:
            self.padding.append(f"K {self.k} -> {self.kpad} (zero rows of W, zero columns of A: "
                                "K-tiles hold 32, 64, 96 or 128 partitions of 4 values)")
        if self.npad != self.n:
            self.padding.append(f"N {self.n} -> {self.npad} (zero columns of W, cut from C: "
                                f"{weights} on {arch} takes columns in multiples of {gran})")

    def regroup(self, group):
        """The same GEMM with `group` N-tiles per weight panel."""
        return Plan(self.m, self.k, self.n, self.weights, self.arch, group)

    @functools.cached_property
    def kt(self):
        """Partitions of each K-tile (128, the last 32, 64, 96 or 128)."""
        return [min(128, (self.kpad - KTILE * t) // 4) for t in range(self.n_kt)]

    @functools.cached_property
    def mt(self):
        return [min(MTILE, self.m - MTILE * t) for t in range(self.n_mt)]

    @functools.cached_property
    def nt(self):
        return [min(NTILE, self.npad - NTILE * t) for t in range(self.n_nt)]

    @functools.cached_property
    def groups(self):
        """The N-tiles of each weight panel."""
        return [list(range(self.group_start(g), self.group_start(g) + self.group_nts(g)))
                for g in range(self.n_groups)]

    def group_start(self, g):
        """The first N-tile of panel g."""
        return g * self.group if g < self.n_head else self.n_head * self.group + g - self.n_head

    def group_nts(self, g):
        """N-tiles of panel g."""
        return min(self.group if g < self.n_head else 1, self.n_nt - self.group_start(g))

    def group_cols(self, g):
        return min(self.group_nts(g) * NTILE, self.npad - NTILE * self.group_start(g))

    def panel_tiles(self):
        """The columns of the weight panels, [(count, columns)] as _tiles gives
        them (closed form: the panels are not listed)."""
        head = self.n_head * self.group * NTILE
        if not self.tail_nt:
            return tiles(self.npad, self.group * NTILE)
        return tiles(head, self.group * NTILE) + tiles(self.npad - head, NTILE)

    # ---------------------------------------------------------------- sizes
    # Each of these is what the Kernel's layouts and program come to, in closed
    # form: checked before a list is made (tests compare them with the Kernel's).

    @property
    def n_full_kt(self):
        """K-tiles of 128 partitions (every one but a shorter last)."""
        return self.kpad // KTILE

    def _chunk(self, per_kt, target):
        """Full K-tiles per transfer: up to `target` bytes per partition."""
        return max(1, min(self.n_full_kt, target // per_kt)) if self.n_full_kt else 1

    def k_chunks(self, per_kt, target):
        """The K-tiles moved together, [(kt0, kt1)]: consecutive full K-tiles up to
        `target` bytes per partition (`per_kt` each), the shorter last one alone
        (a transfer's rows are one count of partitions)."""
        nf, j = self.n_full_kt, self._chunk(per_kt, target)
        out = [(t, min(t + j, nf)) for t in range(0, nf, j)]
        if self.n_kt > nf:
            out.append((nf, self.n_kt))
        return out

    def n_k_chunks(self, per_kt, target):
        """len(k_chunks(...)) in closed form (sizes are checked before lists exist)."""
        return ceil_div(self.n_full_kt, self._chunk(per_kt, target)) + (self.n_kt > self.n_full_kt)

    def a_chunks(self, mw):
        """K-tile chunks of one activation transfer, for an M-tile of mw rows."""
        return self.k_chunks(8 * mw, A_CHUNK)

    def a_ring(self):
        """(slot bytes, slots, resident) of the ring the activation transfers land
        in. Resident: A's chunks all fit in A_RESIDENT_BYTES, one slot each,
        loaded once for every weight panel (a decode-shaped GEMM's few rows
        are not fetched again per panel)."""
        slot = max(lines64(8 * mw * max(self._chunk(8 * mw, A_CHUNK), 1))
                   for _, mw in tiles(self.m, MTILE))
        per_group = sum(c * self.n_k_chunks(8 * mw, A_CHUNK) for c, mw in tiles(self.m, MTILE))
        if self.n_groups > 1 and per_group * slot <= A_RESIDENT_BYTES:
            return slot, per_group, True
        return slot, max(3, min(A_RING, A_RAW_BYTES // slot)), False

    def a_mx_slots(self):
        """Slots of quantized (MXFP8) activation tiles: with A resident, one per
        (M-tile, K-tile), quantized once for every weight panel; else a ring of
        A_RING, quantized again for each panel."""
        return self.n_mt * self.n_kt if self.a_ring()[2] else A_RING

    def w_chunks(self, rb, g):
        """K-tile chunks of panel g's transfers (rb bytes per K-tile): the last
        panel's last chunk in single K-tiles when each is still W_CHUNK / 2 per
        partition (4 KiB: 97% of the DMA rate, TIMING.md's curve), so that the
        matmuls left after the run's last weight byte lands are one K-tile's."""
        chunks = self.k_chunks(rb, W_CHUNK)
        if g == self.n_groups - 1 and 2 * rb >= W_CHUNK:
            k0, k1 = chunks[-1]
            chunks[-1:] = [(t, t + 1) for t in range(k0, k1)]
        return chunks

    def _w_tail_extra(self, rb):
        """Transfers the last panel's split adds (w_chunks), in closed form: its
        last chunk's K-tiles less one (a shorter last K-tile is a chunk alone)."""
        if self.n_kt > self.n_full_kt or not self.n_full_kt or 2 * rb < W_CHUNK:
            return 0
        j = self._chunk(rb, W_CHUNK)
        return self.n_full_kt - j * (ceil_div(self.n_full_kt, j) - 1) - 1

    def _w_layout(self):
        spec = self.spec
        host_scales = spec["store"] == "mx" or (spec["store"] == "packed" and spec["group"] == 0)
        raw_cb = {"mx": spec.get("word_bytes"), "bf16": 8}.get(
            spec["store"], 2.5 if spec.get("group") == 8 else 3)
        unit = spec["store"] == "packed" and spec["group"] == 8
        return host_scales, raw_cb, unit

    def hbm_bytes(self):
        """HBM of the DMA placement: every A tile, every weight panel slice (and
        its scale rows), the unit scales, C."""
        host_scales, raw_cb, unit = self._w_layout()
        nf, kl = self.n_full_kt, self.kpad // 4 - 128 * self.n_full_kt

        def full_and_last(per_partition, scales=False):
            # [partition][K-tile][bytes] of the full K-tiles, then the last's rows
            # (scale rows: one per 8 partitions).
            rows = (16 * nf, kl // 8) if scales else (128 * nf, kl)
            return (lines64(rows[0] * per_partition) if nf else 0) + \
                (lines64(rows[1] * per_partition) if kl else 0)

        a = sum(cm * full_and_last(8 * mw) for cm, mw in tiles(self.m, MTILE))
        w = sum(cg * (full_and_last(int(raw_cb * cols))
                      + (full_and_last(cols, True) if host_scales else 0))
                for cg, cols in self.panel_tiles())
        return a + w + (lines64(4 * NTILE) if unit else 0) + lines64(4 * self.m * self.npad)

    def hbm_input_bytes(self):
        """The HBM image the host writes (everything but C)."""
        return self.hbm_bytes() - lines64(4 * self.m * self.npad)

    def sbuf_bytes(self, placement, lookahead=2):
        """Bytes per SBUF partition of the placement's buffers."""
        spec = self.spec
        host_scales, raw_cb, unit = self._w_layout()
        if placement == "dma":
            gc = min(self.group * NTILE, self.npad)
            per_kt = ((lines64(4 * gc) if spec["store"] != "mx" else 0)
                      + (lines64(gc) if spec["store"] == "bf16" else 0))
            bank = (lines64(self.n_kt * int(raw_cb * gc))
                    + (lines64(self.n_kt * gc) if host_scales else 0) + self.n_kt * per_kt)
            slot, ra, _ = self.a_ring()
            return (ra * slot + self.a_mx_slots() * (lines64(4 * MTILE) + lines64(MTILE))
                    + (lines64(NTILE) if unit else 0)
                    + min(2, self.n_groups) * bank
                    + (lines64(4 * self.npad) if self.c_merged()
                       else min(C_RING, self.n_groups * self.n_mt) * lines64(4 * gc)))
        a = self.n_kt * sum(c * lines64(8 * mw) for c, mw in tiles(self.m, MTILE))
        ring = (lookahead + 1) * (lines64(4 * MTILE) + lines64(MTILE))

        def per_nt(nw):
            if spec["store"] == "mx":
                return lines64(spec["word_bytes"] * nw) + lines64(nw)
            if spec["store"] == "bf16":
                return lines64(8 * nw) + lines64(4 * nw) + lines64(nw)
            return lines64(raw_cb * nw) + lines64(4 * nw) + (0 if unit else lines64(nw))

        w = self.n_kt * sum(c * per_nt(nw) for c, nw in tiles(self.npad, NTILE))
        cout = self.n_mt * sum(c * lines64(4 * cols) for c, cols in self.panel_tiles())
        return a + ring + (lines64(NTILE) if unit else 0) + w + cout

    def c_merged(self):
        """C stored in one transfer after the last copy: one M-tile of at most 8
        rows (its stores all go to DMA engine 0, partitions 0-7, each paying the
        per-transfer cost on the engine that also carries scale rows) whose
        panels each have a C slot of their own."""
        return self.n_mt == 1 and self.m <= 8 and self.n_groups <= C_RING

    def psum_slots(self):
        """Accumulators in the PSUM ring: one per (group, M-tile) in flight, each a
        group's banks (the PE fills one while the DVE empties the others)."""
        return max(1, min(PSUM_BANKS // self.group, self.n_groups * self.n_mt))

    def psum_bytes(self):
        """Bytes per PSUM partition: the ring's slots, the last as wide as a group."""
        gc = min(self.group * NTILE, self.npad)
        return (self.psum_slots() - 1) * self.group * PSUM_BANK + 4 * gc

    def instructions(self, placement):
        """The program's instructions (without the nops the program builder may
        add where no earlier instruction can take a second wait)."""
        host_scales, _, unit = self._w_layout()
        units = self.n_groups * self.n_mt * self.n_kt
        widen = self.n_kt * self.n_nt if self.spec["store"] != "mx" else 0
        mm = self.n_mt * self.n_kt * self.n_nt
        if placement != "dma":
            return 2 * units + widen + mm + self.n_groups * self.n_mt
        kl = self.kpad // 4 - 128 * self.n_full_kt
        scale_loads = ((4 if self.n_full_kt else 0) + kl // 32) if host_scales else 0
        a_loads = sum(c * self.n_k_chunks(8 * mw, A_CHUNK) for c, mw in tiles(self.m, MTILE))
        raw_cb = self._w_layout()[1]
        w_loads = sum(c * self.n_k_chunks(int(raw_cb * cols), W_CHUNK)
                      for c, cols in self.panel_tiles())
        w_loads += self._w_tail_extra(int(raw_cb * self.panel_tiles()[-1][1]))
        a_loads *= 1 if self.a_ring()[2] else self.n_groups
        quantize = self.n_mt * self.n_kt if self.a_ring()[2] else units
        return ((min(4, self.kpad // 128) if unit else 0)
                + w_loads + self.n_groups * scale_loads + a_loads
                + units + quantize + widen + mm
                + self.n_groups * self.n_mt + self.group_nts(self.n_groups - 1) - 1
                + (1 if self.c_merged() else self.n_groups * self.n_mt))


def peak_tflops(timing):
    """The PE's MX peak: 128 x 128 PEs x 4 contraction values (pe_mx_row_pump
    'none') x 2 flops per cycle at the PE clock."""
    pump = timing["pe_mx_row_pump"]["none"]
    return 2 * 128 * 128 * pump * timing["clocks_mhz"]["pe"] * 1e6 / 1e12


# The most instructions a generated program may hold: the generator builds each
# with its footprint on tpbsim.program's builder in Python (minutes for a
# million), and holds at most about PROGRAM_BYTES_PER_INSTRUCTION of host
# memory for each meanwhile (1.5 KiB measured, the program text included).
MAX_INSTRUCTIONS = 1_000_000
PROGRAM_BYTES_PER_INSTRUCTION = 6 * 1024


def _proc_kib(path, key):
    try:
        with open(path) as f:
            for line in f:
                if line.startswith(key):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError):
        pass
    return None


def host_memory_available():
    """Bytes this process may still allocate: MemAvailable, and under a limit of
    the address space (ulimit -v) or of the data segment (ulimit -d) what is left
    of it; None when unknown."""
    avail = _proc_kib("/proc/meminfo", "MemAvailable:")
    import resource
    for limit, used_key in ((resource.RLIMIT_AS, "VmSize:"), (resource.RLIMIT_DATA, "VmData:")):
        soft = resource.getrlimit(limit)[0]
        used = _proc_kib("/proc/self/status", used_key)
        if soft != resource.RLIM_INFINITY and used is not None:
            left = max(0, soft - used)
            avail = left if avail is None else min(avail, left)
    return avail


def host_bytes(plan, placement):
    """About what the host side of a run with values holds at once: A (the float32
    operand, its padded copy, BF16 codes and values, the DVE's view, codes,
    scales and values: 8 float32 copies), W (the operand, its padded copy, the
    quantized form and the values the PE multiplies: 6), C (the reference, the
    result read back, a temporary: 3), and the memory image written to the core."""
    mk, kn, mn = plan.m * plan.kpad, plan.kpad * plan.npad, plan.m * plan.npad
    image = plan.hbm_input_bytes() if placement == "dma" else 128 * plan.sbuf_bytes("sbuf")
    return 4 * (8 * mk + 6 * kn + 3 * mn) + image


Capacities = collections.namedtuple("Capacities", "sbuf psum hbm")
Capacities.__doc__ = "Bytes of an SBUF and a PSUM partition and of the HBM of a core."


def default_capacities(arch):
    """The capacities of a core of ``arch`` with the generation's own profile
    (the model's, timing::default_timing), without making a core."""
    t = json.loads(_tpbsim.default_timing(arch))
    return Capacities(t["sbuf_bytes_per_partition"], t["psum_bytes_per_partition"],
                      t["hbm"]["bytes"])


#: The capacities of a v4 / v5 core with its default profile.
DEFAULT_CAPACITIES = default_capacities("mariana")


def capacities(core):
    """The capacities of `core` (its profile's)."""
    return Capacities(core.partition_bytes("sbuf"), core.partition_bytes("psum"),
                      core.timing["hbm"]["bytes"])


def check_sizes(plan, caps, placement="dma", lookahead=2, values=True):
    """Refuses at once, naming the sizes, a GEMM the core or this host cannot hold
    (SBUF, PSUM, HBM, the program's instructions, host memory); nothing is made
    before. Returns the plan with the widest weight panel (4, 2 or 1 N-tiles per
    group) whose double buffer fits in SBUF (the DMA placement)."""
    shape = shape_text(plan)
    plan = fit_core(plan, caps, placement, lookahead, shape)
    check_totals(shape, plan.instructions(placement),
                 plan.hbm_bytes() if placement == "dma" else 0, caps.hbm, "the core",
                 host_bytes(plan, placement) if values else None)
    return plan


def shape_text(plan):
    return f"the {plan.m} x {plan.k} x {plan.n} GEMM"


def fit_core(plan, caps, placement, lookahead, shape):
    """The plan whose buffers fit one core's SBUF and PSUM (the widest weight
    panel of 4, 2 or 1 N-tiles whose double buffer fits, the DMA placement);
    GemmError naming ``shape`` and the sizes when none does."""
    sbuf, psum = caps.sbuf, caps.psum
    if placement == "dma":
        for group in (plan.group, 2, 1):
            p = plan if group == plan.group else plan.regroup(group)
            need = p.sbuf_bytes("dma")
            if need <= sbuf:
                plan = p
                break
        else:
            raise GemmError(
                f"{shape}'s DMA buffers need {need // 1024} KiB per SBUF partition ({p.group} "
                f"N-tiles per weight panel, K {p.kpad}), {sbuf // 1024} KiB exist: K is too deep "
                "for a double-buffered weight panel")
    else:
        need = plan.sbuf_bytes("sbuf", lookahead)
        if need > sbuf:
            raise GemmError(
                f"{shape} needs {need // 1024} KiB per SBUF partition with every tile resident "
                f"(--placement sbuf), {sbuf // 1024} KiB exist: a smaller shape, or the DMA "
                "placement (the default)")
    need = plan.psum_bytes()
    if need > psum:
        raise GemmError(f"{shape} accumulates in {size_text(need)} of PSUM per partition (two "
                        f"halves of four 2 KiB banks), the core has {size_text(psum)}: a profile "
                        "with more PSUM (psum bytes), or N up to 2048")
    return plan


def check_totals(shape, count, hbm_need, hbm, holder, values_bytes):
    """Refuses what the whole GEMM (``shape``, a program of ``count`` instructions
    in all) needs past ``holder``'s HBM (``hbm`` bytes) or this host's memory
    (the programs, and ``values_bytes`` of values: None for a timing-only run)."""
    if hbm_need > hbm:
        raise GemmError(f"{shape} needs {size_text(hbm_need)} of HBM (A, W and C in their tiled "
                        f"layouts), {holder} has {size_text(hbm)}")
    if count > MAX_INSTRUCTIONS:
        raise GemmError(f"{shape} is a program of {count} instructions, more than the "
                        f"{MAX_INSTRUCTIONS} the generator makes: split it")
    program = PROGRAM_BYTES_PER_INSTRUCTION * count
    need, avail = program + (values_bytes or 0), host_memory_available()
    if avail is not None and need > avail:
        what = (f"its program ({count} instructions, {size_text(program)})"
                + (" and its values (A, W, their quantized forms, C and the memory image)"
                   if values_bytes is not None else ""))
        raise GemmError(f"{shape} needs about {size_text(need)} of host memory for {what}, "
                        f"{size_text(avail)} are available: a smaller shape"
                        + (f", or {arg('timing_only')} (no values)" if values_bytes is not None
                           else ""))
