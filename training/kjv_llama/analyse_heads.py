#!/usr/bin/python3
"""Measures the heads of the trained KJV Llama (issue 29's scores) with its own numpy forward pass.

Reads config.json, model.safetensors (F32 or F16) and tokenizer.json of a folder written by
train.py and runs the Llama in float64 (RMSNorm, RoPE in Hugging Face's rotate-half convention,
grouped-query attention with the q, k, v and o biases of attention_bias, gated SiLU MLP, tied
output head), independently of train.py's PyTorch
code. Per layer and head:
  previous token  mean weight P[i, i - 1] over the held-out chapters (every 50th, as
                  kjv_gpt2/train.py holds them out), each read as "<s>" + its first 511 tokens,
                  queries i >= 4
  BOS             mean weight P[i, 0] on "<s>" over the same queries (the attention sink)
  itself          mean weight P[i, i]
  induction       after "<s>", 50 tokens drawn uniformly from the ordinary tokens (the 1791
                  merged ones and bytes, not "<s>"; 64 sequences, seed 7) and the same 50 again:
                  the mean weight a query in the second copy puts on the token after its
                  earlier occurrence (j = i - 50 + 1; Olsson et al. 2022)
  KJV induction   the same score on natural text: the first 8 verses of each held-out chapter
                  said twice ("<s>", the verses, a newline, the verses again)
and, for the model: the loss on the first and on the second copy of the random sequences (the
tokens 2..50 of each copy, which a copying model can predict in the second), the same on the
repeated verses, and the held-out bits per byte (every held-out chapter as "<s>" + its tokens,
in pieces of at most 1023 tokens, the nats of every token over the chapter's UTF-8 bytes / ln 2).
With --gpt2 FOLDER it also gives the KJV GPT-2's bits per byte on the same chapters (each as
<|endoftext|> + its tokens, read in windows of 128 with a stride of 64, each token scored once).

  /usr/bin/python3 training/kjv_llama/analyse_heads.py resources/models/kjv-llama \
      [--gpt2 resources/models/kjv-gpt2]
"""

import argparse
import importlib.util
import json
import math
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
TRAINING = os.path.dirname(HERE)
sys.path.insert(0, TRAINING)
sys.path.insert(0, os.path.join(TRAINING, "kjv_gpt2"))
import bpe  # noqa: E402
from safetensors_files import read_safetensors  # noqa: E402


