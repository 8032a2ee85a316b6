#!/usr/bin/python3
"""Tiny Llama-family and GPT-NeoX checkpoints with random weights and the reference outputs of
their forward pass, for tests/test_llama_model.cpp.

The reference is an independent PyTorch forward pass written from the published descriptions of
the architectures (Touvron et al. 2023 and llama2.c's model.py for the Llama block; the Hugging
Face documentation of LlamaConfig, MistralConfig, Qwen2Config and GPTNeoXConfig for the names,
the rotate-half RoPE convention, rope_scaling, grouped-query attention, the sliding window and
GPT-NeoX's fused per-head query_key_value and parallel residual), not from Attention Lab's code.
llama2.c's model.py gives RMSNorm (x rsqrt(mean(x^2) + eps) w), inv_freq = theta^(-2i/d), the
key/value heads repeated with repeat_interleave and the FFN w2(silu(w1 x) * w3 x); its RoPE
rotates adjacent pairs (2i, 2i + 1), while Hugging Face checkpoints rotate the halves (i, i + d/2)
(their conversion permutes the q and k rows), and these fixtures are Hugging Face checkpoints:

  Llama / Mistral / Qwen2:
    x = embed_tokens[ids]
    each layer: a = RMSNorm(x) g_1, RMSNorm(u) = u / sqrt(mean(u^2) + eps);
      q = a Wq^T (+ bq), k = a Wk^T (+ bk), v = a Wv^T (+ bv); H query heads, H_kv key/value heads
      q, k <- RoPE: x cos + rotate_half(x) sin, rotate_half(x) = [-x_2, x_1] (halves of the head),
              angle p inv_freq_i, inv_freq_i = theta^(-2i/d) (then the rope_scaling)
      query head h uses key/value head h // (H / H_kv);
      P = softmax(q k^T / sqrt(d) + causal mask (+ the sliding window: key j with j <= i - W hidden))
      x = x + [P v] Wo^T;  b = RMSNorm(x) g_2;  x = x + (silu(b Wg^T) * (b Wu^T)) Wd^T
    logits = RMSNorm(x) g_f W_head^T, W_head = lm_head, or embed_tokens when lm_head is absent
  GPT-NeoX:
    qkv = LN_1(x) Wqkv^T + bqkv viewed as [L, H, 3 d]: head h's q, k, v contiguous
    RoPE on the first r = int(d rotary_pct) dimensions of each head (rotate-half within them)
    attn = [P v] Wdense^T + bdense;  mlp(u) = GELU(LN_2(u) W1^T + b1) W2^T + b2
    parallel: x = x + attn(x) + mlp(x);  sequential: x = x + attn(x); x = x + mlp(x)
    logits = LN_f(x) embed_out^T

Computed in float64 from the weights exactly as stored (the BF16 checkpoint's reference uses its
BF16-rounded weights). Each folder holds config.json, the weights, a tiny GPT-2-style ByteLevel
tokenizer.json (the vocabulary of make_fixtures.py) and reference/: tokens.json, per layer l
q_layer{l}.npy (H x L x d, after RoPE), k_layer{l}.npy and v_layer{l}.npy (H_kv x L x d),
attention_layer{l}.npy (H x L x L), logits.npy (L x vocab), float32.

Run with /usr/bin/python3 (torch, numpy).
"""

import json
import math
import os
import shutil
import sys

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "..", "..", "training"))
from make_fixtures import (  # noqa: E402 (beside this script)
    MERGES, RandomWeights, tokenizer_files, write_reference)
from safetensors_files import write_safetensors  # noqa: E402 (training/)

SEED = 20261125
F64 = torch.float64


# ---- tokenizer ---------------------------------------------------------------------------------

def tokenizer_json():
    """make_fixtures.py's vocabulary and merges as a GPT-2-style ByteLevel tokenizer.json."""
    vocab, _ = tokenizer_files()
    end = vocab["<|endoftext|>"]
    return {"version": "1.0", "truncation": None, "padding": None,
            "added_tokens": [{"id": end, "content": "<|endoftext|>", "single_word": False,
                              "lstrip": False, "rstrip": False, "normalized": True,
                              "special": True}],
            "normalizer": None,
            "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": False,
                              "trim_offsets": True, "use_regex": True},
            "post_processor": {"type": "ByteLevel", "add_prefix_space": True,
                               "trim_offsets": False, "use_regex": True},
            "decoder": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True,
                        "use_regex": True},
            "model": {"type": "BPE", "dropout": None, "unk_token": None,
                      "continuing_subword_prefix": "", "end_of_word_suffix": "",
                      "fuse_unk": False, "byte_fallback": False, "vocab": vocab,
                      "merges": [f"{left} {right}" for left, right in MERGES]}}


