"""tpbsim.assemble / disassemble / check against `tpbsim asm`, `tpbsim disasm`
and `tpbsim check` on every program of the repository, and their errors."""

import random
import re

import pytest

import tpbsim
from conftest import EXAMPLES, WORKLOADS, cli

PROGRAMS = sorted(list(EXAMPLES.glob("*.tpb")) + list(EXAMPLES.glob("*/*.tpb")) +
                  list(WORKLOADS.glob("*/program*.tpb")))


def test_there_are_programs():
    assert len(PROGRAMS) > 30


@pytest.mark.parametrize("path", PROGRAMS, ids=lambda p: str(p.relative_to(p.parents[1])))
def test_assemble_disassemble_and_check_equal_the_cli(path, tmp_path):
    text = path.read_text()
    words = tpbsim.assemble(text, str(path))
    cli("asm", path, "-o", tmp_path / "p.bin")
    assert words == (tmp_path / "p.bin").read_bytes()
    assert len(words) % 64 == 0
    back = tpbsim.disassemble(words, name=str(tmp_path / "p.bin"))
    assert back == cli("disasm", tmp_path / "p.bin").stdout
    assert tpbsim.assemble(back) == words
    assert tpbsim.disassemble(text, name=str(path)) == cli("disasm", path).stdout
    # check: every INVALID line of the CLI, in order, and nothing else.
    p = cli("check", path, check=False)
    cli_lines = [l for l in p.stdout.splitlines() if ": INVALID " in l]
    failures = tpbsim.check(path)
    assert [str(f) for f in failures] == cli_lines
    assert (p.returncode == 2) == bool(failures)
    assert tpbsim.check(text, name=str(path)) == failures
    for arch in tpbsim.ARCHS:
        p = cli("check", path, "--arch", arch, check=False)
        cli_lines = [l for l in p.stdout.splitlines() if ": INVALID " in l]
        assert [str(f) for f in tpbsim.check(path, arch)] == cli_lines, arch
        # A binary has no lines: its failures are named by word.
        bin_lines = [l for l in cli("check", tmp_path / "p.bin", "--arch", arch,
                                    check=False).stdout.splitlines() if ": INVALID " in l]
        got = tpbsim.check(words, arch, name=str(tmp_path / "p.bin"))
        assert [str(f) for f in got] == bin_lines
        assert all(f.line is None for f in got)


def test_check_failure_fields():
    failures = tpbsim.check(EXAMPLES / "invalid.tpb", "cayman")
    assert failures, "invalid.tpb has invalid instructions"
    f = failures[0]
    assert f.line == 9 and f.engine == "pool" and f.index == 0 and f.word == 0
    assert f.opcode == 0x7B and f.mnemonic == "tensor_dequantize"
    assert f.contract == "is_valid_tensor_dequantize"
    assert f.predicates == ["has_valid_group_size", "s3d3_tens_dequant_element_count_check_t3d"]
    assert tpbsim.check(WORKLOADS / "pipeline" / "program.tpb") == []


def test_random_words_round_trip():
    rng = random.Random(5)
    # Opcode 0xd0 is a DMA descriptor: it runs on a DMA queue, which takes no
    # program words (SPEC §10), so a binary holding one is refused (below).
    words = b"".join(bytes([rng.choice([b for b in range(256) if b != 0xD0])]) +
                     bytes(rng.randrange(256) for _ in range(63)) for _ in range(500))
    text = tpbsim.disassemble(words)
    # Words go to their home engine's queue: the same words, queue by queue.
    again = tpbsim.assemble(text)
    assert sorted(again[i:i + 64] for i in range(0, len(again), 64)) == \
        sorted(words[i:i + 64] for i in range(0, len(words), 64))


def test_errors():
    with pytest.raises(tpbsim.ProgramError) as e:
        tpbsim.assemble(".engine pool\n\n  quantize_mx channels=999 out_dtype=fp8_e4m3\n", "x.tpb")
    assert (e.value.file, e.value.line) == ("x.tpb", 3) and e.value.col >= 3
    assert str(e.value).startswith("x.tpb:3:")
    with pytest.raises(tpbsim.InputError, match="not a multiple of 64"):
        tpbsim.disassemble(b"\x7b" * 100)
    with pytest.raises(tpbsim.InputError, match="not a whole number of 64-byte"):
        tpbsim.check(b"\x7b" * 100)
    with pytest.raises(tpbsim.InputError, match="'pascal' is not one of"):
        tpbsim.check(".engine pool\n", "pascal")
    with pytest.raises(tpbsim.ProgramError, match=":1:"):
        tpbsim.check("bogus\n")
    with pytest.raises(tpbsim.InputError, match="missing.tpb"):
        tpbsim.check(EXAMPLES / "missing.tpb")
    with pytest.raises(TypeError):
        tpbsim.assemble(b"bytes")
    with pytest.raises(TypeError):
        tpbsim.check(3)


def test_a_dma_descriptor_in_a_binary_goes_to_dma0_as_the_cli_sends_it(tmp_path):
    # An all-zero DMA descriptor: word 1 of the binary, judged on dma0 (rows 0 fails).
    words = bytes(64) + bytes([0xD0]) + bytes(63)
    text = tpbsim.disassemble(words)
    assert ".engine dma0" in text and "dma_copy" in text
    verdicts = tpbsim.check(words)
    bad = [f for f in verdicts if f.engine == "dma0"]
    assert len(bad) == 1 and bad[0].word == 1 and bad[0].index == 0, verdicts
    assert "dma_valid_num_rows" in bad[0].predicates
    (tmp_path / "d.bin").write_bytes(words)
    p = cli("disasm", tmp_path / "d.bin", check=False)
    assert p.returncode == 0 and ".engine dma0" in p.stdout, p.stderr
