#!/usr/bin/python3
"""Tiny GPT-2 checkpoints with random weights and the reference outputs of their forward pass,
for tests/test_model.cpp.

The reference is an independent PyTorch implementation of GPT-2 written from the model's
definition (Radford et al. 2019; the Hugging Face GPT2Model layout), not Attention Lab's code:
  x_0 = wte[t] + wpe[0 .. L-1]
  each block: a = LN_1(x); [Q K V] = a W_attn + b_attn (Conv1D: W is in x out, the columns of
  c_attn are [Q | K | V], head h the columns [h d, (h + 1) d) of each);
  P_h = softmax(Q_h K_h^T / sqrt(d) + causal mask); O_h = P_h V_h;
  x = x + [O_1 .. O_H] W_proj + b_proj; x = x + GELU_tanh(LN_2(x) W_fc + b_fc) W_mlp + b_mlp
  logits = LN_f(x) wte^T (the head tied to the token embedding).
Computed in float64 from the weights exactly as stored (the F16 checkpoint's reference uses its
F16-rounded weights), so the C++ float32 pass is compared with the exact result of the same
weights.

Writes two folders beside this script:
  tiny-gpt2-prefixed-f32/  tensor names with the "transformer." prefix (GPT2LMHeadModel's
                           save), F32, plus the causal-mask buffers of old checkpoints
                           (h.{i}.attn.bias, one BOOL and one F32, and a rank-0
                           h.0.attn.masked_bias) that a loader must ignore;
  tiny-gpt2-f16/           no prefix (GPT2Model's save), F16.
Each holds config.json, model.safetensors, a tiny GPT-2-format tokenizer (vocab.json,
merges.txt) and reference/: tokens.json, q_layer{l}.npy, k_layer{l}.npy, v_layer{l}.npy
(H x L x d), attention_layer{l}.npy (H x L x L), logits.npy (L x vocab), all float64.

Run with /usr/bin/python3 (torch, numpy); the safetensors files are written by hand, by
training/safetensors_files.py (8-byte little-endian header length, the JSON header padded with
spaces to a multiple of 8, the raw little-endian data).
"""

import json
import math
import os
import sys

import numpy as np
import torch

TRAINING = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "training")
sys.path.insert(0, TRAINING)
sys.path.insert(0, os.path.join(TRAINING, "kjv_gpt2"))
from bpe import bytes_to_unicode  # noqa: E402 (training/kjv_gpt2/bpe.py: GPT-2's byte symbols)
from safetensors_files import write_safetensors  # noqa: E402 (training/)

HERE = os.path.dirname(os.path.abspath(__file__))

N_LAYER = 2
N_HEAD = 2
N_EMBD = 16
N_POSITIONS = 32
LAYER_NORM_EPSILON = 1e-5
SEED = 20240611


# ---- tokenizer ---------------------------------------------------------------------------------

MERGES = [("Ġ", "t"), ("h", "e"), ("Ġt", "he"), ("i", "n"), ("Ġ", "a"), ("e", "r"),
          ("o", "n"), ("Ġ", "s"), ("r", "e"), ("a", "t"), ("Ġ", "w"), ("Ġa", "n")]


def tokenizer_files():
    """vocab.json (the 256 byte symbols in bytes_to_unicode order, the merged symbols, then
    <|endoftext|>) and merges.txt."""
    vocab = {}
    for symbol in bytes_to_unicode().values():
        vocab[symbol] = len(vocab)
    for left, right in MERGES:
        vocab[left + right] = len(vocab)
    vocab["<|endoftext|>"] = len(vocab)
    merges = "#version: 0.2\n" + "".join(f"{left} {right}\n" for left, right in MERGES)
    return vocab, merges


# ---- weights -----------------------------------------------------------------------------------

class RandomWeights(dict):
    """Tensors name -> float64 values drawn from N(0, std^2) by one generator, in the order they
    are added (the fixtures' draws, shared by make_vit_fixtures.py and make_llama_fixtures.py)."""

    def __init__(self, generator):
        super().__init__()
        self.generator = generator

    def normal(self, *shape, std):
        return torch.randn(*shape, generator=self.generator, dtype=torch.float64) * std

    def norm(self, name, size, bias=True):
        """A LayerNorm's (or, without bias, an RMSNorm's) gain about 1 and its bias about 0."""
        self[name + ".weight"] = 1 + self.normal(size, std=0.2)
        if bias:
            self[name + ".bias"] = self.normal(size, std=0.1)

    def linear(self, name, shape, std, bias_size=None, bias_std=0.1):
        """A linear map's weight of the given shape and, given its size, its bias."""
        self[name + ".weight"] = self.normal(*shape, std=std)
        if bias_size is not None:
            self[name + ".bias"] = self.normal(bias_size, std=bias_std)


