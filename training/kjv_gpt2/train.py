#!/usr/bin/python3
"""Trains Attention Lab's built-in model: a small GPT-2 on the King James Bible.

Corpus: the Authorized (King James) Version as Debian's bible-kjv-text package ships it, read
with its `bible` program (package bible-kjv), one document per chapter, the verse numbers
dropped, one verse per line. Every 50th chapter (Genesis 1, ...) is held out for validation.
Tokenizer: a byte-level BPE of 4096 entries learned from the training chapters (bpe.py), in
GPT-2's vocab.json + merges.txt format. Model: GPT-2 (pre-LayerNorm blocks, GELU in its tanh
form, learned positions, the output head tied to the token embedding), 4 layers, 4 heads,
n_embd 256, with position embeddings for 256 positions. AdamW (betas 0.9, 0.95, weight decay 0.1
on matrices), a linear warm-up of 200 steps to the peak learning rate 2e-3 then a cosine decay to
a tenth of it; gradient norm clipped at 1; batches of 16 windows of 128 tokens drawn at random
from the training stream; seed 1234; a fixed number of steps (--steps). Positions past the
window (128) never receive a gradient, so the saved model keeps only the first 128 position
embeddings and says n_positions 128: the longest text it reads is the longest it was trained on.

Writes into --out: config.json, model.safetensors (F32, Hugging Face GPT2Model names without
prefix, Conv1D weights in x out as GPT-2 stores them), vocab.json, merges.txt; and loss.csv
(step, training loss of the batch, validation loss every 50 steps) beside this script.

Run with Debian's python3 (python3-torch, python3-regex, libopenblas0-pthread):
  /usr/bin/python3 training/kjv_gpt2/train.py --out resources/models/kjv-gpt2 --steps 2000
"""

import argparse
import json
import math
import os
import re
import subprocess
import sys
import time

import numpy as np
import torch

import bpe

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from safetensors_files import write_safetensors  # noqa: E402 (training/)

HERE = os.path.dirname(os.path.abspath(__file__))
SEED = 1234
VOCAB_SIZE = 4096
N_LAYER, N_HEAD, N_EMBD, N_POSITIONS = 4, 4, 256, 256
LAYER_NORM_EPSILON = 1e-5
BATCH, CONTEXT = 16, 128
PEAK_LR, WARMUP = 2e-3, 200
HELD_OUT_EVERY = 50


def chapters():
    """The KJV's 1189 chapters, each as its verses joined by newlines."""
    text = subprocess.run(["bible", "gen1:1-rev22:21"], capture_output=True, text=True,
                          check=True).stdout
    result, verses = [], []
    for line in text.splitlines():
        if not line.strip():
            continue
        verse = re.match(r"^\s+\d+ (.*)$", line)
        if verse:
            verses.append(verse.group(1).strip())
        elif line.startswith(" ") or line[0].islower() or not re.match(r"^\S.* \d+$", line):
            verses[-1] += " " + line.strip()          # a verse wrapped onto the next line
        else:                                        # a heading such as "Genesis 1"
            if verses:
                result.append("\n".join(verses))
            verses = []
    result.append("\n".join(verses))
    return result


def layer_norm(x, weight, bias):
    return torch.nn.functional.layer_norm(x, (x.shape[-1],), weight, bias, LAYER_NORM_EPSILON)


