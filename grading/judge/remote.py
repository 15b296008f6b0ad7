"""The learner's module as the judge's tests see it: `ex.Head(12, 8, 8)`, `head(x)`, each a request.

A test's scenario is written once, as the lesson would write it, and runs in the judge twice: on
the submission, through a WorkerChannel (every call goes to the worker), and on the solution,
through a LocalChannel (the same requests, answered in the judge's own process). Only primitive
requests cross (grading.worker.executor.Executor); every conclusion is drawn here, from returned values.
"""
import time
from dataclasses import dataclass, field

import torch

from grading.errors import WorkerFailure
from grading.i18n import Bi
from grading.wire import protocol
from grading.wire.ops import Op
from grading.worker.executor import Executor


@dataclass
class Call:
    """One call of the learner's code as the judge holds it, for the how-checks
    (grading.checks.shown_work) and the record diff: its record, the judge's own copies of the
    arguments, and the weights the judge set on the object, by their paths (every other tensor
    of the object comes in the record, by value)."""
    shown: object  # the record as it came: its operations packed (grading.wire.protocol.Packed)
    args: list
    output: object
    tensors: dict = field(default_factory=dict)
    key: tuple = ()
    budget: object = None  # the exercise's judge-time budget for replays (worker_handle)
    _record: object = None

    @property
    def record(self):
        """The record, its operations decoded (on first use: most calls' are never read); the
        decoding's CPU time is charged to the exercise's replay budget, as the replay's is."""
        if self._record is None:
            record = self.shown
            if isinstance(record, dict) and isinstance(record.get("ops"), protocol.Packed):
                started = time.thread_time()
                record = {**record, "ops": record["ops"].value}
                if self.budget is not None:
                    self.budget.spend(started)
            self._record = record
        return self._record


class Channel:
    """Where a scenario's requests go. An untrusted channel (the learner's) keeps the weights the
    judge set on each object, which its calls' records refer to."""

    trusted = False
    generation = 0
    worker = None

    seed = 0

    def __init__(self):
        self.weights = {}  # handle -> {path: the tensor the judge set there}
        self.calls = 0

    def call_seed(self):
        """torch's seed for the next call (Executor.call): each call's random numbers (a dropout
        left on, a layer made in forward) are a function of the scenario's seed and the call's
        number, not of what ran before in the worker: alike in both backends, in any order."""
        self.calls += 1
        return (self.seed * 1_000_003 + self.calls) % (1 << 62)

    def elsewhere(self):
        """The channel to the exercise's second worker: the solution's is itself."""
        return self

    def set_weight(self, handle, path, tensor):
        self.weights.setdefault(handle, {})[path] = tensor.detach().clone()

    def call_of(self, target, args, reply):
        """The Call of a reply {"output", "record"} to a call on `args` (the judge's)."""
        handle = target.get("handle")
        return Call(shown=reply.get("record"), output=reply.get("output"),
                    args=[a.clone() if isinstance(a, torch.Tensor) else a for a in args],
                    tensors=dict(self.weights.get(handle, {})) if handle is not None else {},
                    budget=getattr(self.worker, "replay_budget", None))


class WorkerChannel(Channel):
    """Requests to the worker of one exercise (grading.judge.worker_handle.ExerciseWorker)."""

    def __init__(self, worker, elsewhere=None, seed=0):
        super().__init__()
        self.worker = worker
        self._elsewhere = elsewhere  # () -> the exercise's second worker (Module.elsewhere)
        self.seed = seed

    def elsewhere(self):
        return WorkerChannel(self._elsewhere(), seed=self.seed + 1) if self._elsewhere else self

    @property
    def generation(self):
        return self.worker.generation

    def request(self, message, generation=None):
        if generation is not None and generation != self.worker.generation:
            raise WorkerFailure("crash", Bi(
                "运行你的代码的进程已经结束了（见上一个检查），它持有的对象也随之消失",
                "the process running your code had ended (see the check before), and the "
                "objects it held with it"))
        return self.worker.request(message)


# A call of the learner's runs as in training and as in evaluation, and the two must agree.
MODES_DIFFER = Bi(
    "同一次调用，开着 autograd（像训练时）和在 torch.no_grad() 之下（像评估、生成时）给出了不同的值："
    "代码里有什么取决于 torch.is_grad_enabled()、x.requires_grad 或 x.grad_fn，或者读了没有初始化的内存"
    "（torch.empty）。两种情况下都要算出同样的结果",
    "the same call gave other values with autograd on (as in training) than under "
    "torch.no_grad() (as in evaluation and generation): something in the code depends on "
    "torch.is_grad_enabled(), x.requires_grad or x.grad_fn, or reads memory never written "
    "(torch.empty). The result must be the same in both")


class LocalChannel(Channel):
    """The same requests, answered in this process: for the solution, whose own answers need no
    verifying (trusted). trusted=False: code of the self-test's, answered here and verified as a
    worker's answers are (with the records the Executor makes)."""

    def __init__(self, module, trusted=True):
        super().__init__()
        self.trusted = trusted
        self.executor = Executor(module, records=not trusted)

    def request(self, message, generation=None):
        # Through the wire format, so that values come back exactly as a worker's would; an
        # exception of the solution's is reported the same way as a learner's.
        try:
            value = self.executor.run(message)
        except Exception as error:  # noqa: BLE001
            raise WorkerFailure("raised", Bi(str(error) or type(error).__name__,
                                             str(error) or type(error).__name__),
                                error={"type": type(error).__name__, "message": str(error),
                                       "frames": []}) from error
        return protocol.from_wire(protocol.to_wire(value))


