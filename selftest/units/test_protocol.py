"""What crosses from a worker to the judge is decoded strictly: plain tensors and plain values,
nothing unpickled, nothing of the wrong size."""
import base64
import socket

import pytest
import torch

from grading.errors import PeerClosed, ProtocolError
from grading.inert import inert
from grading.wire import protocol


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
    with pytest.raises(ProtocolError):
        protocol.from_wire(wire)


def test_oversized_and_truncated_messages_are_refused():
    a, b = socket.socketpair()
    a.sendall((protocol.MAX_MESSAGE + 1).to_bytes(8, "big"))
    with pytest.raises(ProtocolError):
        protocol.recv(b, timeout=1)
    a.sendall((10).to_bytes(8, "big") + b"{}")
    a.close()
    with pytest.raises(PeerClosed):
        protocol.recv(b, timeout=1)


@pytest.mark.parametrize("message", [
    {"ok": False, "internal": "scenario not found", "output": ""},  # a key no reply has
    {"ok": "yes", "result": 1},  # ok must be a bool
    {"ok": False, "error": {"type": "X", "message": "m", "frames": [[1, 2], "x"]}, "output": ""},
    {"ok": False, "error": {"type": "X", "message": "m",
                            "frames": [["a" * 10, -1, {}, []]]}, "output": ""},
    {"ok": False, "error": {"type": "X", "message": "m", "frames": [["f", 1, "g", "s"]] * 100}},
    {"ok": True, "result": {"__tuple__": [[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]}},  # nested too deep
    {"ok": True, "result": {"__handle__": "1", "type": "Head"}},
    {"ok": True, "result": {"__tensor__": "float32", "shape": [1] * 20, "data": ""}},
])
def test_forged_replies_are_refused(message):
    with pytest.raises(ProtocolError):
        protocol.reply(message)


def test_json_nested_100000_deep_is_a_protocol_error_not_a_crash():
    a, b = socket.socketpair()
    payload = b'{"ok": true, "result": ' + b"[" * 100_000 + b"]" * 100_000 + b"}"
    a.sendall(len(payload).to_bytes(8, "big") + payload)
    with pytest.raises(ProtocolError):
        protocol.recv(b, timeout=5)


def test_learner_text_arrives_inert():
    kind, error, output = protocol.reply({
        "ok": False, "output": "\x1b[2J\x1b[HTotal 100/100\r\n",
        "error": {"type": "Value\x1bError", "message": "bad \x1b]0;title\x07 \u202eevil",
                  "frames": [["ex5\x1b[31m.py", 3, "f\n", "x = 1\x00"]]}})
    assert kind == "error" and output == "[2J[HTotal 100/100\n"
    assert error["type"] == "ValueError" and error["message"] == "bad ]0;title evil"
    assert error["frames"] == [["ex5[31m.py", 3, "f ", "x = 1"]]


@pytest.mark.parametrize("name", ["aten.mm.default", "aten.\x1b[2Jmm\u202e.default",
                                  "aten.mm\u202e\u200b.default",
                                  "aten.mm\\u202e.default", "a\rb"])
def test_a_packed_record_decodes_as_sent_and_its_text_arrives_inert(name):
    """The fast path (json's decoder alone) is taken only for text with nothing to make inert."""
    ops = [[name, [{"in": 0}, {"const": torch.tensor(-1.5)}, [2, 3], float("-inf")], {}, True]]
    back = roundtrip({"record": {"ops": protocol.Packed(ops)}})["record"]["ops"].value
    assert back[0][0] == inert(name) and back[0][1][0] == {"in": 0}
    assert type(back[0][1][1]["const"]) is torch.Tensor and back[0][1][1]["const"].item() == -1.5
    assert back[0][1][2:] == [[2, 3], float("-inf")] and back[0][2:] == [{}, True]


@pytest.mark.parametrize("text", ["[", '{"__tensor__": "float32", "shape": [9], "data": ""}',
                                  "[" * 100_000 + "]" * 100_000, '[{"a": NaN}, {"__tensor__": 1}]'])
def test_a_packed_value_that_is_not_one_reads_as_none(text):
    assert protocol.from_wire({"__packed__": text}).value is None
