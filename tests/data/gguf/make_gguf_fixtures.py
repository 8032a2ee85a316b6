#!/usr/bin/python3
"""GGUF fixtures for tests/test_gguf.cpp, and the references of their forward pass.

GGUF files are written here the way llama.cpp's convert_hf_to_gguf.py writes them (its GGUF names,
its metadata keys, its layouts: the llama architecture's q and k rows permuted per head so that
RoPE rotates adjacent pairs, k by head_count_kv; GPT-NeoX's query_key_value reordered to
[Q; K; V]; GPT-2's Conv1D weights transposed; llama3 scaling as the tensor rope_freqs; 1-D tensors
in F32), by gguf_files.py, from ggml's docs/gguf.md.

  python3 make_gguf_fixtures.py convert
      The F32/F16/BF16 files of the tiny Hugging Face checkpoints of ../models (made by
      make_fixtures.py and make_llama_fixtures.py), whose reference/ folders hold the forward pass
      they must give: llama-gqa-f32.gguf, qwen2-f32.gguf, pythia-parallel-f32.gguf,
      gpt2-f32.gguf, and, from the F16 and BF16 checkpoints with their values unchanged,
      gpt2-f16.gguf and llama-bf16.gguf. Checks that the reference forward pass below, run on the
      F32 files, gives those references.
  python3 make_gguf_fixtures.py sources DIR
      New tiny checkpoints (random weights), in F32 GGUF files in DIR, for ggml to quantize:
      widths a multiple of 32 (the Q*_0/Q*_1 blocks) and, for the K types, of 256; and DIR/plan.txt,
      what to make of each (see README.md).
  python3 make_gguf_fixtures.py tokenizer TOKENIZER_MODEL
      llama2-tokenizer.gguf.zlib: the metadata-only GGUF file of Llama 2's SentencePiece
      tokenizer (tokenizer.model of karpathy/llama2.c, Meta's) as the converter's
      _set_vocab_sentencepiece writes it: each piece, its score and its type (normal, unknown,
      control, byte), BOS 1, EOS 2, unknown 0, add_bos_token; read from the model's protocol
      buffer here (no sentencepiece needed). Stored as qUncompress reads it: 4 bytes of size (big
      endian), then a zlib stream.
  python3 make_gguf_fixtures.py folder MODEL_FOLDER OUT.gguf [F32|F16|BF16] [PRE]
      Any Hugging Face folder of these architectures converted the same way, its byte-level
      tokenizer (vocab.json + merges.txt, or tokenizer.json's BPE model and added tokens) written
      as a "gpt2" tokenizer with the pre-tokenizer PRE (default gpt-2): e.g. the built-in model,
      resources/models/kjv-gpt2, for the README's comparison of its quantized files.
  python3 make_gguf_fixtures.py seeds DIR
      Seed inputs of the fuzz target fuzz_gguf (fuzz/corpus/gguf): a one-block Llama with the tiny
      tokenizer, and a file holding one small tensor of every type read (seeded random blocks,
      their scales finite).
  python3 make_gguf_fixtures.py references DIR
      For every quantized fixture, the forward pass on ggml's own dequantized values (DIR/<name>
      .dequantized.gguf, written by ggml beside the quantized file): reference/<name>/
      attention_layer{l}.npy (H x L x L) and logits.npy (L x vocab), float32, computed in
      float64.

The reference forward pass is written from llama.cpp's conventions, not from Attention Lab's
code: it reads the GGUF names and layouts as they are (rotating adjacent pairs (2i, 2i + 1) for
the llama architecture, as ggml's rope "normal" mode does; halves (i, i + r/2) for Qwen2 and
GPT-NeoX, the "neox" mode), theta_i = p freq_scale base^(-2i/r) / rope_freqs_i. The building
blocks (RMSNorm, LayerNorm, GELU, SiLU, softmax attention) are make_llama_fixtures.py's.

Run with /usr/bin/python3 (torch, numpy).
"""

import json
import math
import os
import struct
import sys

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
MODELS = os.path.join(HERE, "..", "models")
sys.path.insert(0, MODELS)
from make_fixtures import MERGES, tokenizer_files  # noqa: E402
from make_llama_fixtures import (attention, gelu, layer_norm, rms_norm,  # noqa: E402
                                 silu)
from gguf_files import (ARRAY, BF16, BOOL, F16, F32, FLOAT32, INT32, STRING, UINT32,  # noqa: E402
                        read_gguf, stored, write_gguf)

F64 = torch.float64
SEED = 20261126
# llama.cpp's token types.
NORMAL, CONTROL = 1, 3


# ---- Hugging Face checkpoints ------------------------------------------------------------------

