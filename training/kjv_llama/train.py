#!/usr/bin/python3
"""Trains Attention Lab's second built-in model: a small Llama on the King James Bible, trained
so that it forms previous-token and induction heads (issue 29).

Corpus: the King James Version as Debian's bible-kjv-text ships it, read with its `bible`
program exactly as training/kjv_gpt2/train.py reads it (one document per chapter, one verse per
line, verse numbers dropped); every 50th chapter (Genesis 1, ...) is held out, the same chapters
as the KJV GPT-2's.
Tokenizer: a byte-level BPE of 2048 entries (256 bytes, 1791 merges learned from the training
chapters with training/kjv_gpt2/bpe.py, and the BOS token "<s>" as id 2047), written as a
Hugging Face tokenizer.json: BPE model, ByteLevel pre-tokenizer (GPT-2's regular expression) and
decoder, and a TemplateProcessing post-processor that puts "<s>" first.
Model: Llama (Touvron et al. 2023) in the Hugging Face LlamaForCausalLM layout: --layers layers
(default 2), RMSNorm (eps 1e-5) before attention and MLP and at the end, RoPE in Hugging Face's
rotate-half convention (theta 10000) on every query and key dimension, grouped-query attention
with 4 query heads and 2 key/value heads of d = 48 (hidden_size 192), q/k/v/o biases unless
--no-attention-bias, a gated SiLU MLP of 512, the output head tied to the token embedding unless
--untied; max_position_embeddings 1024.
Two phases, one run or two (--init starts from a folder's weights):
  copying  --copy-steps steps of copying drills alone (copy_window, --copy-form, --copy-periods),
           128 tokens a window, AdamW at a constant 1e-3 without weight decay;
  text     --steps steps of KJV text: every window "<s>" + text cut at a random place of the
           training chapters; every 4th batch 2 windows of 1024 tokens, the others 16 of 128;
           --drill-fraction of the windows end in a random sequence said again and again
           (drill_window), and half of the others hold a span of 20 to 300 tokens written twice
           (window). AdamW (betas 0.9, 0.95, weight decay 0.1 on matrices), a linear warm-up of
           100 steps to --peak-lr (3e-3), a cosine decay to a tenth of it.
--guide-steps N adds, for the first N steps, the cross-entropy of layer 0, head 0's attention
against the previous token to the loss: with it the drills form the textbook induction circuit
(training/kjv_llama/README.md tells the runs without it). Gradient norm clipped at 1; seed 1234
(torch and numpy; numpy 1235 with --init); --stop-after stops early.
Writes config.json, model.safetensors (F32) and tokenizer.json into --out every 50 steps and at
the end (a run cut short leaves usable weights), with issue 29's probe scores in the log, and
--loss-csv (step, training loss of the batch, held-out loss on 2 windows of 1024 tokens every 50
steps). The committed weights: training/kjv_llama/README.md's two commands.

Run with Debian's python3 (python3-torch, python3-regex, bible-kjv):
  nice -n 10 /usr/bin/python3 training/kjv_llama/train.py --out DIR --steps N [...]
"""

import argparse
import importlib.util
import json
import math
import os
import sys
import time

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
TRAINING = os.path.dirname(HERE)
sys.path.insert(0, TRAINING)
sys.path.insert(0, os.path.join(TRAINING, "kjv_gpt2"))
import bpe  # noqa: E402 (training/kjv_gpt2/bpe.py)
from safetensors_files import write_safetensors  # noqa: E402 (training/)

_spec = importlib.util.spec_from_file_location("kjv_gpt2_train",
                                               os.path.join(TRAINING, "kjv_gpt2", "train.py"))
kjv_gpt2_train = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(kjv_gpt2_train)
chapters = kjv_gpt2_train.chapters
HELD_OUT_EVERY = kjv_gpt2_train.HELD_OUT_EVERY

