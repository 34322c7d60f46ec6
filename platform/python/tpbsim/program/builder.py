"""A program as structured instructions, ordered by semaphores derived from
what each instruction reads and writes (SPEC §14, §17; docs/NKI.md "The
program builder").

The instructions are added in one sequential order (the program as a
sequential program would run it); each goes to a queue (a compute engine or
a DMA queue), and each queue runs its own instructions in that order, in
parallel with the others. For every new instruction the builder finds the
earlier ones whose bytes conflict with its own (read after write, write after
read, write after write) and makes it wait for them:

* within a compute queue, program order suffices (the interlock, SPEC §8);
* within a DMA queue, two transfers are ordered only where their conflicting
  bytes move through the same DMA engine (SPEC §8, §10): conflicting bytes
  moved by different engines need a wait, on the queue's own semaphore;
* across queues, a wait on the producer queue's semaphore.

Semaphores count: semaphore ``sem_of(q)`` of queue q is incremented by every
instruction of q that some instruction waits for, so ``ge(sem, k)`` means "the
first k of those have completed", and, since a queue completes in order
(compute engines and DMA queues alike, docs/CONVENTIONS.md), every earlier
instruction of q too. One semaphore per queue: a program of any length fits
the bank of 64 (u32 counts).

Waits are chosen with vector clocks of what each queue knows has completed:
a dependence already implied by an earlier wait of the queue, transitively
through what the instruction waited for knew, needs none. An instruction
that still needs two or more is preceded on its queue by wait-only
instructions (``nop``, one wait each; greedily the wait that implies the most
of the others first). With ``hoist=True`` such a wait goes to an earlier
instruction of the same queue where one can take it — the latest that waits
for nothing (or for the same queue: its wait is raised) and comes after the
producer in the sequential order, the wait of the earliest producer first,
which delays that instruction the least — and to a nop only where none can:
a nop costs an issue slot of its engine, and the instruction behind it
starts only when the nop retires, where a wait of its own overlaps its issue
(the GEMM generator's choice; its programs' times are those of its earlier
hand-placed waits, or shorter). What the hoisted wait implies is then known
to every instruction ordered after the one that took it, and a later wait
it implies is left out. Waits point backwards in the sequential order only, so
the program cannot deadlock.

The text is made last (:meth:`Builder.text`), when every wait is known.
"""

from .regions import Tracker, cross_engine

COMPUTE_QUEUES = ("pool", "dve", "pe", "sfu", "act")
# A hoisted wait goes at most this many instructions back in its queue, and
# at most this many instructions of the program after it learn what it implies.
HOIST_BACK, HOIST_SPAN = 64, 4096
DMA_QUEUES = tuple(f"dma{q}" for q in range(16))


def is_dma(queue):
    return queue.startswith("dma")


class BuildError(RuntimeError):
    """A program the builder cannot order (an internal error of its caller)."""


class Instr:
    """One instruction: its queue, place in the queue, mnemonic and fields text
    (without ``wait=`` / ``update=``), source location, and the wait chosen."""

    __slots__ = ("queue", "pos", "mnemonic", "fields", "loc", "wait")

    def __init__(self, queue, pos, mnemonic, fields, loc):
        self.queue = queue          # queue id (Builder.queues[queue] is its name)
        self.pos = pos              # its index in its queue
        self.mnemonic = mnemonic
        self.fields = fields
        self.loc = loc              # "file:line" or None
        self.wait = None            # (queue id, position of the instruction waited for)


_EMPTY = {}


def _join(a, b):
    if not a:
        return b
    if not b:
        return a
    out = dict(a)
    for q, c in b.items():
        if out.get(q, 0) < c:
            out[q] = c
    return out