def _module(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def load(folder):
    weights = read_safetensors(f"{folder}/model.safetensors")
    with open(f"{folder}/config.json") as f:
        config = json.load(f)
    with open(f"{folder}/tokenizer.json", encoding="utf-8") as f:
        tokenizer = json.load(f)
    return weights, config, tokenizer


class Tokenizer:
    """tokenizer.json's byte-level BPE, with the template's BOS put first."""

    def __init__(self, tokenizer):
        model = tokenizer["model"]
        merges = [tuple(m.split(" ")) if isinstance(m, str) else tuple(m)
                  for m in model["merges"]]
        self.encoder = bpe.Encoder(model["vocab"], merges)
        special = tokenizer["post_processor"]["special_tokens"]
        self.bos = next(iter(special.values()))["ids"][0]

    def encode(self, text, bos=True):
        return ([self.bos] if bos else []) + self.encoder.encode(text)


def rms_norm(x, gain, eps):
    return x / np.sqrt((x * x).mean(-1, keepdims=True) + eps) * gain


def rope(x, theta):
    """x (heads x L x d) * cos + rotate_half(x) * sin, Hugging Face's convention."""
    d = x.shape[-1]
    inv_freq = 1.0 / theta ** (np.arange(0, d, 2) / d)
    angles = np.outer(np.arange(x.shape[1]), inv_freq)
    angles = np.concatenate([angles, angles], -1)
    rotated = np.concatenate([-x[..., d // 2:], x[..., :d // 2]], -1)
    return x * np.cos(angles) + rotated * np.sin(angles)


def bias(w, projection):
    """The projection's bias (config.json's attention_bias), or 0 when the file has none."""
    return w.get(projection + ".bias", 0.0)


def forward(w, config, ids, keep_qkv=False):
    """Attention (layers x H x L x L), log-probabilities of the next token (L x vocab), and the
    post-RoPE queries and keys of each layer when keep_qkv."""
    heads, kv_heads = config["num_attention_heads"], config["num_key_value_heads"]
    width = config["hidden_size"]
    d = config.get("head_dim") or width // heads
    eps, theta = config["rms_norm_eps"], config["rope_theta"]
    length = len(ids)
    mask = np.triu(np.ones((length, length), dtype=bool), 1)
    x = w["model.embed_tokens.weight"][ids]
    attention, qkv = [], []
    for i in range(config["num_hidden_layers"]):
        h = f"model.layers.{i}."
        a = rms_norm(x, w[h + "input_layernorm.weight"], eps)
        q, k, v = (a @ w[h + f"self_attn.{n}_proj.weight"].T + bias(w, h + f"self_attn.{n}_proj")
                   for n in "qkv")
        q = q.reshape(length, heads, d).transpose(1, 0, 2)
        k = k.reshape(length, kv_heads, d).transpose(1, 0, 2)
        v = v.reshape(length, kv_heads, d).transpose(1, 0, 2)
        q, k = rope(q, theta), rope(k, theta)
        group = heads // kv_heads
        k, v = np.repeat(k, group, axis=0), np.repeat(v, group, axis=0)
        scores = q @ k.transpose(0, 2, 1) / math.sqrt(d)
        scores[:, mask] = -np.inf
        p = np.exp(scores - scores.max(-1, keepdims=True))
        p /= p.sum(-1, keepdims=True)
        attention.append(p)
        if keep_qkv:
            qkv.append((q, k, v))
        o = (p @ v).transpose(1, 0, 2).reshape(length, heads * d)
        x = x + o @ w[h + "self_attn.o_proj.weight"].T + bias(w, h + "self_attn.o_proj")
        b = rms_norm(x, w[h + "post_attention_layernorm.weight"], eps)
        gate = b @ w[h + "mlp.gate_proj.weight"].T
        x = x + (gate / (1 + np.exp(-gate)) * (b @ w[h + "mlp.up_proj.weight"].T)) @ \
            w[h + "mlp.down_proj.weight"].T
        del scores
    head = w.get("lm_head.weight", w["model.embed_tokens.weight"])
    logits = rms_norm(x, w["model.norm.weight"], eps) @ head.T
    logits -= logits.max(-1, keepdims=True)
    log_probs = logits - np.log(np.exp(logits).sum(-1, keepdims=True))
    return np.array(attention), log_probs, qkv


def nats(log_probs, ids, positions):
    """The loss of predicting ids[j] for each j in positions (from position j - 1)."""
    positions = np.asarray(positions)
    return -log_probs[positions - 1, np.asarray(ids)[positions]]


def bits_per_byte(chapters, score):
    total_nats = total_bytes = 0.0
    for chapter in chapters:
        total_nats += score(chapter)
        total_bytes += len(chapter.encode("utf-8"))
    return total_nats / math.log(2) / total_bytes


def llama_chapter_nats(w, config, tokenizer):
    def score(chapter):
        ids = tokenizer.encode(chapter, bos=False)
        total = 0.0
        for start in range(0, len(ids), 1023):
            piece = [tokenizer.bos] + ids[start:start + 1023]
            _, log_probs, _ = forward(w, config, piece)
            total += nats(log_probs, piece, range(1, len(piece))).sum()
        return total
    return score


def gpt2_chapter_nats(folder):
    gpt2 = _module("kjv_gpt2_analyse", os.path.join(TRAINING, "kjv_gpt2", "analyse_heads.py"))
    w, config = gpt2.load(folder)
    with open(f"{folder}/vocab.json", encoding="utf-8") as f:
        vocab = json.load(f)
    with open(f"{folder}/merges.txt", encoding="utf-8") as f:
        merges = [tuple(line.split()) for line in f.read().splitlines()[1:] if line]
    encoder = bpe.Encoder(vocab, merges)
    window, stride = config["n_positions"], config["n_positions"] // 2

    def score(chapter):
        ids = [vocab[bpe.END_OF_TEXT]] + encoder.encode(chapter)
        total, scored = 0.0, 1               # ids[0] is context only
        start = 0
        while scored < len(ids):
            piece = ids[start:start + window]
            _, log_probs = gpt2.forward(w, config, piece)
            first = scored - start               # the first position not yet scored
            total += nats(log_probs, piece, range(first, len(piece))).sum()
            scored = start + len(piece)
            start += stride
        return total
    return score


def said_twice(w, config, bos, sequences):
    """Each sequence said twice after BOS, averaged over the sequences: each head's induction
    score (the weight a query of the second copy gives the token that followed it in the first
    copy) and the loss in nats per token on the first copy and on the second."""
    induction, first, second = 0.0, 0.0, 0.0
    for once in sequences:
        n = len(once)
        ids = [bos] + once + once
        p, log_probs, _ = forward(w, config, ids)
        rows = np.arange(1 + n, 1 + 2 * n)
        induction += p[:, :, rows, rows - n + 1].mean(-1)
        first += nats(log_probs, ids, range(2, 1 + n)).mean()
        second += nats(log_probs, ids, range(2 + n, 1 + 2 * n)).mean()
    return induction / len(sequences), first / len(sequences), second / len(sequences)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("folder")
    parser.add_argument("--gpt2", help="the KJV GPT-2's folder, for its bits per byte")
    args = parser.parse_args()
    w, config, tokenizer_file = load(args.folder)
    tokenizer = Tokenizer(tokenizer_file)
    train = _module("kjv_gpt2_train", os.path.join(TRAINING, "kjv_gpt2", "train.py"))
    held_out = [c for i, c in enumerate(train.chapters()) if i % train.HELD_OUT_EVERY == 0]
    layers, heads = config["num_hidden_layers"], config["num_attention_heads"]

    previous = np.zeros((layers, heads))
    sink = np.zeros((layers, heads))
    itself = np.zeros((layers, heads))
    for chapter in held_out:
        ids = tokenizer.encode(chapter)[:512]
        p, _, _ = forward(w, config, ids)
        rows = np.arange(4, len(ids))
        previous += p[:, :, rows, rows - 1].mean(-1)
        sink += p[:, :, rows, 0].mean(-1)
        itself += p[:, :, rows, rows].mean(-1)
    previous /= len(held_out)
    sink /= len(held_out)
    itself /= len(held_out)

    rng = np.random.default_rng(7)
    span, count = 50, 64
    ordinary = [i for i in range(config["vocab_size"]) if i != tokenizer.bos]
    induction, loss_first, loss_second = said_twice(
        w, config, tokenizer.bos, [list(rng.choice(ordinary, size=span)) for _ in range(count)])
    natural, natural_first, natural_second = said_twice(
        w, config, tokenizer.bos,
        [tokenizer.encode("\n".join(chapter.split("\n")[:8]) + "\n", bos=False)
         for chapter in held_out])

    print("layer,head,previous_token,bos,self,induction,kjv_induction")
    for layer in range(layers):
        for head in range(heads):
            print(f"{layer},{head},{previous[layer, head]:.3f},{sink[layer, head]:.3f},"
                  f"{itself[layer, head]:.3f},{induction[layer, head]:.3f},"
                  f"{natural[layer, head]:.3f}")
    print(f"loss on {span} random tokens said twice: first copy {loss_first:.3f}, second copy "
          f"{loss_second:.3f} nats per token (ratio {loss_second / loss_first:.3f})")
    print(f"loss on 8 held-out verses said twice: first copy {natural_first:.3f}, second copy "
          f"{natural_second:.3f} nats per token")
    bpb = bits_per_byte(held_out, llama_chapter_nats(w, config, tokenizer))
    print(f"held-out bits per byte: {bpb:.3f} (this model)")
    if args.gpt2:
        print(f"held-out bits per byte: {bits_per_byte(held_out, gpt2_chapter_nats(args.gpt2)):.3f}"
              f" (KJV GPT-2, {args.gpt2})")


if __name__ == "__main__":
    main()