SEED = 1234
VOCAB_SIZE = 2048           # 256 bytes, 1791 merges, "<s>"
BOS = "<s>"
BOS_ID = VOCAB_SIZE - 1
LAYERS = 2
WIDTH, HEADS, KV_HEADS, HEAD_DIM, INNER = 192, 4, 2, 48, 512
RMS_NORM_EPS, ROPE_THETA = 1e-5, 10000.0
CONTEXT = 1024              # max_position_embeddings: every LONG_EVERY-th batch
SHORT = 128                 # the window of the other batches
BATCH_LONG, BATCH_SHORT = 2, 16   # 2048 tokens per batch either way
LONG_EVERY = 4
PEAK_LR, WARMUP = 3e-3, 100
DRILL_FRACTION = 0.5        # windows ending in a random sequence said again and again
REPEAT_FRACTION = 0.5       # of the other windows: those with a span written twice
CHECKPOINT_EVERY = 50
COPY_STEPS, COPY_LR = 1500, 1e-3   # the first phase: copying drills alone (copy_window)
COPY_PERIOD = (8, 48)    # copy_window's periods (tile) and spans (pairs), inclusive
PAIR_SPAN = (2, 16)
PROBE_SPAN, PROBE_COUNT = 50, 16   # the induction probe logged at every checkpoint


def bias(w, projection):
    """The projection's bias (attention_bias), or 0 in a model without."""
    return w.get(projection + ".bias", 0.0)


def rms_norm(x, gain):
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + RMS_NORM_EPS) * gain


def rope_tables(length):
    """cos and sin (length x HEAD_DIM) as Hugging Face's LlamaRotaryEmbedding builds them:
    inv_freq_j = theta^(-2j/d), angles = position * inv_freq, duplicated [a | a]."""
    inv_freq = 1.0 / (ROPE_THETA ** (torch.arange(0, HEAD_DIM, 2, dtype=torch.float32) / HEAD_DIM))
    angles = torch.outer(torch.arange(length, dtype=torch.float32), inv_freq)
    angles = torch.cat([angles, angles], dim=-1)
    return angles.cos(), angles.sin()


def rotate_half(x):
    half = x.shape[-1] // 2
    return torch.cat([-x[..., half:], x[..., :half]], dim=-1)


def apply_rope(x, cos, sin):
    """x * cos + rotate_half(x) * sin (Hugging Face's apply_rotary_pos_emb)."""
    return x * cos + rotate_half(x) * sin


