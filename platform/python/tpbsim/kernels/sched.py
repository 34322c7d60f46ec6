"""Instruction lists ordered only by semaphores (docs/KERNELS.md "Ordering").

A kernel is written as one sequential list of instructions, each on an engine
queue. The list is a valid sequential program; the engines run their own
sub-lists in order and in parallel with each other. What each instruction
reads and writes is derived from its text (access.py: the bytes the model will
touch, not a name the kernel gives them), and every cross-engine hazard on
those bytes (read after write, write after read, write after write) becomes a
semaphore wait:

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

from . import access


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
        self._tracker = access.Tracker()
        self._pe_cols = None

    def add(self, engine, text, kind, after=()):
        """Appends one instruction; its dependencies are the earlier instructions
        whose accesses conflict with its own, plus `after` (indices of earlier
        instructions it must follow for a reason of the kernel's, e.g. to carry
        a wait another instruction of its engine would otherwise need)."""
        i = len(self.ops)
        mnemonic, fields = access.parse(text)
        accs = access.accesses(text, self._pe_cols if engine == "pe" else None)
        cols = access.stationary_cols(mnemonic, fields)
        if cols is not None:
            self._pe_cols = cols
        deps = set(after)
        for rec, _, _ in self._tracker.touch(i, accs, engine):
            j = rec.op
            if self.ops[j].engine == engine:
                if rec.mem == "hbm" and engine.startswith("dma"):
                    raise RuntimeError(f"op {i} ({kind} on {engine}) and op {j} touch the same "
                                       "HBM bytes on one DMA queue: they need a semaphore")
                continue
            deps.add(j)
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
            # The wait to take: the one that leaves the fewest hazards open, among
            # those whose leftovers can move (below).
            cands = []
            for e, c in open_.items():
                producer = by_engine[e][c - 1]
                k = _merge(base, self._done(producer, known))
                left = {e2: c2 for e2, c2 in open_.items() if k.get(e2, 0) < c2}
                cands.append((len(left), len(cands), (e, c), left, k))
            cands.sort(key=lambda x: x[:2])
            for _, _, best, left, best_k in cands:
                moves = self._moves(op, q, by_engine, best, left)
                if moves is not None:
                    break
            else:
                e2 = next(iter(cands[0][3]))
                raise RuntimeError(f"cannot order op {i} ({op.kind} on {op.engine}): it needs "
                                   f"{' and '.join(open_)} and no earlier {op.engine} op nor "
                                   f"the op it waits for can take the {e2} wait")
            op.wait = best
            known[i] = best_k
            if moves:
                for target, producer in moves:
                    ops[target].extra.add(producer)
                return min(i, *(t for t, _ in moves))
        return None

    def _moves(self, op, q, by_engine, best, left):
        """Where the hazards `left` open by waiting on `best` can go: each to the
        latest earlier op of this engine that waits on the same engine or not at
        all, else to the op waited for (it then implies them); a target must come
        after the hazard's producer in the list. [(target, producer)], or None."""
        ops = self.ops
        waited = by_engine[best[0]][best[1] - 1]
        out = []
        for e2, c2 in left.items():
            producer = by_engine[e2][c2 - 1]
            j = op.pos - 1
            while j >= 0:
                cand = ops[q[j]]
                if cand.wait is None or cand.wait[0] == e2:
                    break
                j -= 1
            if j >= 0 and q[j] > producer:
                out.append((q[j], producer))
            elif waited > producer:
                out.append((waited, producer))
            else:
                return None
        return out

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
