#!/usr/bin/python3
"""Names the heads of a trained GPT-2 checkpoint by what they attend to.

For every layer and head, on the held-out chapters (every 50th, as train.py holds them out) cut
into windows of 128 tokens, the mean attention weight P[i, j] that a query i puts on
  previous token   j = i - 1
  first token      j = 0 (a "resting" head)
  itself           j = i
  same token       every j < i holding the query's own token (a "duplicate-token" head), over
                   the queries whose token occurred before
  last punctuation the latest j <= i whose token is a punctuation mark (, . : ; ? !), over the
                   queries after the first such mark
and, on 64 sequences of 40 random tokens repeated twice (seed 7), the induction score: the mean
weight a query in the second copy puts on the token just after its earlier occurrence
(j = i - 40 + 1), as Olsson et al. (2022) define induction heads. Also the loss on the first
and the second copy: a model with induction heads predicts the second copy far better.

Reads the checkpoint with numpy alone (safetensors, Conv1D in x out) and runs GPT-2 in float64.
  /usr/bin/python3 training/kjv_gpt2/analyse_heads.py resources/models/kjv-gpt2
"""

import json
import math
import sys

import numpy as np

import bpe
import train
from safetensors_files import read_safetensors  # training/, on train's path


def load(folder):
    weights = read_safetensors(f"{folder}/model.safetensors")
    with open(f"{folder}/config.json") as f:
        config = json.load(f)
    return weights, config


def layer_norm(x, gain, bias, eps):
    mean = x.mean(-1, keepdims=True)
    variance = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(variance + eps) * gain + bias


def forward(w, config, ids):
    """Attention (layers x heads x L x L) and the log-probabilities of the next token."""
    n_head, width, eps = config["n_head"], config["n_embd"], config["layer_norm_epsilon"]
    d = width // n_head
    length = len(ids)
    x = w["wte.weight"][ids] + w["wpe.weight"][:length]
    mask = np.triu(np.ones((length, length), dtype=bool), 1)
    attention = []
    for i in range(config["n_layer"]):
        h = f"h.{i}."
        a = layer_norm(x, w[h + "ln_1.weight"], w[h + "ln_1.bias"], eps)
        qkv = a @ w[h + "attn.c_attn.weight"] + w[h + "attn.c_attn.bias"]
        q, k, v = (t.reshape(length, n_head, d).transpose(1, 0, 2)
                   for t in np.split(qkv, 3, axis=1))
        scores = q @ k.transpose(0, 2, 1) / math.sqrt(d)
        scores[:, mask] = -np.inf
        p = np.exp(scores - scores.max(-1, keepdims=True))
        p /= p.sum(-1, keepdims=True)
        attention.append(p)
        o = (p @ v).transpose(1, 0, 2).reshape(length, width)
        x = x + o @ w[h + "attn.c_proj.weight"] + w[h + "attn.c_proj.bias"]
        a = layer_norm(x, w[h + "ln_2.weight"], w[h + "ln_2.bias"], eps)
        u = a @ w[h + "mlp.c_fc.weight"] + w[h + "mlp.c_fc.bias"]
        hidden = 0.5 * u * (1 + np.tanh(math.sqrt(2 / math.pi) * (u + 0.044715 * u ** 3)))
        x = x + hidden @ w[h + "mlp.c_proj.weight"] + w[h + "mlp.c_proj.bias"]
    logits = layer_norm(x, w["ln_f.weight"], w["ln_f.bias"], eps) @ w["wte.weight"].T
    logits -= logits.max(-1, keepdims=True)
    return np.array(attention), logits - np.log(np.exp(logits).sum(-1, keepdims=True))


def main():
    folder = sys.argv[1]
    w, config = load(folder)
    with open(f"{folder}/vocab.json", encoding="utf-8") as f:
        vocab = json.load(f)
    with open(f"{folder}/merges.txt", encoding="utf-8") as f:
        merges = [tuple(line.split()) for line in f.read().splitlines()[1:] if line]
    encoder = bpe.Encoder(vocab, merges)
    held_out = [c for i, c in enumerate(train.chapters()) if i % train.HELD_OUT_EVERY == 0]
    ids = []
    for chapter in held_out:
        ids.extend(encoder.encode(chapter))
    windows = [ids[s:s + 128] for s in range(0, len(ids) - 128, 128)][:40]
    layers, heads = config["n_layer"], config["n_head"]
    previous = np.zeros((layers, heads))
    first = np.zeros((layers, heads))
    itself = np.zeros((layers, heads))
    same = np.zeros((layers, heads))
    same_count = 0
    punctuation = np.zeros((layers, heads))
    punctuation_count = 0
    marks = {vocab[c] for c in ",.:;?!" if c in vocab}
    for window in windows:
        p, _ = forward(w, config, window)
        rows = np.arange(4, len(window))
        previous += p[:, :, rows, rows - 1].mean(-1)
        first += p[:, :, rows, 0].mean(-1)
        itself += p[:, :, rows, rows].mean(-1)
        for i in rows:
            earlier = [j for j in range(i) if window[j] == window[i]]
            if earlier:
                same += p[:, :, i, earlier].sum(-1)
                same_count += 1
            latest = [j for j in range(i + 1) if window[j] in marks]
            if latest:
                punctuation += p[:, :, i, latest[-1]]
                punctuation_count += 1
    previous /= len(windows)
    first /= len(windows)
    itself /= len(windows)
    same /= max(same_count, 1)
    punctuation /= max(punctuation_count, 1)

    rng = np.random.default_rng(7)
    span = 40
    induction = np.zeros((layers, heads))
    loss_first = loss_second = 0.0
    count = 64
    for _ in range(count):
        half = list(rng.integers(300, config["vocab_size"] - 1, size=span))
        sequence = half + half
        p, log_probs = forward(w, config, sequence)
        rows = np.arange(span, 2 * span)
        induction += p[:, :, rows, rows - span + 1].mean(-1)
        targets = np.array(sequence[1:])
        token_loss = -log_probs[np.arange(2 * span - 1), targets]
        loss_first += token_loss[:span - 1].mean()
        loss_second += token_loss[span:].mean()
    induction /= count

    print("layer,head,previous_token,first_token,self,same_token,last_punctuation,induction")
    for layer in range(layers):
        for head in range(heads):
            print(f"{layer},{head},{previous[layer, head]:.3f},{first[layer, head]:.3f},"
                  f"{itself[layer, head]:.3f},{same[layer, head]:.3f},{punctuation[layer, head]:.3f},"
                  f"{induction[layer, head]:.3f}")
    print(f"loss on 40 random tokens: first copy {loss_first / count:.3f}, "
          f"second copy {loss_second / count:.3f} nats per token")


if __name__ == "__main__":
    main()
