#include "firmware_stubs/dve/quantize_mx.h"

#include <algorithm>
#include <cstring>

#include <fmt/format.h>

#include "firmware_stubs/common/host_threads.h"
#include "models/isa/address_map.h"
#include "models/numerics/formats.h"

namespace tpb::fw {

namespace {

QuantizeMxState& qmx_state(KernelContext& ctx) {
  auto* st = ctx.scratch<QuantizeMxState>();
  if (!st) throw KernelFault("QuantizeMX body entered without the L2 stub's kernel_info field");
  return *st;
}

unsigned elem_bytes(isa::Dtype d) { return d == isa::Dtype::Fp32 ? 4 : 2; }

// The L2 stub's kernel_info field (seed 003 §1): decode the operands, apply
// registers, repeat at run time what the static contract could not see
// (register addresses and shapes), and set the body pointer.
std::uint32_t stub_fields(KernelContext& ctx) {
  const auto inst = isa::decode_as<isa::S3DMX1Quant>(ctx.inst());
  QuantizeMxState st;
  st.channels = inst.num_active_channels;
  if (st.channels != 32 && st.channels != 64 && st.channels != 96 && st.channels != 128)
    throw KernelFault(fmt::format(
        "s3dmx1_quant_valid_active_channels: num_active_channels {} is not 32, 64, 96 or 128",
        st.channels));
  st.in_dtype = static_cast<isa::Dtype>(inst.in_dtype);
  if (st.in_dtype != isa::Dtype::Fp32 && st.in_dtype != isa::Dtype::Bf16 &&
      st.in_dtype != isa::Dtype::Fp16)
    throw KernelFault(
        fmt::format("s3dmx1_quant_valid_in_dtype: in_dtype 0x{:x} is not fp32, "
                    "bf16 or fp16",
                    inst.in_dtype));
  if (inst.out_dtype == static_cast<std::uint8_t>(isa::Dtype::Fp8Exp4))
    st.out = num::MxOut::E4M3;
  else if (inst.out_dtype == static_cast<std::uint8_t>(isa::Dtype::Fp8Exp5))
    st.out = num::MxOut::E5M2;
  else
    throw KernelFault(
        fmt::format("s3dmx1_quant_valid_out_dtype: out_dtype 0x{:x} is not fp8_e4m3 or fp8_e5m2",
                    inst.out_dtype));
  st.emax = ctx.engine_state().get<QuantizeMxOptions>().emax;

  st.src = resolve_pattern(inst.src_mem_pattern.t, ctx, "src");
  st.dst = resolve_mx1d(inst.dst_mem_pattern.t, ctx, "QuantizeMX dst");
  if (isa::region_of(st.src.start) != isa::Region::Sbuf)
    throw KernelFault(fmt::format(
        "src address 0x{:07x} is not in SBUF (QuantizeMX reads SBUF only)", st.src.start));
  const unsigned sp = isa::partition_of(st.src.start);
  if (sp + st.channels > isa::kNumPartitions)
    throw KernelFault(fmt::format("src start partition {} + {} active channels exceeds {}", sp,
                                  st.channels, isa::kNumPartitions));
  if (isa::region_of(st.dst.data) != isa::Region::Sbuf ||
      isa::region_of(st.dst.scale) != isa::Region::Sbuf)
    throw KernelFault(
        fmt::format("dst data address 0x{:07x} / scale address 0x{:07x}: both must "
                    "be in SBUF",
                    st.dst.data, st.dst.scale));
  const unsigned dp = isa::partition_of(st.dst.data), cp = isa::partition_of(st.dst.scale);
  // valid_s3dmx1_quant_sbuf_quadrant, again at run time for register addresses (seed 003 §5).
  if (dp % isa::kPartitionsPerQuadrant != 0 || dp != cp)
    throw KernelFault(fmt::format(
        "valid_s3dmx1_quant_sbuf_quadrant failed at run time: dst data address 0x{:07x} "
        "(partition {}) and scale address 0x{:07x} (partition {}) must both be partition 0, 32, "
        "64 or 96",
        st.dst.data, dp, st.dst.scale, cp));
  if (dp + st.channels > isa::kNumPartitions)
    throw KernelFault(fmt::format("dst start partition {} + {} active channels exceeds {}", dp,
                                  st.channels, isa::kNumPartitions));
  if (st.dst.scale_pidx > isa::kPartitionsPerQuadrant - 4)
    throw KernelFault(fmt::format("dst scale_pidx {} is past 28 (scale rows leave the quadrant)",
                                  st.dst.scale_pidx));
  // s3dmx1_quant_element_count_check (SPEC §4), at run time for register shapes.
  if (st.src.count() != 4ull * st.dst.num)
    throw KernelFault(fmt::format(
        "s3dmx1_quant_element_count_check failed at run time: src holds {} elements per "
        "partition, dst num_elem[0] {} x4 words needs {}",
        st.src.count(), st.dst.num, 4ull * st.dst.num));
  st.cols = st.dst.num;
  st.block_rows = st.channels / 8;
  // Every x4 word and every scale byte stays inside its partition.
  const std::int64_t data_off = isa::offset_of(st.dst.data);
  const std::int64_t last = st.cols == 0 ? 0 : std::int64_t{st.cols - 1} * st.dst.step * 4;
  const std::int64_t lo = data_off + std::min<std::int64_t>(0, last);
  const std::int64_t hi = data_off + std::max<std::int64_t>(0, last) + 4;
  if (st.cols != 0 && (lo < 0 || hi > std::int64_t{isa::kPartitionSlot}))
    throw KernelFault(fmt::format(
        "address error: QuantizeMX dst data 0x{:07x}, {} x4 words of step {}, spans byte offsets "
        "[{}, {}) outside the partition",
        st.dst.data, st.cols, st.dst.step, lo, hi));
  if (std::uint64_t{isa::offset_of(st.dst.scale)} + st.cols > isa::kPartitionSlot)
    throw KernelFault(fmt::format(
        "address error: QuantizeMX dst scale 0x{:07x}: {} scale bytes leave the partition",
        st.dst.scale, st.cols));
  st.body_va = kQuantizeMxBodyVa;
  ctx.set_scratch(std::move(st));
  return 0;
}

// Below these sizes a split over host threads costs more than it saves
// (docs/PERFORMANCE.md).
constexpr std::size_t kMinWidenPerChunk = 65536;  // elements
constexpr std::size_t kMinBlocksPerChunk = 1024;  // 8 x 4 blocks

// The co-simulation seam (QuantizeMxTap): the observer, if any.
QuantizeMxObserver* tap_observer(KernelContext& ctx) {
  const QuantizeMxTap* tap = ctx.engine_state().find<QuantizeMxTap>();
  return tap ? tap->observer : nullptr;
}

// Keeps channel c's elements as read (their in_dtype codes) for the observer.
void keep_raw(KernelContext& ctx, QuantizeMxState& st, unsigned c, const std::uint8_t* raw,
              unsigned es) {
  if (!tap_observer(ctx)) return;
  const std::uint64_t n = st.src.count();
  st.raw.resize(std::size_t(st.channels) * n);
  for (std::uint64_t k = 0; k < n; ++k) {
    std::uint32_t v = 0;
    std::memcpy(&v, raw + k * es, es);  // little-endian memory
    st.raw[std::size_t(c) * n + k] = v;
  }
}

// Hands the observer every block: its elements, the model's scale and words.
void notify_tap(KernelContext& ctx, QuantizeMxState& st) {
  QuantizeMxObserver* obs = tap_observer(ctx);
  if (!obs) return;
  const std::uint64_t n = st.src.count();
  obs->begin(QuantizeMxStream{st.in_dtype, st.out, st.emax, st.block_rows, st.cols,
                              isa::partition_of(st.src.start), isa::partition_of(st.dst.data),
                              ctx.now_ps()});
  std::uint32_t raw[32], words[8];
  for (std::uint32_t j = 0; j < st.cols; ++j)
    for (unsigned b = 0; b < st.block_rows; ++b) {
      for (unsigned r = 0; r < 8; ++r) {
        std::memcpy(raw + 4 * r, st.raw.data() + std::size_t(8 * b + r) * n + 4ull * j, 16);
        words[r] = st.words[std::size_t(8 * b + r) * st.cols + j];
      }
      obs->block(b, j, raw, st.scales[std::size_t(b) * st.cols + j], words);
    }
  st.raw = {};
}

// LEG B input (seed 003 §2.2): every active partition's elements in src
// pattern order, widened exactly to FP32 bits. The reads stay on this thread
// in order; the widening may run on host threads.
std::uint32_t extract_gather(KernelContext& ctx) {
  QuantizeMxState& st = qmx_state(ctx);
  const unsigned es = elem_bytes(st.in_dtype);
  const std::uint64_t n = st.src.count();
  st.bits.assign(std::size_t(st.channels) * n, 0);
  std::vector<std::uint8_t> raw(std::size_t(st.channels) * n * es);
  const unsigned sp = isa::partition_of(st.src.start);
  for (unsigned c = 0; c < st.channels; ++c) {
    std::uint8_t* row = raw.data() + std::size_t(c) * n * es;
    for_each_run(st.src, es, sp + c, "QuantizeMX src",
                 [&](std::uint64_t addr, std::uint64_t k, std::uint32_t r) {
                   ctx.read(addr, row + k * es, std::size_t{r} * es);
                 });
    keep_raw(ctx, st, c, row, es);
  }
  if (ctx.timing_only()) return 0;
  const std::size_t min_rows = kMinWidenPerChunk / std::max<std::uint64_t>(1, n) + 1;
  parallel_for(st.channels, min_rows, [&](std::size_t b, std::size_t e) {
    for (std::size_t c = b; c < e; ++c) {
      const std::uint8_t* row = raw.data() + c * n * es;
      std::uint32_t* out = st.bits.data() + c * n;
      for (std::uint64_t k = 0; k < n; ++k) {
        std::uint32_t v = 0;
        std::memcpy(&v, row + k * es, es);  // little-endian memory
        out[k] = widen_to_fp32_bits(st.in_dtype, v);
      }
    }
  });
  return 0;
}

// LEG A (seed 003 §2.3) with the LEG B scale: per 8x4 block, s and q by the
// numerics model (SPEC §4); the blocks may be split over host threads.
std::uint32_t divide_blocks(KernelContext& ctx) {
  QuantizeMxState& st = qmx_state(ctx);
  const std::uint64_t n = st.src.count();
  st.words.assign(std::size_t(st.channels) * st.cols, 0);
  st.scales.assign(std::size_t(st.block_rows) * st.cols, 0);
  if (ctx.timing_only()) return 0;
  const std::size_t blocks = std::size_t(st.block_rows) * st.cols;
  parallel_for(blocks, kMinBlocksPerChunk, [&](std::size_t first, std::size_t last) {
    std::uint32_t in[32], out[8];
    for (std::size_t i = first; i < last; ++i) {
      const std::size_t b = i / st.cols, j = i % st.cols;
      for (unsigned r = 0; r < 8; ++r)
        std::memcpy(in + 4 * r, st.bits.data() + (8 * b + r) * n + 4 * j, 16);
      st.scales[b * st.cols + j] = num::mx_quantize_block(in, st.out, st.emax, out);
      for (unsigned r = 0; r < 8; ++r) st.words[(8 * b + r) * st.cols + j] = out[r];
    }
  });
  notify_tap(ctx, st);
  return 0;
}

// PACK (seed 003 §2.3): the x4 words along the dst MXTENSOR1D.
std::uint32_t pack_store(KernelContext& ctx) {
  QuantizeMxState& st = qmx_state(ctx);
  const std::uint32_t region = st.dst.data & ~(isa::kRegionSize - 1);
  const unsigned dp = isa::partition_of(st.dst.data);
  const std::uint32_t off = isa::offset_of(st.dst.data);
  for (unsigned c = 0; c < st.channels && st.cols; ++c) {
    const std::uint64_t base = region | ((dp + c) << isa::kPartitionShift);
    const std::uint32_t* w = st.words.data() + std::size_t(c) * st.cols;
    if (st.dst.step == 1) {
      ctx.write(base + off, w, std::size_t{st.cols} * 4);
      continue;
    }
    for (std::uint32_t j = 0; j < st.cols; ++j)
      ctx.write(base + static_cast<std::uint64_t>(off + std::int64_t{j} * st.dst.step * 4), w + j,
                4);
  }
  return 0;
}

// Scale scatter (SPEC §4, seed 003 §5): block row b, column j -> partition
// base + 32*(b/4) + scale_pidx + b%4, byte offset + j.
std::uint32_t scatter_scales(KernelContext& ctx) {
  QuantizeMxState& st = qmx_state(ctx);
  if (st.cols == 0) return 0;
  const std::uint32_t region = st.dst.scale & ~(isa::kRegionSize - 1);
  const unsigned base = isa::partition_of(st.dst.scale);
  for (unsigned b = 0; b < st.block_rows; ++b) {
    const unsigned p = mx_scale_partition(base, st.dst.scale_pidx, b);
    if (p >= isa::kNumPartitions)
      throw KernelFault(fmt::format(
          "address error: QuantizeMX scales of block row {} go to partition {} (scale 0x{:07x}, "
          "scale_pidx {}), past partition 127",
          b, p, st.dst.scale, st.dst.scale_pidx));
    ctx.write(std::uint64_t{region | (p << isa::kPartitionShift)} + isa::offset_of(st.dst.scale),
              st.scales.data() + std::size_t(b) * st.cols, st.cols);
  }
  // The per-instruction buffers are dead now.
  st.bits = {};
  st.words = {};
  return 0;
}

}  // namespace

std::uint32_t widen_to_fp32_bits(isa::Dtype in, std::uint32_t raw) {
  switch (in) {
    case isa::Dtype::Bf16:
      return (raw & 0xFFFFu) << 16;
    case isa::Dtype::Fp16:
      // Every FP16 value (NaN and Inf included) is an FP32 value.
      return num::bits_from_f32(static_cast<float>(num::decode(num::Format::Fp16, raw & 0xFFFFu)));
    default:
      return raw;
  }
}

void add_quantize_mx_kernels(KernelRegistry& r) {
  // Trampoline (seed 003 §1): { call8 0x2298 ; j 0x31ee }. VAs after the
  // entry follow the Xtensa instruction lengths (convention).
  r.add(Kernel{"quantize_mx_trampoline",
               kQuantizeMxTrampolineVa,
               {
                   {"dve.trampoline.call8", kQuantizeMxTrampolineVa, 1, nullptr,
                    [](KernelContext&) { return kQuantizeMxStubVa; }},
                   {"dve.trampoline.jump", 0x317d, 1, nullptr, nullptr},
                   {"dve.trampoline.exit", kQuantizeMxExitVa, 1, nullptr, nullptr},
               }});

  // QuantizeMx L2 stub @0x2298 (seed 003 §1): sets the kernel_info field,
  // then call8 0x9920.
  r.add(Kernel{
      "QuantizeMx",
      kQuantizeMxStubVa,
      {
          {"dve.qmx_stub.fields", 0x2298, 4, nullptr, stub_fields},
          {"dve.qmx_stub.call8", 0x229b, 1, nullptr, [](KernelContext&) { return kDveCallBodyVa; }},
      }});

  // The call helper @0x9920 (seed 003 §1): its tail l32i a2,[a2,0] ; callx8 a2
  // enters the body by the kernel_info data pointer. Tail VAs: convention.
  r.add(Kernel{"dve_call_kernel_body",
               kDveCallBodyVa,
               {
                   {"dve.call_body.entry", 0x9920, 1, nullptr, nullptr},
                   {"dve.call_body.l32i", 0x9923, 1, nullptr, nullptr},
                   {"dve.call_body.callx8", 0x9926, 1, nullptr,
                    [](KernelContext& ctx) {
                      const std::uint32_t va = qmx_state(ctx).body_va;
                      if (va == 0) throw KernelFault("kernel_info body pointer is null at 0x9920");
                      return va;
                    }},
               }});

  // The FLIX body (seed 003 §2): a software-pipelined loop over block columns
  // (4 source elements of every active partition, all partitions in parallel
  // lanes). Its initiation interval is the PACK bundle's issue cycles per
  // trip (TIMING.md: 4 elements / partition / cycle); the LEG B and LEG A
  // stage bundles issue once each as the pipeline fill. The scale scatter
  // stores the scale rows, one per block row, in parallel partition lanes. Extract to scatter is
  // one pipelined stream (Bundle::stream): the reads, the compute and the writes overlap.
  r.add(Kernel{
      "quantize_mx_body",
      kQuantizeMxBodyVa,
      {
          {"dve.qmx.extract", kQmxExtractVa, 1, nullptr, extract_gather, true},
          {"dve.qmx.capture", kQmxCaptureVa, 1, nullptr, nullptr, true},
          {"dve.qmx.divide", kQmxDivideVa, 1, nullptr, divide_blocks, true},
          {"dve.qmx.normalize", kQmxNormalizeVa, 1, nullptr, nullptr, true},
          {"dve.qmx.pack", kQmxPackVa, 1,
           [](KernelContext& ctx) { return std::uint64_t{qmx_state(ctx).cols}; }, pack_store, true},
          {"dve.qmx.scatter", kQmxScatterVa, 1,
           [](KernelContext& ctx) {
             // The scale rows go to their partitions in parallel lanes.
             return qmx_state(ctx).cols == 0 ? std::uint64_t{0} : std::uint64_t{1};
           },
           scatter_scales, true},
          {"dve.qmx.return", kQmxReturnVa, 1, nullptr, nullptr},
      }});
}

}  // namespace tpb::fw
