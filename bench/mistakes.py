#!/usr/bin/env python3
"""Realistic mistakes that the catalogue (selftest/fixtures.py) does not hold, to measure reach.

    python bench/mistakes.py [TREE]            60 wrong answers, each one edit of solutions/
    python bench/mistakes.py [TREE] --crashes  20 that crash

Written for issue 24 before the record diff was built, and kept out of the catalogue: a likely
cause for 10 of the 60 at aa5b2dd, 59 at cfe2c8c; 0 of the 20 crashes at aa5b2dd, 20 at a1c252b.
Whether each cause is right is read by hand (the script prints them). TREE: a checkout of the
grader to measure (default: this one); the mistakes are edits of this checkout's solutions.
"""
# (name, file, old, new): a wrong answer, as one edit of a solution file
M2="    x_averaged = weights @ x  # (T, T) @ (B, T, C) → (B, T, C)"
W2="    weights = tril / tril.sum(dim=1, keepdim=True)  # (T, T)"
T2="    tril = torch.tril(torch.ones(T, T))  # (T, T)"
Q3='        q = self.query(x)  # (B, T, head_size)，每个字"希望获取什么"'
K3='        k = self.key(x)  # (B, T, head_size)，每个字"能够提供什么"'
V3='        v = self.value(x)  # (B, T, head_size)，每个字"实际交付的内容"'
S4="    weights = weights * head_size ** -0.5  # 缩放 / scale"
P4="    weights = q @ k.transpose(-2, -1)  # (B, T, head_size) @ (B, head_size, T) → (B, T, T)"
F5='    weights = scores.masked_fill(tril == 0, float("-inf"))'
X5="    weights = F.softmax(weights, dim=-1)  # (B, T, T)"
F6='        weights = weights.masked_fill(self.tril[:T, :T] == 0, float("-inf"))  # 屏蔽未来'
X6="        weights = F.softmax(weights, dim=-1)  # (B, T, T)，换算成权重"
O6="        out = weights @ v  # (B, T, T) @ (B, T, head_size) → (B, T, head_size)"
S6="        weights = q @ k.transpose(-2, -1) * head_size ** -0.5  # (B, T, T)，计算重要性"
V6="        v = self.value(x)  # (B, T, head_size)"
Q6="        q = self.query(x)  # (B, T, head_size)"
SET = [
 ("ex2_rows_over_T", "ex2_averaging.py", W2, "    weights = tril / T"),
 ("ex2_round", "ex2_averaging.py", M2, "    x_averaged = (weights @ x).round(decimals=3)"),
 ("ex2_residual", "ex2_averaging.py", M2, "    x_averaged = weights @ x + x"),
 ("ex2_strict_past", "ex2_averaging.py", T2, "    tril = torch.tril(torch.ones(T, T), diagonal=-1)"),
 ("ex2_softmax_of_tril", "ex2_averaging.py", W2, "    weights = torch.softmax(tril, dim=1)"),
 ("ex2_off_by_one", "ex2_averaging.py", W2, "    weights = tril / (tril.sum(dim=1, keepdim=True) + 1)"),
 ("ex2_half", "ex2_averaging.py", M2, "    x_averaged = (weights @ x).half()"),
 ("ex2_times_two", "ex2_averaging.py", W2, "    weights = 2 * tril / tril.sum(dim=1, keepdim=True)"),
 ("ex2_relu", "ex2_averaging.py", M2, "    x_averaged = torch.relu(weights @ x)"),
 ("ex2_sum_not_mean", "ex2_averaging.py", W2, "    weights = tril"),
 ("ex3_q_halved", "ex3_qkv.py", Q3, "        q = self.query(x) / 2"),
 ("ex3_v_relu", "ex3_qkv.py", V3, "        v = self.value(x).relu()"),
 ("ex3_k_tanh", "ex3_qkv.py", K3, "        k = self.key(x).tanh()"),
 ("ex3_v_dropout", "ex3_qkv.py", V3, "        v = torch.dropout(self.value(x), 0.1, True)"),
 ("ex3_q_round", "ex3_qkv.py", Q3, "        q = self.query(x).round(decimals=3)"),
 ("ex3_k_detach_x", "ex3_qkv.py", K3, "        k = self.key(x.detach())"),
 ("ex3_v_half", "ex3_qkv.py", V3, "        v = self.value(x).half()"),
 ("ex3_q_plus_x", "ex3_qkv.py", Q3, "        q = self.query(x) + 1"),
 ("ex3_layernorm", "ex3_qkv.py", V3, "        v = nn.functional.layer_norm(self.value(x), (self.value.out_features,))"),
 ("ex3_k_sigmoid", "ex3_qkv.py", K3, "        k = torch.sigmoid(self.key(x))"),
 ("ex4_scale16", "ex4_scaling.py", S4, "    weights = weights * 16 ** -0.5"),
 ("ex4_isqrt", "ex4_scaling.py", S4, '    weights = weights / __import__("math").isqrt(head_size)'),
 ("ex4_round", "ex4_scaling.py", S4, "    weights = (weights * head_size ** -0.5).round(decimals=2)"),
 ("ex4_tanh", "ex4_scaling.py", S4, "    weights = torch.tanh(weights * head_size ** -0.5)"),
 ("ex4_clamp", "ex4_scaling.py", S4, "    weights = (weights * head_size ** -0.5).clamp(-1, 1)"),
 ("ex4_softmax_early", "ex4_scaling.py", S4, "    weights = (weights * head_size ** -0.5).softmax(-1)"),
 ("ex4_half", "ex4_scaling.py", P4, "    weights = (q @ k.transpose(-2, -1)).half().float()"),
 ("ex4_div_by_4", "ex4_scaling.py", S4, "    weights = weights / 4"),
 ("ex4_times_0_1", "ex4_scaling.py", S4, "    weights = weights * 0.1"),
 ("ex4_abs", "ex4_scaling.py", S4, "    weights = (weights * head_size ** -0.5).abs()"),
 ("ex5_fill_m1", "ex5_causal_mask.py", F5, '    weights = scores.masked_fill(tril == 0, -1.0)'),
 ("ex5_fill_pinf", "ex5_causal_mask.py", F5, '    weights = scores.masked_fill(tril == 0, float("inf"))'),
 ("ex5_exp_only", "ex5_causal_mask.py", X5, "    weights = torch.exp(weights)"),
 ("ex5_temperature", "ex5_causal_mask.py", X5, "    weights = F.softmax(weights / 2, dim=-1)"),
 ("ex5_round", "ex5_causal_mask.py", X5, "    weights = F.softmax(weights, dim=-1).round(decimals=3)"),
 ("ex5_dropout", "ex5_causal_mask.py", X5, "    weights = F.dropout(F.softmax(weights, dim=-1), 0.1)"),
 ("ex5_half", "ex5_causal_mask.py", X5, "    weights = F.softmax(weights, dim=-1).half()"),
 ("ex5_no_softmax", "ex5_causal_mask.py", X5, "    pass"),
 ("ex5_sigmoid", "ex5_causal_mask.py", X5, "    weights = torch.sigmoid(weights)"),
 ("ex5_squared", "ex5_causal_mask.py", X5, "    weights = F.softmax(weights, dim=-1) ** 2"),
 ("ex6_fill_m1", "ex6_head.py", F6, "        weights = weights.masked_fill(self.tril[:T, :T] == 0, -1.0)"),
 ("ex6_fill_pinf", "ex6_head.py", F6, '        weights = weights.masked_fill(self.tril[:T, :T] == 0, float("inf"))'),
 ("ex6_no_softmax", "ex6_head.py", X6, "        pass"),
 ("ex6_dropout", "ex6_head.py", O6, "        out = F.dropout(weights, p=0.1) @ v"),
 ("ex6_scale16", "ex6_head.py", S6, "        weights = q @ k.transpose(-2, -1) * 16 ** -0.5"),
 ("ex6_isqrt", "ex6_head.py", S6, '        weights = q @ k.transpose(-2, -1) / __import__("math").isqrt(head_size)'),
 ("ex6_half", "ex6_head.py", O6, "        out = (weights @ v).half().float()"),
 ("ex6_round", "ex6_head.py", O6, "        out = torch.round(weights @ v, decimals=2)"),
 ("ex6_residual", "ex6_head.py", O6, "        out = weights @ v + v"),
 ("ex6_relu", "ex6_head.py", O6, "        out = F.relu(weights @ v)"),
 ("ex6_kview", "ex6_head.py", S6, "        weights = q @ k.reshape(B, head_size, T) * head_size ** -0.5"),
 ("ex6_layernorm", "ex6_head.py", O6, "        out = F.layer_norm(weights @ v, (head_size,))"),
 ("ex6_temperature", "ex6_head.py", X6, "        weights = F.softmax(weights / 2, dim=-1)"),
 ("ex6_v_tanh", "ex6_head.py", V6, "        v = self.value(x).tanh()"),
 ("ex6_q_doubled", "ex6_head.py", Q6, "        q = self.query(x) * 2"),
 ("ex6_clamp", "ex6_head.py", O6, "        out = (weights @ v).clamp(-1, 1)"),
 ("ex6_weights_squared", "ex6_head.py", X6, "        weights = F.softmax(weights, dim=-1) ** 2"),
 ("ex6_sigmoid", "ex6_head.py", X6, "        weights = torch.sigmoid(weights)"),
 ("ex6_exp", "ex6_head.py", X6, "        weights = weights.exp()"),
 ("ex6_no_scale", "ex6_head.py", S6, "        weights = q @ k.transpose(-2, -1) * 0.5"),
]
I6 = "        super().__init__()"
B6 = '        self.register_buffer("tril", torch.tril(torch.ones(block_size, block_size)))'
CRASH = [
 ("c6_k_transpose01", "ex6_head.py", S6, "        weights = q @ k.transpose(0, 1) * head_size ** -0.5"),
 ("c6_x_at_weight", "ex6_head.py", Q6, "        q = x @ self.query.weight"),
 ("c6_float_mask", "ex6_head.py", F6, '        weights = weights.masked_fill(self.tril[:T, :T], float("-inf"))'),
 ("c6_buffer_swapped", "ex6_head.py", B6, '        self.register_buffer(torch.tril(torch.ones(block_size, block_size)), "tril")'),
 ("c6_buffer_dot", "ex6_head.py", B6, '        self.register_buffer("self.tril", torch.tril(torch.ones(block_size, block_size)))'),
 ("c6_no_super", "ex6_head.py", I6, "        pass"),
 ("c6_forward_typo", "ex6_head.py", "    def forward(self, x):", "    def foward(self, x):"),
 ("c6_no_F", "ex6_head.py", "from torch.nn import functional as F", "from torch.nn import functional"),
 ("c6_view_after_t", "ex6_head.py", S6, "        weights = q @ k.transpose(-2, -1).view(B, T, head_size).transpose(-2, -1) * head_size ** -0.5"),
 ("c6_softmax_dim3", "ex6_head.py", X6, "        weights = F.softmax(weights, dim=3)"),
 ("c6_double_mask", "ex6_head.py", F6, '        weights = weights.masked_fill(torch.from_numpy(__import__("numpy").tril(__import__("numpy").ones((T, T)))) == 0, float("-inf")).double()'),
 ("c6_head_size_undefined_T", "ex6_head.py", S6, "        weights = q @ k.transpose(-2, -1) * n_embd ** -0.5"),
 ("c4_k_transpose01", "ex4_scaling.py", P4, "    weights = q @ k.transpose(0, 1)"),
 ("c4_reshape", "ex4_scaling.py", P4, "    weights = q @ k.reshape(q.shape[0], -1, 3)"),
 ("c5_float_mask", "ex5_causal_mask.py", F5, '    weights = scores.masked_fill(tril, float("-inf"))'),
 ("c5_numpy_mask", "ex5_causal_mask.py", F5, '    weights = scores.masked_fill(__import__("numpy").triu(__import__("numpy").ones((T, T), dtype=bool), 1), float("-inf"))'),
 ("c5_softmax_dim3", "ex5_causal_mask.py", X5, "    weights = F.softmax(weights, dim=3)"),
 ("c3_x_at_weight", "ex3_qkv.py", Q3, "        q = x @ self.query.weight"),
 ("c3_no_super", "ex3_qkv.py", "        super().__init__()", "        pass"),
 ("c2_weights_wrong_side", "ex2_averaging.py", M2, "    x_averaged = x @ weights"),
]


