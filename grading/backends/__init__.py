"""Where workers come from: the two backends, one interface (Backend below).

- backends.zygote.Zygote (Linux): a zygote process imports torch once and forks one worker per
  exercise; the worker puts up the kernel's walls (walls.kernel) before importing anything of
  the submission. Grades that count are given only here.
- backends.portable.PortableBackend (macOS, Windows, or Linux without Landlock or seccomp): a
  fresh interpreter per submission, over TCP on the loopback, walled by Python's audit hooks
  (walls.audit): feedback for a learner, never a grade that counts.
backends.portable.start chooses one (GRADER_BACKEND=auto|linux|portable).
The judge's ExerciseWorker (judge.worker_handle) is the only user of a backend's methods.
"""
from typing import Protocol


class Backend(Protocol):
    isolation: tuple  # (中文, English): the walls its workers stand behind, for the report
    reads_proc: bool  # the judge's Meter may read the workers' CPU time in /proc
    can_fork_judges: bool  # a batch may fork judges that share it
    forks_workers: bool  # a second worker of an exercise costs a fork, not a new interpreter

    def wait_ready(self):
        """Block until the backend can spawn (torch imported); GradingError if it cannot."""

    def spawn(self, package_dir, module, demo=False):
        """A worker for one exercise module of a folder: (pid, socket to it)."""

    def release(self, pid, sock):
        """The judge is done with this worker: end it (or keep it for the next exercise)."""

    def kill_and_reap(self, pid):
        """End the worker now; its exit status, as the judge describes it (describe_exit)."""

    def close(self):
        """End every worker and the backend itself."""
