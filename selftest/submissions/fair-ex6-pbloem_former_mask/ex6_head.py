"""Real code, fair: Peter Bloem's "transformers from scratch" SelfAttention with mask_().

Modelled on pbloem/former, former/modules.py (class SelfAttention: tokeys/toqueries/tovalues
Linears without bias; queries and keys each divided by e ** (1/4) before the product; dot =
torch.bmm(queries, keys.transpose(1, 2)); if self.mask: mask_(dot, maskval=float('-inf'),
mask_diagonal=False); dot = F.softmax(dot, dim=2); out = torch.bmm(dot, values)) and
former/util/util.py (def mask_: indices = torch.triu_indices(h, w, offset=0 if mask_diagonal
else 1); matrices[:, indices[0], indices[1]] = maskval, in place), MIT. Re-typed, logic kept.

Adapter: heads=1 (so no head reshaping), the layers also under the API's names, no unifyheads
output layer; e is the head size. Scaling split across q and k (e^¼ each). Right: 25/25 expected.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F


def mask_(matrices, maskval=0.0, mask_diagonal=True):
    """
    Masks out all values in the given batch of matrices where i <= j holds,
    i < j if mask_diagonal is false. In place operation.
    """
    _b, h, w = matrices.size()
    indices = torch.triu_indices(h, w, offset=0 if mask_diagonal else 1)
    matrices[:, indices[0], indices[1]] = maskval


class SelfAttention(nn.Module):

    def __init__(self, emb, e, mask=False):
        super().__init__()
        self.emb = emb
        self.mask = mask
        self.tokeys = nn.Linear(emb, e, bias=False)
        self.toqueries = nn.Linear(emb, e, bias=False)
        self.tovalues = nn.Linear(emb, e, bias=False)

    def forward(self, x):
        b, t, emb = x.size()
        keys = self.tokeys(x)
        queries = self.toqueries(x)
        values = self.tovalues(x)
        e = keys.size(-1)
        # scale the queries and keys (instead of the dot product) to save memory
        queries = queries / (e ** (1 / 4))
        keys = keys / (e ** (1 / 4))
        dot = torch.bmm(queries, keys.transpose(1, 2))
        assert dot.size() == (b, t, t)
        if self.mask:  # mask out the upper half of the dot matrix, excluding the diagonal
            mask_(dot, maskval=float('-inf'), mask_diagonal=False)
        dot = F.softmax(dot, dim=2)
        return torch.bmm(dot, values)


class Head(SelfAttention):
    def __init__(self, n_embd, head_size, block_size):
        super().__init__(n_embd, head_size, mask=True)
        self.query, self.key, self.value = self.toqueries, self.tokeys, self.tovalues
