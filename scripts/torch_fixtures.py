#!/usr/bin/python3
"""Write PyTorch reference fixtures for qkv's parity tests (tests/test_parity.c).

Run by hand with Debian's python3-torch:  /usr/bin/python3 scripts/torch_fixtures.py
CI never runs this; the fixtures it writes are committed in tests/fixtures/.

For each attention variant and option, the model below is built the way qkv builds it
(same parameter names and shapes, same maths), with PyTorch's own random weights. The maths
is written here from each option's definition, not from qkv's code: grouped-query keys and
values are repeated to the query heads with repeat_interleave, ALiBi's slopes come from the
paper's reference rule (including its rule for head counts that are not powers of two), keys
are normalized with F.normalize, and so on; a wrong rule in qkv shows as a parity failure. A
fixture holds the weights, one batch, the logits, the loss and every parameter's gradient
(as "grad.<name>"), and the config in the safetensors metadata. question_selfattention
holds the seed question's SelfAttention class exactly as written, against which qkv's
head_shared attention module is compared.
"""
import json
import math
import os
import struct
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "fixtures")
BASE = dict(vocab=16, seq_len=8, d_model=32, heads=4, layers=2, d_ff=64, activation="gelu",
            qkv="full", scale="head_dim", causal=True, rel_pos_bias=False, rel_pos_max=3,
            gate="none", self_mask=False, pad=False,
            kv_heads=0, self_mask_rule="strict", key_norm=False, role_scale=False, value_proj=True,
            out_proj=True, kv_latent=0, alibi=False, query_proj=True, key_proj=True, diff=False,
            talking_heads=False, position="learned", rope_base=10000.0, qk_diag="none", exclusive=False)