class Gpt2(torch.nn.Module):
    """GPT-2 with its tensors under GPT2Model's names; Linear weights are out x in here and are
    transposed to Conv1D's in x out when saved."""

    def __init__(self):
        super().__init__()
        p = torch.nn.Parameter
        w = {}
        std = 0.02
        w["wte.weight"] = p(torch.randn(VOCAB_SIZE, N_EMBD) * std)
        w["wpe.weight"] = p(torch.randn(N_POSITIONS, N_EMBD) * 0.01)
        for i in range(N_LAYER):
            h = f"h.{i}."
            for ln in ("ln_1", "ln_2"):
                w[h + ln + ".weight"] = p(torch.ones(N_EMBD))
                w[h + ln + ".bias"] = p(torch.zeros(N_EMBD))
            residual_std = std / math.sqrt(2 * N_LAYER)
            for name, (rows, cols, s) in {"attn.c_attn": (3 * N_EMBD, N_EMBD, std),
                                          "attn.c_proj": (N_EMBD, N_EMBD, residual_std),
                                          "mlp.c_fc": (4 * N_EMBD, N_EMBD, std),
                                          "mlp.c_proj": (N_EMBD, 4 * N_EMBD, residual_std)}.items():
                w[h + name + ".weight"] = p(torch.randn(rows, cols) * s)
                w[h + name + ".bias"] = p(torch.zeros(rows))
        w["ln_f.weight"] = p(torch.ones(N_EMBD))
        w["ln_f.bias"] = p(torch.zeros(N_EMBD))
        # ParameterDict keys may not hold dots
        self.params = torch.nn.ParameterDict({k.replace(".", "/"): v for k, v in w.items()})

    def forward(self, ids):
        w = {k.replace("/", "."): v for k, v in self.params.items()}
        batch, length = ids.shape
        d = N_EMBD // N_HEAD
        x = w["wte.weight"][ids] + w["wpe.weight"][:length]
        mask = torch.triu(torch.ones(length, length, dtype=torch.bool), diagonal=1)
        for i in range(N_LAYER):
            h = f"h.{i}."
            a = layer_norm(x, w[h + "ln_1.weight"], w[h + "ln_1.bias"])
            qkv = torch.nn.functional.linear(a, w[h + "attn.c_attn.weight"], w[h + "attn.c_attn.bias"])
            q, k, v = (t.reshape(batch, length, N_HEAD, d).transpose(1, 2)
                       for t in qkv.split(N_EMBD, dim=-1))
            scores = (q @ k.transpose(-1, -2)) / math.sqrt(d)
            attention = torch.softmax(scores.masked_fill(mask, float("-inf")), dim=-1)
            o = (attention @ v).transpose(1, 2).reshape(batch, length, N_EMBD)
            x = x + torch.nn.functional.linear(o, w[h + "attn.c_proj.weight"], w[h + "attn.c_proj.bias"])
            a = layer_norm(x, w[h + "ln_2.weight"], w[h + "ln_2.bias"])
            hidden = torch.nn.functional.gelu(
                torch.nn.functional.linear(a, w[h + "mlp.c_fc.weight"], w[h + "mlp.c_fc.bias"]),
                approximate="tanh")
            x = x + torch.nn.functional.linear(hidden, w[h + "mlp.c_proj.weight"], w[h + "mlp.c_proj.bias"])
        return layer_norm(x, w["ln_f.weight"], w["ln_f.bias"]) @ w["wte.weight"].T


def learning_rate(step, steps, peak, warmup):
    """Linear warm-up over `warmup` steps, then a cosine decay to a tenth of the peak at the end."""
    if step <= warmup:
        return peak * step / warmup
    progress = (step - warmup) / max(1, steps - warmup)
    return peak * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * progress)))


def optimise(model, optimizer, lr, loss):
    """One step of the optimizer at learning rate lr on loss, the gradient's norm clipped at 1."""
    for group in optimizer.param_groups:
        group["lr"] = lr
    optimizer.zero_grad()
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    optimizer.step()


def held_out_loss(loss_of, batches):
    """The mean loss over the held-out batches, as loss.csv writes it."""
    with torch.no_grad():
        return f"{np.mean([loss_of(x, y).item() for x, y in batches]):.4f}"