class Llama(torch.nn.Module):
    """A Llama with its tensors under Hugging Face's names (Linear weights out x in, as saved)."""

    def __init__(self, untied=False, attention_bias=True):
        super().__init__()
        p = torch.nn.Parameter
        std = 0.02
        residual_std = std / math.sqrt(2 * LAYERS)
        w = {"model.embed_tokens.weight": p(torch.randn(VOCAB_SIZE, WIDTH) * std)}
        for i in range(LAYERS):
            h = f"model.layers.{i}."
            w[h + "input_layernorm.weight"] = p(torch.ones(WIDTH))
            w[h + "self_attn.q_proj.weight"] = p(torch.randn(HEADS * HEAD_DIM, WIDTH) * std)
            w[h + "self_attn.k_proj.weight"] = p(torch.randn(KV_HEADS * HEAD_DIM, WIDTH) * std)
            w[h + "self_attn.v_proj.weight"] = p(torch.randn(KV_HEADS * HEAD_DIM, WIDTH) * std)
            w[h + "self_attn.o_proj.weight"] = p(torch.randn(WIDTH, HEADS * HEAD_DIM) * residual_std)
            if attention_bias:
                for name, size in (("q", HEADS * HEAD_DIM), ("k", KV_HEADS * HEAD_DIM),
                                   ("v", KV_HEADS * HEAD_DIM), ("o", WIDTH)):
                    w[h + f"self_attn.{name}_proj.bias"] = p(torch.zeros(size))
            w[h + "post_attention_layernorm.weight"] = p(torch.ones(WIDTH))
            w[h + "mlp.gate_proj.weight"] = p(torch.randn(INNER, WIDTH) * std)
            w[h + "mlp.up_proj.weight"] = p(torch.randn(INNER, WIDTH) * std)
            w[h + "mlp.down_proj.weight"] = p(torch.randn(WIDTH, INNER) * residual_std)
        w["model.norm.weight"] = p(torch.ones(WIDTH))
        if untied:
            w["lm_head.weight"] = p(torch.randn(VOCAB_SIZE, WIDTH) * std)
        self.params = torch.nn.ParameterDict({k.replace(".", "/"): v for k, v in w.items()})

    def weights(self):
        return {k.replace("/", "."): v for k, v in self.params.items()}

    def forward(self, ids, capture=None, guided=None):
        """Logits (batch x L x vocab); capture, a list, receives each layer's attention; guided, a
        list, receives layer 0's with its gradient (the --guide-steps loss)."""
        w = self.weights()
        batch, length = ids.shape
        cos, sin = rope_tables(length)
        mask = torch.triu(torch.ones(length, length, dtype=torch.bool), diagonal=1)
        group = HEADS // KV_HEADS
        x = w["model.embed_tokens.weight"][ids]
        for i in range(LAYERS):
            h = f"model.layers.{i}."
            a = rms_norm(x, w[h + "input_layernorm.weight"])
            q, k, v = (a @ w[h + f"self_attn.{n}_proj.weight"].T + bias(w, h + f"self_attn.{n}_proj")
                       for n in "qkv")
            q = q.view(batch, length, HEADS, HEAD_DIM)
            k = k.view(batch, length, KV_HEADS, HEAD_DIM)
            v = v.view(batch, length, KV_HEADS, HEAD_DIM)
            q = apply_rope(q.transpose(1, 2), cos, sin)
            k = apply_rope(k.transpose(1, 2), cos, sin).repeat_interleave(group, dim=1)
            v = v.transpose(1, 2).repeat_interleave(group, dim=1)
            scores = (q @ k.transpose(-1, -2)) / math.sqrt(HEAD_DIM)
            attention = torch.softmax(scores.masked_fill(mask, float("-inf")), dim=-1)
            if capture is not None:
                capture.append(attention.detach())
            if guided is not None and i == 0:
                guided.append(attention)
            o = (attention @ v).transpose(1, 2).reshape(batch, length, HEADS * HEAD_DIM)
            x = x + o @ w[h + "self_attn.o_proj.weight"].T + bias(w, h + "self_attn.o_proj")
            b = rms_norm(x, w[h + "post_attention_layernorm.weight"])
            gated = torch.nn.functional.silu(b @ w[h + "mlp.gate_proj.weight"].T) * (
                b @ w[h + "mlp.up_proj.weight"].T)
            x = x + gated @ w[h + "mlp.down_proj.weight"].T
        head = w.get("lm_head.weight", w["model.embed_tokens.weight"])
        return rms_norm(x, w["model.norm.weight"]) @ head.T


def config_json(untied, attention_bias):
    return {"model_type": "llama", "architectures": ["LlamaForCausalLM"],
            "hidden_size": WIDTH, "intermediate_size": INNER, "num_hidden_layers": LAYERS,
            "num_attention_heads": HEADS, "num_key_value_heads": KV_HEADS, "head_dim": HEAD_DIM,
            "hidden_act": "silu", "rms_norm_eps": RMS_NORM_EPS, "rope_theta": ROPE_THETA,
            "rope_scaling": None, "max_position_embeddings": CONTEXT, "vocab_size": VOCAB_SIZE,
            "tie_word_embeddings": not untied, "attention_bias": attention_bias, "mlp_bias": False,
            "bos_token_id": BOS_ID, "eos_token_id": BOS_ID, "torch_dtype": "float32"}


def tokenizer_json(vocab, merges):
    """Hugging Face's tokenizer.json for the byte-level BPE, with "<s>" put first."""
    byte_level = {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True,
                  "use_regex": True}
    template = {"type": "TemplateProcessing",
                "single": [{"SpecialToken": {"id": BOS, "type_id": 0}},
                           {"Sequence": {"id": "A", "type_id": 0}}],
                "pair": [{"SpecialToken": {"id": BOS, "type_id": 0}},
                         {"Sequence": {"id": "A", "type_id": 0}},
                         {"SpecialToken": {"id": BOS, "type_id": 1}},
                         {"Sequence": {"id": "B", "type_id": 1}}],
                "special_tokens": {BOS: {"id": BOS, "ids": [BOS_ID], "tokens": [BOS]}}}
    return {"version": "1.0", "truncation": None, "padding": None,
            "added_tokens": [{"id": BOS_ID, "content": BOS, "single_word": False,
                              "lstrip": False, "rstrip": False, "normalized": False,
                              "special": True}],
            "normalizer": None, "pre_tokenizer": byte_level, "post_processor": template,
            "decoder": byte_level,
            "model": {"type": "BPE", "dropout": None, "unk_token": None,
                      "continuing_subword_prefix": None, "end_of_word_suffix": None,
                      "fuse_unk": False, "byte_fallback": False, "ignore_merges": False,
                      "vocab": vocab, "merges": [f"{a} {b}" for a, b in merges]}}


