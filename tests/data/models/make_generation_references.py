#!/usr/bin/python3
"""Greedy continuations of the tiny fixture checkpoints and of the built-in model, computed by an
independent PyTorch forward pass, for tests/test_generation.cpp.

The model is read back from its folder (config.json and the .safetensors weights, parsed here by
hand: the 8-byte little-endian header length, the JSON header, the raw little-endian F32, F16 or
BF16 data) and run in float64 with the forward passes written from the architectures'
descriptions: GPT-2 below (as make_fixtures.py writes it, with the shapes of config.json), the
Llama family and GPT-NeoX from make_llama_fixtures.py. Generation is the plain definition, with
no cache: at step k the whole text so far (the prompt and the k tokens chosen before) is run
through the model, and token k is the argmax of the last position's logits (the lowest id among
equal logits).

Each folder gets reference/generation.json: {"prompt": ids, "continuation": the N ids chosen,
"top_two_gap": per step, the largest logit minus the second largest} and
reference/generation_logits.npy (N x vocab, float32): the logits that chose each token, those of
the positions P - 1, ..., P + N - 2 on the reference's own text. Where a gap is small (below
1e-3), a float32 pass may choose the other token and part from the reference there.

The built-in model (resources/models/kjv-gpt2) writes into kjv-gpt2-generation/ beside this
script, its prompt the ids of "In the beginning God created the heaven and the earth." (Attention
Lab's tokenizer, which tests/test_tokenizer.cpp holds to GPT-2's).

Run with /usr/bin/python3 (torch, numpy).
"""

import json
import math
import os
import sys

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "..", "..", "training"))
import safetensors_files  # noqa: E402 (training/)
from make_llama_fixtures import gelu, layer_norm, llama_forward, neox_forward  # noqa: E402

F64 = torch.float64
BUILTIN = os.path.join(HERE, "..", "..", "..", "resources", "models", "kjv-gpt2")
BUILTIN_PROMPT = [1133, 258, 2067, 386, 3534, 258, 734, 267, 258, 621, 13]


# ---- weights -----------------------------------------------------------------------------------

def read_safetensors(path):
    """name -> float64 tensor of one .safetensors file (F32, F16 and BF16 tensors)."""
    return {name: torch.from_numpy(values.copy())
            for name, values in safetensors_files.read_safetensors(path).items()}


def read_weights(folder):
    """Every tensor of the folder's weights: model.safetensors, or the shards of the index."""
    index = os.path.join(folder, "model.safetensors.index.json")
    if not os.path.exists(index):
        return read_safetensors(os.path.join(folder, "model.safetensors"))
    with open(index) as f:
        shards = sorted(set(json.load(f)["weight_map"].values()))
    weights = {}
    for shard in shards:
        weights.update(read_safetensors(os.path.join(folder, shard)))
    return weights


# ---- GPT-2 -------------------------------------------------------------------------------------