class Inputs(list):
    """A call's tensor arguments as it left them; `written`: for each, whether an in-place
    operation wrote into it (its version counter moved), or None where unknown."""

    def __init__(self, args, written=None):
        super().__init__(args)
        self.written = [w is True for w in written] if written is not None else None


class Module:
    """An exercise module: any public attribute is a function or class of the learner's."""

    def __init__(self, channel):
        self._channel = channel

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)
        return Remote(self._channel, {"name": name})

    def elsewhere(self):
        """The same exercise module in a second worker, a process of its own: a call made again
        there shows whether its output depends on earlier calls. This very module where there is
        no second worker (the solution's; the portable backend's, where a new object at least
        holds no memory of the earlier calls). Objects are built alike in every worker
        (grading.worker.executor: CONSTRUCTED_SEED), a random initialisation included."""
        channel = self._channel.elsewhere()
        return self if channel is self._channel else Module(channel)


class Remote:
    """A function or class of the module, an object made by one, or a method of such an object."""

    def __init__(self, channel, target, type_name=None):
        self._channel, self._target, self.type_name = channel, target, type_name
        self._generation = channel.generation

    def _request(self, op, **fields):
        return self._channel.request({"op": op, **fields}, self._generation
                                     if "handle" in self._target else None)

    def _wrap(self, value):
        if isinstance(value, protocol.Handle):
            return Remote(self._channel, {"handle": value.number}, value.type_name)
        return value

    def __call__(self, *args, **kwargs):
        value = self._call(args, kwargs)[0]["output"]
        name = self._target.get("name", "")
        if name[:1].isupper() and "method" not in self._target \
                and not isinstance(value, protocol.Handle):  # a class of the exercise's API
            shown = type(value).__name__ if not isinstance(value, protocol.NotATensor) \
                else value.type_name
            raise WorkerFailure("raised", Bi(
                f"{name}(…) 应当建出一个对象（一个 nn.Module），实际得到的是 {shown}：{name} 要写成一个类",
                f"{name}(…) should build an object (an nn.Module), but it gave a {shown}: "
                f"{name} is a class"), error={"type": "NotAModule", "message": shown,
                                             "frames": []})
        return self._wrap(value)

    def _call(self, args, kwargs):
        """(the reply: {"output", "record", "args"}, the call's Call: None for the solution's,
        whose record no check reads)."""
        fields = {}
        if not self._channel.trusted:
            fields["seed"] = self._channel.call_seed()
        reply = self._request(Op.CALL, target=self._target, args=arguments(args), kwargs=kwargs,
                              **fields)
        if reply.get("modes_differ") is True:  # grading.worker.executor.Executor.call
            raise WorkerFailure("raised", MODES_DIFFER, error={
                "type": "ModesDiffer", "message": MODES_DIFFER.en, "frames": []})
        made = "name" in self._target and self._target["name"][:1].isupper() \
            and "method" not in self._target  # a class of the exercise's API: a constructor
        call = None if self._channel.trusted or made \
            else self._channel.call_of(self._target, args, reply)
        return reply, call

    def shown(self, *args):
        """(what the call returned, its Call, to verify: see grading.checks.shown_work)."""
        reply, call = self._call(args, {})
        return self._wrap(reply["output"]), call

    def call_inputs(self, *args):
        """(what the call returned, Inputs: each tensor argument as the call left it, None for
        the others, and whether an in-place operation wrote into it): every call sends them back
        (grading.worker.executor.Executor.call), so a call for the inputs check is like any
        other."""
        reply, _ = self._call(args, {})
        written = reply.get("written")
        after = reply["args"]
        return self._wrap(reply["output"]), Inputs(after, written if isinstance(written, list)
                                                   and len(written) == len(after) else None)

    @property
    def trusted(self):
        """True for the solution's objects (a LocalChannel): their answers are not verified."""
        return self._channel.trusted

    def method(self, name):
        return Remote(self._channel, {**self._target, "method": name}, self.type_name)

    def eval(self):
        self.method("eval")()
        return self

    def set(self, path, tensor):
        """Copy tensor into the object's tensor at the dotted path, when it has that shape;
        returns what is there: {"type", "shape", "requires_grad"} or {"missing": name}."""
        found = self._request(Op.SET, handle=self._target["handle"], path=path, value=tensor)
        if not self._channel.trusted and found.get("shape") == list(tensor.shape):
            self._channel.set_weight(self._target["handle"], path, tensor)
        return found

    def inspect(self, path):
        return self._request(Op.INSPECT, handle=self._target["handle"], path=path)

    def parameters(self):
        """[[name, shape, requires_grad], …] of the object's named_parameters()."""
        return self._request(Op.PARAMETERS, handle=self._target["handle"])

    def vjp(self, args, wrt, grad_output, parameters=()):
        """{"output", "input_grads", "parameter_grads"}: see grading.worker.executor.Executor.vjp.
        Values like any output, checked by the tests against the reference's and against finite
        differences of forward calls."""
        return self._request(Op.VJP, target=self._target, args=arguments(args), wrt=list(wrt),
                             grad_output=grad_output, parameters=list(parameters))

    def __repr__(self):
        return f"<{self.type_name or self._target.get('name')} of the learner's>"


def arguments(args):
    return [protocol.Handle(a._target["handle"], a.type_name or "") if isinstance(a, Remote)
            else a for a in args]