def build_tokenizer(training_text):
    """(vocab, merges): the 256 byte symbols, the merges in order, then "<s>"."""
    merges = bpe.train(training_text, VOCAB_SIZE)  # VOCAB_SIZE - 257 merges: bytes, merges, "<s>"
    vocab = {}
    for symbol in bpe.BYTE_SYMBOL.values():
        vocab[symbol] = len(vocab)
    for left, right in merges:
        vocab[left + right] = len(vocab)
    vocab[BOS] = len(vocab)
    assert vocab[BOS] == BOS_ID, (len(vocab), BOS_ID)
    return vocab, merges


def save(model, folder, vocab, merges):
    untied = "lm_head.weight" in model.weights()
    attention_bias = "model.layers.0.self_attn.q_proj.bias" in model.weights()
    tensors = [(name, "F32", value.detach().numpy().astype("<f4"))
               for name, value in model.weights().items()]
    write_safetensors(os.path.join(folder, "model.safetensors"), tensors,
                      "training/kjv_llama/train.py")
    with open(os.path.join(folder, "config.json"), "w") as f:
        json.dump(config_json(untied, attention_bias), f, indent=2)
        f.write("\n")
    with open(os.path.join(folder, "tokenizer.json"), "w", encoding="utf-8") as f:
        json.dump(tokenizer_json(vocab, merges), f, ensure_ascii=False)