def gpt2_forward(config, w, ids):
    """GPT-2 (Radford et al. 2019) as make_fixtures.py describes it, with config's shapes:
    x = wte[t] + wpe[i]; per block a = LN_1(x), [Q K V] = a W_attn + b_attn (Conv1D, in x out),
    causal softmax(Q K^T / sqrt(d)) V per head, x += O W_proj + b_proj,
    x += GELU_tanh(LN_2(x) W_fc + b_fc) W_mlp + b_mlp; logits = LN_f(x) wte^T."""
    w = {name.removeprefix("transformer."): tensor for name, tensor in w.items()}
    heads, width = config["n_head"], config["n_embd"]
    eps = config["layer_norm_epsilon"]
    d = width // heads
    length = len(ids)
    x = w["wte.weight"][ids] + w["wpe.weight"][:length]
    mask = torch.triu(torch.ones(length, length, dtype=torch.bool), diagonal=1)
    for layer in range(config["n_layer"]):
        h = f"h.{layer}."
        a = layer_norm(x, w[h + "ln_1.weight"], w[h + "ln_1.bias"], eps)
        qkv = a @ w[h + "attn.c_attn.weight"] + w[h + "attn.c_attn.bias"]
        q, k, v = (t.reshape(length, heads, d).transpose(0, 1) for t in qkv.split(width, dim=1))
        scores = (q @ k.transpose(1, 2) / math.sqrt(d)).masked_fill(mask, float("-inf"))
        o = (torch.softmax(scores, dim=-1) @ v).transpose(0, 1).reshape(length, width)
        x = x + o @ w[h + "attn.c_proj.weight"] + w[h + "attn.c_proj.bias"]
        a = layer_norm(x, w[h + "ln_2.weight"], w[h + "ln_2.bias"], eps)
        hidden = gelu(a @ w[h + "mlp.c_fc.weight"] + w[h + "mlp.c_fc.bias"], "gelu_new")
        x = x + hidden @ w[h + "mlp.c_proj.weight"] + w[h + "mlp.c_proj.bias"]
    return layer_norm(x, w["ln_f.weight"], w["ln_f.bias"], eps) @ w["wte.weight"].T


def logits_of(config, weights, ids):
    """The logits (L x vocab) of the architecture config.json names."""
    kind = config["model_type"]
    if kind == "gpt2":
        return gpt2_forward(config, weights, ids)
    if kind in ("llama", "mistral", "qwen2"):
        return llama_forward(config, weights, torch.tensor(ids))[1]
    if kind == "gpt_neox":
        return neox_forward(config, weights, torch.tensor(ids))[1]
    raise ValueError(kind)


# ---- generation --------------------------------------------------------------------------------

def greedy(config, weights, prompt, tokens):
    """The greedy continuation without a cache, the logits that chose each token and the gap
    between their two largest entries."""
    ids = list(prompt)
    chosen, rows, gaps = [], [], []
    for _ in range(tokens):
        logits = logits_of(config, weights, ids)[-1]
        top = torch.topk(logits, 2).values
        best = int(torch.nonzero(logits == logits.max())[0])
        chosen.append(best)
        rows.append(logits.numpy())
        gaps.append(float(top[0] - top[1]))
        ids.append(best)
    return chosen, np.stack(rows), gaps


def write_reference(folder, reference, prompt, tokens):
    with open(os.path.join(folder, "config.json")) as f:
        config = json.load(f)
    continuation, logits, gaps = greedy(config, read_weights(folder), prompt, tokens)
    os.makedirs(reference, exist_ok=True)
    with open(os.path.join(reference, "generation.json"), "w") as f:
        json.dump({"prompt": prompt, "continuation": continuation, "top_two_gap": gaps}, f)
        f.write("\n")
    np.save(os.path.join(reference, "generation_logits.npy"), logits.astype(np.float32))
    print(f"{os.path.basename(folder)}: {len(prompt)} + {tokens} tokens, smallest gap "
          f"{min(gaps):.2e}")


def main():
    # Each fixture continues the first 8 ids of its forward-pass reference to its last position
    # (tiny GPT-2: 32 positions; the others 64, generated to 32 tokens: past Mistral's window
    # of 5 many times over).
    for name, tokens in (("tiny-gpt2-prefixed-f32", 24), ("tiny-gpt2-f16", 24),
                         ("tiny-llama-gqa-f32", 24), ("tiny-mistral-f32", 24),
                         ("tiny-qwen2-f32", 24), ("tiny-pythia-parallel-f32", 24),
                         ("tiny-pythia-sequential-f32", 24)):
        folder = os.path.join(HERE, name)
        with open(os.path.join(folder, "reference", "tokens.json")) as f:
            prompt = json.load(f)["ids"][:8]
        write_reference(folder, os.path.join(folder, "reference"), prompt, tokens)
    write_reference(BUILTIN, os.path.join(HERE, "kjv-gpt2-generation"), BUILTIN_PROMPT, 40)


if __name__ == "__main__":
    main()