def read_safetensors(path):
    """name -> (dtype name, float64 array) of a .safetensors file."""
    data = open(path, "rb").read()
    (length,) = struct.unpack_from("<Q", data, 0)
    header = json.loads(data[8:8 + length])
    out = {}
    for name, entry in header.items():
        if name == "__metadata__":
            continue
        begin, end = entry["data_offsets"]
        raw = data[8 + length + begin:8 + length + end]
        dtype = entry["dtype"]
        if dtype == "F32":
            values = np.frombuffer(raw, dtype="<f4")
        elif dtype == "F16":
            values = np.frombuffer(raw, dtype="<f2")
        elif dtype == "BF16":
            values = (np.frombuffer(raw, dtype="<u2").astype(np.uint32) << 16).view(np.float32)
        else:
            continue  # GPT-2's mask buffers
        out[name] = (dtype, values.astype(np.float64).reshape(entry["shape"]))
    return out


def tokenizer_metadata(pre):
    """The tiny GPT-2-style tokenizer as the converter writes a "gpt2" tokenizer: tokens by id,
    types (the added special <|endoftext|> CONTROL), merges, pre, BOS and EOS."""
    vocab, _ = tokenizer_files()
    tokens = sorted(vocab, key=vocab.get)
    end = vocab["<|endoftext|>"]
    return [("tokenizer.ggml.model", STRING, "gpt2"),
            ("tokenizer.ggml.pre", STRING, pre),
            ("tokenizer.ggml.tokens", ARRAY, (STRING, tokens)),
            ("tokenizer.ggml.token_type", ARRAY,
             (INT32, [CONTROL if i == end else NORMAL for i in range(len(tokens))])),
            ("tokenizer.ggml.merges", ARRAY, (STRING, [f"{a} {b}" for a, b in MERGES])),
            ("tokenizer.ggml.bos_token_id", UINT32, end),
            ("tokenizer.ggml.eos_token_id", UINT32, end)]


