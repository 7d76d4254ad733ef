"""After a worker crash the run goes on and ends: pytest-xdist's --dist loadfile, mended.

A test that takes its worker down (a segfault in native code, hang_guard.py's backstop) is
reported failed, and xdist starts a replacement. Its loadfile scheduler (pytest-xdist 3.8.0,
LoadScopeScheduling) can then leave the run waiting for ever, controller and workers idle
(issue 59; pytest-xdist issues #1327, #1378, PR #1371):
- remove_node() puts the crashed worker's whole workload back on the queue, its finished files
  too; a worker given a finished file gets an empty list of tests, never reports one done, and
  so is never given more;
- the test that crashed goes back with its file, so the replacement runs it again and dies too,
  until the restarts run out;
- a worker runs a test only once it holds the next one (or is told to stop), and a replacement
  given a file of one test, with more files waiting, is given nothing else.

The scheduler below queues again only the tests that neither ran nor crashed, and keeps each
worker holding two tests or stopping. Registered from the root conftest; used where the run
asks for --dist loadfile.
"""

from __future__ import annotations

import pytest

try:
    from xdist.scheduler import LoadFileScheduling
except ImportError:  # pytest-xdist is not installed: nothing to mend
    LoadFileScheduling = None


if LoadFileScheduling is not None:
    class LoadFileAfterCrashes(LoadFileScheduling):
        def remove_node(self, node) -> str | None:
            """The test a crashed `node` was running (None at an ordinary shutdown); the
            files it had not finished go back on the queue without it."""
            workload = self.assigned_work.pop(node)
            pending = [(scope, test) for scope, unit in workload.items()
                       for test, done in unit.items() if not done]
            if not pending:
                return None
            scope, crashed = pending[0]
            workload[scope][crashed] = True  # reported failed by xdist; run again, it crashes again
            for scope, unit in workload.items():
                if not all(unit.values()):
                    self.workqueue[scope] = unit
            for other in self.assigned_work:
                self._reschedule(other)
            return crashed

        def _reschedule(self, node) -> None:
            super()._reschedule(node)
            # until it holds two tests (it runs one only when it has the next) or is stopping
            while not node.shutting_down and self._pending_of(self.assigned_work[node]) < 2:
                super()._reschedule(node)


@pytest.hookimpl(tryfirst=True, optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    if LoadFileScheduling is not None and config.getvalue("dist") == "loadfile":
        return LoadFileAfterCrashes(config, log)
    return None
