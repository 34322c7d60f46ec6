"""The host's limits during a run (issue 40): a fork while another thread is
inside a run, and host address space running out in the middle of one."""

import os
import pathlib
import resource
import subprocess
import sys
import textwrap
import threading
import time

import pytest

import tpbsim

# A DMA queue long enough to keep a run busy for a while (one-row copies).
LONG_QUEUE = ".arch mariana\n.engine dma0\n" + (
    "dma_copy rows=1 row_bytes=64 src=hbm(0x40, stride=64) dst=sbuf(5, 0x0)\n" * 20000)


def _asan_build():
    build = os.environ.get("TPBSIM_BUILD_DIR")
    cache = pathlib.Path(build) / "CMakeCache.txt" if build else None
    return bool(cache and cache.exists() and "TPBSIM_SANITIZE:BOOL=ON" in cache.read_text())


def test_a_fork_while_another_thread_runs_leaves_the_child_new_cores_that_run():
    """Issue 40 #2: the child of a fork made while another thread was inside a
    run makes a new Core and a new Device, and both run (they hung for ever:
    the child's simulation resumed the parent's run at its first switch back
    to the main coroutine). The forking thread's core stays refused."""
    stop = threading.Event()
    runs = []

    def runner():
        with tpbsim.Core("mariana") as c:
            while not stop.is_set():
                runs.append(c.run(LONG_QUEUE).instructions)

    t = threading.Thread(target=runner)
    t.start()
    try:
        deadline = time.monotonic() + 60
        while not runs and time.monotonic() < deadline:
            time.sleep(0.01)
        assert runs, "the runner never completed a run"
        for k in range(4):
            time.sleep(0.05 * (k + 1))  # somewhere inside the next run
            pid = os.fork()
            if pid == 0:  # the child: a new Core, a new Device, each runs
                code = 1
                try:
                    c = tpbsim.Core("mariana")
                    r = c.run(".arch mariana\n.engine dma0\n"
                              "dma_copy rows=1 row_bytes=64 src=hbm(0x40, stride=64) "
                              "dst=sbuf(5, 0x0)\n")
                    d = tpbsim.Device("mariana", cores=2)
                    rd = d.run({1: ".arch mariana\n.engine pool\n"})
                    code = 0 if (r.instructions, rd.instructions) == (1, 0) else 2
                finally:
                    os._exit(code)
            deadline = time.monotonic() + 30
            while True:
                done, status = os.waitpid(pid, os.WNOHANG)
                if done:
                    break
                if time.monotonic() > deadline:
                    os.kill(pid, 9)
                    os.waitpid(pid, 0)
                    pytest.fail("the child's new core hung in run()")
                time.sleep(0.02)
            assert os.waitstatus_to_exitcode(status) == 0
    finally:
        stop.set()
        t.join()
    assert all(n == 20000 for n in runs)  # the parent's runs are untouched


@pytest.mark.skipif(_asan_build(), reason="AddressSanitizer reserves its shadow up front")
@pytest.mark.parametrize("limit_kib, copies", [(1000000, 30), (4000000, 130)])
def test_host_address_space_running_out_mid_run_is_a_tpbsim_error(tmp_path, limit_kib, copies):
    """Issue 40 #1: HBM chunks mapped as DMA transfers touch them, under
    ulimit -v, run out in the middle of a run: tpbsim.Error naming the HBM
    (the interpreter died of SIGABRT); the core runs again; a timing-only run
    touches no storage and completes."""
    prog = tmp_path / "p.tpb"
    prog.write_text(".arch mariana\n.engine dma0\n" + "".join(
        f"dma_copy rows=128 row_bytes=262144 src=hbm(0x0, stride=262144) "
        f"dst=hbm({(i + 1) << 25:#x}, stride=262144)\n" for i in range(copies)))
    code = textwrap.dedent(f"""
        import pathlib, tpbsim
        c = tpbsim.Core("mariana")
        p = pathlib.Path({str(prog)!r})
        try:
            c.run(p)
            print("ran")
        except tpbsim.Error as e:
            print(type(e).__name__, "|", e)
        print("timing-only", c.run(p, timing_only=True).instructions)
        print("again", c.run(".arch mariana\\n.engine pool\\n").instructions)
    """)
    limit = limit_kib * 1024
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                       preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_AS, (limit, limit)),
                       timeout=300)
    assert p.returncode == 0, p.stderr
    lines = p.stdout.splitlines()
    assert lines[0].startswith("Error | dma0 instruction "), p.stdout
    assert "HBM: no host address space left for 2 MiB of HBM" in lines[0]
    assert lines[1:] == [f"timing-only {copies}", "again 0"]