def random_weights(vocab_size, generator):
    """GPT-2's tensors (names without prefix) in the Conv1D layout (in x out), float64. The scales
    make the attention neither uniform nor one-hot and the GELU work in its curved part."""
    inner = 4 * N_EMBD
    w = RandomWeights(generator)
    w["wte.weight"] = w.normal(vocab_size, N_EMBD, std=0.5)
    w["wpe.weight"] = w.normal(N_POSITIONS, N_EMBD, std=0.3)
    for layer in range(N_LAYER):
        h = f"h.{layer}."
        w.norm(h + "ln_1", N_EMBD)
        w.linear(h + "attn.c_attn", (N_EMBD, 3 * N_EMBD), 0.35, 3 * N_EMBD)
        w.linear(h + "attn.c_proj", (N_EMBD, N_EMBD), 0.25, N_EMBD)
        w.norm(h + "ln_2", N_EMBD)
        w.linear(h + "mlp.c_fc", (N_EMBD, inner), 0.3, inner)
        w.linear(h + "mlp.c_proj", (inner, N_EMBD), 0.15, N_EMBD)
    w.norm("ln_f", N_EMBD)
    return dict(w)


# ---- the reference forward pass ----------------------------------------------------------------

def layer_norm(x, gain, bias):
    mean = x.mean(dim=-1, keepdim=True)
    variance = ((x - mean) ** 2).mean(dim=-1, keepdim=True)
    return (x - mean) / torch.sqrt(variance + LAYER_NORM_EPSILON) * gain + bias


def gelu_tanh(u):
    return 0.5 * u * (1 + torch.tanh(math.sqrt(2 / math.pi) * (u + 0.044715 * u ** 3)))


def check_building_blocks(generator):
    """The hand-written LayerNorm and GELU agree with PyTorch's own."""
    u = torch.randn(5, N_EMBD, generator=generator, dtype=torch.float64) * 3
    gain, bias = torch.rand(N_EMBD, dtype=torch.float64), torch.rand(N_EMBD, dtype=torch.float64)
    torch.testing.assert_close(layer_norm(u, gain, bias), torch.nn.functional.layer_norm(
        u, (N_EMBD,), gain, bias, eps=LAYER_NORM_EPSILON))
    torch.testing.assert_close(gelu_tanh(u), torch.nn.functional.gelu(u, approximate="tanh"))


def forward(w, ids):
    """Q, K, V (H x L x d), P (H x L x L) per layer, and the logits (L x vocab), float64."""
    length = len(ids)
    d = N_EMBD // N_HEAD
    x = w["wte.weight"][ids] + w["wpe.weight"][:length]
    mask = torch.triu(torch.ones(length, length, dtype=torch.bool), diagonal=1)
    captured = []
    for layer in range(N_LAYER):
        h = f"h.{layer}."
        a = layer_norm(x, w[h + "ln_1.weight"], w[h + "ln_1.bias"])
        qkv = a @ w[h + "attn.c_attn.weight"] + w[h + "attn.c_attn.bias"]
        q, k, v = qkv.split(N_EMBD, dim=1)
        # L x (H d) -> H x L x d
        q, k, v = (t.reshape(length, N_HEAD, d).transpose(0, 1) for t in (q, k, v))
        scores = q @ k.transpose(1, 2) / math.sqrt(d)
        scores = scores.masked_fill(mask, float("-inf"))
        p = torch.softmax(scores, dim=-1)
        o = (p @ v).transpose(0, 1).reshape(length, N_EMBD)
        x = x + o @ w[h + "attn.c_proj.weight"] + w[h + "attn.c_proj.bias"]
        a = layer_norm(x, w[h + "ln_2.weight"], w[h + "ln_2.bias"])
        hidden = gelu_tanh(a @ w[h + "mlp.c_fc.weight"] + w[h + "mlp.c_fc.bias"])
        x = x + hidden @ w[h + "mlp.c_proj.weight"] + w[h + "mlp.c_proj.bias"]
        captured.append((q, k, v, p))
    logits = layer_norm(x, w["ln_f.weight"], w["ln_f.bias"]) @ w["wte.weight"].T
    return captured, logits