def permute(weights, heads):
    """LlamaModel.permute of convert_hf_to_gguf.py: each head's rows (c d/2 + i) -> (2i + c)."""
    return (weights.reshape(heads, 2, weights.shape[0] // heads // 2, *weights.shape[1:])
            .swapaxes(1, 2).reshape(weights.shape))


def llama3_factors(config):
    """The rope_freqs tensor of a llama3-scaled model, from its rope_scaling (the converter takes
    original_max_position_embeddings from the top of config.json, falling back to 8192; the tiny
    checkpoint keeps it in rope_scaling, where transformers reads it)."""
    scaling = config["rope_scaling"]
    dim = config.get("head_dim") or config["hidden_size"] // config["num_attention_heads"]
    freqs = 1.0 / (config["rope_theta"] ** (torch.arange(0, dim, 2, dtype=torch.float32) / dim))
    factor, low, high = (scaling["factor"], scaling["low_freq_factor"],
                         scaling["high_freq_factor"])
    old = scaling["original_max_position_embeddings"]
    factors = []
    for freq in freqs.tolist():
        wavelength = 2 * math.pi / freq
        if wavelength < old / high:
            factors.append(1)
        elif wavelength > old / low:
            factors.append(factor)
        else:
            smooth = (old / wavelength - low) / (high - low)
            factors.append(1 / ((1 - smooth) / factor + smooth))
    return np.array(factors, dtype=np.float64)


def convert(config, weights, weight_type):
    """(metadata, [(name, float64 array)]) of a checkpoint as convert_hf_to_gguf.py converts it;
    weight_type for the 2-D tensors (F32 for the rest)."""
    kind = config["model_type"]
    if kind in ("llama", "qwen2"):
        arch = kind
        h, e = config["num_attention_heads"], config["hidden_size"]
        kv = config.get("num_key_value_heads") or h
        d = config.get("head_dim") or e // h
        meta = [(f"{arch}.block_count", UINT32, config["num_hidden_layers"]),
                (f"{arch}.context_length", UINT32, config["max_position_embeddings"]),
                (f"{arch}.embedding_length", UINT32, e),
                (f"{arch}.feed_forward_length", UINT32, config["intermediate_size"]),
                (f"{arch}.attention.head_count", UINT32, h),
                (f"{arch}.attention.head_count_kv", UINT32, kv),
                (f"{arch}.rope.freq_base", FLOAT32, config["rope_theta"]),
                (f"{arch}.attention.layer_norm_rms_epsilon", FLOAT32, config["rms_norm_eps"]),
                (f"{arch}.rope.dimension_count", UINT32, d)]
        if config.get("head_dim"):
            meta += [(f"{arch}.attention.key_length", UINT32, d),
                     (f"{arch}.attention.value_length", UINT32, d)]
        scaling = config.get("rope_scaling") or {}
        if scaling.get("rope_type", scaling.get("type")) == "linear":
            meta += [(f"{arch}.rope.scaling.type", STRING, "linear"),
                     (f"{arch}.rope.scaling.factor", FLOAT32, scaling["factor"])]
        layer = {"input_layernorm": "attn_norm", "self_attn.q_proj": "attn_q",
                 "self_attn.k_proj": "attn_k", "self_attn.v_proj": "attn_v",
                 "self_attn.o_proj": "attn_output", "post_attention_layernorm": "ffn_norm",
                 "mlp.gate_proj": "ffn_gate", "mlp.up_proj": "ffn_up", "mlp.down_proj": "ffn_down"}
        names = {"model.embed_tokens": "token_embd", "model.norm": "output_norm",
                 "lm_head": "output"}
        prefix, layers = "model.layers.", config["num_hidden_layers"]

        def modify(name, value):
            if arch == "llama" and ".q_proj." in name:
                return permute(value, h)
            if arch == "llama" and ".k_proj." in name:
                return permute(value, kv)
            return value
    elif kind == "gpt_neox":
        arch = "gptneox"
        h, e = config["num_attention_heads"], config["hidden_size"]
        meta = [("gptneox.context_length", UINT32, config["max_position_embeddings"]),
                ("gptneox.embedding_length", UINT32, e),
                ("gptneox.block_count", UINT32, config["num_hidden_layers"]),
                ("gptneox.feed_forward_length", UINT32, config["intermediate_size"]),
                ("gptneox.rope.dimension_count", UINT32, int(config["rotary_pct"] * (e // h))),
                ("gptneox.attention.head_count", UINT32, h),
                ("gptneox.use_parallel_residual", BOOL, config["use_parallel_residual"]),
                ("gptneox.attention.layer_norm_epsilon", FLOAT32, config["layer_norm_eps"])]
        layer = {"input_layernorm": "attn_norm", "attention.query_key_value": "attn_qkv",
                 "attention.dense": "attn_output", "post_attention_layernorm": "ffn_norm",
                 "mlp.dense_h_to_4h": "ffn_up", "mlp.dense_4h_to_h": "ffn_down"}
        names = {"gpt_neox.embed_in": "token_embd", "gpt_neox.final_layer_norm": "output_norm",
                 "embed_out": "output"}
        prefix, layers = "gpt_neox.layers.", config["num_hidden_layers"]

        def modify(name, value):
            if "query_key_value" in name:  # [H, 3, d, ...] -> [Q; K; V]
                qkv = value.reshape(h, 3, e // h, *value.shape[1:])
                return np.concatenate([qkv[:, p].reshape(e, *value.shape[1:]) for p in range(3)])
            return value
    else:
        arch = "gpt2"
        e = config["n_embd"]
        meta = [("gpt2.block_count", UINT32, config["n_layer"]),
                ("gpt2.context_length", UINT32, config["n_ctx"]),
                ("gpt2.embedding_length", UINT32, e),
                ("gpt2.feed_forward_length", UINT32, 4 * e),
                ("gpt2.attention.head_count", UINT32, config["n_head"]),
                ("gpt2.attention.layer_norm_epsilon", FLOAT32, config["layer_norm_epsilon"])]
        layer = {"ln_1": "attn_norm", "attn.c_attn": "attn_qkv", "attn.c_proj": "attn_output",
                 "ln_2": "ffn_norm", "mlp.c_fc": "ffn_up", "mlp.c_proj": "ffn_down"}
        names = {"wte": "token_embd", "wpe": "position_embd", "ln_f": "output_norm"}
        prefix, layers = "h.", config["n_layer"]

        def modify(name, value):  # the Conv1D weights (in x out) transposed
            return value.T if name.endswith((".c_attn.weight", ".c_proj.weight",
                                             ".c_fc.weight")) else value

    for hf, gguf in layer.items():  # the block's tensors, named blk.N.<gguf>
        for l in range(layers):
            names[f"{prefix}{l}.{hf}"] = f"blk.{l}.{gguf}"
    metadata = [("general.architecture", STRING, arch), ("general.name", STRING, "tiny"),
                ("general.file_type", UINT32, {F32: 0, F16: 1, BF16: 32}[weight_type])] + meta
    tensors = []
    for name, value in weights.items():
        if name.startswith("transformer."):
            name = name[len("transformer."):]
        if name.endswith((".attn.bias", ".attn.masked_bias")):
            continue  # GPT-2's mask buffers, which the converter drops
        base, _, suffix = name.rpartition(".")
        tensors.append((names[base] + "." + suffix, modify(name, value)))
    if kind == "llama" and (config.get("rope_scaling") or {}).get("rope_type") == "llama3":
        tensors.append(("rope_freqs.weight", llama3_factors(config)))
    return metadata, tensors


def write_fixture(path, metadata, tensors, weight_type, pre="gpt-2", tokenizer=None):
    """Writes the GGUF file (with the tiny tokenizer, or the given tokenizer metadata); returns its
    tensors as stored (float64)."""
    packed, values = [], {}
    for name, value in tensors:
        ggml_type = weight_type if value.ndim == 2 else F32
        raw, exact = stored(value, ggml_type)
        packed.append((name, ggml_type, value.shape, raw))
        values[name] = exact.reshape(value.shape)
    write_gguf(path, metadata + (tokenizer or tokenizer_metadata(pre)), packed)
    return values


def folder_tokenizer(folder, pre):
    """A folder's byte-level BPE tokenizer as the converter writes a "gpt2" tokenizer: tokens by id
    (a hole "[PAD<id>]"), added special tokens CONTROL, other added tokens USER_DEFINED, merges,
    pre; BOS/EOS from config.json."""
    if os.path.exists(os.path.join(folder, "vocab.json")):
        vocab = json.load(open(os.path.join(folder, "vocab.json"), encoding="utf-8"))
        merges = [line for line in open(os.path.join(folder, "merges.txt"), encoding="utf-8")
                  .read().split("\n") if line and not line.startswith("#version")]
        added = {i: (t, True) for t, i in vocab.items() if t.startswith("<|") and t.endswith("|>")}
    else:
        data = json.load(open(os.path.join(folder, "tokenizer.json"), encoding="utf-8"))
        vocab = data["model"]["vocab"]
        merges = [m if isinstance(m, str) else f"{m[0]} {m[1]}" for m in data["model"]["merges"]]
        added = {a["id"]: (a["content"], a["special"]) for a in data.get("added_tokens", [])}
    size = max(list(vocab.values()) + list(added)) + 1
    by_id = {i: t for t, i in vocab.items()}
    tokens, types = [], []
    for i in range(size):
        if i in added:
            tokens.append(added[i][0])
            types.append(CONTROL if added[i][1] else 4)
        else:
            tokens.append(by_id.get(i, f"[PAD{i}]"))
            types.append(NORMAL if i in by_id else 4)
    config = json.load(open(os.path.join(folder, "config.json")))
    meta = [("tokenizer.ggml.model", STRING, "gpt2"), ("tokenizer.ggml.pre", STRING, pre),
            ("tokenizer.ggml.tokens", ARRAY, (STRING, tokens)),
            ("tokenizer.ggml.token_type", ARRAY, (INT32, types)),
            ("tokenizer.ggml.merges", ARRAY, (STRING, merges))]
    for key in ("bos", "eos"):
        if config.get(f"{key}_token_id") is not None:
            meta.append((f"tokenizer.ggml.{key}_token_id", UINT32, config[f"{key}_token_id"]))
    return meta


def convert_folder(folder, out, weight_type, pre):
    config = json.load(open(os.path.join(folder, "config.json")))
    weights = {k: v for k, (_, v) in
               read_safetensors(os.path.join(folder, "model.safetensors")).items()}
    metadata, tensors = convert(config, weights, weight_type)
    write_fixture(out, metadata, tensors, weight_type, tokenizer=folder_tokenizer(folder, pre))
    print(f"{out}: {len(tensors)} tensors")


# ---- the reference forward pass, in llama.cpp's conventions ------------------------------------

def rope_ggml(x, n_rot, base, freq_scale, factors, neox):
    """ggml_rope on x (heads x L x d): theta_i = p freq_scale base^(-2i/n_rot) / factors_i, the
    pairs (2i, 2i + 1) ("normal" mode) or (i, i + n_rot/2) ("neox" mode) of the first n_rot."""
    half = n_rot // 2
    i = torch.arange(half, dtype=F64)
    inv = freq_scale * base ** (-2 * i / n_rot) / torch.as_tensor(factors, dtype=F64)
    angles = torch.outer(torch.arange(x.shape[1], dtype=F64), inv)  # L x half
    cos, sin = angles.cos(), angles.sin()
    out = x.clone()
    if neox:
        a, b = x[..., :half], x[..., half:n_rot]
        out[..., :half], out[..., half:n_rot] = a * cos - b * sin, a * sin + b * cos
    else:
        a, b = x[..., 0:n_rot:2], x[..., 1:n_rot:2]
        out[..., 0:n_rot:2], out[..., 1:n_rot:2] = a * cos - b * sin, a * sin + b * cos
    return out


def heads(y, count):
    """L x (count d) -> count x L x d."""
    return y.reshape(y.shape[0], count, -1).transpose(0, 1)


def gguf_forward(metadata, t, ids):
    """[P per layer (H x L x L)], logits (L x vocab) of a GGUF file's tensors t (name -> float64
    tensor in PyTorch shape)."""
    arch = metadata["general.architecture"]

    def key(name, default=None):
        return metadata.get(f"{arch}.{name}", default)

    e, h, n = key("embedding_length"), key("attention.head_count"), key("block_count")
    kv = key("attention.head_count_kv", h)
    d = key("attention.key_length", e // h)
    base = key("rope.freq_base", 10000.0)
    freq_scale = 1 / key("rope.scaling.factor") if key("rope.scaling.type") == "linear" else 1.0
    length = len(ids)
    x = t["token_embd.weight"][ids]
    if arch == "gpt2":
        x = x + t["position_embd.weight"][:length]
    probabilities = []

    def linear(a, name):
        y = a @ t[name + ".weight"].T
        return y + t[name + ".bias"] if name + ".bias" in t else y

    for l in range(n):
        b = f"blk.{l}."
        if arch in ("llama", "qwen2"):
            eps = key("attention.layer_norm_rms_epsilon")
            n_rot = key("rope.dimension_count", d)
            factors = t.get("rope_freqs.weight", torch.ones(n_rot // 2, dtype=F64))
            a = rms_norm(x, t[b + "attn_norm.weight"], eps)
            q = rope_ggml(heads(linear(a, b + "attn_q"), h), n_rot, base, freq_scale, factors,
                          neox=arch == "qwen2")
            k = rope_ggml(heads(linear(a, b + "attn_k"), kv), n_rot, base, freq_scale, factors,
                          neox=arch == "qwen2")
            p, o = attention(q, k, heads(linear(a, b + "attn_v"), kv), None)
            x = x + linear(o, b + "attn_output")
            c = rms_norm(x, t[b + "ffn_norm.weight"], eps)
            x = x + linear(silu(linear(c, b + "ffn_gate")) * linear(c, b + "ffn_up"),
                           b + "ffn_down")
        else:
            eps = key("attention.layer_norm_epsilon")

            def norm(u, name):
                return layer_norm(u, t[name + ".weight"], t[name + ".bias"], eps)

            qkv = linear(norm(x, b + "attn_norm"), b + "attn_qkv")
            q, k, v = (heads(qkv[:, i * e:(i + 1) * e], h) for i in range(3))
            if arch == "gptneox":
                n_rot = key("rope.dimension_count")
                ones = torch.ones(n_rot // 2, dtype=F64)
                q = rope_ggml(q, n_rot, base, 1.0, ones, neox=True)
                k = rope_ggml(k, n_rot, base, 1.0, ones, neox=True)
            p, o = attention(q, k, v, None)
            attn = linear(o, b + "attn_output")
            form = "gelu" if arch == "gptneox" else "gelu_new"

            def mlp(u):
                return linear(gelu(linear(norm(u, b + "ffn_norm"), b + "ffn_up"), form),
                              b + "ffn_down")

            if arch == "gptneox" and key("use_parallel_residual", True):
                x = x + attn + mlp(x)
            else:
                x = x + attn
                x = x + mlp(x)
        probabilities.append(p)
    if arch in ("llama", "qwen2"):
        final = rms_norm(x, t["output_norm.weight"], key("attention.layer_norm_rms_epsilon"))
    else:
        final = layer_norm(x, t["output_norm.weight"], t["output_norm.bias"],
                           key("attention.layer_norm_epsilon"))
    head = t.get("output.weight", t["token_embd.weight"])
    return probabilities, final @ head.T


def reference_ids():
    """make_llama_fixtures.py's 16 ids."""
    vocab, _ = tokenizer_files()
    return [vocab["Ġthe"], 72, vocab["Ġt"], 65, vocab["he"], vocab["Ġan"], 3, vocab["in"],
            len(vocab) - 1, vocab["Ġthe"], 200, vocab["at"], vocab["Ġw"], 101, vocab["Ġthe"], 66]


# ---- Llama 2's SentencePiece tokenizer ---------------------------------------------------------

def sentencepiece_pieces(path):
    """(piece, score, type) of a SentencePiece ModelProto: field 1 (pieces) of messages with
    piece (1, string), score (2, float) and type (3, varint: 1 normal, 2 unknown, 3 control,
    4 user defined, 5 unused, 6 byte)."""
    data = open(path, "rb").read()

    def varint(buffer, position):
        result = shift = 0
        while True:
            byte = buffer[position]
            position += 1
            result |= (byte & 0x7F) << shift
            shift += 7
            if byte < 0x80:
                return result, position

    def fields(buffer):
        position = 0
        while position < len(buffer):
            key, position = varint(buffer, position)
            number, wire = key >> 3, key & 7
            if wire == 0:
                value, position = varint(buffer, position)
            elif wire == 1:
                value, position = buffer[position:position + 8], position + 8
            elif wire == 2:
                length, position = varint(buffer, position)
                value, position = buffer[position:position + length], position + length
            elif wire == 5:
                value, position = buffer[position:position + 4], position + 4
            else:
                raise ValueError(f"wire type {wire}")
            yield number, wire, value

    pieces = []
    for number, _, value in fields(data):
        if number != 1:
            continue
        piece, score, kind = "", 0.0, 1
        for field, _, item in fields(value):
            if field == 1:
                piece = item.decode("utf-8")
            elif field == 2:
                (score,) = struct.unpack("<f", item)
            elif field == 3:
                kind = item
        pieces.append((piece, score, kind))
    return pieces


def write_sentencepiece_tokenizer(model_path):
    import zlib
    pieces = sentencepiece_pieces(model_path)
    metadata = [("general.architecture", STRING, "llama"),
                ("tokenizer.ggml.model", STRING, "llama"),
                ("tokenizer.ggml.tokens", ARRAY, (STRING, [p for p, _, _ in pieces])),
                ("tokenizer.ggml.scores", ARRAY, (FLOAT32, [s for _, s, _ in pieces])),
                ("tokenizer.ggml.token_type", ARRAY, (INT32, [k for _, _, k in pieces])),
                ("tokenizer.ggml.bos_token_id", UINT32, 1),
                ("tokenizer.ggml.eos_token_id", UINT32, 2),
                ("tokenizer.ggml.unknown_token_id", UINT32, 0),
                ("tokenizer.ggml.add_bos_token", BOOL, True),
                ("tokenizer.ggml.add_eos_token", BOOL, False)]
    temporary = os.path.join(HERE, "llama2-tokenizer.gguf.tmp")
    write_gguf(temporary, metadata, [])
    raw = open(temporary, "rb").read()
    os.remove(temporary)
    with open(os.path.join(HERE, "llama2-tokenizer.gguf.zlib"), "wb") as f:
        f.write(struct.pack(">I", len(raw)) + zlib.compress(raw, 9))
    print(f"llama2-tokenizer.gguf.zlib: {len(pieces)} pieces")


# ---- fuzz seeds --------------------------------------------------------------------------------

def write_seeds(folder):
    os.makedirs(folder, exist_ok=True)
    generator = torch.Generator().manual_seed(7)
    config, weights = llama_checkpoint(generator, 32, 2, 1, 32, 1, False, True, "llama")
    metadata, tensors = convert(config, {k: v.numpy() for k, v in weights.items()}, F16)
    write_fixture(os.path.join(folder, "llama-one-block.gguf"), metadata, tensors, F16)
    # One tensor of each type read: (ggml type, values per block, bytes per block, offsets of the
    # half-precision scales in a block).
    types = [(8, 32, 34, [0]), (2, 32, 18, [0]), (3, 32, 20, [0, 2]), (6, 32, 22, [0]),
             (7, 32, 24, [0, 2]), (12, 256, 144, [0, 2]), (13, 256, 176, [0, 2]),
             (14, 256, 210, [208])]
    rng = np.random.default_rng(7)
    packed = [("f32", F32, (4,), np.arange(4, dtype="<f4").tobytes()),
              ("f16", F16, (4,), np.arange(4, dtype="<f2").tobytes()),
              ("bf16", BF16, (4,), np.arange(4, dtype="<u2").tobytes())]
    scale = np.array([0.01], dtype="<f2").tobytes()
    for ggml_type, size, block, scales in types:
        raw = bytearray(rng.integers(0, 256, block, dtype=np.uint8).tobytes())
        for at in scales:
            raw[at:at + 2] = scale
        packed.append((f"type{ggml_type}", ggml_type, (size,), bytes(raw)))
    write_gguf(os.path.join(folder, "every-type.gguf"),
               [("general.architecture", STRING, "llama")], packed)


# ---- the commands ------------------------------------------------------------------------------

def convert_checkpoints():
    """The F32/F16/BF16 fixtures of ../models' checkpoints, checked against their references."""
    fixtures = [("tiny-llama-gqa-f32", "llama-gqa-f32", F32),
                ("tiny-qwen2-f32", "qwen2-f32", F32),
                ("tiny-pythia-parallel-f32", "pythia-parallel-f32", F32),
                ("tiny-gpt2-prefixed-f32", "gpt2-f32", F32),
                ("tiny-gpt2-f16", "gpt2-f16", F16),
                ("tiny-llama-bf16", "llama-bf16", BF16)]
    for folder, name, weight_type in fixtures:
        source = os.path.join(MODELS, folder)
        config = json.load(open(os.path.join(source, "config.json")))
        weights = {k: v for k, (_, v) in
                   read_safetensors(os.path.join(source, "model.safetensors")).items()}
        metadata, tensors = convert(config, weights, weight_type)
        values = write_fixture(os.path.join(HERE, name + ".gguf"), metadata, tensors,
                               weight_type)
        meta = {k: v for k, _, v in metadata}
        probabilities, logits = gguf_forward(
            meta, {k: torch.from_numpy(v) for k, v in values.items()},
            json.load(open(os.path.join(source, "reference", "tokens.json")))["ids"])
        for l, p in enumerate(probabilities):
            expected = np.load(os.path.join(source, "reference", f"attention_layer{l}.npy"))
            assert np.abs(p.numpy() - expected).max() < 1e-6, (name, l)
        expected = np.load(os.path.join(source, "reference", "logits.npy"))
        assert np.abs(logits.numpy() - expected).max() < 1e-4 * max(1, np.abs(expected).max())
        print(f"{name}.gguf: the GGUF forward pass gives {folder}'s reference")


def normal(generator, *shape, std):
    return torch.randn(*shape, generator=generator, dtype=F64) * std


def llama_checkpoint(generator, width, heads, kv_heads, inner, layers, biases, tied, model_type):
    """A Llama-family checkpoint of random weights, scaled by the fan-in so that attention is
    neither uniform nor one-hot at any width."""
    d = width // heads
    config = {"model_type": model_type, "hidden_size": width, "num_attention_heads": heads,
              "num_key_value_heads": kv_heads, "intermediate_size": inner,
              "num_hidden_layers": layers, "max_position_embeddings": 64,
              "vocab_size": len(tokenizer_files()[0]), "rms_norm_eps": 1e-5,
              "rope_theta": 10000.0}
    s = 1 / math.sqrt(width)
    w = {"model.embed_tokens.weight": normal(generator, config["vocab_size"], width, std=1.0)}
    for l in range(layers):
        p = f"model.layers.{l}."
        w[p + "input_layernorm.weight"] = 1 + normal(generator, width, std=0.2)
        w[p + "self_attn.q_proj.weight"] = normal(generator, heads * d, width, std=1.8 * s)
        w[p + "self_attn.k_proj.weight"] = normal(generator, kv_heads * d, width, std=1.8 * s)
        w[p + "self_attn.v_proj.weight"] = normal(generator, kv_heads * d, width, std=1.2 * s)
        if biases:
            for name, rows in (("q", heads * d), ("k", kv_heads * d), ("v", kv_heads * d)):
                w[p + f"self_attn.{name}_proj.bias"] = normal(generator, rows, std=0.3)
        w[p + "self_attn.o_proj.weight"] = normal(generator, width, heads * d, std=0.8 * s)
        w[p + "post_attention_layernorm.weight"] = 1 + normal(generator, width, std=0.2)
        w[p + "mlp.gate_proj.weight"] = normal(generator, inner, width, std=1.2 * s)
        w[p + "mlp.up_proj.weight"] = normal(generator, inner, width, std=1.2 * s)
        w[p + "mlp.down_proj.weight"] = normal(generator, width, inner,
                                               std=0.8 / math.sqrt(inner))
    w["model.norm.weight"] = 1 + normal(generator, width, std=0.2)
    if not tied:
        w["lm_head.weight"] = normal(generator, config["vocab_size"], width, std=1.2 * s)
    return config, w


def neox_checkpoint(generator, width, heads, inner, layers):
    config = {"model_type": "gpt_neox", "hidden_size": width, "num_attention_heads": heads,
              "intermediate_size": inner, "num_hidden_layers": layers,
              "max_position_embeddings": 64, "vocab_size": len(tokenizer_files()[0]),
              "layer_norm_eps": 1e-5, "rotary_pct": 0.25, "use_parallel_residual": False}
    s = 1 / math.sqrt(width)
    w = {"gpt_neox.embed_in.weight": normal(generator, config["vocab_size"], width, std=1.0)}
    for l in range(layers):
        p = f"gpt_neox.layers.{l}."
        for norm in ("input_layernorm", "post_attention_layernorm"):
            w[p + norm + ".weight"] = 1 + normal(generator, width, std=0.2)
            w[p + norm + ".bias"] = normal(generator, width, std=0.1)
        w[p + "attention.query_key_value.weight"] = normal(generator, 3 * width, width,
                                                           std=1.6 * s)
        w[p + "attention.query_key_value.bias"] = normal(generator, 3 * width, std=0.2)
        w[p + "attention.dense.weight"] = normal(generator, width, width, std=0.8 * s)
        w[p + "attention.dense.bias"] = normal(generator, width, std=0.1)
        w[p + "mlp.dense_h_to_4h.weight"] = normal(generator, inner, width, std=1.2 * s)
        w[p + "mlp.dense_h_to_4h.bias"] = normal(generator, inner, std=0.1)
        w[p + "mlp.dense_4h_to_h.weight"] = normal(generator, width, inner,
                                                   std=0.8 / math.sqrt(inner))
        w[p + "mlp.dense_4h_to_h.bias"] = normal(generator, width, std=0.1)
    w["gpt_neox.final_layer_norm.weight"] = 1 + normal(generator, width, std=0.2)
    w["gpt_neox.final_layer_norm.bias"] = normal(generator, width, std=0.1)
    w["embed_out.weight"] = normal(generator, config["vocab_size"], width, std=1.2 * s)
    return config, w


def gpt2_checkpoint(generator, width, heads, layers):
    config = {"model_type": "gpt2", "n_layer": layers, "n_head": heads, "n_embd": width,
              "n_ctx": 32, "n_positions": 32, "layer_norm_epsilon": 1e-5}
    s = 1 / math.sqrt(width)
    vocab = len(tokenizer_files()[0])
    w = {"wte.weight": normal(generator, vocab, width, std=0.5),
         "wpe.weight": normal(generator, 32, width, std=0.3)}
    for l in range(layers):
        h = f"h.{l}."
        for norm in ("ln_1", "ln_2"):
            w[h + norm + ".weight"] = 1 + normal(generator, width, std=0.2)
            w[h + norm + ".bias"] = normal(generator, width, std=0.1)
        # Conv1D: in x out.
        w[h + "attn.c_attn.weight"] = normal(generator, width, 3 * width, std=1.6 * s)
        w[h + "attn.c_attn.bias"] = normal(generator, 3 * width, std=0.1)
        w[h + "attn.c_proj.weight"] = normal(generator, width, width, std=0.8 * s)
        w[h + "attn.c_proj.bias"] = normal(generator, width, std=0.1)
        w[h + "mlp.c_fc.weight"] = normal(generator, width, 4 * width, std=1.2 * s)
        w[h + "mlp.c_fc.bias"] = normal(generator, 4 * width, std=0.1)
        w[h + "mlp.c_proj.weight"] = normal(generator, 4 * width, width,
                                            std=0.4 / math.sqrt(width))
        w[h + "mlp.c_proj.bias"] = normal(generator, width, std=0.1)
    w["ln_f.weight"] = 1 + normal(generator, width, std=0.2)
    w["ln_f.bias"] = normal(generator, width, std=0.1)
    return config, w


# What ggml makes of each source (plan.txt: source, fixture, rule): a ggml type for every 2-D
# tensor, or q4_k_m (Q6_K for output, attn_v and ffn_down, Q4_K for the rest); a type whose blocks
# do not divide a tensor's rows falls back as llama-quantize does (Q4_K -> Q5_0, Q5_K -> Q5_1,
# Q6_K -> Q8_0).
PLAN = [("llama-64", "llama-q8_0", "Q8_0"), ("llama-64", "llama-q4_0", "Q4_0"),
        ("llama-64", "llama-q4_1", "Q4_1"), ("llama-64", "llama-q5_0", "Q5_0"),
        ("llama-64", "llama-q5_1", "Q5_1"), ("llama-256", "llama-q4_k", "Q4_K"),
        ("llama-256", "llama-q5_k", "Q5_K"), ("llama-256", "llama-q6_k", "Q6_K"),
        ("qwen2-64", "qwen2-q4_k_m", "q4_k_m"), ("pythia-64", "pythia-q8_0", "Q8_0"),
        ("gpt2-64", "gpt2-q5_1", "Q5_1")]


def write_sources(folder):
    generator = torch.Generator().manual_seed(SEED)
    os.makedirs(folder, exist_ok=True)
    sources = {
        "llama-64": llama_checkpoint(generator, 64, 4, 2, 128, 2, False, False, "llama"),
        # one block, tied: every 2-D tensor's rows (256) a whole number of K blocks
        "llama-256": llama_checkpoint(generator, 256, 4, 2, 256, 1, False, True, "llama"),
        "qwen2-64": llama_checkpoint(generator, 64, 4, 1, 128, 2, True, True, "qwen2"),
        "pythia-64": neox_checkpoint(generator, 64, 2, 128, 2),
        "gpt2-64": gpt2_checkpoint(generator, 64, 2, 2),
    }
    for name, (config, weights) in sources.items():
        metadata, tensors = convert(config, {k: v.numpy() for k, v in weights.items()}, F32)
        write_fixture(os.path.join(folder, name + ".gguf"), metadata, tensors, F32)
    with open(os.path.join(folder, "plan.txt"), "w") as f:
        for source, fixture, rule in PLAN:
            f.write(f"{source} {fixture} {rule}\n")


def write_references(folder):
    ids = reference_ids()
    for _, fixture, _ in PLAN:
        metadata, tensors = read_gguf(os.path.join(folder, fixture + ".dequantized.gguf"))
        probabilities, logits = gguf_forward(
            metadata, {k: torch.from_numpy(v) for k, v in tensors.items()}, ids)
        out = os.path.join(HERE, "reference", fixture)
        os.makedirs(out, exist_ok=True)
        with open(os.path.join(out, "tokens.json"), "w") as f:
            json.dump({"ids": ids}, f)
            f.write("\n")
        for l, p in enumerate(probabilities):
            np.save(os.path.join(out, f"attention_layer{l}.npy"), p.numpy().astype(np.float32))
        np.save(os.path.join(out, "logits.npy"), logits.numpy().astype(np.float32))
        print(f"reference/{fixture}: {len(probabilities)} layers")


if __name__ == "__main__":
    command = sys.argv[1]
    if command == "convert":
        convert_checkpoints()
    elif command == "sources":
        write_sources(sys.argv[2])
    elif command == "folder":
        types = {"F32": F32, "F16": F16, "BF16": BF16}
        convert_folder(sys.argv[2], sys.argv[3], types[sys.argv[4]] if len(sys.argv) > 4 else F32,
                       sys.argv[5] if len(sys.argv) > 5 else "gpt-2")
    elif command == "seeds":
        write_seeds(sys.argv[2])
    elif command == "tokenizer":
        write_sentencepiece_tokenizer(sys.argv[2])
    elif command == "references":
        write_references(sys.argv[2])
    else:
        sys.exit(f"unknown command {command}")
