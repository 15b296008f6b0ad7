"""Every exception the grader's rooms raise to one another, in one leaf module (it imports nothing).

Who raises what, and who catches it:
- GradingError (backends, command line): grading itself could not run; not the submission's fault.
  WallsMissing: grades that count were asked for where the kernel's walls are missing.
- SessionError (judge.session): the tests could not be collected or run (the grader's or tests/).
- WorkerFailure (judge.worker_handle): the submission's code failed in its worker.
- CheckFailed (checks, raised by test files): a check on the submission's outputs failed.
  GateFailed (judge.plugin): a check that waits for others (after=…) was not run.
- Mismatch (checks.scenario): the submission's objects lack the structure the exercise's API
  fixes (a layer missing or of another shape). It is a check, not an exception of the learner's
  code, but it travels as a WorkerFailure of kind "raised" at the call that met it, so that the
  crash causes (diagnose_error) read it beside the learner's own errors; its error's type says
  "Mismatch".
- StepMissing (worker.training, the demo's): the demo needs an exercise not written yet.
- LinuxOnlyCall (walls.audit): a call that exists only on Linux, made in the portable backend
  with the tripwire up (GRADER_BACKEND=portable on Linux).
- ProtocolError, PeerClosed, Timeout (wire.protocol): a message that is not one, a closed peer,
  no message in time; Busy (judge.worker_handle): no message in time, the machine's fault.
- ReplayError (judge.replay): a worker's record of its work cannot be verified.
"""


class GradingError(Exception):
    """Grading itself could not run (not the submission's fault)."""


class WallsRefused(GradingError):
    """A worker could not put up a wall of the Linux backend that the machine offers (a sandbox
    refuses seccomp or Landlock to the process): it imported nothing of the learner's."""


class WallsMissing(GradingError):
    """Grades that count were asked for where Linux's walls are missing: `auto` may not fall back
    to the portable backend for them (see backends.portable.chosen_backend). `text` is the one
    line, in zh and en (an i18n.Bi)."""

    def __init__(self, text):
        super().__init__(text.en)
        self.text = text


class SessionError(Exception):
    """The tests could not be collected or run: a problem of the grader or of tests/."""


class WorkerFailure(Exception):
    """The submission's code failed in its worker.
    kind: raised | import | crash | timeout | garbled | busy (the machine's fault, not the
    submission's: graded again, else a grading error)."""

    def __init__(self, kind, text, error=None, sticky=False):
        super().__init__(text.en)
        self.text = text  # Bi: what the learner reads
        self.kind = kind
        self.error = error or {}  # {"type", "message", "frames": [[file, line, function, source]]}
        self.sticky = sticky

    def copy(self):
        return WorkerFailure(self.kind, self.text, self.error, self.sticky)

    @property
    def not_implemented(self):
        """A stub's own TODO, not started (not nn.Module's complaint that forward is missing,
        which is a mistake to fix: a misspelt forward)."""
        return self.error.get("type") == "NotImplementedError" \
            and 'the required "forward" function' not in str(self.error.get("message", ""))


class CheckFailed(AssertionError):
    """A check on the submission's outputs failed; `text` (a Bi) is what the learner reads;
    `key` and `facts`, where given, are for the diagnoses (grading.diagnosis.shared)."""

    def __init__(self, text, key=None, **facts):
        super().__init__(text.en)
        self.text, self.key, self.facts = text, key, facts


class GateFailed(CheckFailed):
    """A test's prerequisites (after=…) did not pass: it was not run."""

    def __init__(self, text, todo=False, needs=None):
        super().__init__(text)
        self.todo = todo
        self.needs = needs  # the name (Bi) of the check it waits for


class Mismatch(WorkerFailure):
    """The submission's objects lack the structure the exercise's API fixes; `text` is a Bi,
    `key` and `facts` are for the diagnoses."""

    def __init__(self, text, key=None, **facts):
        super().__init__("raised", text, error={"type": "Mismatch", "message": text.en,
                                                "frames": [], "key": key, **facts})


class LinuxOnlyCall(RuntimeError):
    """A call that exists only on Linux, made by the grader in its portable backend."""


class StepMissing(Exception):
    """In the demo's worker: an exercise the demo uses raised NotImplementedError, a step not
    written yet (its message names the exercise; demo.report reads the type's name)."""


class ProtocolError(Exception):
    """The other side sent something that is not a valid message."""


class PeerClosed(ProtocolError):
    """The other side closed the connection (for a worker: it exited or crashed)."""


class Timeout(Exception):
    """No complete message arrived before the deadline."""


class Busy(Timeout):
    """No message came before the wall clock's backstop, while the worker's own time stayed under
    its limit: the machine was too busy, which is not the learner's fault."""

    def __init__(self, seconds):
        super().__init__(f"the machine kept the worker waiting {seconds:.0f} s")
        self.seconds = seconds


class ReplayError(Exception):
    """The record cannot be verified. `kind`: "random" (it draws random numbers), "outside"
    (values read out of tensors into Python), "operation" (an operation not replayed here),
    "size" (too long or too large), "malformed"; `name` the operation, where one is to blame."""

    def __init__(self, kind, message, name=""):
        super().__init__(message)
        self.kind, self.name = kind, name
