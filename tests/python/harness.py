# SPDX-License-Identifier: BSD-3-Clause
"""What the Python tests share: failures collected on each rank, cases run so that an exception
fails only its case, the check that a call raised the same exception with the same message on
every rank, and an exit that fails every rank when any rank failed (mpiexec reports it).

    from harness import Failures
    t = Failures(comm, "python fft test")
    t.check(np.allclose(a, b), "forward 7x9x11")
    t.run_cases(cases)
    t.finish()
"""
import sys
import traceback

from mpi4py import MPI


class Failures:
    def __init__(self, comm, title):
        self.comm, self.title, self.items, self.cases = comm, title, [], 0
        self.rank, self.nranks = comm.Get_rank(), comm.Get_size()

    def add(self, what):
        self.items.append(what)

    def check(self, cond, what):
        if not cond:
            self.items.append(what)

    def run_cases(self, cases):
        """Runs each callable; an exception is that case's failure on this rank."""
        for i, c in enumerate(cases):
            self.guarded(f"case {i}", c)

    def guarded(self, name, call):
        self.cases += 1
        try:
            call()
        except Exception:  # noqa: BLE001 - any exception is a failure of this case, on this rank
            self.items.append(f"{name}: " + traceback.format_exc())

    def expect_raise(self, name, call, expected=ValueError, mentions=None):
        """Collective: `call` must raise `expected` on every rank, with one message that names
        `mentions` (when given). Returns this rank's message."""
        got, msg = None, ""
        try:
            call()
        except Exception as e:  # noqa: BLE001
            got, msg = type(e).__name__, str(e)
        everyone = self.comm.allgather((got, msg))
        if {t for t, _ in everyone} != {expected.__name__}:
            self.items.append(f"{name}: raised {[t for t, _ in everyone]} on ranks 0..{self.nranks - 1}, "
                              f"expected {expected.__name__} on all: {msg}")
        elif len({m for _, m in everyone}) != 1:
            self.items.append(f"{name}: messages differ across ranks: {[m for _, m in everyone]}")
        elif mentions and mentions not in msg:
            self.items.append(f"{name}: message does not name '{mentions}': {msg}")
        return msg

    def finish(self):
        """Prints this rank's failures and exits: 1 on every rank if any rank failed."""
        for f in self.items:
            print(f"[rank {self.rank}] FAIL {f}", flush=True)
        bad = self.comm.allreduce(len(self.items), op=MPI.SUM)
        if self.rank == 0:
            cases = f"{self.cases} cases, " if self.cases else ""
            print(f"{self.title} at {self.nranks} ranks: {cases}{bad} failure(s) over all ranks", flush=True)
        sys.exit(1 if bad else 0)
