#!/usr/bin/python3
"""Writes models/timing/profiles/<arch>.json: each generation's default timing
profile (what `tpbsim run --arch ARCH --dump-timing` prints) with the source of
every number under "sources" (TIMING.md's [A]..[M], or "convention").

  gen_timing_profiles.py TPBSIM [OUTDIR]

A unit test (TimingProfiles.*) checks that the files equal the defaults in
code and that every key has a source, so neither can drift.
"""
import json
import pathlib
import subprocess
import sys
import tempfile

ARCHS = ["sunda", "cayman", "mariana", "maverick"]
CLOCKS = {
    "sunda": "TIMING.md [A] (v2): PE 2.8, Vector 1.12, Scalar 1.4, GpSimd 1.4 GHz; the SFU at the Scalar clock (convention)",
    "cayman": "TIMING.md [B] (v3): PE 2.4, Vector 0.96, Scalar 1.2, GpSimd 1.2 GHz; the SFU at the Scalar clock (convention)",
    "mariana": "TIMING.md [C] (v4): PE 2.4, Vector 1.2, Scalar 1.2, GpSimd 1.2 GHz; the SFU at the Scalar clock (convention)",
    "maverick": "convention: as v4, TIMING.md [C] (no public v5 figures)",
}

# TIMING.md [L]: the device's HBM shared equally by its cores (TIMING.md: "the
# model's default: an equal share per core").
HBM_BYTES = {
    "sunda": "TIMING.md [L]: trn1 32 GiB for 2 cores: 16 GiB per core",
    "cayman": "TIMING.md [L]: trn2 96 GiB for 8 cores: 12 GiB per core",
    "mariana": "TIMING.md [L]: trn3 144 GiB for 8 cores: 18 GiB per core",
    "maverick": "convention: as trn3, TIMING.md [L] (144 GiB for 8 cores: 18 GiB per core)",
}
HBM_BANDWIDTH = {
    "sunda": "TIMING.md [L]: trn1 820 GB/s for 2 cores: 410 GB/s per core",
    "cayman": "TIMING.md [L]: trn2 2.9 TB/s for 8 cores: 362.5 GB/s per core",
    "mariana": "TIMING.md [L]: trn3 4.9 TB/s for 8 cores: 612.5 GB/s per core",
    "maverick": "convention: as trn3, TIMING.md [L] (4.9 TB/s for 8 cores: 612.5 GB/s per core)",
}


def sources(arch):
    conflict = ("TIMING.md [A]: on v2 Vector and GpSimd share SBUF access, Vector and Scalar share PSUM"
                if arch == "sunda" else
                "TIMING.md [B]: v3 lifts the v2 conflicts but for the same PSUM bank")
    return {
        "arch": "the generation these defaults are for",
        "clocks_mhz": CLOCKS[arch],
        "instruction_overhead_cycles": "TIMING.md [E]: minimum initiation interval about 64 engine cycles; [A, E]: GpSimd startup about 150",
        "memory_clock_mhz": "convention (the v2 engine clock of [A]); memory cycles below count in it",
        "sbuf.latency_cycles": "TIMING.md [A]: SBUF/PSUM access request overhead about 60 cycles",
        "sbuf.beat_cycles": "convention: one beat per memory cycle per partition lane",
        "sbuf.beat_bytes": "convention: 64 B per partition lane per beat, wider than any engine's documented rate",
        "sbuf.contention_window_cycles": conflict + ("; on (64)" if arch == "sunda" else "; off"),
        "sbuf.banks": "one bank per partition (convention)",
        "psum.latency_cycles": "TIMING.md [A]: about 60 cycles",
        "psum.beat_cycles": "convention, as sbuf",
        "psum.beat_bytes": "convention, as sbuf",
        "psum.contention_window_cycles": conflict + "; on (64)",
        "psum.banks": "TIMING.md [A, B, C]: 8 banks of 2 KiB per partition" + (" (v2: the whole partition conflicts, 1)" if arch == "sunda" else ""),
        "queue": "convention: instruction fetch, 4 cycles + one 64 B beat",
        "control": "convention: semaphores and registers, 2 cycles + one beat",
        "sbuf_bytes_per_partition": "TIMING.md [A, B, C] and SPEC §2: 192 KiB (v2), 224 KiB (v3), 256 KiB (v4, v5)",
        "psum_bytes_per_partition": "TIMING.md [A, B, C]: 16 KiB",
        "pool_cores": "TIMING.md [A]: GpSimd has 8 cores, a core serves 16 partitions",
        "pool_vector_bytes": "TIMING.md [A]: 512-bit SIMD per core (32 bits per partition per cycle)",
        "pe_mx_row_pump": "convention: MX_PERF_MODE quad-row modes pump 4 rows, oct-row modes 8 (TIMING.md [C, H]: 8x128 MXFP8 per cycle on v4); none = 4 (MX packs 4 contraction values per PE per cycle [C, H])",
        "bundle_issue_cycles": "convention: per-bundle issue cycles of the firmware stubs, calibrated against TIMING.md's cost model in docs/TIMING.md",
        "quantum_ns": "convention: temporal decoupling quantum (simulated results do not depend on it)",
        "instruction_fetch.ring_words": "convention: the whole 1 MiB queue window of SPEC §2 (16384 words) is the ring",
        "instruction_fetch.batch_words": "convention: the fetch DMA refills 256 words (16 KiB) at a time",
        "instruction_fetch.mbytes_per_s": "TIMING.md [J, K]: DMA about 27 GB/s per queue on v2 / v3, 38 GB/s on v4" + (" (v5: convention, as v4)" if arch == "maverick" else ""),
        "instruction_fetch.latency_ns": "TIMING.md [J, K]: about 1.3 us from DMA trigger to start",
        "hbm.bytes": HBM_BYTES[arch],
        "hbm.mbytes_per_s": HBM_BANDWIDTH[arch],
        "hbm.latency_ns": "convention: the docs are silent on HBM latency; every access (a DMA's first included) pays it",
        "dma.mbytes_per_s": ("TIMING.md [J]: 27.2 GB/s theoretical per DMA engine (v2 / v3)" if arch in ("sunda", "cayman")
                             else "TIMING.md [J]: 38.4 GB/s theoretical per DMA engine (v4)" + (" (v5: convention, as v4)" if arch == "maverick" else "")),
        "dma.latency_ns": "TIMING.md [J, K]: about 1.3 us from the semaphore that triggers a transfer to its start (per descriptor)",
    }


def main():
    tpbsim = sys.argv[1]
    out = pathlib.Path(sys.argv[2] if len(sys.argv) > 2 else "models/timing/profiles")
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as d:
        prog = pathlib.Path(d) / "empty.tpb"
        prog.write_text("# no instructions: only the effective profile is wanted\n")
        for arch in ARCHS:
            eff = pathlib.Path(d) / f"{arch}.json"
            subprocess.run([tpbsim, "run", str(prog), "--arch", arch, "-q", "--dump-timing",
                            str(eff)], check=True)
            j = json.loads(eff.read_text())
            j["sources"] = sources(arch)
            (out / f"{arch}.json").write_text(json.dumps(j, indent=2, sort_keys=True) + "\n")
            print(f"wrote {out / (arch + '.json')}")


if __name__ == "__main__":
    main()
