"""What crosses between the judge and a worker: length-prefixed JSON, tensors as raw bytes.

Nothing is ever unpickled. A worker runs the learner's code, so everything it sends is untrusted:
the judge decodes only None, bool, int, float, str, lists, string-keyed dicts and plain tensors of
an allowed dtype, and refuses messages larger than MAX_MESSAGE.
"""
import base64
import json
import math
import select
import struct
import time

import torch

MAX_MESSAGE = 64 * 1024 * 1024  # bytes; a (B, T, T) of float32 for any test shape is far below this
_HEADER = struct.Struct("!Q")
_DTYPES = {
    str(dtype).removeprefix("torch."): dtype
    for dtype in (torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.int64,
                  torch.int32, torch.int16, torch.int8, torch.uint8, torch.bool,
                  torch.complex64, torch.complex128)
}


class ProtocolError(Exception):
    """The other side sent something that is not a valid message."""


class PeerClosed(ProtocolError):
    """The other side closed the connection (for a worker: it exited or crashed)."""


class Timeout(Exception):
    """No complete message arrived before the deadline."""


class NotATensor:
    """Stands in, on the judge's side, for a value that should have been a torch.Tensor."""

    def __init__(self, type_name):
        self.type_name = type_name

    def __repr__(self):
        return f"<{self.type_name}, not a torch.Tensor>"


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
    if isinstance(value, (list, tuple)):
        return {"__tuple__": [to_wire(v) for v in value]} if isinstance(value, tuple) \
            else [to_wire(v) for v in value]
    if isinstance(value, dict):
        return {"__dict__": {str(k): to_wire(v) for k, v in value.items()}}
    kind = type(value)
    return {"__not_a_tensor__": f"{kind.__module__}.{kind.__qualname__}"}


def from_wire(value):
    """Inverse of to_wire, strict: anything unexpected raises ProtocolError."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, list):
        return [from_wire(v) for v in value]
    if not isinstance(value, dict) or len(value) == 0:
        raise ProtocolError(f"unexpected value of type {type(value).__name__}")
    if "__tensor__" in value:
        dtype = _DTYPES.get(value["__tensor__"])
        shape = value.get("shape")
        if dtype is None or not isinstance(shape, list) or not all(
                isinstance(n, int) and n >= 0 for n in shape):
            raise ProtocolError("malformed tensor")
        raw = base64.b64decode(value.get("data", ""), validate=True)
        count = math.prod(shape)
        itemsize = torch.empty((), dtype=dtype).element_size()
        if len(raw) != count * itemsize:
            raise ProtocolError("tensor size does not match its shape")
        if count == 0:
            return torch.empty(shape, dtype=dtype)
        return torch.frombuffer(bytearray(raw), dtype=torch.uint8).view(dtype).reshape(shape)
    if "__tuple__" in value:
        return tuple(from_wire(v) for v in value["__tuple__"])
    if "__dict__" in value:
        return {str(k): from_wire(v) for k, v in value["__dict__"].items()}
    if "__float__" in value:
        return float(value["__float__"])
    if "__not_a_tensor__" in value:
        return NotATensor(str(value["__not_a_tensor__"]))
    raise ProtocolError("unknown value tag")


# -- framing over a connected socket --------------------------------------------------------------

def send(sock, message):
    """Send one JSON message (a dict of plain values)."""
    payload = json.dumps(message, ensure_ascii=False, allow_nan=False).encode("utf-8")
    sock.sendall(_HEADER.pack(len(payload)) + payload)


def recv(sock, timeout=None):
    """Receive one message; Timeout after `timeout` seconds, PeerClosed at end of stream."""
    deadline = None if timeout is None else time.monotonic() + timeout
    (size,) = _HEADER.unpack(_read_exactly(sock, _HEADER.size, deadline))
    if size > MAX_MESSAGE:
        raise ProtocolError(f"message of {size} bytes is larger than the {MAX_MESSAGE} allowed")
    try:
        message = json.loads(_read_exactly(sock, size, deadline).decode("utf-8"))
    except ValueError as error:
        raise ProtocolError(f"not JSON: {error}") from None
    if not isinstance(message, dict):
        raise ProtocolError("a message must be a JSON object")
    return message


def _read_exactly(sock, size, deadline):
    chunks, remaining = [], size
    while remaining:
        if deadline is not None:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([sock], [], [], left)[0]:
                raise Timeout()
        chunk = sock.recv(min(remaining, 1 << 20))
        if not chunk:
            raise PeerClosed()
        chunks.append(chunk)
        remaining -= len(chunk)
    return b"".join(chunks)
