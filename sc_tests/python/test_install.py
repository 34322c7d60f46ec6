"""`cmake --install` puts the package where Debian's /usr/bin/python3 finds it:
installed into a fresh prefix, then imported by an interpreter whose only
package directories are the ones Debian's `site` derives from that prefix
(as it does from /usr/local and /usr), with no build tree on the path."""

import os
import pathlib
import subprocess

import pytest

from conftest import SOURCE_DIR

BUILD_DIR = pathlib.Path(os.environ.get("TPBSIM_BUILD_DIR", SOURCE_DIR / "build"))
CMAKE = os.environ.get("TPBSIM_CMAKE", "cmake")
PYTHON = "/usr/bin/python3"

# Run by the installed package alone: Debian's site rules applied to PREFIX
# ahead of /usr/local and /usr (where NumPy is), as they are applied to those
# (site.getsitepackages), then a core made, written, run and read.
PROBE = r"""
import sys, site
prefix = sys.argv[1]
site.PREFIXES.insert(0, prefix)
site.ENABLE_USER_SITE = False
site.main()
import numpy as np
import tpbsim
assert tpbsim.__file__.startswith(prefix), tpbsim.__file__
assert tpbsim._tpbsim.__file__.startswith(prefix), tpbsim._tpbsim.__file__
with tpbsim.Core("mariana") as core:
    core.write("sbuf", 0, 0, np.array([0x21, 0x43, 0x65, 0x87], dtype=np.uint8))
    r = core.run(".engine pool\ntensor_dequantize fmt=e2m1_to_e5m2 group=0 channels=1 "
                 "src=t3d(sbuf(0, 0x0), step=[1, 0, 0], num=[1, 1, 1]) "
                 "dst=t3d(sbuf(0, 0x100), step=[1, 0, 0], num=[2, 1, 1])\n")
    out = core.read("sbuf", 0, 0x100, 8, "u8")
print(tpbsim.__file__)
print(r.status, r.instructions, " ".join(f"{b:02x}" for b in out))
"""


@pytest.mark.skipif(not pathlib.Path(PYTHON).exists(), reason="Debian's /usr/bin/python3")
def test_cmake_install_puts_the_package_where_debians_python_finds_it(tmp_path):
    prefix = tmp_path / "prefix"
    p = subprocess.run([CMAKE, "--install", str(BUILD_DIR), "--component", "python", "--prefix",
                        str(prefix)], capture_output=True, text=True)
    assert p.returncode == 0, p.stdout + p.stderr
    # Where Debian's site module looks under this prefix (for /usr/local:
    # /usr/local/lib/python3.X/dist-packages, on sys.path by default).
    site_dirs = subprocess.run(
        [PYTHON, "-c", "import site, sys; print('\\n'.join(site.getsitepackages([sys.argv[1]])))",
         str(prefix)], capture_output=True, text=True, check=True).stdout.split()
    holding = [d for d in site_dirs if (pathlib.Path(d) / "tpbsim" / "__init__.py").exists()]
    assert len(holding) == 1, (site_dirs, sorted(str(f) for f in prefix.rglob("*")))
    pkg = pathlib.Path(holding[0]) / "tpbsim"
    names = {f.name for f in pkg.iterdir()}
    assert {"__init__.py", "core.py", "result.py", "errors.py", "isa.py", "numerics.py"} <= names
    assert any(n.startswith("_tpbsim.") and n.endswith(".so") for n in names), names
    # Nothing else was installed by the component (no headers, no tool).
    assert not (prefix / "bin").exists() and not (prefix / "include").exists()

    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    p = subprocess.run([PYTHON, "-S", "-c", PROBE, str(prefix)], capture_output=True, text=True,
                       cwd=tmp_path, env=env)
    assert p.returncode == 0, p.stdout + p.stderr
    file_line, run_line = p.stdout.splitlines()
    assert file_line == str(pkg / "__init__.py")
    # FP4 E2M1 0x1 0x2 0x3 0x4 ... -> E5M2 (0.5 = 0x38, 1.0 = 0x3c, 1.5 = 0x3e, 2.0 = 0x40,
    # 3 = 0x42, 4 = 0x44, 6 = 0x46, -0.0 = 0x80), low nibble first.
    assert run_line == "ok 1 38 3c 3e 40 42 44 46 80", run_line