def save(model, folder):
    """model.safetensors (F32, Conv1D layout) and config.json, with the CONTEXT positions trained."""
    tensors = []
    for key, value in model.params.items():
        name = key.replace("/", ".")
        array = value.detach().numpy().astype("<f4")
        if name == "wpe.weight":
            array = array[:CONTEXT]
        if name.endswith(".weight") and any(s in name for s in ("c_attn", "c_proj", "c_fc")):
            array = array.T                            # Linear's out x in -> Conv1D's in x out
        tensors.append((name, "F32", array))
    write_safetensors(os.path.join(folder, "model.safetensors"), tensors,
                      "training/kjv_gpt2/train.py")
    config = {"model_type": "gpt2", "architectures": ["GPT2LMHeadModel"],
              "n_layer": N_LAYER, "n_head": N_HEAD, "n_embd": N_EMBD,
              "n_positions": CONTEXT, "n_ctx": CONTEXT, "vocab_size": VOCAB_SIZE,
              "n_inner": None, "activation_function": "gelu_new",
              "layer_norm_epsilon": LAYER_NORM_EPSILON, "tie_word_embeddings": True,
              "bos_token_id": VOCAB_SIZE - 1, "eos_token_id": VOCAB_SIZE - 1}
    with open(os.path.join(folder, "config.json"), "w") as f:
        json.dump(config, f, indent=2)
        f.write("\n")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", required=True)
    parser.add_argument("--steps", type=int, required=True)
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    torch.manual_seed(SEED)
    torch.set_num_threads(2)
    generator = np.random.default_rng(SEED)

    started = time.time()
    all_chapters = chapters()
    training = [c for i, c in enumerate(all_chapters) if i % HELD_OUT_EVERY != 0]
    held_out = [c for i, c in enumerate(all_chapters) if i % HELD_OUT_EVERY == 0]
    merges = bpe.train("\n\n".join(training), VOCAB_SIZE)
    vocab = bpe.write(args.out, merges)
    encoder = bpe.Encoder(vocab, merges)
    end = vocab[bpe.END_OF_TEXT]

    def stream(texts):
        ids = []
        for text in texts:
            ids.extend(encoder.encode(text))
            ids.append(end)
        return torch.tensor(ids, dtype=torch.long)

    train_ids, held_out_ids = stream(training), stream(held_out)
    print(f"{len(all_chapters)} chapters; {len(train_ids)} training and {len(held_out_ids)} "
          f"held-out tokens; tokenizer in {time.time() - started:.0f} s", flush=True)

    model = Gpt2()
    decay = [v for k, v in model.params.items() if v.dim() == 2 and "wpe" not in k]
    no_decay = [v for k, v in model.params.items() if v.dim() < 2 or "wpe" in k]
    optimizer = torch.optim.AdamW([{"params": decay, "weight_decay": 0.1},
                                   {"params": no_decay, "weight_decay": 0.0}],
                                  lr=PEAK_LR, betas=(0.9, 0.95))

    def batch(ids):
        starts = generator.integers(0, len(ids) - CONTEXT - 1, size=BATCH)
        x = torch.stack([ids[s:s + CONTEXT] for s in starts])
        y = torch.stack([ids[s + 1:s + CONTEXT + 1] for s in starts])
        return x, y

    def loss_of(x, y):
        return torch.nn.functional.cross_entropy(model(x).reshape(-1, VOCAB_SIZE), y.reshape(-1))

    held_out_batches = [batch(held_out_ids) for _ in range(8)]
    rows = ["step,train_loss,validation_loss"]
    for step in range(1, args.steps + 1):
        loss = loss_of(*batch(train_ids))
        optimise(model, optimizer, learning_rate(step, args.steps, PEAK_LR, WARMUP), loss)
        validation = ""
        if step % 50 == 0 or step == args.steps:
            validation = held_out_loss(loss_of, held_out_batches)
            print(f"step {step}: loss {loss.item():.3f}, validation {validation}, "
                  f"{time.time() - started:.0f} s", flush=True)
            save(model, args.out)
        rows.append(f"{step},{loss.item():.4f},{validation}")
        with open(os.path.join(HERE, "loss.csv"), "w") as f:
            f.write("\n".join(rows) + "\n")
    save(model, args.out)
    print(f"done in {time.time() - started:.0f} s", flush=True)


if __name__ == "__main__":
    main()
