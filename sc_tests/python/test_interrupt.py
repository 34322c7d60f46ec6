"""Ctrl-C during a long run raises KeyboardInterrupt (tpbsim.Interrupted), stops
every engine at a common time and leaves the core readable and runnable; a
script's own signal handler that raises stops the run with its exception."""

import os
import signal
import threading
import time

import numpy as np
import pytest

import tpbsim

LINE = ("tensor_dequantize fmt=e2m1_to_e5m2 group=0 channels=1 "
        "src=t3d(sbuf(0, 0x0), step=[1, 0, 0], num=[4, 1, 1]) "
        "dst=t3d(sbuf(0, 0x4000), step=[1, 0, 0], num=[8, 1, 1])\n")
N = 1_000_000  # about a second of wall time


@pytest.fixture(scope="module")
def long_program():
    return tpbsim.assemble(".engine pool\n" + LINE) * N


def kill_during_run(core, seconds, signum=signal.SIGINT):
    """Sends `signum` to this process `seconds` after `core` starts running (not
    while a long program is still being loaded, however loaded the host is)."""
    def send():
        deadline = time.monotonic() + 60
        while not core.running:
            if time.monotonic() > deadline:
                return  # never ran: the test fails on its own
            time.sleep(0.002)
        time.sleep(seconds)
        os.kill(os.getpid(), signum)

    t = threading.Thread(target=send)
    t.start()
    return t


def test_ctrl_c_raises_keyboard_interrupt_and_leaves_the_core_usable(core, long_program):
    core.write("sbuf", 0, 0, np.array([0x21, 0x43, 0x65, 0x87] * 4, dtype=np.uint8))
    t0 = time.monotonic()
    timer = kill_during_run(core, 0.2)
    with pytest.raises(KeyboardInterrupt) as e:
        core.run(long_program)
    timer.join()
    elapsed = time.monotonic() - t0
    assert isinstance(e.value, tpbsim.Interrupted)
    assert not isinstance(e.value, Exception)  # `except Exception` does not swallow Ctrl-C
    r = e.value.result
    assert r.status == "interrupted" and "interrupted" in r.message
    assert 0 < r.instructions < N
    assert elapsed < 5, elapsed  # it stopped, not ran to the end
    # Every engine stopped at a common time: nothing retired past it.
    assert max(x.end_ps for x in r.retires) <= r.simulated_ps
    # The kernel's clock is at or before the stop (the engines ran decoupled
    # ahead of it); the next run starts from the kernel's clock.
    stopped_at = core.now_ps
    assert 0 < stopped_at <= r.simulated_ps
    # The core is readable and runs again.
    out = core.read("sbuf", 0, 0x4000, 32, "u8")
    assert out.any()
    again = core.run(".engine pool\n" + LINE)
    assert again.status == "ok" and again.start_ps == stopped_at and again.instructions == 1


def test_a_signal_handler_exception_stops_the_run(core, long_program):
    class Timeout(Exception):
        pass

    def handler(signum, frame):
        raise Timeout("alarm")

    old = signal.signal(signal.SIGALRM, handler)
    try:
        timer = kill_during_run(core, 0.1, signal.SIGALRM)
        with pytest.raises(Timeout, match="alarm"):
            core.run(long_program)
        timer.join()
    finally:
        signal.signal(signal.SIGALRM, old)
    assert 0 < core.now_ps
    assert core.run(".engine pool\n" + LINE).instructions == 1


def test_a_handler_that_does_not_raise_lets_the_run_finish(core):
    hits = []
    old = signal.signal(signal.SIGUSR1, lambda s, f: hits.append(s))
    try:
        program = tpbsim.assemble(".engine pool\n" + LINE) * 200_000
        timer = kill_during_run(core, 0.02, signal.SIGUSR1)
        r = core.run(program)
        timer.join()
    finally:
        signal.signal(signal.SIGUSR1, old)
    assert r.status == "ok" and r.instructions == 200_000
    assert hits == [signal.SIGUSR1]


def test_other_threads_run_during_a_run_and_cannot_touch_the_core(core, long_program):
    """The run releases the GIL: a Python thread keeps running, and its access
    to the running core is refused, not a data race."""
    seen = {}

    def other():
        deadline = time.monotonic() + 30
        while not core.running and time.monotonic() < deadline:
            time.sleep(0.005)
        seen["ran"] = core.running
        try:
            core.read("sbuf", 0, 0, 4, "u8")
        except tpbsim.Error as e:
            seen["error"] = str(e)
        os.kill(os.getpid(), signal.SIGINT)

    t = threading.Thread(target=other)
    t.start()
    with pytest.raises(tpbsim.Interrupted):
        core.run(long_program)
    t.join()
    assert seen.get("ran") and "running" in seen.get("error", "")
