"""The public surface (SPEC §12): every name there, documented, help() readable."""

import inspect
import pydoc

import tpbsim

SPEC_NAMES = ["Core", "Error", "Fault", "Deadlock", "Watchdog", "assemble", "disassemble", "check",
              "convert"]


def test_spec_names_exist_and_exceptions_nest():
    for name in SPEC_NAMES:
        assert hasattr(tpbsim, name), name
    for cls in (tpbsim.Fault, tpbsim.Deadlock, tpbsim.Watchdog, tpbsim.InputError,
                tpbsim.ProgramError, tpbsim.OutOfRange, tpbsim.CoreInUse, tpbsim.OutputError):
        assert issubclass(cls, tpbsim.Error), cls
    assert issubclass(tpbsim.Interrupted, KeyboardInterrupt)
    assert set(tpbsim.__all__) <= set(dir(tpbsim))
    assert tpbsim.ARCHS == ("sunda", "cayman", "mariana", "maverick")
    assert tpbsim.ENGINES == ("pool", "dve", "pe", "sfu", "act")
    sig = inspect.signature(tpbsim.Core)
    assert list(sig.parameters)[:2] == ["arch", "timing"]
    assert sig.parameters["arch"].default == "mariana" and sig.parameters["timing"].default is None
    assert list(inspect.signature(tpbsim.Core.write).parameters) == \
        ["self", "mem", "partition", "offset", "array"]
    assert list(inspect.signature(tpbsim.Core.read).parameters) == \
        ["self", "mem", "partition", "offset", "shape", "dtype"]
    assert list(inspect.signature(tpbsim.convert).parameters) == \
        ["src", "dst", "values", "saturate"]
    assert list(inspect.signature(tpbsim.check).parameters)[:2] == ["program", "arch"]


def public_members():
    for name in tpbsim.__all__:
        obj = getattr(tpbsim, name)
        if inspect.isclass(obj) or inspect.isfunction(obj) or inspect.ismodule(obj):
            yield name, obj
        if inspect.isclass(obj) and obj.__module__.startswith("tpbsim"):
            for attr, member in vars(obj).items():
                if attr.startswith("_") and attr != "__init__":
                    continue
                if attr == "__init__":
                    continue
                if callable(member) or isinstance(member, property):
                    yield f"{name}.{attr}", member


def test_everything_public_has_a_docstring():
    missing = [name for name, obj in public_members()
               if not (getattr(obj, "__doc__", None) or "").strip()]
    assert not missing, missing
    assert len(tpbsim.__doc__) > 400


def test_help_of_core_is_readable():
    text = pydoc.render_doc(tpbsim.Core, renderer=pydoc.plaintext)
    for word in ("One modelled NeuronCore", "write(self, mem, partition, offset, array)",
                 "read(self, mem, partition, offset, shape, dtype)", "run(self, program",
                 "write_tile", "read_tile", "KeyboardInterrupt", "close"):
        assert word in text, word
    assert "Result" in pydoc.render_doc(tpbsim.Result, renderer=pydoc.plaintext)
