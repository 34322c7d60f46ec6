"""Several tpbsim.Core objects in one process (SPEC §15, issue 32 item 5): each is a
core of its own (its own SystemC elaboration); the loop idiom works; a Core made
before a fork works in the child, and the child can make new ones.

Expected values come from the hbm_pipeline workload's expected.npy (computed by
scripts/gen_workloads.py from the format definitions), not from the model."""

import multiprocessing
import os
import warnings

import numpy as np
import pytest

import tpbsim
from conftest import WORKLOADS

WL = WORKLOADS / "hbm_pipeline"


def pipeline(core):
    """Runs the hbm_pipeline workload on `core`; returns (result, its output)."""
    core.write("hbm", 0, 0x0, np.load(WL / "activations.npy"))
    core.write("hbm", 0, 0x10000, np.load(WL / "weights_mxfp4.npy"))
    r = core.run(WL / "program.tpb")
    return r, core.read("hbm", 0, 0x20000, (64, 128), "bf16")


def test_the_loop_idiom_makes_a_core_per_turn():
    expected = np.load(WL / "expected.npy")
    times = []
    made_before = tpbsim._tpbsim.Session.elaborations()
    for arch in ["sunda", "cayman", "maverick", "mariana", "mariana", "mariana"]:
        core = tpbsim.Core(arch)  # the previous one is still open here
        assert core.arch == arch
        assert core.now_ps == 0
        if arch == "mariana":
            r, out = pipeline(core)
            np.testing.assert_array_equal(out, expected)
            times.append(r.simulated_ps)
        else:
            core.run(".engine pool\n")
    del core
    # A fresh core each turn: the same run takes the same time.
    assert len(set(times)) == 1 and times[0] > 0
    # At most two were open at once, so at most two elaborations were made here
    # (closed ones of earlier tests in this process are reused).
    assert tpbsim._tpbsim.Session.elaborations() - made_before <= 2


def test_cores_open_at_once_are_independent():
    a = tpbsim.Core("mariana")
    b = tpbsim.Core("mariana", timing={"hbm.mbytes_per_s": 1000})
    try:
        b.write("sbuf", 5, 0x40, np.arange(16, dtype=np.uint8))
        b.set_semaphore(7, 3)
        ra, out_a = pipeline(a)
        # a's run neither saw nor changed b's memory
        np.testing.assert_array_equal(b.read("sbuf", 5, 0x40, 16, "u8"), np.arange(16))
        np.testing.assert_array_equal(b.read("hbm", 0, 0x20000, 8, "u8"), np.zeros(8))
        assert b.semaphores[7] == 3 and a.semaphores[7] == 0
        assert b.now_ps == 0
        rb, out_b = pipeline(b)
        expected = np.load(WL / "expected.npy")
        np.testing.assert_array_equal(out_a, expected)
        np.testing.assert_array_equal(out_b, expected)
        # b's HBM is 1 GB/s: its 96 KiB of loads alone take more than 90 us there,
        # against well under 10 us on a's 612.5 GB/s.
        assert rb.simulated_ps > 90_000_000 > 10_000_000 > ra.simulated_ps
        # and a carried on: its time and memory are its own
        assert a.now_ps == ra.simulated_ps
        ra2, out_a2 = pipeline(a)
        np.testing.assert_array_equal(out_a2, expected)
        assert ra2.start_ps == ra.simulated_ps
    finally:
        a.close()
        b.close()


def _child_new_core(q):
    try:
        with tpbsim.Core("mariana") as c:
            r, out = pipeline(c)
            q.put(("ok", out.tobytes(), r.simulated_ps))
    except BaseException as e:  # reported to the parent
        q.put(("error", repr(e), 0))


def _child_inherited(core, q):
    try:
        before = core.now_ps
        r, out = pipeline(core)
        q.put(("ok", out.tobytes(), r.simulated_ps - before))
    except BaseException as e:
        q.put(("error", repr(e), 0))


def _in_forked_child(target, *args):
    ctx = multiprocessing.get_context("fork")
    q = ctx.Queue()
    with warnings.catch_warnings():  # Python 3.12 warns about fork with threads
        warnings.simplefilter("ignore", DeprecationWarning)
        p = ctx.Process(target=target, args=(*args, q))
        p.start()
    status, payload, ps = q.get(timeout=120)
    p.join(60)
    assert p.exitcode == 0
    assert status == "ok", payload
    return np.frombuffer(payload, np.uint16).reshape(64, 128), ps


def test_a_fork_after_a_core_was_opened_works_in_the_child():
    expected = np.load(WL / "expected.npy")
    with tpbsim.Core("mariana") as parent:
        r, out = pipeline(parent)  # the parent's core has run
        child_out, child_ps = _in_forked_child(_child_new_core)
        np.testing.assert_array_equal(child_out, expected)
        assert child_ps == r.simulated_ps - r.start_ps  # a fresh core: the same time
        # The parent's own Core, used in a child (a copy of it there).
        inherited_out, inherited_ps = _in_forked_child(_child_inherited, parent)
        np.testing.assert_array_equal(inherited_out, expected)
        # The parent's core is untouched by its children ...
        assert parent.now_ps == r.simulated_ps
        r2, out2 = pipeline(parent)
        np.testing.assert_array_equal(out2, expected)
        # ... and its second run is what the child's copy did as its second.
        assert inherited_ps == r2.simulated_ps - r2.start_ps


def test_a_closed_core_still_says_so():
    c = tpbsim.Core()
    c.close()
    c.close()  # twice is harmless
    with pytest.raises(tpbsim.Error, match="this Core is closed"):
        c.read("sbuf", 0, 0, 4, "u8")


def test_runs_of_cores_in_two_threads_take_turns():
    """Issue 40: a second thread's write, load or run of another Core while one
    runs raised InputError ("another core of this process is running now");
    runs of Cores, Devices and their memory calls from several threads take
    turns (PYTHON.md), each thread's results its own."""
    import threading
    expected = np.load(WL / "expected.npy")
    errors, outs = [], []

    def work(make):
        try:
            with make() as m:
                core = m.core(1) if isinstance(m, tpbsim.Device) else m
                for _ in range(6):
                    _, out = pipeline(core)
                    outs.append(out)
        except Exception as e:  # noqa: BLE001 (the test reports any)
            errors.append(f"{type(e).__name__}: {e}")

    makers = [tpbsim.Core, tpbsim.Core, lambda: tpbsim.Device(cores=2)]
    threads = [threading.Thread(target=work, args=(mk,)) for mk in makers]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert len(outs) == 18
    for out in outs:
        np.testing.assert_array_equal(out, expected)


def test_a_child_forked_while_another_thread_holds_the_turn_runs():
    """The process's turn (a lock every call takes) held by another thread at a
    fork would be held for ever in the child: the child gets a fresh one and
    its new core runs (the C++ run lock is renewed likewise, EMBEDDING.md)."""
    import threading
    from tpbsim import _machine
    held, done = threading.Event(), threading.Event()

    def hold():
        with _machine.turn():
            held.set()
            done.wait(30)

    t = threading.Thread(target=hold)
    t.start()
    held.wait(30)
    pid = os.fork()
    if pid == 0:   # the child: a new core, a run, within 30 s
        import signal
        signal.alarm(30)
        try:
            with tpbsim.Core() as c:
                os._exit(0 if c.run(".engine pool\n").status == "ok" else 2)
        except BaseException:  # noqa: BLE001 (any failure is the child's exit 3)
            os._exit(3)
    _, status = os.waitpid(pid, 0)
    done.set()
    t.join()
    assert os.waitstatus_to_exitcode(status) == 0
