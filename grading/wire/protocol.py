"""What crosses between the judge and a worker: length-prefixed JSON, tensors as raw bytes.

Nothing is ever unpickled. A worker runs the learner's code, so everything it sends is untrusted:
`reply()` accepts only the reply shapes the worker is meant to send, `from_wire` decodes only
None, bool, int, float, str, lists, string-keyed dicts, handles and plain tensors of an allowed
dtype, within limits of size and nesting; anything else raises ProtocolError. Learner text (printed
output, exception messages, file names, source lines) is made inert on arrival.
"""
import base64
import json
import math
import select
import socket
import struct
import time

import torch

from grading.errors import PeerClosed, ProtocolError, Timeout
from grading.inert import inert, is_inert

MAX_MESSAGE = 16 * 1024 * 1024  # bytes; a (B, T, T) of float32 for any test shape is far below this
MAX_DEPTH = 12  # nesting of a decoded value: the exercises return at most a tuple of tensors
MAX_DIMS = 8
MAX_TEXT = 20_000  # characters of one string from a worker
MAX_ITEMS = 10_000  # entries of one list or dict from a worker
MAX_VALUES = 200_000  # values in one message: decoding each costs the judge's time, not the worker's
MAX_PACKED_TEXT = 4 << 20  # characters of a packed value (a record: its constants by value, the
# largest 1 << 18 entries in all, are about 1.4 MB of text; a head's operations a few kB)
MAX_FRAMES = 20
_HEADER = struct.Struct("!Q")
_DTYPES = {
    str(dtype).removeprefix("torch."): dtype
    for dtype in (torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.int64,
                  torch.int32, torch.int16, torch.int8, torch.uint8, torch.bool,
                  torch.complex64, torch.complex128)
}


class NotATensor:
    """Stands in, on the judge's side, for a value that should have been a torch.Tensor."""

    def __init__(self, type_name):
        self.type_name = type_name

    def __repr__(self):
        return f"<{self.type_name}, not a torch.Tensor>"


class Packed:
    """A value that crosses as JSON text inside a message, decoded only when the judge reads it
    (`.value`): a call's recorded operations, which most checks never read. It is plain JSON —
    None, bool, numbers, text, lists, string-keyed objects — and tensors (tuples arrive as
    lists), encoded by json's own encoder, at C speed. Text that does not decode to such a value,
    within the limits of one message, reads as None (a record that is not one)."""

    def __init__(self, value=None, text=None):
        self._value, self.text = value, text

    @property
    def value(self):
        if self.text is not None and len(self.text) > MAX_PACKED_TEXT:
            self._value, self.text = None, None  # refused unread: decoding it would cost more
        if self.text is not None:
            try:
                if "\\" in self.text or not is_inert(self.text):  # text to make inert
                    self._value = _unpacked(json.loads(self.text), 0, [MAX_VALUES], {})
                else:  # all of it inert already: json's own decoder is the whole walk,
                    # its objects counted (a record's references are objects: MAX_VALUES)
                    self._value = json.loads(self.text, object_hook=_counted([MAX_VALUES]))
            except (ValueError, RecursionError, ProtocolError):
                self._value = None
            self.text = None
        return self._value

    def encoded(self):
        return json.dumps(self._value, ensure_ascii=False, default=_packed_tensor,
                          check_circular=False) if self.text is None else self.text

    def __repr__(self):
        return "<packed>"


def _packed_tensor(value):
    if type(value) in (torch.Tensor, torch.nn.Parameter):
        return to_wire(value)
    raise TypeError(f"{type(value).__name__} in a packed value")


def _counted(budget):
    """json's object_hook for Packed.value: tensors decoded, at most budget[0] objects."""
    def hook(value):
        budget[0] -= 1
        if budget[0] < 0:
            raise ProtocolError("a packed value too large")
        return _tensor(value) if "__tensor__" in value else value
    return hook


def _unpacked(value, depth, budget, texts):
    """Packed.value's strict decoding; `texts`: the strings decoded so far (a record repeats its
    operators' names)."""
    budget[0] -= 1
    if budget[0] < 0 or depth > MAX_DEPTH:
        raise ProtocolError("a packed value too large or nested too deeply")
    kind = type(value)
    if value is None or kind is bool or kind is int or kind is float:
        return value
    if kind is str:
        found = texts.get(value)
        if found is None:
            found = texts[value] = _text(value)
        return found
    if kind is list:
        return [_unpacked(v, depth + 1, budget, texts) for v in _items(value)]
    if kind is dict:
        if "__tensor__" in value:
            return _tensor(value)
        return {_unpacked(k, depth, budget, texts): _unpacked(v, depth + 1, budget, texts)
                for k, v in _items(value).items()}
    raise ProtocolError("unexpected value in a packed value")