def rope(x, base):
    """x (B, T, n, r): each of the n vectors at position t turned, pair (2k, 2k+1) by t base^(-2k/r)"""
    B, T, n, r = x.shape
    theta = base ** (-2.0 * torch.arange(r // 2, dtype=torch.float64) / r)
    ang = torch.arange(T, dtype=torch.float64)[:, None] * theta[None, :]  # (T, r/2)
    cos, sin = ang.cos().to(x.dtype)[None, :, None, :], ang.sin().to(x.dtype)[None, :, None, :]
    x0, x1 = x[..., 0::2], x[..., 1::2]
    return torch.stack((x0 * cos - x1 * sin, x0 * sin + x1 * cos), dim=-1).reshape(B, T, n, r)


def rope_flat(x, r, base):
    """x (B, T, n r) -> the same, each r-wide piece rotated"""
    B, T, D = x.shape
    return rope(x.reshape(B, T, D // r, r), base).reshape(B, T, D)


# ---- safetensors writer (the format is simple; no extra package needed) ----------------
def save_safetensors(path, tensors, metadata):
    header, offset, blobs = {"__metadata__": metadata}, 0, []
    for name, t in tensors.items():
        t = t.detach().contiguous()
        dtype = {torch.float32: "F32", torch.int32: "I32"}[t.dtype]
        raw = t.numpy().tobytes()
        header[name] = {"dtype": dtype, "shape": list(t.shape), "data_offsets": [offset, offset + len(raw)]}
        offset += len(raw)
        blobs.append(raw)
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * (-len(h) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)))
        f.write(h)
        for b in blobs:
            f.write(b)


# ---- the model, as qkv builds it --------------------------------------------------------
def alibi_slopes(n):
    """ALiBi's head slopes (Press, Smith and Lewis 2022), as the authors' code computes them: for
    n a power of two the geometric sequence from 2^(-8/n) with that ratio; otherwise the slopes
    of the largest power of two below n, then every other slope of twice that many heads."""
    def power_of_2(n):
        start = 2 ** (-2 ** -(math.log2(n) - 3))
        return [start * start ** i for i in range(n)]
    if math.log2(n).is_integer():
        return power_of_2(n)
    p = 2 ** math.floor(math.log2(n))
    return power_of_2(p) + alibi_slopes(2 * p)[0::2][:n - p]


class RMSNorm(nn.Module):
    """The differential transformer's head norm: x / sqrt(mean(x^2) + eps) * weight."""
    def __init__(self, n, eps=1e-5):
        super().__init__()
        self.eps, self.weight = eps, nn.Parameter(torch.ones(n))

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


class Attention(nn.Module):
    def __init__(self, c, depth=0):
        super().__init__()
        d, H = c["d_model"], c["heads"]
        self.c, self.d, self.H, self.hd = c, d, H, d // H
        self.G = c["kv_heads"] or H  # heads of keys and values
        dkv = self.G * self.hd
        q = c["qkv"]
        lin = lambda i, o, bias=False: nn.Linear(i, o, bias=bias)
        if q == "full":
            if c["query_proj"]:
                self.wq = lin(d, d)
            if c["kv_latent"]:  # keys and values from a latent of width r
                r = c["kv_latent"]
                self.wdown, self.wuk, self.wuv = lin(d, r), lin(r, dkv), lin(r, dkv)
            else:
                if c["key_proj"]:
                    self.wk = lin(d, dkv)
                if c["value_proj"]:
                    self.wv = lin(d, dkv)
        elif q == "shared":
            self.w = lin(d, d)
            if c["role_scale"]:
                self.role_scale = nn.ParameterDict({r: nn.Parameter(torch.ones(d)) for r in "qkv"})
        elif q == "qk_tied":
            self.wqk = lin(d, d)
            if c["value_proj"]:
                self.wv = lin(d, d)
        elif q == "kv_tied":
            if c["query_proj"]:
                self.wq = lin(d, d)
            self.wkv = lin(d, dkv)
        elif q == "head_shared":
            self.values, self.keys, self.queries = lin(self.hd, self.hd), lin(self.hd, self.hd), lin(self.hd, self.hd)
        if c["qk_diag"] != "none":  # Q = X W D, D (H, hd) per head; its start, moved off it in model_fixture
            start = {"alternating": torch.tensor([(-1.0) ** k for k in range(self.hd)]).repeat(H, 1),
                     "positive": torch.ones(H, self.hd),
                     "random": torch.randint(0, 2, (H, self.hd)).float() * 2 - 1}[c["qk_diag"]]
            self.qk_diag = nn.Parameter(start)
        if c["gate"] != "none":
            self.wg = lin(d, {"headwise": H, "value": dkv}.get(c["gate"], d), True)
        if c["rel_pos_bias"]:
            self.rel_pos = nn.Embedding(2 * c["rel_pos_max"] + 1, H)
        if c["diff"]:  # as the Differential Transformer's MultiheadDiffAttn (its head_dim is our hd / 2)
            half = self.hd // 2
            self.lambda_init = 0.8 - 0.6 * math.exp(-0.3 * depth)  # depth = l - 1 of layer l = 1, 2, ...
            for n in ("lambda_q1", "lambda_k1", "lambda_q2", "lambda_k2"):
                setattr(self, n, nn.Parameter(torch.zeros(half).normal_(mean=0, std=0.1)))
            self.subln = RMSNorm(2 * half, eps=1e-5)
        if c["talking_heads"]:  # Shazeer et al.: (H,H) maps of the logits and of the weights, y = W x
            self.talking_heads = nn.ModuleDict({"logits": lin(H, H), "weights": lin(H, H)})
        if c["out_proj"]:
            if q == "head_shared":
                self.fc_out = lin(d, d, True)
            else:
                self.wo = lin(d, d, True)

    def split(self, x, heads):
        B, T, _ = x.shape
        return x.reshape(B, T, heads, self.hd).transpose(1, 2)

    def forward(self, x, blocked, alive):
        c, q = self.c, self.c["qkv"]
        B, T, d = x.shape
        gate = torch.sigmoid(self.wg(x)) if c["gate"] != "none" else None
        if q == "head_shared":
            xv = x * gate if c["gate"] == "value" else x
            xh, xvh = x.reshape(B, T, self.H, self.hd), xv.reshape(B, T, self.H, self.hd)
            Q, K = self.queries(xh), self.keys(xh)
            if c["position"] == "rope":
                Q, K = rope(Q, c["rope_base"]), rope(K, c["rope_base"])
            Q, K = Q.transpose(1, 2), K.transpose(1, 2)
            V = self.values(xvh).transpose(1, 2)
        else:
            if q == "shared" and c["role_scale"]:  # one matrix, three roles: X W diag(s_role)
                p = self.w(x)
                pq, pk, pv = p * self.role_scale["q"], p * self.role_scale["k"], p * self.role_scale["v"]
            else:
                pq = {"full": lambda: self.wq(x), "shared": lambda: self.w(x), "identity": lambda: x,
                      "qk_tied": lambda: self.wqk(x), "kv_tied": lambda: self.wq(x)}[q]() if c["query_proj"] else x
                if c["kv_latent"]:
                    latent = self.wdown(x)
                    pk, pv = self.wuk(latent), self.wuv(latent)
                else:
                    pk = (self.wk(x) if c["key_proj"] else x) if q == "full" else self.wkv(x) if q == "kv_tied" else pq
                    if q in ("full", "qk_tied"):
                        pv = self.wv(x) if c["value_proj"] else x
                    else:
                        pv = pk if q == "kv_tied" else pq
            if c["gate"] == "value":
                pv = pv * gate
            if c["qk_diag"] != "none":  # the query scaled, the key (and a tied value) not
                pq = pq * self.qk_diag.reshape(d)
            if c["position"] == "rope":  # queries and keys turned, values not; diff: each half on its own
                r = self.hd // 2 if c["diff"] else self.hd
                pq, pk = rope_flat(pq, r, c["rope_base"]), rope_flat(pk, r, c["rope_base"])
            if c["diff"]:
                return self.output(self.diff_attention(pq, pk, pv, blocked), gate)
            # G key/value heads, each repeated for the H / G query heads that share it
            Q, K, V = self.split(pq, self.H), self.split(pk, self.G), self.split(pv, self.G)
            if c["key_norm"]:
                K = F.normalize(K, dim=-1)  # unit-length keys per head; the values keep theirs
            K, V = K.repeat_interleave(self.H // self.G, dim=1), V.repeat_interleave(self.H // self.G, dim=1)
        scale = 1 / math.sqrt(d if c["scale"] == "embed" else self.hd)
        S = Q @ K.transpose(-1, -2) * scale
        i = torch.arange(T)
        if c["rel_pos_bias"]:
            R = c["rel_pos_max"]
            off = (i[None, :] - i[:, None]).clamp(-R, R) + R  # [i][j] = clip(j - i) + R
            S = S + self.rel_pos(off).permute(2, 0, 1)
        if c["alibi"]:  # head h: score(i, j) - m_h |i - j|, no parameters
            m = torch.tensor(alibi_slopes(self.H))
            S = S - m[:, None, None] * (i[:, None] - i[None, :]).abs()
        if c["talking_heads"]:  # mix the heads' logits: L[g] = sum_h W[g, h] S[h]
            S = torch.einsum("bhij,gh->bgij", S, self.talking_heads["logits"].weight)
        if blocked is not None:
            S = S.masked_fill(blocked, -1e20 if q == "head_shared" else float("-inf"))
        A = torch.softmax(S, dim=-1)
        A = torch.nan_to_num(A, nan=0.0)  # qkv: a fully blocked row attends nowhere
        if q == "head_shared" and alive is not None:
            A = A * alive
        if c["talking_heads"]:  # ... and their weights after the softmax
            A = torch.einsum("bhij,gh->bgij", A, self.talking_heads["weights"].weight)
        Y = self.exclusive(A @ V, V).transpose(1, 2).reshape(B, T, d)
        return self.output(Y, gate)

    def exclusive(self, Y, V):
        """Zhai's exclusive self attention: each head's output (B, H, T, hd) without its part along the
        token's own value (V as the head used it)"""
        if not self.c["exclusive"]:
            return Y
        u = F.normalize(V, dim=-1)
        return Y - (Y * u).sum(-1, keepdim=True) * u

    def diff_attention(self, pq, pk, pv, blocked):
        """MultiheadDiffAttn.forward of the paper's code, without rotary embeddings: 2H half-width query and
        key heads (head h's pair is half-heads 2h and 2h + 1), H full-width value heads."""
        B, T, d = pq.shape
        half = self.hd // 2
        q = pq.view(B, T, 2 * self.H, half).transpose(1, 2) * half ** -0.5
        k = pk.view(B, T, 2 * self.H, half).transpose(1, 2)
        v = pv.view(B, T, self.H, 2 * half).transpose(1, 2)
        w = q @ k.transpose(-1, -2)
        if blocked is not None:
            w = w.masked_fill(blocked, float("-inf"))
        w = torch.nan_to_num(torch.softmax(w, dim=-1), nan=0.0)
        lambda_1 = torch.exp(torch.sum(self.lambda_q1 * self.lambda_k1, dim=-1))
        lambda_2 = torch.exp(torch.sum(self.lambda_q2 * self.lambda_k2, dim=-1))
        lambda_full = lambda_1 - lambda_2 + self.lambda_init
        w = w.view(B, self.H, 2, T, T)
        w = w[:, :, 0] - lambda_full * w[:, :, 1]
        attn = self.exclusive(self.subln(w @ v) * (1 - self.lambda_init), v)
        return attn.transpose(1, 2).reshape(B, T, d)

    def output(self, Y, gate):
        c, q = self.c, self.c["qkv"]
        B, T, d = Y.shape
        if c["gate"] == "output":
            Y = Y * gate
        if c["gate"] == "headwise":  # one gate per head and position
            Y = (Y.reshape(B, T, self.H, self.hd) * gate[..., None]).reshape(B, T, d)
        if not c["out_proj"]:
            return Y
        return (self.fc_out if q == "head_shared" else self.wo)(Y)


class Block(nn.Module):
    def __init__(self, c, depth=0):
        super().__init__()
        self.ln1, self.attn = nn.LayerNorm(c["d_model"]), Attention(c, depth)
        self.ln2 = nn.LayerNorm(c["d_model"])
        self.ff = nn.Module()
        self.ff.fc1, self.ff.fc2 = nn.Linear(c["d_model"], c["d_ff"]), nn.Linear(c["d_ff"], c["d_model"])
        self.act = {"gelu": F.gelu, "relu": F.relu, "gelu_tanh": lambda x: F.gelu(x, approximate="tanh")}[c["activation"]]

    def forward(self, x, blocked, alive):
        x = x + self.attn(self.ln1(x), blocked, alive)
        return x + self.ff.fc2(self.act(self.ff.fc1(self.ln2(x))))


class Model(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.c = c
        self.tok_emb = nn.Embedding(c["vocab"], c["d_model"])
        if c["position"] == "learned":  # rope and none: no table
            self.pos_emb = nn.Embedding(c["seq_len"], c["d_model"])
        self.blocks = nn.ModuleList([Block(c, i) for i in range(c["layers"])])
        self.ln_f, self.lm_head = nn.LayerNorm(c["d_model"]), nn.Linear(c["d_model"], c["vocab"])

    def forward(self, tokens, pad):
        c = self.c
        B, T = tokens.shape
        i = torch.arange(T)
        blocked = torch.zeros(T, T, dtype=torch.bool)
        if c["causal"]:
            blocked |= i[None, :] > i[:, None]
        if pad is not None:
            blocked = blocked[None, None] | (pad == 0)[:, None, None, :]
        if c["self_mask"]:
            eye = torch.eye(T, dtype=torch.bool)
            if c["self_mask_rule"] == "reformer":  # itself only when no other key is visible
                eye = eye & (~blocked & ~eye).any(-1, keepdim=True)
            blocked = blocked | eye
        if pad is None and not (c["causal"] or c["self_mask"]):
            blocked = None
        alive = None
        if blocked is not None:
            alive = (~blocked).any(-1, keepdim=True).to(torch.float32)
        x = self.tok_emb(tokens)
        if c["position"] == "learned":
            x = x + self.pos_emb.weight[:T]
        for b in self.blocks:
            x = b(x, blocked, alive)
        return self.lm_head(self.ln_f(x))


def model_fixture(name, **over):
    c = dict(BASE, **over)
    torch.manual_seed(len(name) * 7919 + sum(map(ord, name)))
    m = Model(c)
    with torch.no_grad():  # move LayerNorm and relative-bias parameters off their trivial init
        for n, p in m.named_parameters():
            if "ln" in n or "rel_pos" in n or "role_scale" in n:
                p.add_(0.1 * torch.randn_like(p))
            if "qk_diag" in n:  # D off its start: entries of both signs and other sizes
                p.mul_(1 + 0.3 * torch.randn_like(p))
            if "lambda_" in n:  # lambda well away from lambda_init
                p.add_(0.3 * torch.randn_like(p))
    B, T = 2, c["seq_len"]
    tokens = torch.randint(0, c["vocab"], (B, T), dtype=torch.int32)
    targets = torch.randint(0, c["vocab"], (B, T), dtype=torch.int32)
    targets[0, 1] = targets[1, 5] = -100
    pad = None
    if c["pad"]:
        pad = torch.ones(B, T, dtype=torch.int32)
        pad[0, -2:] = 0
        pad[1, -1] = 0
    logits = m(tokens.long(), pad)
    loss = F.cross_entropy(logits.reshape(-1, c["vocab"]), targets.reshape(-1).long(), ignore_index=-100)
    loss.backward()
    t = {n: p for n, p in m.named_parameters()}
    t.update({"grad." + n: p.grad for n, p in m.named_parameters()})
    t.update({"input.tokens": tokens, "input.targets": targets, "output.logits": logits,
              "output.loss": loss.reshape(())})
    if pad is not None:
        t["input.pad"] = pad
    meta = {k: json.dumps(v) for k, v in c.items()}
    save_safetensors(os.path.join(OUT, name + ".safetensors"), t, meta)
    print(f"{name}: loss {loss.item():.6f}, {sum(p.numel() for p in m.parameters())} parameters")


# ---- the seed question's module, exactly as written ---------------------------------------
class SelfAttention(nn.Module):
    def __init__(self, embed_size, heads):
        super(SelfAttention, self).__init__()
        self.embed_size = embed_size
        self.heads = heads
        self.head_dim = embed_size // heads

        assert (self.head_dim * heads == embed_size), "Embed size needs to be div by heads"

        self.values = nn.Linear(self.head_dim, self.head_dim, bias=False)
        self.keys = nn.Linear(self.head_dim, self.head_dim, bias=False)
        self.queries = nn.Linear(self.head_dim, self.head_dim, bias=False)
        self.fc_out = nn.Linear(heads * self.head_dim, embed_size)

    def forward(self, values, keys, query, mask):
        N = query.shape[0]
        value_len, key_len, query_len = values.shape[1], keys.shape[1], query.shape[1]
        values = values.reshape(N, value_len, self.heads, self.head_dim)
        keys = keys.reshape(N, key_len, self.heads, self.head_dim)
        queries = query.reshape(N, query_len, self.heads, self.head_dim)

        values = self.values(values)
        keys = self.keys(keys)
        queries = self.queries(queries)

        energy = torch.einsum("nqhd, nkhd->nhqk", [queries, keys])
        if mask is not None:
            energy = energy.masked_fill(mask == 0, float("-1e20"))
        attention = torch.softmax(energy / (self.embed_size ** (1 / 2)), dim=3)
        out = torch.einsum('nhql, nlhd->nqhd', [attention, values]).reshape(N, query_len, self.heads * self.head_dim)
        out = self.fc_out(out)
        return out


def question_fixture():
    torch.manual_seed(1234)
    E, H, N, T = 32, 4, 2, 8
    m = SelfAttention(E, H)
    x = torch.randn(N, T, E, requires_grad=True)
    mask = torch.tril(torch.ones(T, T)).to(torch.int32)  # 1 = may attend (causal)
    out = m(x, x, x, mask)
    w = torch.randn_like(out)  # loss = sum(out * w): every output element matters
    (out * w).sum().backward()
    t = {n: p for n, p in m.named_parameters()}
    t.update({"grad." + n: p.grad for n, p in m.named_parameters()})
    t.update({"input.x": x, "input.mask": mask, "input.weights": w, "output.out": out, "grad.x": x.grad})
    meta = {"embed_size": str(E), "heads": str(H)}
    save_safetensors(os.path.join(OUT, "question_selfattention.safetensors"), t, meta)
    print("question_selfattention: written")


FIXTURES = {
    "full": {}, "shared": dict(qkv="shared"), "identity": dict(qkv="identity"),
    "qk_tied": dict(qkv="qk_tied"), "kv_tied": dict(qkv="kv_tied"),
    "head_shared": dict(qkv="head_shared", scale="embed"),
    "head_shared_head_dim": dict(qkv="head_shared"),
    "rel_pos_bias": dict(rel_pos_bias=True), "gate_output": dict(gate="output"),
    "gate_value": dict(gate="value"), "qk_tied_self_mask": dict(qkv="qk_tied", self_mask=True),
    "head_shared_self_mask": dict(qkv="head_shared", scale="embed", self_mask=True),
    "bidirectional_pad": dict(causal=False, pad=True), "relu": dict(activation="relu"),
    "gelu_tanh": dict(activation="gelu_tanh"), "scale_embed": dict(scale="embed"),
    # the options real models use
    "gqa": dict(kv_heads=2), "mqa": dict(kv_heads=1), "kv_tied_mqa": dict(qkv="kv_tied", kv_heads=1),
    "gqa_rel_pos_bias": dict(kv_heads=2, rel_pos_bias=True),
    "gqa_gate_value": dict(kv_heads=2, gate="value"),
    "qk_tied_key_norm_reformer": dict(qkv="qk_tied", key_norm=True, self_mask=True, self_mask_rule="reformer"),
    "head_shared_reformer_pad": dict(qkv="head_shared", scale="embed", self_mask=True, self_mask_rule="reformer",
                                     pad=True),
    "kv_tied_key_norm": dict(qkv="kv_tied", key_norm=True),
    "shared_role_scale": dict(qkv="shared", role_scale=True),
    "value_proj_off": dict(value_proj=False), "qk_tied_value_proj_off": dict(qkv="qk_tied", value_proj=False),
    "out_proj_off": dict(out_proj=False), "kv_latent": dict(kv_latent=8),
    "kv_latent_gqa": dict(kv_latent=8, kv_heads=2),
    "alibi": dict(alibi=True), "alibi_6_heads": dict(alibi=True, d_model=24, heads=6),
    "alibi_bidirectional_pad": dict(alibi=True, causal=False, pad=True),
    "gate_headwise": dict(gate="headwise"),
    # issue 22: projections removed one at a time, differential and talking-heads attention
    "query_proj_off": dict(query_proj=False), "key_proj_off": dict(key_proj=False),
    "query_key_proj_off": dict(query_proj=False, key_proj=False),
    "kv_tied_query_proj_off": dict(qkv="kv_tied", query_proj=False),
    "diff": dict(diff=True), "diff_bidirectional_pad": dict(diff=True, causal=False, pad=True),
    "diff_qk_tied_gate_headwise": dict(diff=True, qkv="qk_tied", gate="headwise", layers=3),
    "talking_heads": dict(talking_heads=True), "talking_heads_gqa": dict(talking_heads=True, kv_heads=2),
    "talking_heads_bidirectional_pad": dict(talking_heads=True, causal=False, pad=True, self_mask=True),
    # positions: rotary (queries and keys turned by position) and none
    "rope": dict(position="rope"), "rope_qk_tied": dict(position="rope", qkv="qk_tied"),
    "rope_kv_tied_gqa": dict(position="rope", qkv="kv_tied", kv_heads=2),
    "rope_identity": dict(position="rope", qkv="identity"),
    "rope_query_proj_off_base": dict(position="rope", query_proj=False, rope_base=500.0),
    "rope_diff_bidirectional_pad": dict(position="rope", diff=True, causal=False, pad=True),
    "rope_head_shared": dict(position="rope", qkv="head_shared", scale="embed"),
    "rope_talking_heads": dict(position="rope", talking_heads=True),
    "position_none": dict(position="none"), "position_none_qk_tied": dict(position="none", qkv="qk_tied"),
    # a learned diagonal between tied queries and keys; exclusive self attention
    "qk_diag_alternating": dict(qkv="qk_tied", qk_diag="alternating"),
    "qk_diag_random_shared_pad": dict(qkv="shared", qk_diag="random", causal=False, pad=True),
    "qk_diag_positive_rope_diff": dict(qkv="qk_tied", qk_diag="positive", position="rope", diff=True),
    "exclusive": dict(exclusive=True),
    "exclusive_gqa_value_gate": dict(exclusive=True, kv_heads=2, gate="value"),
    "exclusive_kv_tied_query_proj_off": dict(exclusive=True, qkv="kv_tied", query_proj=False),
    "exclusive_diff": dict(exclusive=True, diff=True),
    "exclusive_head_shared": dict(exclusive=True, qkv="head_shared", scale="embed"),
    "exclusive_identity_self_mask": dict(exclusive=True, qkv="identity", self_mask=True),
    "exclusive_qk_diag_rope_talking_heads": dict(exclusive=True, qkv="qk_tied", qk_diag="alternating",
                                                 position="rope", talking_heads=True),
}

if __name__ == "__main__":
    os.makedirs(OUT, exist_ok=True)
    only = sys.argv[1:]
    for name, over in FIXTURES.items():
        if not only or name in only:
            model_fixture(name, **over)
    if not only or "question_selfattention" in only:
        question_fixture()


# ---- optimizers: 20 steps on a fixed quadratic, with PyTorch's own update rules ----------
OPTIM_FIXTURES = {
    "sgd": dict(name="sgd", lr=0.05, momentum=0.0, weight_decay=0.0),
    "sgd_momentum_wd": dict(name="sgd", lr=0.05, momentum=0.9, weight_decay=0.01),
    "adam": dict(name="adam", lr=0.01, weight_decay=0.0),
    "adam_l2": dict(name="adam", lr=0.01, weight_decay=0.1, beta1=0.8, beta2=0.99, eps=1e-6),
    "adamw": dict(name="adamw", lr=0.01, weight_decay=0.1),
    "adamw_clip_cosine": dict(name="adamw", lr=0.02, weight_decay=0.01, clip=0.5,
                              schedule="cosine", warmup=5, min_lr=0.001),
}


def lr_at(c, step, total):  # qkv's schedule (docs/config.md), written out independently
    lr, warm = c["lr"], c.get("warmup", 0)
    if step < warm:
        return lr * (step + 1) / warm
    span = total - warm - 1
    t = min(1.0, (step - warm) / span) if span > 0 else 1.0
    lo = c.get("min_lr", 0.0)
    s = c.get("schedule", "constant")
    if s == "cosine":
        return lo + (lr - lo) * 0.5 * (1 + math.cos(math.pi * t))
    if s == "linear":
        return lr + (lo - lr) * t
    return lr


def optim_fixture(name, c, steps=20):
    torch.manual_seed(sum(map(ord, name)))
    p = torch.randn(257, requires_grad=True)
    target, coef = torch.randn(257), torch.rand(257) + 0.5
    if c["name"] == "sgd":
        opt = torch.optim.SGD([p], lr=c["lr"], momentum=c["momentum"], weight_decay=c["weight_decay"])
    else:
        kw = dict(lr=c["lr"], betas=(c.get("beta1", 0.9), c.get("beta2", 0.999)), eps=c.get("eps", 1e-8),
                  weight_decay=c["weight_decay"])
        opt = (torch.optim.Adam if c["name"] == "adam" else torch.optim.AdamW)([p], **kw)
    p0 = p.detach().clone()
    norms = []
    for step in range(steps):
        for g in opt.param_groups:
            g["lr"] = lr_at(c, step, steps)
        opt.zero_grad()
        loss = (coef * (p - target) ** 2).sum() + 0.1 * (p ** 4).sum()
        loss.backward()
        if c.get("clip", 0) > 0:
            norms.append(float(torch.nn.utils.clip_grad_norm_([p], c["clip"])))
        opt.step()
    t = {"p0": p0, "target": target, "coef": coef, "p20": p.detach()}
    meta = {k: json.dumps(v) for k, v in c.items()}
    meta["steps"] = str(steps)
    save_safetensors(os.path.join(OUT, "optim_" + name + ".safetensors"), t, meta)
    print(f"optim_{name}: written")


if __name__ == "__main__":
    for name, c in OPTIM_FIXTURES.items():
        if not sys.argv[1:] or "optim_" + name in sys.argv[1:]:
            optim_fixture(name, c)