# ---- files -------------------------------------------------------------------------------------

def write_folder(name, weights, prefix, dtype, extra_tensors, ids):
    folder = os.path.join(HERE, name)
    os.makedirs(os.path.join(folder, "reference"), exist_ok=True)
    vocab, merges = tokenizer_files()
    with open(os.path.join(folder, "vocab.json"), "w", encoding="utf-8") as f:
        json.dump(vocab, f, ensure_ascii=False)
    with open(os.path.join(folder, "merges.txt"), "w", encoding="utf-8") as f:
        f.write(merges)
    config = {"model_type": "gpt2", "architectures": ["GPT2LMHeadModel"],
              "n_layer": N_LAYER, "n_head": N_HEAD, "n_embd": N_EMBD,
              "n_positions": N_POSITIONS, "n_ctx": N_POSITIONS, "vocab_size": len(vocab),
              "n_inner": None, "activation_function": "gelu_new",
              "layer_norm_epsilon": LAYER_NORM_EPSILON, "tie_word_embeddings": True}
    with open(os.path.join(folder, "config.json"), "w") as f:
        json.dump(config, f, indent=2)
        f.write("\n")

    numpy_dtype = {"F32": "<f4", "F16": "<f2"}[dtype]
    stored = {key: value.numpy().astype(numpy_dtype) for key, value in weights.items()}
    tensors = [(prefix + key, dtype, array) for key, array in stored.items()]
    # Extra tensors between the weights, as old checkpoints interleave them.
    for position, extra in extra_tensors:
        tensors.insert(position, extra)
    write_safetensors(os.path.join(folder, "model.safetensors"), tensors, "make_fixtures.py")

    # The reference runs on the weights as stored (rounded to F16 for the F16 checkpoint).
    exact = {key: torch.from_numpy(array.astype(np.float64)) for key, array in stored.items()}
    write_reference(folder, ids, *forward(exact, torch.tensor(ids)), np.float64)


def write_reference(folder, ids, captured, logits, dtype):
    """folder/reference/: tokens.json, each layer's q, k, v and attention (H x L x d, H x L x L)
    and the logits (L x vocab), as .npy of dtype."""
    reference = os.path.join(folder, "reference")
    with open(os.path.join(reference, "tokens.json"), "w") as f:
        json.dump({"ids": ids}, f)
        f.write("\n")
    for layer, (q, k, v, p) in enumerate(captured):
        for symbol, tensor in (("q", q), ("k", k), ("v", v), ("attention", p)):
            np.save(os.path.join(reference, f"{symbol}_layer{layer}.npy"),
                    tensor.contiguous().numpy().astype(dtype))
    np.save(os.path.join(reference, "logits.npy"), logits.numpy().astype(dtype))


def main():
    check_building_blocks(torch.Generator().manual_seed(1))
    generator = torch.Generator().manual_seed(SEED)
    vocab, _ = tokenizer_files()
    vocab_size = len(vocab)
    # 12 ids: bytes, merged symbols and <|endoftext|>, some repeated.
    ids = [vocab["Ġthe"], 72, vocab["Ġt"], 65, vocab["he"], vocab["Ġan"], 3, vocab["in"],
           vocab_size - 1, vocab["Ġthe"], 200, vocab["at"]]

    f32 = random_weights(vocab_size, generator)
    causal = np.tril(np.ones((1, 1, N_POSITIONS, N_POSITIONS)))
    extras = [(5, ("transformer.h.0.attn.bias", "BOOL", causal.astype(np.uint8))),
              (8, ("transformer.h.0.attn.masked_bias", "F32", np.array(-1e4, dtype="<f4"))),
              (19, ("transformer.h.1.attn.bias", "F32", causal.astype("<f4")))]
    write_folder("tiny-gpt2-prefixed-f32", f32, "transformer.", "F32", extras, ids)

    f16 = random_weights(vocab_size, generator)
    write_folder("tiny-gpt2-f16", f16, "", "F16", [], ids)


if __name__ == "__main__":
    main()