class Handle:
    """An object that lives in the worker (an instance of the learner's class), by number."""

    def __init__(self, number, type_name):
        self.number, self.type_name = number, type_name

    def __repr__(self):
        return f"<{self.type_name} #{self.number} in the worker>"


# -- encoding (either side) -----------------------------------------------------------------------

def to_wire(value):
    """A JSON-ready structure. Tensors must be exactly torch.Tensor (or nn.Parameter)."""
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else {"__float__": repr(value)}
    if type(value) in (torch.Tensor, torch.nn.Parameter):
        t = value.detach().to("cpu").contiguous()
        raw = t.reshape(-1).view(torch.uint8).numpy().tobytes() if t.numel() else b""
        return {"__tensor__": str(t.dtype).removeprefix("torch."), "shape": list(t.shape),
                "data": base64.b64encode(raw).decode("ascii")}
    if isinstance(value, Handle):
        return {"__handle__": value.number, "type": value.type_name}
    if isinstance(value, Packed):
        return {"__packed__": value.encoded()}
    if isinstance(value, (list, tuple)):
        return {"__tuple__": [to_wire(v) for v in value]} if isinstance(value, tuple) \
            else [to_wire(v) for v in value]
    if isinstance(value, dict):
        return {"__dict__": {str(k): to_wire(v) for k, v in value.items()}}
    kind = type(value)
    return {"__not_a_tensor__": f"{kind.__module__}.{kind.__qualname__}"}


def from_wire(value, depth=0, budget=None):
    """Inverse of to_wire, strict: anything unexpected raises ProtocolError. `budget`: the values
    this message may still hold (MAX_VALUES in all)."""
    budget = [MAX_VALUES] if budget is None else budget
    budget[0] -= 1
    if budget[0] < 0:
        raise ProtocolError(f"more than {MAX_VALUES} values in one message")
    if depth > MAX_DEPTH:
        raise ProtocolError("a value nested too deeply")
    if value is None or isinstance(value, (bool, int, float)):
        return value
    if isinstance(value, str):
        return _text(value)
    if isinstance(value, list):
        return [from_wire(v, depth + 1, budget) for v in _items(value)]
    if not isinstance(value, dict) or len(value) == 0:
        raise ProtocolError(f"unexpected value of type {type(value).__name__}")
    if "__tensor__" in value:
        return _tensor(value)
    if "__tuple__" in value and isinstance(value["__tuple__"], list):
        return tuple(from_wire(v, depth + 1, budget) for v in _items(value["__tuple__"]))
    if "__dict__" in value and isinstance(value["__dict__"], dict):
        return {_text(k): from_wire(v, depth + 1, budget)
                for k, v in _items(value["__dict__"]).items()}
    if "__packed__" in value and isinstance(value["__packed__"], str):
        return Packed(text=value["__packed__"])  # bounded by the message's size
    if "__float__" in value and value["__float__"] in ("inf", "-inf", "nan"):
        return float(value["__float__"])
    if "__not_a_tensor__" in value and isinstance(value["__not_a_tensor__"], str):
        return NotATensor(_text(value["__not_a_tensor__"])[:200])
    if "__handle__" in value and type(value["__handle__"]) is int \
            and isinstance(value.get("type"), str):
        return Handle(value["__handle__"], _text(value["type"])[:200])
    raise ProtocolError("unknown value tag")


def _tensor(value):
    dtype = _DTYPES.get(value["__tensor__"]) if isinstance(value["__tensor__"], str) else None
    shape, data = value.get("shape"), value.get("data", "")
    if dtype is None or not isinstance(shape, list) or len(shape) > MAX_DIMS or not all(
            type(n) is int and 0 <= n <= MAX_MESSAGE for n in shape) or not isinstance(data, str):
        raise ProtocolError("malformed tensor")
    count = math.prod(shape)
    itemsize = torch.empty((), dtype=dtype).element_size()
    if count * itemsize > MAX_MESSAGE:
        raise ProtocolError("tensor larger than a message")
    try:
        raw = base64.b64decode(data, validate=True)
    except ValueError:
        raise ProtocolError("malformed tensor data") from None
    if len(raw) != count * itemsize:
        raise ProtocolError("tensor size does not match its shape")
    if count == 0:
        return torch.empty(shape, dtype=dtype)
    return torch.frombuffer(bytearray(raw), dtype=torch.uint8).view(dtype).reshape(shape)


def _items(collection):
    if len(collection) > MAX_ITEMS:
        raise ProtocolError("a list or dict with too many entries")
    return collection