# ---- the reference building blocks -------------------------------------------------------------

def rms_norm(x, gain, eps):
    return x / torch.sqrt((x * x).mean(dim=-1, keepdim=True) + eps) * gain


def layer_norm(x, gain, bias, eps):
    mean = x.mean(dim=-1, keepdim=True)
    variance = ((x - mean) ** 2).mean(dim=-1, keepdim=True)
    return (x - mean) / torch.sqrt(variance + eps) * gain + bias


def silu(u):
    return u / (1 + torch.exp(-u))


def gelu(u, form):
    if form == "gelu":
        return 0.5 * u * (1 + torch.erf(u / math.sqrt(2)))
    return 0.5 * u * (1 + torch.tanh(math.sqrt(2 / math.pi) * (u + 0.044715 * u ** 3)))


def inverse_frequencies(theta, rotary_dims, scaling):
    """inv_freq_i = theta^(-2i/r), i < r/2, then rope_scaling as the Hugging Face documentation
    of rope_scaling describes it ("linear": divided by factor; "llama3": wavelengths longer than
    original_max_position_embeddings / low_freq_factor divided by factor, shorter than
    original_max_position_embeddings / high_freq_factor kept, smoothly interpolated between)."""
    inv = 1.0 / theta ** (torch.arange(0, rotary_dims, 2, dtype=F64) / rotary_dims)
    kind = None if scaling is None else scaling.get("rope_type", scaling.get("type"))
    if kind == "linear":
        return inv / scaling["factor"]
    if kind == "llama3":
        factor, low, high = (scaling["factor"], scaling["low_freq_factor"],
                             scaling["high_freq_factor"])
        original = scaling["original_max_position_embeddings"]
        out = []
        for f in inv.tolist():
            wavelength = 2 * math.pi / f
            if wavelength < original / high:
                out.append(f)
            elif wavelength > original / low:
                out.append(f / factor)
            else:
                t = (original / wavelength - low) / (high - low)
                out.append((1 - t) * f / factor + t * f)
        return torch.tensor(out, dtype=F64)
    return inv


def rope(x, inv_freq):
    """x: heads x L x d; rotates the first r = 2 len(inv_freq) dimensions (rotate-half)."""
    r = 2 * inv_freq.numel()
    positions = torch.arange(x.shape[1], dtype=F64)
    angles = torch.outer(positions, inv_freq)
    cos = torch.cat([angles, angles], dim=-1).cos()
    sin = torch.cat([angles, angles], dim=-1).sin()
    rotated, passed = x[..., :r], x[..., r:]
    half = r // 2
    rotate_half = torch.cat([-rotated[..., half:], rotated[..., :half]], dim=-1)
    return torch.cat([rotated * cos + rotate_half * sin, passed], dim=-1)


def attention(q, k, v, window):
    """q: H x L x d; k, v: H_kv x L x d. Causal softmax attention, query head h on key/value head
    h // (H / H_kv); with a window W, query i sees keys i - W < j <= i."""
    heads, length, d = q.shape
    group = heads // k.shape[0]
    k = k.repeat_interleave(group, dim=0)
    v = v.repeat_interleave(group, dim=0)
    i = torch.arange(length).unsqueeze(1)
    j = torch.arange(length).unsqueeze(0)
    hidden = j > i
    if window:
        hidden = hidden | (j <= i - window)
    scores = (q @ k.transpose(1, 2) / math.sqrt(d)).masked_fill(hidden, float("-inf"))
    p = torch.softmax(scores, dim=-1)
    return p, (p @ v).transpose(0, 1).reshape(length, heads * d)


def check_building_blocks():
    """The hand-written pieces agree with PyTorch's own."""
    g = torch.Generator().manual_seed(1)
    u = torch.randn(5, 8, generator=g, dtype=F64) * 3
    gain, bias = torch.rand(8, dtype=F64), torch.rand(8, dtype=F64)
    F = torch.nn.functional
    torch.testing.assert_close(layer_norm(u, gain, bias, 1e-5),
                               F.layer_norm(u, (8,), gain, bias, eps=1e-5))
    torch.testing.assert_close(silu(u), F.silu(u))
    torch.testing.assert_close(gelu(u, "gelu"), F.gelu(u))
    torch.testing.assert_close(gelu(u, "gelu_new"), F.gelu(u, approximate="tanh"))
    # RoPE rotates each pair (i, i + r/2) by p inv_freq_i: norms kept, position 0 unchanged.
    x = torch.randn(2, 6, 8, generator=g, dtype=F64)
    y = rope(x, inverse_frequencies(100.0, 8, None))
    torch.testing.assert_close(y.norm(dim=-1), x.norm(dim=-1))
    torch.testing.assert_close(y[:, 0], x[:, 0])