class Builder:
    """Structured instructions in, program text out.

    ``Builder(arch, sem_of=None, hoist=False)``: ``sem_of`` maps a queue name
    to its semaphore (default: its place in ``queue_order``, pool 0, dve 1,
    ...); ``hoist``: an instruction's second wait goes to an earlier
    instruction of its queue where one can take it (the module doc), else
    to a nop.

    * :meth:`add` appends one instruction with its footprint (regions of
      tpbsim.program.regions: what it reads and writes) and returns its index;
    * :meth:`text` returns the program text (``.arch``, one ``.engine`` block
      per queue in ``queue_order``, each line ``MNEMONIC FIELDS [wait=...]
      [update=...]  # LOC``);
    * :attr:`instrs`, :meth:`waits`, :meth:`deps` for reports and tests.
    """

    def __init__(self, arch, sem_of=None, queue_order=COMPUTE_QUEUES + DMA_QUEUES,
                 comments=True, hoist=False):
        self.arch = arch
        self.queue_order = tuple(queue_order)
        self._sem_of = sem_of or {q: i for i, q in enumerate(self.queue_order)}
        self.queues = []            # id -> name
        self._qid = {}
        self._dma = []              # id -> bool
        self.instrs = []
        self._by_queue = []         # id -> [global index]
        self._known = []            # id -> what the queue's next instruction knows
        self._snaps = []            # id -> [known at each instruction's issue]
        self._tracker = Tracker()
        self._deps = []             # global index -> {queue id: count} it needed
        self.nops = 0
        self.comments = comments
        self.hoist = hoist

    # ------------------------------------------------------------ queues
    def queue_id(self, name):
        q = self._qid.get(name)
        if q is None:
            if name not in self._sem_of:
                raise BuildError(f"unknown queue {name!r}")
            q = len(self.queues)
            self._qid[name] = q
            self.queues.append(name)
            self._dma.append(is_dma(name))
            self._by_queue.append([])
            self._known.append(_EMPTY)
            self._snaps.append([])
        return q

    def sem_of(self, name):
        return self._sem_of[name]

    # ------------------------------------------------------------ adding
    def add(self, queue, mnemonic, fields, reads=(), writes=(), loc=None, after=()):
        """Appends an instruction to `queue` (a name: "dve", "dma3", ...).
        `reads` / `writes`: regions (tpbsim.program.regions); a DMA queue's
        carry the DMA engine that moves them. `after`: global indices of
        earlier instructions it must also follow, for a reason of the
        caller's (to take a wait that a later instruction of its queue would
        otherwise need). Returns its global index."""
        q = self.queue_id(queue)
        need = self._needs(q, reads, writes)
        for j in after:
            self._follow(need, q, self.instrs[j])
        i = self._place(q, mnemonic, fields, loc, need)
        tracker = self._tracker
        for r in reads:
            tracker.add(i, q, False, r)
        for r in writes:
            tracker.add(i, q, True, r)
        return i

    def _needs(self, q, reads, writes):
        """{queue id: count}: the instructions of each queue this one must follow."""
        need = {}
        dma = self._dma[q]
        instrs = self.instrs
        conflicts = self._tracker.conflicts
        for write, regions in ((False, reads), (True, writes)):
            for r in regions:
                for rec in conflicts(r, write):
                    if rec.queue == q and (not dma or not cross_engine(rec.region, r)):
                        continue    # program order (compute), or one DMA engine
                    c = instrs[rec.inst].pos + 1
                    if need.get(rec.queue, 0) < c:
                        need[rec.queue] = c
        return need

    def _follow(self, need, q, inst):
        """Adds "after inst" to `need`: nothing within a compute queue (program
        order), a wait on inst's queue otherwise."""
        if inst.queue == q and not self._dma[q]:
            return
        if need.get(inst.queue, 0) <= inst.pos:
            need[inst.queue] = inst.pos + 1

    def _release(self, q, count):
        """What a wait for the first `count` instructions of queue q implies."""
        snap = self._snaps[q][count - 1]
        out = dict(snap)
        if out.get(q, 0) < count:
            out[q] = count
        return out

    def _place(self, q, mnemonic, fields, loc, need):
        known = self._known[q]
        open_ = {p: c for p, c in need.items() if known.get(p, 0) < c}
        wait = None
        while open_:
            # The wait that implies most of the others: the instruction's own
            # when it implies them all, else a nop's before it.
            best, best_rel, best_n = None, None, -1
            for p, c in sorted(open_.items()):
                rel = self._release(p, c)
                n = sum(1 for p2, c2 in open_.items() if rel.get(p2, 0) >= c2)
                if n > best_n:
                    best, best_rel, best_n = (p, c), rel, n
            if best_n == len(open_):
                self._known[q] = _join(known, best_rel)
                wait = best
                break
            if not (self.hoist and self._hoisted(q, open_)):
                self._known[q] = _join(known, best_rel)
                self._append(q, "nop", "", loc, best, None)
                self.nops += 1
            known = self._known[q]
            open_ = {p: c for p, c in open_.items() if known.get(p, 0) < c}
        return self._append(q, mnemonic, fields, loc, wait, need)

    def _hoisted(self, q, open_):
        """Gives one open wait to an earlier instruction of queue q (the module
        doc): the wait of the earliest producer that the latest instruction of
        q waiting for nothing (or for the same queue) and coming after that
        producer can take; whether it did."""
        ids = self._by_queue[q]
        for first, p, c in sorted((self._by_queue[p][c - 1], p, c)
                                  for p, c in open_.items() if p != q):
            for k in range(len(ids) - 1, max(-1, len(ids) - 1 - HOIST_BACK), -1):
                j = ids[k]
                if j <= first or len(self.instrs) - j > HOIST_SPAN:
                    break
                w = self.instrs[j].wait
                if w is None or w[0] == p:
                    self._hoist(q, k, p, c)
                    return True
        return False

    def _hoist(self, q, k, p, c):
        """Instruction k of queue q waits for the first c of queue p; what it and
        every instruction ordered after it know grows by what that implies, and
        a wait of theirs that this now implies is left out."""
        top = self._by_queue[q][k]
        self.instrs[top].wait = (p, c - 1)
        rel = self._release(p, c)
        gain = {q: k}               # queue -> the first position that knows rel
        for i in range(top, len(self.instrs)):
            inst = self.instrs[i]
            r, w = inst.queue, inst.wait
            if r not in gain and w is not None and w[0] in gain and w[1] >= gain[w[0]]:
                gain[r] = inst.pos
            if r not in gain or inst.pos < gain[r]:
                continue
            snaps = self._snaps[r]
            before = snaps[inst.pos - 1] if inst.pos else _EMPTY
            if i != top and w is not None and before.get(w[0], 0) > w[1]:
                inst.wait = None
            snaps[inst.pos] = _join(snaps[inst.pos], rel)
        for r in gain:
            self._known[r] = _join(self._known[r], rel)

    def _append(self, q, mnemonic, fields, loc, wait, need):
        i = len(self.instrs)
        pos = len(self._by_queue[q])
        inst = Instr(q, pos, mnemonic, fields, loc)
        if wait is not None:
            inst.wait = (wait[0], wait[1] - 1)
        self.instrs.append(inst)
        self._by_queue[q].append(i)
        self._snaps[q].append(self._known[q])
        self._deps.append(need)
        return i

    # ------------------------------------------------------------ reports
    def waits(self):
        """[(global index, waited queue name, position waited for)]."""
        return [(i, self.queues[w[0]], w[1]) for i, inst in enumerate(self.instrs)
                if (w := inst.wait) is not None]

    def deps(self, i):
        """{queue name: count} instruction i had to follow (None for a nop)."""
        d = self._deps[i]
        return None if d is None else {self.queues[q]: c for q, c in d.items()}

    def queue_counts(self):
        """{queue name: instructions}."""
        return {self.queues[q]: len(ids) for q, ids in enumerate(self._by_queue)}

    # ------------------------------------------------------------ text
    def _increments(self):
        """Per queue, for each position: its semaphore count after it retires
        (only the instructions waited for increment)."""
        waited = [set() for _ in self.queues]
        for inst in self.instrs:
            if inst.wait is not None:
                waited[inst.wait[0]].add(inst.wait[1])
        return waited

    def text(self, header=(), drop_wait=None):
        """The program text (see the class doc). ``drop_wait``: the global index
        of an instruction whose wait is left out (for tests that every wait is
        needed)."""
        waited = self._increments()
        counts = []
        for q, ids in enumerate(self._by_queue):
            c, out = 0, []
            w = waited[q]
            for pos in range(len(ids)):
                if pos in w:
                    c += 1
                out.append(c)
            counts.append(out)
        lines = [f".arch {self.arch}", *(f"# {h}" for h in header)]
        order = {name: k for k, name in enumerate(self.queue_order)}
        for q in sorted(range(len(self.queues)), key=lambda q: order[self.queues[q]]):
            name = self.queues[q]
            lines.append(f".engine {name}")
            sem = self._sem_of[name]
            w = waited[q]
            for pos, i in enumerate(self._by_queue[q]):
                inst = self.instrs[i]
                parts = [inst.mnemonic]
                if inst.fields:
                    parts.append(inst.fields)
                if inst.wait is not None and i != drop_wait:
                    wq, wpos = inst.wait
                    parts.append(f"wait=ge(sem{self._sem_of[self.queues[wq]]}, "
                                 f"{counts[wq][wpos]})")
                if pos in w:
                    parts.append(f"update=inc(sem{sem})")
                line = " ".join(parts)
                if self.comments and inst.loc:
                    line += f"  # {inst.loc}"
                lines.append(line)
        return "\n".join(lines) + "\n"