def _text(value, limit=MAX_TEXT):
    if not isinstance(value, str):
        raise ProtocolError("expected text")
    return inert(value[:limit])


# -- the shapes of a worker's replies -------------------------------------------------------------

def reply(message):
    """A worker's reply to a request, checked: ("ok", value, output) or ("error", error, output),
    where error = {"type", "message", "frames": [[file, line, function, source], …]}. Its "cpu",
    the seconds of CPU time the worker says the request took, is the Meter's (worker_handle)."""
    output = _text(message.get("output", ""))
    if message.keys() - {"ok", "result", "error", "output", "cpu"} \
            or type(message.get("ok")) is not bool:
        raise ProtocolError("a reply of an unknown shape")
    if message["ok"]:
        if "error" in message:
            raise ProtocolError("a reply of an unknown shape")
        return "ok", from_wire(message.get("result")), output
    return "error", error(message.get("error")), output


def ready(message):
    """The worker's first message: ("ready", walls, output) or ("error", error, output)."""
    output = _text(message.get("output", ""))
    if message.keys() - {"ready", "error", "output", "walls"} \
            or type(message.get("ready")) is not bool:
        raise ProtocolError("a first message of an unknown shape")
    if message["ready"]:
        walls = message.get("walls", {})
        if not isinstance(walls, dict) or len(walls) > 20:
            raise ProtocolError("malformed walls")
        return "ready", {_text(k, 100): _text(str(v), 100) for k, v in walls.items()}, output
    return "error", error(message.get("error")), output


def error(value):
    """An exception the learner's code raised, as data; strictly typed."""
    if not isinstance(value, dict) or value.keys() - {"type", "message", "frames"}:
        raise ProtocolError("a malformed error")
    frames = value.get("frames", [])
    if not isinstance(frames, list) or len(frames) > MAX_FRAMES:
        raise ProtocolError("malformed traceback frames")
    checked = []
    for frame in frames:
        if not (isinstance(frame, list) and len(frame) == 4 and isinstance(frame[0], str)
                and type(frame[1]) is int and isinstance(frame[2], str)
                and isinstance(frame[3], str)):
            raise ProtocolError("malformed traceback frames")
        checked.append([_text(frame[0], 200).replace("\n", " "), max(0, frame[1]),
                        _text(frame[2], 200).replace("\n", " "),
                        _text(frame[3], 500).replace("\n", " ")])
    return {"type": _text(value.get("type", "Exception"), 100).replace("\n", " "),
            "message": _text(value.get("message", ""), 2000), "frames": checked}


# -- framing over a connected socket --------------------------------------------------------------

def send(sock, message):
    """Send one JSON message (a dict of plain values)."""
    payload = json.dumps(message, ensure_ascii=False, allow_nan=False).encode("utf-8")
    sock.sendall(_HEADER.pack(len(payload)) + payload)


def recv(sock, timeout=None, wait=None):
    """Receive one message. `wait(sock)` blocks until sock is readable and raises Timeout when the
    sender has taken too long; by default, Timeout after `timeout` seconds (None: never).
    PeerClosed at end of stream."""
    if wait is None:
        deadline = None if timeout is None else time.monotonic() + timeout
        wait = (lambda s: None) if deadline is None else (lambda s: _wait_until(s, deadline))
    (size,) = _HEADER.unpack(_read_exactly(sock, _HEADER.size, wait))
    if size > MAX_MESSAGE:
        raise ProtocolError(f"message of {size} bytes is larger than the {MAX_MESSAGE} allowed")
    try:
        message = json.loads(_read_exactly(sock, size, wait).decode("utf-8"))
    except (ValueError, RecursionError) as error:
        raise ProtocolError(f"not JSON: {str(error)[:100]}") from None
    if not isinstance(message, dict):
        raise ProtocolError("a message must be a JSON object")
    return message


def _wait_until(sock, deadline):
    left = deadline - time.monotonic()
    if left <= 0 or not select.select([sock], [], [], left)[0]:
        raise Timeout()


_NOW = getattr(socket, "MSG_DONTWAIT", 0)  # read what is there without blocking (not Windows)


def _read_exactly(sock, size, wait):
    chunks, remaining = [], size
    while remaining:
        try:  # most replies are there already: no need to ask select first
            chunk = sock.recv(min(remaining, 1 << 20), _NOW) if _NOW else None
        except BlockingIOError:
            chunk = None
        if chunk is None:
            wait(sock)
            chunk = sock.recv(min(remaining, 1 << 20))
        if not chunk:
            raise PeerClosed()
        chunks.append(chunk)
        remaining -= len(chunk)
    return b"".join(chunks)