def main():
    global LAYERS
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", required=True)
    parser.add_argument("--steps", type=int, required=True,
                        help="the length of the learning-rate schedule")
    parser.add_argument("--stop-after", type=int,
                        help="stop after this step of the schedule (the weights are saved)")
    parser.add_argument("--init", help="start from this folder's model.safetensors")
    parser.add_argument("--no-attention-bias", action="store_true",
                        help="q, k, v and o projections without biases")
    parser.add_argument("--untied", action="store_true",
                        help="an output head (lm_head) apart from the token embedding")
    parser.add_argument("--peak-lr", type=float, default=PEAK_LR)
    parser.add_argument("--copy-steps", type=int, default=COPY_STEPS,
                        help="steps of the first phase, copying drills alone (before --steps)")
    parser.add_argument("--copy-form", choices=("tile", "pairs", "mixed"), default="mixed",
                        help="the first phase's windows (copy_window)")
    parser.add_argument("--layers", type=int, default=LAYERS,
                        help="decoder layers (default %(default)s)")
    parser.add_argument("--copy-periods", type=int, nargs=2, default=COPY_PERIOD,
                        metavar=("SHORTEST", "LONGEST"),
                        help="the tile drills' periods, inclusive (default %(default)s)")
    parser.add_argument("--guide-steps", type=int, default=0,
                        help="for the first this many steps, add to the loss the "
                        "cross-entropy of layer 0, head 0's attention against the previous token")
    parser.add_argument("--drill-fraction", type=float, default=DRILL_FRACTION,
                        help="the share of windows that end in a random sequence said again and "
                        "again")
    parser.add_argument("--threads", type=int, default=1, help="PyTorch's threads (one: the "
                        "model is small, and a second thread spinning beside other work on 2 cores "
                        "made steps ten times slower)")
    parser.add_argument("--loss-csv", default=os.path.join(HERE, "loss.csv"))
    args = parser.parse_args()
    LAYERS = args.layers
    os.makedirs(args.out, exist_ok=True)
    torch.manual_seed(SEED)
    torch.set_num_threads(args.threads)
    generator = np.random.default_rng(SEED + (1 if args.init else 0))

    started = time.time()
    all_chapters = chapters()
    training = [c for i, c in enumerate(all_chapters) if i % HELD_OUT_EVERY != 0]
    held_out = [c for i, c in enumerate(all_chapters) if i % HELD_OUT_EVERY == 0]
    vocab, merges = build_tokenizer("\n\n".join(training))
    encoder = bpe.Encoder(vocab, merges)
    train_ids = np.array(encoder.encode("\n\n".join(training)), dtype=np.int64)
    held_out_ids = np.array(encoder.encode("\n\n".join(held_out)), dtype=np.int64)
    print(f"{len(all_chapters)} chapters; {len(train_ids)} training and {len(held_out_ids)} "
          f"held-out tokens; tokenizer in {time.time() - started:.0f} s", flush=True)

    model = Llama(untied=args.untied, attention_bias=not args.no_attention_bias)
    if args.init:
        analyse = importlib.util.spec_from_file_location("kjv_llama_analyse",
                                                         os.path.join(HERE, "analyse_heads.py"))
        module = importlib.util.module_from_spec(analyse)
        analyse.loader.exec_module(module)
        weights, _, _ = module.load(args.init)
        with torch.no_grad():
            for key, value in model.params.items():
                value.copy_(torch.from_numpy(weights[key.replace("/", ".")]).float())
    decay = [v for v in model.params.values() if v.dim() == 2]
    no_decay = [v for v in model.params.values() if v.dim() < 2]
    optimizer = torch.optim.AdamW([{"params": decay, "weight_decay": 0.1},
                                   {"params": no_decay, "weight_decay": 0.0}],
                                  lr=PEAK_LR, betas=(0.9, 0.95))

    def window(ids, length, repeat):
        """BOS + length tokens of ids from a random place (length inputs and targets)."""
        start = generator.integers(0, len(ids) - length)
        body = ids[start:start + length].copy()
        if repeat:
            span = int(generator.integers(20, min(300, length // 2 - 8) + 1))
            if generator.random() < 2 / 3:
                source = generator.integers(0, len(ids) - span)
                copied = ids[source:source + span]
            else:
                copied = generator.integers(256, VOCAB_SIZE - 1, size=span)
            first = int(generator.integers(0, length - 2 * span))
            second = int(generator.integers(first + span, length - span + 1))
            body[first:first + span] = copied
            body[second:second + span] = copied
        return np.concatenate([[BOS_ID], body])

    def drill_window(ids, length):
        """BOS, natural text of a random length up to a quarter of the window, then a sequence of
        8 to 64 tokens drawn uniformly from the ordinary vocabulary (at most half what is left),
        said again and again to the end: only copying predicts it."""
        prefix = int(generator.integers(0, length // 4 + 1))
        start = generator.integers(0, len(ids) - prefix)
        period = int(generator.integers(8, min(64, (length - prefix) // 2) + 1))
        sequence = generator.integers(256, VOCAB_SIZE - 1, size=period)
        cycles = np.tile(sequence, (length - prefix) // period + 1)[:length - prefix]
        return np.concatenate([[BOS_ID], ids[start:start + prefix], cycles])

    def copy_window():
        """The first phase's window: BOS, then random sequences (tokens drawn uniformly from the
        vocabulary's ordinary tokens) that only copying predicts, SHORT tokens in all, as
        --copy-form says:
          tile   one sequence of COPY_PERIOD tokens said again and again. Copying forms within
                 about 1500 steps, but not always as the textbook circuit: one run (seed 1234)
                 looked 8 and 9 tokens back in layer 0 and matched there in layer 1.
          pairs  sequences of PAIR_SPAN tokens, each said twice. Spans shorter than such an
                 offset can only be copied through the previous token.
          mixed  each window one or the other, at even odds."""
        form = args.copy_form
        if form == "mixed":
            form = "tile" if generator.random() < 0.5 else "pairs"
        if form == "tile":
            period = int(generator.integers(args.copy_periods[0], args.copy_periods[1] + 1))
            sequence = generator.integers(0, VOCAB_SIZE - 1, size=period)
            return np.concatenate([[BOS_ID], np.tile(sequence, SHORT // period + 1)[:SHORT]])
        tokens = [BOS_ID]
        while len(tokens) < SHORT + 1:
            span = list(generator.integers(0, VOCAB_SIZE - 1,
                                           size=int(generator.integers(PAIR_SPAN[0],
                                                                       PAIR_SPAN[1] + 1))))
            tokens += span + span
        return np.array(tokens[:SHORT + 1])

    def batch(ids, long, training=True):
        length, size = (CONTEXT, BATCH_LONG) if long else (SHORT, BATCH_SHORT)
        rows = np.stack([drill_window(ids, length)
                         if training and generator.random() < args.drill_fraction
                         else window(ids, length, training and generator.random() < REPEAT_FRACTION)
                         for _ in range(size)])
        rows = torch.from_numpy(rows)
        return rows[:, :-1], rows[:, 1:]

    probe_rng = np.random.default_rng(7)
    probe = torch.from_numpy(np.stack([np.concatenate([[BOS_ID], half, half]) for half in (
        probe_rng.integers(0, VOCAB_SIZE - 1, size=PROBE_SPAN) for _ in range(PROBE_COUNT))]))

    def probe_scores():
        """Issue 29's scores on the held-out text and on 50 random tokens said twice: each
        head's mean weight on i - 1 and its induction score (the weight a query of the second
        copy puts on the token after its earlier occurrence), and the loss of each copy."""
        with torch.no_grad():
            x, y = held_out_batches[0]
            captured = []
            model(x[:, :512], capture=captured)
            rows = torch.arange(4, 512)
            previous = [a[:, :, rows, rows - 1].mean((0, 2)) for a in captured]
            captured = []
            logits = model(probe, capture=captured)[:, :-1]
            rows = torch.arange(1 + PROBE_SPAN, 1 + 2 * PROBE_SPAN)
            induction = [a[:, :, rows, rows - PROBE_SPAN + 1].mean((0, 2)) for a in captured]
            losses = torch.nn.functional.cross_entropy(
                logits.transpose(1, 2), probe[:, 1:], reduction="none").mean(0)
        first = losses[1:PROBE_SPAN].mean().item()
        second = losses[1 + PROBE_SPAN:].mean().item()
        heads = lambda scores: " | ".join(" ".join(f"{v:.2f}" for v in s) for s in scores)
        return (f"previous token {heads(previous)}; induction {heads(induction)}; "
                f"copy loss {first:.2f} -> {second:.2f}")

    def loss_of(x, y, guided=None):
        return torch.nn.functional.cross_entropy(model(x, guided=guided).reshape(-1, VOCAB_SIZE),
                                                 y.reshape(-1))

    held_out_batches = [batch(held_out_ids, True, training=False)]
    rows = ["step,train_loss,validation_loss"]
    for step in range(1, args.copy_steps + args.steps + 1):
        if step <= args.copy_steps:
            # The first phase: copying drills at a constant rate, without weight decay.
            lr = COPY_LR
            drills = torch.from_numpy(np.stack([copy_window() for _ in range(BATCH_SHORT)]))
            x, y = drills[:, :-1], drills[:, 1:]
        else:
            lr = kjv_gpt2_train.learning_rate(step - args.copy_steps, args.steps, args.peak_lr,
                                              WARMUP)
            x, y = batch(train_ids, step % LONG_EVERY == 0)
        guided = [] if step <= args.guide_steps else None
        loss = loss_of(x, y, guided)
        if guided:
            queries = torch.arange(1, x.shape[1])
            loss = loss - torch.log(guided[0][:, 0, queries, queries - 1] + 1e-9).mean()
        optimizer.param_groups[0]["weight_decay"] = 0.0 if step <= args.copy_steps else 0.1
        kjv_gpt2_train.optimise(model, optimizer, lr, loss)
        validation = ""
        if step % 50 == 0 or step == args.copy_steps + args.steps:
            validation = kjv_gpt2_train.held_out_loss(loss_of, held_out_batches)
        print(f"step {step}: loss {loss.item():.3f} {validation} lr {lr:.2e}, "
              f"{time.time() - started:.0f} s", flush=True)
        if step % CHECKPOINT_EVERY == 0 or step == args.copy_steps + args.steps:
            save(model, args.out, vocab, merges)
            print(f"step {step}: {probe_scores()}", flush=True)
        if step == args.stop_after:
            break
        rows.append(f"{step},{loss.item():.4f},{validation}")
        with open(args.loss_csv, "w") as f:
            f.write("\n".join(rows) + "\n")
    save(model, args.out, vocab, merges)
    print(f"done in {time.time() - started:.0f} s", flush=True)


if __name__ == "__main__":
    main()
