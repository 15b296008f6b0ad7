"""The learner's module as the judge's tests see it: `ex.Head(12, 8, 8)`, `head(x)`, each a request.

A test's scenario is written once, as the lesson would write it, and runs in the judge twice: on
the submission, through a WorkerChannel (every call goes to the worker), and on the solution,
through a LocalChannel (the same requests, answered in the judge's own process). Only primitive
requests cross (grading.worker.executor.Executor); every conclusion is drawn here, from returned values.
"""
from grading.errors import WorkerFailure
from grading.i18n import Bi
from grading.wire import protocol
from grading.wire.ops import Op
from grading.worker.executor import Executor


class WorkerChannel:
    """Requests to the worker of one exercise (grading.judge.worker_handle.ExerciseWorker)."""

    trusted = False

    def __init__(self, worker):
        self.worker = worker

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


class LocalChannel:
    """The same requests, answered in this process: for the solution."""

    generation = 0
    trusted = True  # the solution's own answers: nothing of them needs verifying

    def __init__(self, module):
        self.executor = Executor(module)

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


class Module:
    """An exercise module: any public attribute is a function or class of the learner's."""

    def __init__(self, channel):
        self._channel = channel

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)
        return Remote(self._channel, {"name": name})


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
        value = self._request(Op.CALL, target=self._target, args=arguments(args), kwargs=kwargs)
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

    def call_inputs(self, *args):
        """(what the call returned, [each tensor argument as the call left it, None for the
        others]): see grading.worker.executor.Executor.call_inputs."""
        reply = self._request(Op.CALL_INPUTS, target=self._target, args=arguments(args),
                              kwargs={})
        return self._wrap(reply["output"]), reply["args"]

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
        return self._request(Op.SET, handle=self._target["handle"], path=path, value=tensor)

    def inspect(self, path):
        return self._request(Op.INSPECT, handle=self._target["handle"], path=path)

    def parameters(self):
        """[[name, shape, requires_grad], …] of the object's named_parameters()."""
        return self._request(Op.PARAMETERS, handle=self._target["handle"])

    def vjp(self, args, wrt, grad_output, parameters=()):
        """{"output", "input_grads", "parameter_grads"}: see grading.worker.executor.Executor.vjp;
        `parameters` are attribute paths ("query.weight"), the gradients come back by path."""
        return self._request(Op.VJP, target=self._target, args=arguments(args), wrt=list(wrt),
                             grad_output=grad_output, parameters=list(parameters))

    def trace(self, *args, params=()):
        """The record of one call's operations: see grading.worker.executor.Executor.trace and
        grading.judge.replay. `params`: attribute paths of the object's tensors the judge knows."""
        return self._request(Op.TRACE, target=self._target, args=arguments(args),
                             params=list(params))

    def __repr__(self):
        return f"<{self.type_name or self._target.get('name')} of the learner's>"


def arguments(args):
    return [protocol.Handle(a._target["handle"], a.type_name or "") if isinstance(a, Remote)
            else a for a in args]