# ---- the two architectures ---------------------------------------------------------------------

def head_dim(config):
    """head_dim when config.json gives it, else hidden_size / num_attention_heads."""
    return config.get("head_dim") or config["hidden_size"] // config["num_attention_heads"]


def llama_weights(config, generator, biases, tied):
    e, h, kv, d, inner = (config["hidden_size"], config["num_attention_heads"],
                          config["num_key_value_heads"], head_dim(config),
                          config["intermediate_size"])
    w = RandomWeights(generator)
    w["model.embed_tokens.weight"] = w.normal(config["vocab_size"], e, std=1.0)
    for layer in range(config["num_hidden_layers"]):
        p = f"model.layers.{layer}."
        w.norm(p + "input_layernorm", e, bias=False)
        w.linear(p + "self_attn.q_proj", (h * d, e), 0.45)
        w.linear(p + "self_attn.k_proj", (kv * d, e), 0.45)
        w.linear(p + "self_attn.v_proj", (kv * d, e), 0.3)
        if biases:
            w[p + "self_attn.q_proj.bias"] = w.normal(h * d, std=0.3)
            w[p + "self_attn.k_proj.bias"] = w.normal(kv * d, std=0.3)
            w[p + "self_attn.v_proj.bias"] = w.normal(kv * d, std=0.3)
        w.linear(p + "self_attn.o_proj", (e, h * d), 0.2)
        w.norm(p + "post_attention_layernorm", e, bias=False)
        w.linear(p + "mlp.gate_proj", (inner, e), 0.3)
        w.linear(p + "mlp.up_proj", (inner, e), 0.3)
        w.linear(p + "mlp.down_proj", (e, inner), 0.2)
    w.norm("model.norm", e, bias=False)
    if not tied:
        w.linear("lm_head", (config["vocab_size"], e), 0.3)
    return dict(w)


def llama_forward(config, w, ids):
    h, kv, d = config["num_attention_heads"], config["num_key_value_heads"], head_dim(config)
    eps = config["rms_norm_eps"]
    inv_freq = inverse_frequencies(config["rope_theta"], d, config.get("rope_scaling"))
    window = config.get("sliding_window") if config["model_type"] == "mistral" else None
    length = len(ids)
    x = w["model.embed_tokens.weight"][ids]
    captured = []
    for layer in range(config["num_hidden_layers"]):
        p = f"model.layers.{layer}.self_attn."
        a = rms_norm(x, w[f"model.layers.{layer}.input_layernorm.weight"], eps)

        def project(name, heads):
            y = a @ w[p + name + ".weight"].T
            if p + name + ".bias" in w:
                y = y + w[p + name + ".bias"]
            return y.reshape(length, heads, d).transpose(0, 1)

        q = rope(project("q_proj", h), inv_freq)
        k = rope(project("k_proj", kv), inv_freq)
        v = project("v_proj", kv)
        prob, o = attention(q, k, v, window)
        x = x + o @ w[p + "o_proj.weight"].T
        m = f"model.layers.{layer}.mlp."
        b = rms_norm(x, w[f"model.layers.{layer}.post_attention_layernorm.weight"], eps)
        x = x + (silu(b @ w[m + "gate_proj.weight"].T) * (b @ w[m + "up_proj.weight"].T)) @ \
            w[m + "down_proj.weight"].T
        captured.append((q, k, v, prob))
    head = w.get("lm_head.weight", w["model.embed_tokens.weight"])
    return captured, rms_norm(x, w["model.norm.weight"], eps) @ head.T


def neox_weights(config, generator):
    e, inner = config["hidden_size"], config["intermediate_size"]
    w = RandomWeights(generator)
    w["gpt_neox.embed_in.weight"] = w.normal(config["vocab_size"], e, std=1.0)
    for layer in range(config["num_hidden_layers"]):
        p = f"gpt_neox.layers.{layer}."
        w.norm(p + "input_layernorm", e)
        w.norm(p + "post_attention_layernorm", e)
        w.linear(p + "attention.query_key_value", (3 * e, e), 0.35, 3 * e, bias_std=0.2)
        w.linear(p + "attention.dense", (e, e), 0.2, e)
        w.linear(p + "mlp.dense_h_to_4h", (inner, e), 0.3, inner)
        w.linear(p + "mlp.dense_4h_to_h", (e, inner), 0.2, e)
    w.norm("gpt_neox.final_layer_norm", e)
    w.linear("embed_out", (config["vocab_size"], e), 0.3)
    return dict(w)


