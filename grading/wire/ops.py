"""The requests that cross the wire, as one enum, with the shape of each reply the judge accepts.

Three conversations use the wire (grading/wire/protocol.py frames them):
- the judge and a worker, one exercise module (worker.executor.Executor answers EXECUTOR's ops;
  DEMO trains the learner's head, RELEASE ends a lent portable worker's exercise);
- the portable backend and its worker process (LOAD: the next exercise's folder);
- the judge and the zygote, on a control socket (SPAWN a worker, REAP one, SWEEP them all,
  CONNECT: a new control socket, for a second judge that shares the work: judge/split.py).
A worker is the learner's process: the judge checks every reply to an executor op against
`reply_problem` before a test reads it, and the tests read replies as the Executor makes them.
"""
from enum import Enum

# The type of a worker's first message's error when a wall of the Linux backend could not be put
# up (grading.walls.kernel.walls_not_up): sent before anything of the learner's is imported.
WALLS_NOT_UP = "WallsNotUp"


class Op(str, Enum):
    CALL = "call"  # construct an object, or call a function or method: its output, its record,
    # and its tensor arguments as the call left them
    SET = "set"  # set a named tensor of an object (a layer's weight) to the judge's
    INSPECT = "inspect"  # what an attribute path of an object holds: its type, shape, grad
    PARAMETERS = "parameters"  # every parameter of an object: [path, shape, requires_grad]
    VJP = "vjp"  # a call's output and the gradients a loss sends back through it
    DEMO = "demo"  # train the demo's tiny model with the learner's head (not grading)
    RELEASE = "release"  # the portable worker's exercise is over; it may take the next
    LOAD = "load"  # the portable worker: import this folder's exercise module
    SPAWN = "spawn"  # the zygote: fork a worker for a folder and a module
    REAP = "reap"  # the zygote: kill and reap a worker
    SWEEP = "sweep"  # the zygote: kill every worker (a judge forked from it is done)
    CONNECT = "connect"  # the zygote: a control connection for a judge a judge forks

    def __str__(self):
        return self.value


EXECUTOR = frozenset({Op.CALL, Op.SET, Op.INSPECT, Op.PARAMETERS, Op.VJP})
# The variable in which a judge forked from its zygote finds its control connections:
# "ZYGOTE_PID:FD,FD,…:LOG_PATH" (worker/handover.py's _become_caller sets it, backends.zygote.inherited
# reads it and takes it away).
JUDGE_CONNECTIONS = "GRADER_ZYGOTE_CONNECTIONS"


def _is_shape(value):
    return isinstance(value, list) and all(type(n) is int for n in value)


def reply_problem(op, value, sent=None):
    """What is wrong with a worker's reply to `op` (an Executor's reply), or "". `sent`: the
    number of arguments the request sent (a CALL reply gives each one back)."""
    if op in (Op.SET, Op.INSPECT):
        ok = isinstance(value, dict) and set(value) <= {"type", "shape", "requires_grad",
                                                        "missing"} \
            and all(isinstance(value.get(k, ""), str) for k in ("type", "missing")) \
            and _is_shape(value.get("shape", [])) \
            and isinstance(value.get("requires_grad", False), bool)
    elif op == Op.PARAMETERS:
        ok = isinstance(value, list) and all(
            isinstance(p, list) and len(p) == 3 and isinstance(p[0], str) and _is_shape(p[1])
            and isinstance(p[2], bool) for p in value)
    elif op == Op.VJP:
        ok = isinstance(value, dict) and set(value) == {"output", "input_grads",
                                                        "parameter_grads"} \
            and isinstance(value["input_grads"], (list, type(None))) \
            and isinstance(value["parameter_grads"], (dict, type(None)))
    elif op == Op.CALL:  # the output is whatever the learner's code returns; the record is
        # checked by grading.judge.replay, which trusts none of it
        import torch  # here only: the worker side's wire is imported before torch
        ok = isinstance(value, dict) \
            and set(value) == {"output", "record", "args", "written", "modes_differ"} \
            and isinstance(value["record"], (dict, type(None))) \
            and type(value["modes_differ"]) is bool \
            and isinstance(value["args"], list) \
            and (sent is None or len(value["args"]) == sent) \
            and all(a is None or type(a) is torch.Tensor for a in value["args"]) \
            and isinstance(value["written"], list) and len(value["written"]) == len(value["args"]) \
            and all(type(w) is bool for w in value["written"])
    else:
        ok = True
    return "" if ok else f"a malformed reply to {str(op)!r}"
