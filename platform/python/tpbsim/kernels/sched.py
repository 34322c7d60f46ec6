"""Instruction lists ordered only by semaphores (docs/KERNELS.md "Ordering").

A kernel is written as one sequential list of operations, each on an engine
queue, each naming the buffers it reads and writes. The list is a valid
sequential program; the engines run their own sub-lists in order and in
parallel with each other. Every cross-engine hazard on a buffer (read after
write, write after read, write after write) becomes a semaphore wait:

- every instruction of engine E increments semaphore sem[E] when it retires,
  so sem[E] >= c means "E's first c instructions have retired";
- an instruction can wait on one semaphore (SPEC §2 EVENTS), so the waits are
  chosen with vector clocks: what an instruction may assume is what it waits
  for, what its engine's previous instruction could assume, and transitively
  what those waited for. A hazard already implied needs no wait; when two
  engines' hazards remain, the extra one moves to an earlier instruction of the
  same engine (which delays it, never the result);
- waits point only backwards in the list, so the program cannot deadlock.
"""

from dataclasses import dataclass, field


@dataclass
class Op:
    engine: str
    text: str                      # the instruction without wait= / update=
    kind: str                      # its mnemonic (for reports)
    deps: set = field(default_factory=set)    # global indices this op must follow
    extra: set = field(default_factory=set)   # deps moved here from later ops
    wait: tuple = None             # (engine, count) once chosen
    pos: int = 0                   # index in its engine's queue


class Schedule:
    def __init__(self, sem_of):
        self.ops = []
        self.sem_of = sem_of       # engine name -> semaphore index
        self._writer = {}
        self._readers = {}

    def add(self, engine, text, kind, reads=(), writes=()):
        i = len(self.ops)
        deps = set()
        for b in reads:
            if b in self._writer:
                deps.add(self._writer[b])
        for b in writes:
            if b in self._writer:
                deps.add(self._writer[b])
            deps |= self._readers.get(b, set())
        for b in reads:
            self._readers.setdefault(b, set()).add(i)
        for b in writes:
            self._writer[b] = i
            self._readers[b] = set()
        deps.discard(i)
        self.ops.append(Op(engine, text, kind, deps))
        return i

    # ---------------------------------------------------------------- waits
    def assign_waits(self):
        """Chooses one wait per op (or none) so that every dependency is implied."""
        ops = self.ops
        counts = {}
        for op in ops:
            op.pos = counts.get(op.engine, 0)
            counts[op.engine] = op.pos + 1
        by_engine = {}
        for i, op in enumerate(ops):
            by_engine.setdefault(op.engine, []).append(i)
        start = 0
        known = [None] * len(ops)   # vector clock at issue: {engine: count retired}
        while True:
            restart = self._sweep(start, known, by_engine)
            if restart is None:
                return
            start = restart

    def _done(self, i, known):
        """What is known when op i retires."""
        k = dict(known[i])
        op = self.ops[i]
        k[op.engine] = max(k.get(op.engine, 0), op.pos + 1)
        return k

    def _sweep(self, start, known, by_engine):
        ops = self.ops
        for i in range(start, len(ops)):
            op = ops[i]
            q = by_engine[op.engine]
            prev = q[op.pos - 1] if op.pos else None
            base = self._done(prev, known) if prev is not None else {}
            need = {}
            for d in op.deps | op.extra:
                e = ops[d].engine
                if e != op.engine:
                    need[e] = max(need.get(e, 0), ops[d].pos + 1)
            open_ = {e: c for e, c in need.items() if base.get(e, 0) < c}
            op.wait = None
            if not open_:
                known[i] = base
                continue
            best, best_left = None, None
            for e, c in open_.items():
                producer = by_engine[e][c - 1]
                k = _merge(base, self._done(producer, known))
                left = {e2: c2 for e2, c2 in open_.items() if k.get(e2, 0) < c2}
                if best is None or len(left) < len(best_left):
                    best, best_left, best_k = (e, c), left, k
            op.wait = best
            known[i] = best_k
            if best_left:
                # Move the rest to the latest earlier op of this engine that waits on
                # the same engine or not at all, then recompute from there.
                restart = i
                for e2, c2 in best_left.items():
                    producer = by_engine[e2][c2 - 1]
                    j = op.pos - 1
                    while j >= 0:
                        cand = ops[q[j]]
                        if cand.wait is None or cand.wait[0] == e2:
                            break
                        j -= 1
                    if j < 0 or q[j] <= producer:
                        raise RuntimeError(f"cannot order op {i} ({op.kind} on {op.engine}): "
                                           f"it needs {e2} and {best[0]} and no earlier "
                                           f"{op.engine} op can take the {e2} wait")
                    ops[q[j]].extra.add(producer)
                    restart = min(restart, q[j])
                return restart
        return None

    # ---------------------------------------------------------------- text
    def emit(self, arch, drop_wait=None, header=()):
        """Program text: `.engine` blocks in queue order. drop_wait: the index of an
        op whose wait is left out (a test that the waits matter)."""
        lines = [f".arch {arch}", *(f"# {h}" for h in header)]
        engines = []
        for op in self.ops:
            if op.engine not in engines:
                engines.append(op.engine)
        for e in engines:
            lines.append(f".engine {e}")
            for i, op in enumerate(self.ops):
                if op.engine != e:
                    continue
                ev = f" update=inc(sem{self.sem_of[e]})"
                if op.wait is not None and i != drop_wait:
                    we, c = op.wait
                    ev = f" wait=ge(sem{self.sem_of[we]}, {c})" + ev
                lines.append(op.text + ev)
        return "\n".join(lines) + "\n"

    def waits(self):
        """Indices of the ops that wait."""
        return [i for i, op in enumerate(self.ops) if op.wait is not None]


def _merge(a, b):
    out = dict(a)
    for e, c in b.items():
        if out.get(e, 0) < c:
            out[e] = c
    return out