def neox_forward(config, w, ids):
    e, h = config["hidden_size"], config["num_attention_heads"]
    d = e // h
    eps = config["layer_norm_eps"]
    inv_freq = inverse_frequencies(config["rotary_emb_base"], int(d * config["rotary_pct"]), None)
    length = len(ids)
    x = w["gpt_neox.embed_in.weight"][ids]
    captured = []
    for layer in range(config["num_hidden_layers"]):
        p = f"gpt_neox.layers.{layer}."

        def mlp(u):
            b = layer_norm(u, w[p + "post_attention_layernorm.weight"],
                           w[p + "post_attention_layernorm.bias"], eps)
            hidden = gelu(b @ w[p + "mlp.dense_h_to_4h.weight"].T + w[p + "mlp.dense_h_to_4h.bias"],
                          config["hidden_act"])
            return hidden @ w[p + "mlp.dense_4h_to_h.weight"].T + w[p + "mlp.dense_4h_to_h.bias"]

        a = layer_norm(x, w[p + "input_layernorm.weight"], w[p + "input_layernorm.bias"], eps)
        qkv = a @ w[p + "attention.query_key_value.weight"].T + \
            w[p + "attention.query_key_value.bias"]
        qkv = qkv.reshape(length, h, 3 * d).transpose(0, 1)  # heads x L x 3d
        q = rope(qkv[..., :d], inv_freq)
        k = rope(qkv[..., d:2 * d], inv_freq)
        v = qkv[..., 2 * d:]
        prob, o = attention(q, k, v, None)
        attn = o @ w[p + "attention.dense.weight"].T + w[p + "attention.dense.bias"]
        if config["use_parallel_residual"]:
            x = x + attn + mlp(x)
        else:
            x = x + attn
            x = x + mlp(x)
        captured.append((q, k, v, prob))
    final = layer_norm(x, w["gpt_neox.final_layer_norm.weight"],
                       w["gpt_neox.final_layer_norm.bias"], eps)
    return captured, final @ w["embed_out.weight"].T


# ---- files -------------------------------------------------------------------------------------

def to_bf16(array):
    """float64 -> bfloat16 bits (uint16), rounded to nearest even."""
    bits = array.astype(np.float32).view(np.uint32).astype(np.uint64)
    return ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16).astype(np.uint16)


def from_bf16(bits):
    return (bits.astype(np.uint32) << 16).view(np.float32).astype(np.float64)


def stored_weights(weights, dtype):
    """name -> (numpy array as stored, float64 tensor of the stored values)."""
    out = {}
    for name, value in weights.items():
        if dtype == "BF16":
            bits = to_bf16(value.numpy())
            out[name] = (bits, torch.from_numpy(from_bf16(bits)))
        else:
            array = value.numpy().astype("<f4")
            out[name] = (array, torch.from_numpy(array.astype(np.float64)))
    return out


def write_folder(name, config, weights, forward, ids, dtype="F32", shards=1):
    folder = os.path.join(HERE, name)
    if os.path.isdir(folder):
        shutil.rmtree(folder)
    os.makedirs(os.path.join(folder, "reference"))
    with open(os.path.join(folder, "config.json"), "w") as f:
        json.dump(config, f, indent=2)
        f.write("\n")
    with open(os.path.join(folder, "tokenizer.json"), "w", encoding="utf-8") as f:
        json.dump(tokenizer_json(), f, ensure_ascii=False)

    stored = stored_weights(weights, dtype)
    tensors = [(key, dtype, array) for key, (array, _) in stored.items()]
    if shards == 1:
        write_safetensors(os.path.join(folder, "model.safetensors"), tensors,
                          "make_llama_fixtures.py")
    else:
        weight_map, size = {}, 0
        per_shard = math.ceil(len(tensors) / shards)
        for s in range(shards):
            shard = f"model-{s + 1:05d}-of-{shards:05d}.safetensors"
            part = tensors[s * per_shard:(s + 1) * per_shard]
            write_safetensors(os.path.join(folder, shard), part, "make_llama_fixtures.py")
            for key, _, array in part:
                weight_map[key] = shard
                size += array.nbytes
        with open(os.path.join(folder, "model.safetensors.index.json"), "w") as f:
            json.dump({"metadata": {"total_size": size}, "weight_map": weight_map}, f, indent=2)
            f.write("\n")

    captured, logits = forward(config, {k: t for k, (_, t) in stored.items()}, torch.tensor(ids))
    write_reference(folder, ids, captured, logits, np.float32)


