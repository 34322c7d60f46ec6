"""Programs without a core: assemble, disassemble and check (SPEC §9 `tpbsim asm`,
`tpbsim disasm`, `tpbsim check`)."""

import os

from . import _args, _tpbsim
from .errors import ArgumentTypeError

__all__ = ["assemble", "disassemble", "check", "CheckFailure"]


def assemble(text, name="<program>"):
    """Program text (SPEC §9 syntax, docs/ASM.md) -> its raw 64-byte instruction
    words (bytes), queue by queue in queue order (pool, dve, pe, sfu, dma0..dma15, act), as
    ``tpbsim asm``. ``.arch`` and ``.reg`` lines are not part of a binary.
    Raises :class:`tpbsim.ProgramError` (with ``.line`` and ``.col``) at the first
    syntax error."""
    return _tpbsim.assemble(_args.text(text, "assemble: text"), _args.text(name, "name"))


def disassemble(words, name="<program>"):
    """Raw 64-byte instruction words (bytes-like) -> program text, as ``tpbsim
    disasm``: the mnemonic form of every word of a known opcode, ``.raw`` for the
    rest; ``assemble`` of the text gives back the same words. Program text is
    accepted too (and comes back in the canonical form). Raises
    :class:`tpbsim.InputError` when the length is not a multiple of 64."""
    name = _args.text(name, "name")
    if isinstance(words, str):
        return _tpbsim.disassemble_text(_args.text(words, "disassemble: text"), name)
    if isinstance(words, (bytes, bytearray, memoryview)):
        return _tpbsim.disassemble_words(words, name)
    raise ArgumentTypeError(f"disassemble: words must be bytes (or program text), not "
                            f"{type(words).__name__}")


class CheckFailure:
    """One invalid instruction found by :func:`check`.

    ``line`` (its source line; None for a binary), ``word`` (its place in the
    program, file order, from 0), ``engine`` and ``index`` (its place in that
    engine's stream), ``opcode``, ``mnemonic``, ``contract`` (the contract run,
    "" when the opcode has none) and ``predicates`` (the names of every failed
    validity predicate, contract order; docs/PREDICATES.md)."""

    __slots__ = ("line", "word", "engine", "index", "opcode", "mnemonic", "contract", "predicates",
                 "name")

    def __init__(self, d, name):
        for k in self.__slots__[:-1]:
            setattr(self, k, d[k])
        self.name = name

    def __str__(self):
        where = f":{self.line}" if self.line is not None else f":word {self.word}"
        return (f"{self.name}{where}: {self.engine}[{self.index}] {self.mnemonic}: INVALID "
                + ", ".join(self.predicates))

    def __repr__(self):
        return (f"CheckFailure(line={self.line}, word={self.word}, engine={self.engine!r}, "
                f"index={self.index}, opcode=0x{self.opcode:02x}, mnemonic={self.mnemonic!r}, "
                f"predicates={self.predicates!r})")

    def __eq__(self, other):
        return isinstance(other, CheckFailure) and all(
            getattr(self, k) == getattr(other, k) for k in self.__slots__)


def check(program, arch=None, name="<program>"):
    """Checks every instruction of ``program`` against the validity contracts of
    generation ``arch`` (else the program's ``.arch``, else mariana), as ``tpbsim
    check``, and returns the invalid ones: a list of :class:`CheckFailure`, in
    program order; empty when every instruction is valid.

    ``program`` is text (str), raw 64-byte words (bytes) or a path. Raises
    :class:`tpbsim.ProgramError` for text that does not assemble and
    :class:`tpbsim.InputError` for an unknown ``arch``."""
    if arch is not None:
        arch = _args.text(arch, "check: arch")
    name = _args.text(name, "name")
    if isinstance(program, str):
        out = _tpbsim.check_text(_args.text(program, "check: program"), name, arch)
    elif isinstance(program, (bytes, bytearray, memoryview)):
        out = _tpbsim.check_words(program, name, arch)
    elif isinstance(program, os.PathLike):
        name = os.fspath(program)
        out = _tpbsim.check_file(_args.path(program, "check: program"), arch)
    else:
        raise ArgumentTypeError("check: program must be text (str), 64-byte words (bytes) or a "
                                f"path (os.PathLike), not {type(program).__name__}")
    return [CheckFailure(d, name) for d in out["failures"]]