def main():
    """Grade every mistake (or, with --crashes, every crash) in TREE by --batch; print each
    row's points and likely cause, then the share that got one."""
    import argparse
    import json
    import shutil
    import subprocess
    import sys
    import tempfile
    from pathlib import Path
    root = Path(__file__).resolve().parents[1]
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("tree", nargs="?", default=str(root), help="a checkout of the grader")
    parser.add_argument("--crashes", action="store_true", help="the crashes, not the mistakes")
    args = parser.parse_args()
    tree, cases = Path(args.tree), CRASH if args.crashes else SET
    with tempfile.TemporaryDirectory(prefix="mistakes-") as folder:
        folder = Path(folder)
        for name, file, old, new in cases:
            copy = folder / "class" / name
            shutil.copytree(root / "solutions", copy)
            text = (copy / file).read_text(encoding="utf-8")
            assert text.count(old) == 1, name
            (copy / file).write_text(text.replace(old, new), encoding="utf-8")
        subprocess.run([sys.executable, str(tree / "grader.py"), "--batch", str(folder / "class"),
                        "--json", str(folder / "out.json"), "--seed", "11"], cwd=tree,
                       capture_output=True)
        rows = json.loads((folder / "out.json").read_text(encoding="utf-8"))["submissions"]
    named = 0
    for name, file, _, _ in cases:
        result = rows[name]["exercises"].get(file[:-3], {})
        cause = (result.get("diagnosis") or {}).get("key")
        named += cause is not None
        print(f"{name:24} {result.get('score')}/{result.get('max')}  {cause}")
    print(f"a likely cause for {named} of {len(cases)}")


if __name__ == "__main__":
    main()
