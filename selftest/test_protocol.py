"""What crosses from a worker to the judge is decoded strictly: plain tensors and plain values,
nothing unpickled, nothing of the wrong size."""
import base64
import socket

import pytest
import torch

from grading import protocol


def roundtrip(value):
    return protocol.from_wire(protocol.to_wire(value))


def test_tensors_numbers_and_containers_roundtrip():
    value = {"x": torch.randn(2, 3), "ids": torch.arange(4), "pair": (1.5, "text"),
             "list": [None, True, float("inf")], "empty": torch.empty(0, 3)}
    back = roundtrip(value)
    assert torch.equal(back["x"], value["x"]) and back["x"].dtype == torch.float32
    assert torch.equal(back["ids"], value["ids"]) and back["empty"].shape == (0, 3)
    assert back["pair"] == (1.5, "text") and back["list"] == [None, True, float("inf")]
    assert type(back["x"]) is torch.Tensor


def test_a_tensor_subclass_or_other_object_comes_back_as_not_a_tensor():
    class Sneaky(torch.Tensor):
        pass

    sneaky = torch.zeros(2).as_subclass(Sneaky)
    for value, name in ((sneaky, "Sneaky"), (object(), "object")):
        back = roundtrip(value)
        assert isinstance(back, protocol.NotATensor) and name in back.type_name


@pytest.mark.parametrize("wire", [
    {"__tensor__": "float32", "shape": [3], "data": base64.b64encode(b"\0" * 8).decode()},
    {"__tensor__": "object", "shape": [1], "data": ""},
    {"__tensor__": "float32", "shape": [-1], "data": ""},
    {"__pickle__": "gASVAAAAAAAAAAA="},
    {},
])
def test_malformed_values_are_refused(wire):
    with pytest.raises(protocol.ProtocolError):
        protocol.from_wire(wire)


def test_oversized_and_truncated_messages_are_refused():
    a, b = socket.socketpair()
    a.sendall((protocol.MAX_MESSAGE + 1).to_bytes(8, "big"))
    with pytest.raises(protocol.ProtocolError):
        protocol.recv(b, timeout=1)
    a.sendall((10).to_bytes(8, "big") + b"{}")
    a.close()
    with pytest.raises(protocol.PeerClosed):
        protocol.recv(b, timeout=1)
