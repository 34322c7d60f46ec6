#include "firmware_stubs/pool/tensor_dequantize.h"

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <utility>

#include "firmware_stubs/common/host_threads.h"

#include "models/isa/address_map.h"
#include "models/numerics/dequant_stream.h"

namespace tpb::fw {

namespace {

DequantState& dequant_state(KernelContext& ctx) {
  auto* st = ctx.scratch<DequantState>();
  if (!st) throw KernelFault("TensorDequantize body entered without its decoded fields");
  return *st;
}

// Checks what the static contract cannot see once addresses or shapes ride
// registers: SBUF region, start partition + channels <= 128, the ratio.
void check_operand(const ResolvedPattern& p, unsigned channels, const char* which) {
  if (isa::region_of(p.start) != isa::Region::Sbuf)
    throw KernelFault(
        fmt::format("{} address 0x{:07x} is not in SBUF (TensorDequantize operands "
                    "are SBUF-only)",
                    which, p.start));
  const unsigned sp = isa::partition_of(p.start);
  if (sp + channels > isa::kNumPartitions)
    throw KernelFault(
        fmt::format("{} start partition {} + {} active channels exceeds {} partitions", which, sp,
                    channels, isa::kNumPartitions));
}

// decode_tensor_dequantize's field decode (seed 000 §2): fills DequantState.
std::uint32_t decode_fields(KernelContext& ctx) {
  const auto inst = isa::decode_as<isa::S3D3TensDequant>(ctx.inst());
  DequantState st;
  st.fmt = static_cast<isa::DequantFmt>(inst.dequant_fmt);
  st.group = inst.group_size;
  st.channels = inst.num_active_channels;
  st.src = resolve_pattern(inst.src_mem_pattern.t, ctx, "src");
  st.dst = resolve_pattern(inst.dst_mem_pattern.t, ctx, "dst");
  check_operand(st.src, st.channels, "src");
  check_operand(st.dst, st.channels, "dst");
  const num::DequantRatio ratio = num::dequant_ratio(st.fmt, st.group);
  if (ratio.src_words == 0)
    throw KernelFault(fmt::format("dequant_fmt {} with group_size {} has no datapath",
                                  static_cast<unsigned>(st.fmt), st.group));
  st.src_words = st.src.count();
  st.dst_words = st.dst.count();
  // Runtime element-count check (SPEC §2: replaces the static check when a
  // shape rides a register; always true otherwise).
  if (st.src_words % ratio.src_words != 0 ||
      st.dst_words != st.src_words / ratio.src_words * ratio.dst_words)
    throw KernelFault(fmt::format(
        "s3d3_tens_dequant_element_count_check_t3d failed at run time: src {} words, dst {} "
        "words, but {} group {} maps {} src words to {} dst words",
        st.src_words, st.dst_words, isa::dequant_fmt_name(st.fmt), st.group, ratio.src_words,
        ratio.dst_words));
  ctx.set_scratch(std::move(st));
  return 0;
}

// The whole stream of every active channel: gather in src-pattern order,
// transform (chunking over the stream, SPEC §3), scatter in dst-pattern order.
// Whether the pattern's elements, in pattern order, are consecutive words (one
// run): every dimension with more than one element steps over the ones inside.
bool is_single_run(const ResolvedPattern& p) {
  std::int64_t stride = 1;
  for (int d = 0; d < 3; ++d) {
    if (p.num[d] <= 1) continue;
    if (p.step[d] != stride) return false;
    stride *= p.num[d];
  }
  return true;
}

// Address of channel c's first element of a single-run pattern, when the whole
// run lies word-aligned inside the partition slot.
std::optional<std::uint64_t> run_address(const ResolvedPattern& p, unsigned c,
                                         std::uint64_t words) {
  const std::uint32_t off = isa::offset_of(p.start);
  if (off % 4 != 0 || off + words * 4 > isa::kPartitionSlot) return std::nullopt;
  const std::uint32_t region = p.start & ~(isa::kRegionSize - 1);
  return std::uint64_t{region} |
         (std::uint64_t{isa::partition_of(p.start) + c} << isa::kPartitionShift) | off;
}

// Fast path of one channel: src and dst are single runs served by DMI, so the
// words are transformed in place of memory with no gather / scatter copies.
// Charged exactly as the copying path (one read access, one write access).
bool transform_channel_direct(KernelContext& ctx, const DequantState& st, unsigned c,
                              std::size_t steps, DequantStreamObserver* obs) {
  const std::optional<std::uint64_t> sa = run_address(st.src, c, st.src_words);
  const std::optional<std::uint64_t> da = run_address(st.dst, c, st.dst_words);
  if (!sa || !da) return false;
  const std::uint64_t slen = st.src_words * 4, dlen = st.dst_words * 4;
  if (*sa < *da + dlen && *da < *sa + slen) return false;  // overlap: gather first
  const std::uint8_t* src = ctx.direct(*sa, slen, false);
  if (!src) return false;
  std::uint8_t* dst = ctx.direct(*da, dlen, true);
  if (!dst) {
    throw KernelFault(
        fmt::format("dst run at 0x{:07x} ({} bytes) has no direct access", *da, dlen));
  }
  if (!ctx.timing_only())
    num::dequant_words(st.fmt, st.group, reinterpret_cast<const std::uint32_t*>(src),
                       reinterpret_cast<std::uint32_t*>(dst), steps);
  if (obs)
    obs->channel(c, reinterpret_cast<const std::uint32_t*>(src),
                 reinterpret_cast<const std::uint32_t*>(dst));
  return true;
}

// Below this many source words per chunk a split over host threads costs
// more than it saves (docs/PERFORMANCE.md); a one-partition dequant never
// splits.
constexpr std::uint64_t kMinWordsPerChunk = 32768;

// The byte offsets [lo, hi) a pattern's words span in each of its partitions.
std::pair<std::int64_t, std::int64_t> footprint(const ResolvedPattern& p) {
  std::int64_t lo = isa::offset_of(p.start), hi = lo;
  for (int d = 0; d < 3; ++d) {
    if (p.num[d] == 0) return {0, 0};
    const std::int64_t span = std::int64_t{p.step[d]} * (p.num[d] - 1) * 4;
    (span < 0 ? lo : hi) += span;
  }
  return {lo, hi + 4};
}

// Whether scatter_words of the dst pattern can throw: the walk's bounds are
// the same in every partition, so a dry walk of channel 0's decides.
bool scatter_cannot_fault(const DequantState& st) {
  try {
    for_each_run(st.dst, 4, isa::partition_of(st.dst.start), "dst",
                 [](std::uint64_t, std::uint64_t, std::uint32_t) {});
  } catch (const KernelFault&) {
    return false;
  }
  return true;
}

// Whether some channel's destination words may be another's (or its own)
// source words: the partition ranges and the byte spans both meet.
bool may_alias(const DequantState& st) {
  const unsigned sp = isa::partition_of(st.src.start), dp = isa::partition_of(st.dst.start);
  if (sp + st.channels <= dp || dp + st.channels <= sp) return false;
  const auto [slo, shi] = footprint(st.src);
  const auto [dlo, dhi] = footprint(st.dst);
  return slo < dhi && dlo < shi;
}

// Every channel, its arithmetic split over host threads. The timed accesses
// are the sequential loop's, in the same order per partition lane: first
// each channel's source (a DMI run, or a gather into a buffer) and
// destination run, in channel order; then every transform, on the threads;
// then the scatters of the gathered channels, in channel order. Taken only
// when no channel's destination meets any source (may_alias), no observer
// listens, and a scatter cannot fault (checked first), so memory, time and
// counters end as the sequential loop leaves them; a fault while taking the
// accesses finishes the channels before it first, as the loop would have.
void transform_channels_split(KernelContext& ctx, const DequantState& st, std::size_t steps,
                              bool single_runs, std::size_t chunk) {
  struct Channel {
    const std::uint32_t* src = nullptr;
    std::uint32_t* dst = nullptr;
    bool gathered = false;
  };
  std::vector<Channel> ch(st.channels);
  std::vector<std::uint32_t> src_buf, dst_buf;  // the gathered channels' words
  const auto buffers = [&] {
    if (src_buf.empty()) {
      src_buf.resize(std::size_t{st.channels} * st.src_words);
      dst_buf.resize(std::size_t{st.channels} * st.dst_words);
    }
  };
  const auto finish = [&](unsigned channels) {
    parallel_for(channels, chunk, [&](std::size_t b, std::size_t e) {
      for (std::size_t c = b; c < e; ++c)
        num::dequant_words(st.fmt, st.group, ch[c].src, ch[c].dst, steps);
    });
    for (unsigned c = 0; c < channels; ++c)
      if (ch[c].gathered) scatter_words(ctx, st.dst, c, ch[c].dst, "dst");
  };
  unsigned c = 0;
  try {
    for (; c < st.channels; ++c) {
      if (single_runs) {
        const std::optional<std::uint64_t> sa = run_address(st.src, c, st.src_words);
        const std::optional<std::uint64_t> da = run_address(st.dst, c, st.dst_words);
        if (sa && da) {
          const std::uint64_t dlen = st.dst_words * 4;
          if (const std::uint8_t* src = ctx.direct(*sa, st.src_words * 4, false)) {
            std::uint8_t* dst = ctx.direct(*da, dlen, true);
            if (!dst)
              throw KernelFault(
                  fmt::format("dst run at 0x{:07x} ({} bytes) has no direct access", *da, dlen));
            ch[c] = {reinterpret_cast<const std::uint32_t*>(src),
                     reinterpret_cast<std::uint32_t*>(dst), false};
            continue;
          }
        }
      }
      buffers();
      std::uint32_t* s = src_buf.data() + std::size_t{c} * st.src_words;
      gather_words(ctx, st.src, c, s, "src");
      ch[c] = {s, dst_buf.data() + std::size_t{c} * st.dst_words, true};
    }
  } catch (const KernelFault&) {
    finish(c);
    throw;
  }
  finish(st.channels);
}

void transform_channels(KernelContext& ctx) {
  const DequantState& st = dequant_state(ctx);
  const num::DequantRatio ratio = num::dequant_ratio(st.fmt, st.group);
  const std::size_t steps = st.src_words / ratio.src_words;
  const bool single_runs = is_single_run(st.src) && is_single_run(st.dst);
  // The co-simulation seam: an observer sees every channel's stream.
  const DequantStreamTap* tap = ctx.engine_state().find<DequantStreamTap>();
  DequantStreamObserver* obs = tap ? tap->observer : nullptr;
  const std::size_t chunk = static_cast<std::size_t>((kMinWordsPerChunk + st.src_words - 1) /
                                                     std::max<std::uint64_t>(1, st.src_words));
  if (!obs && !ctx.timing_only() && split_count(st.channels, chunk) > 1 && !may_alias(st) &&
      scatter_cannot_fault(st)) {
    transform_channels_split(ctx, st, steps, single_runs, chunk);
    return;
  }
  if (obs)
    obs->begin(DequantStream{st.fmt, st.group, st.channels, isa::partition_of(st.src.start),
                             isa::partition_of(st.dst.start), st.src_words, st.dst_words,
                             ctx.now_ps()});
  std::vector<std::uint32_t> src, dst;
  for (unsigned c = 0; c < st.channels; ++c) {
    if (single_runs && transform_channel_direct(ctx, st, c, steps, obs)) continue;
    src.resize(st.src_words);
    dst.resize(st.dst_words);
    gather_words(ctx, st.src, c, src.data(), "src");
    if (!ctx.timing_only()) num::dequant_words(st.fmt, st.group, src.data(), dst.data(), steps);
    scatter_words(ctx, st.dst, c, dst.data(), "dst");
    if (obs) obs->channel(c, src.data(), dst.data());
  }
}

}  // namespace

void gather_words(KernelContext& ctx, const ResolvedPattern& p, unsigned partition_delta,
                  std::uint32_t* out, const char* which) {
  for_each_run(p, 4, isa::partition_of(p.start) + partition_delta, which,
               [&](std::uint64_t addr, std::uint64_t k, std::uint32_t n) {
                 ctx.read(addr, out + k, std::size_t{n} * 4);
               });
}

void scatter_words(KernelContext& ctx, const ResolvedPattern& p, unsigned partition_delta,
                   const std::uint32_t* in, const char* which) {
  for_each_run(p, 4, isa::partition_of(p.start) + partition_delta, which,
               [&](std::uint64_t addr, std::uint64_t k, std::uint32_t n) {
                 ctx.write(addr, in + k, std::size_t{n} * 4);
               });
}

std::uint64_t dequant_loop_trips(const DequantState& st, const timing::TimingConfig& t) {
  // Every partition streams in parallel (TIMING.md: a core serves its
  // partitions at pool_vector_bytes per cycle), so a trip moves
  // pool_bytes_per_partition_cycle() bytes of each partition; the slower of
  // the read and the write stream sets the trips: 150 + max(words read,
  // words written) at the defaults.
  const std::uint64_t in_bytes = st.src_words * 4;
  const std::uint64_t out_bytes = st.group == 8 ? st.mx_chunks * 32 : st.dst_words * 4;
  const std::uint64_t per_trip = t.pool_bytes_per_partition_cycle();
  return (std::max(in_bytes, out_bytes) + per_trip - 1) / per_trip;
}

void add_tensor_dequantize_kernels(KernelRegistry& r) {
  // Trampoline (seed 000 §1): entry; a2 = 0x02000480 state slot, l32i, slli;
  // call0 state-setup helper; const16 0x4df0 + callx8; movi.n a2,0 + retw.n.
  // Bundle VAs after the entry follow the Xtensa instruction lengths
  // (convention: the seed gives the sequence, not every VA).
  r.add(Kernel{"tensor_dequantize_trampoline",
               kTensorDequantizeTrampolineVa,
               {
                   {"pool.trampoline.entry", kTensorDequantizeTrampolineVa, 1, nullptr, nullptr},
                   {"pool.trampoline.state_slot", 0x01004dc7, 4, nullptr, nullptr},
                   {"pool.trampoline.setup_call", 0x01004dd2, 2, nullptr, nullptr},
                   {"pool.trampoline.tail_call", 0x01004dd5, 2, nullptr,
                    [](KernelContext&) { return kDecodeTensorDequantizeVa; }},
                   {"pool.trampoline.return", 0x01004ddb, 2, nullptr, nullptr},
               }});

  // decode_tensor_dequantize(bool) @0x01004df0 (seed 000 §1, §6): decode,
  // format switch, the group-0 widen loop (bundle @0x01004fc8, seed 000 §6).
  r.add(Kernel{
      "decode_tensor_dequantize",
      kDecodeTensorDequantizeVa,
      {
          {"pool.decode.entry", 0x01004df0, 2, nullptr, nullptr},
          {"pool.decode.fields", 0x01004df6, 8, nullptr, decode_fields},
          {"pool.decode.dispatch", 0x01004e40, 2, nullptr,
           [](KernelContext& ctx) { return dequant_state(ctx).group == 8 ? kProc4bitMx8Va : 0u; }},
          {"pool.decode.widen_loop", 0x01004fc8, 1,
           [](KernelContext& ctx) {
             const DequantState& st = dequant_state(ctx);
             return st.group == 0 ? dequant_loop_trips(st, ctx.timing()) : 0;
           },
           [](KernelContext& ctx) {
             if (dequant_state(ctx).group == 0) transform_channels(ctx);
             return 0u;
           },
           true},
          {"pool.decode.return", 0x01005110, 1, nullptr, nullptr},
      }});

  // TensorDequantize::proc_4bit_mx_8(unsigned) @0x0100511c (seed 000 §1,
  // §7): trip count by count/5 (the 0xCCCCCCCD muluh + srli 2 idiom), then
  // the MX loop (unpack, E8M0 scale multiply, saturate, pack).
  r.add(Kernel{
      "TensorDequantize::proc_4bit_mx_8",
      kProc4bitMx8Va,
      {
          {"pool.mx8.entry", 0x0100511c, 1, nullptr, nullptr},
          {"pool.mx8.div5", 0x0100511f, 3, nullptr,
           [](KernelContext& ctx) {
             DequantState& st = dequant_state(ctx);
             // muluh(count, 0xCCCCCCCD) >> 2 == count / 5 for every u32 count.
             const std::uint64_t count = st.src_words & 0xFFFFFFFFu;
             st.mx_chunks = ((count * 0xCCCCCCCDull) >> 32) >> 2;
             return 0u;
           }},
          {"pool.mx8.loop", 0x01005140, 1,
           [](KernelContext& ctx) { return dequant_loop_trips(dequant_state(ctx), ctx.timing()); },
           [](KernelContext& ctx) {
             transform_channels(ctx);
             return 0u;
           },
           true},
          {"pool.mx8.return", 0x010055e0, 1, nullptr, nullptr},
      }});
}

}  // namespace tpb::fw
