#!/usr/bin/python3
"""Checks that Attention Lab's C++ Llama reader computes what analyse_heads.py's numpy forward
pass computes on the trained model: the token labels of metrics.json (BOS first, then the BPE
tokens of the text), every head's attention (attention_exact.npy, H x L x L) and, when the
folder has them (--save-qkv), the queries and keys after RoPE (queries.npy, keys.npy, H x L x d;
keys repeated for each query head of a group).

  build/app/attention-lab compute --model resources/models/kjv-llama --text "..." --layer 1 \
      --save-qkv --out /tmp/x
  /usr/bin/python3 training/kjv_llama/compare_cpp.py resources/models/kjv-llama /tmp/x 1 "..."
"""

import json
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import analyse_heads  # noqa: E402


def main():
    folder, out, layer, text = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
    w, config, tokenizer_file = analyse_heads.load(folder)
    tokenizer = analyse_heads.Tokenizer(tokenizer_file)
    ids = tokenizer.encode(text)
    with open(os.path.join(out, "metrics.json")) as f:
        labels = json.load(f)["tokens"]
    print(f"C++ tokens ({len(labels)}): {labels[:12]} ...")
    print(f"Python ids ({len(ids)}): {ids[:12]} ...")
    assert len(labels) == len(ids), "the token counts differ"
    attention, _, qkv = analyse_heads.forward(w, config, ids, keep_qkv=True)
    cpp = np.load(os.path.join(out, "attention_exact.npy"))
    ours = attention[layer] if cpp.ndim == 3 else attention[layer, 0]
    print(f"attention, layer {layer}: shape {cpp.shape}, max |C++ - numpy| "
          f"{np.abs(cpp - ours).max():.2e}")
    for name, index in (("queries", 0), ("keys", 1), ("values", 2)):
        path = os.path.join(out, f"{name}.npy")
        if os.path.exists(path):
            cpp_array = np.load(path)
            ours_array = qkv[layer][index]
            scale = np.abs(ours_array).max()
            print(f"{name}: shape {cpp_array.shape}, max |C++ - numpy| "
                  f"{np.abs(cpp_array - ours_array).max():.2e} (largest entry {scale:.2f})")


if __name__ == "__main__":
    main()