def llama_config(model_type, **changes):
    config = {"model_type": model_type, "architectures": ["LlamaForCausalLM"],
              "hidden_size": 16, "num_attention_heads": 4, "num_key_value_heads": 2,
              "head_dim": 12, "intermediate_size": 32, "num_hidden_layers": 2,
              "max_position_embeddings": 64, "vocab_size": len(tokenizer_files()[0]),
              "rms_norm_eps": 1e-5, "rope_theta": 10000.0, "rope_scaling": None,
              "hidden_act": "silu", "tie_word_embeddings": False, "torch_dtype": "float32"}
    config.update(changes)
    return config


def neox_config(**changes):
    config = {"model_type": "gpt_neox", "architectures": ["GPTNeoXForCausalLM"],
              "hidden_size": 32, "num_attention_heads": 2, "intermediate_size": 32,
              "num_hidden_layers": 2, "max_position_embeddings": 64,
              "vocab_size": len(tokenizer_files()[0]), "layer_norm_eps": 1e-5,
              "rotary_pct": 0.25, "rotary_emb_base": 10000, "use_parallel_residual": True,
              "hidden_act": "gelu", "tie_word_embeddings": False, "torch_dtype": "float32"}
    config.update(changes)
    return config


def main():
    check_building_blocks()
    generator = torch.Generator().manual_seed(SEED)
    vocab, _ = tokenizer_files()
    # 16 ids: bytes, merged symbols and <|endoftext|>, some repeated.
    ids = [vocab["Ġthe"], 72, vocab["Ġt"], 65, vocab["he"], vocab["Ġan"], 3, vocab["in"],
           len(vocab) - 1, vocab["Ġthe"], 200, vocab["at"], vocab["Ġw"], 101, vocab["Ġthe"], 66]

    # Llama with GQA (4 query heads, 2 key/value heads), head_dim 12 (not hidden_size / heads),
    # a non-default rope_theta and llama3 scaling whose three bands all occur at d = 12: the
    # wavelength 2 pi / inv_freq_i is 6.3 (< 64 / 8: kept), 38 (between: smoothed), 232 and up
    # (> 64 / 1: divided by the factor).
    llama = llama_config("llama", rope_theta=50000.0,
                         rope_scaling={"rope_type": "llama3", "factor": 8.0,
                                       "low_freq_factor": 1.0, "high_freq_factor": 8.0,
                                       "original_max_position_embeddings": 64})
    weights = llama_weights(llama, generator, biases=False, tied=False)
    write_folder("tiny-llama-gqa-f32", llama, weights, llama_forward, ids)
    write_folder("tiny-llama-gqa-2-shards", llama, weights, llama_forward, ids, shards=2)

    # Qwen2: q/k/v biases, tied embeddings (no lm_head.weight), linear scaling under "type".
    qwen = llama_config("qwen2", architectures=["Qwen2ForCausalLM"], num_key_value_heads=1,
                        rope_theta=1000000.0, tie_word_embeddings=True,
                        rope_scaling={"type": "linear", "factor": 2.0}, use_sliding_window=False)
    del qwen["head_dim"]  # hidden_size / heads = 4
    write_folder("tiny-qwen2-f32", qwen, llama_weights(qwen, generator, biases=True, tied=True),
                 llama_forward, ids)

    # Mistral: a sliding window of 5 keys, shorter than the 16 tokens.
    mistral = llama_config("mistral", architectures=["MistralForCausalLM"], sliding_window=5)
    write_folder("tiny-mistral-f32", mistral,
                 llama_weights(mistral, generator, biases=False, tied=False), llama_forward, ids)

    # The Llama in BF16, against the reference of its BF16-rounded weights.
    bf16 = llama_config("llama", num_key_value_heads=4, head_dim=8, torch_dtype="bfloat16")
    write_folder("tiny-llama-bf16", bf16, llama_weights(bf16, generator, biases=False, tied=True),
                 llama_forward, ids, dtype="BF16")

    # Pythia: rotary on a quarter of each head's 16 dimensions with the parallel residual; on half
    # of 8 with the sequential one.
    parallel = neox_config()
    write_folder("tiny-pythia-parallel-f32", parallel, neox_weights(parallel, generator),
                 neox_forward, ids)
    sequential = neox_config(hidden_size=16, rotary_pct=0.5, use_parallel_residual=False,
                             hidden_act="gelu_new")
    write_folder("tiny-pythia-sequential-f32", sequential, neox_weights(sequential, generator),
                 neox_forward, ids)


if __name__ == "__main__":
    main()
