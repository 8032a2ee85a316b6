#!/usr/bin/python3
"""Converts Llama 2's SentencePiece tokenizer.model into a tokenizer.json of the layout Hugging Face
ships for Llama 2 (meta-llama/Llama-2-7b-hf, the "legacy" layout of transformers' LlamaConverter):
normalizer Sequence[Prepend "▁", Replace " " -> "▁"], no pre-tokenizer, a BPE model with
byte_fallback and fuse_unk whose merges are derived from the pieces' scores as transformers'
SentencePieceExtractor derives them, <unk> <s> </s> as special added tokens, TemplateProcessing
putting <s> first, and the decoder Sequence[Replace "▁" -> " ", ByteFallback, Fuse, Strip].

It also writes llama2_sentencepiece_ids.json: the ids SentencePiece itself gives each text of
hard_texts.json (with BOS first, as Llama 2 is fed), the second reference the tests compare with.

Run by hand with Debian's python3-sentencepiece; tokenizer.model is in karpathy/llama2.c:
    /usr/bin/python3 make_llama2_tokenizer.py /path/to/tokenizer.model
"""
import json
import os
import sys

import sentencepiece as spm

here = os.path.dirname(os.path.abspath(__file__))
sp = spm.SentencePieceProcessor(model_file=sys.argv[1])
size = sp.get_piece_size()
vocab = {sp.id_to_piece(i): i for i in range(size)}

# SentencePieceExtractor.extract: every split of a piece into two pieces of the vocabulary is a
# merge, ranked by the merged piece's score (higher first), ties by the halves' ids.
merges = []
for i in range(size):
    piece = sp.id_to_piece(i)
    local = [(piece[:k], piece[k:], sp.get_score(i)) for k in range(1, len(piece))
             if piece[:k] in vocab and piece[k:] in vocab]
    local.sort(key=lambda m: (vocab[m[0]], vocab[m[1]]))
    merges.extend(local)
merges.sort(key=lambda m: m[2], reverse=True)


def special(i):
    return {"id": i, "content": sp.id_to_piece(i), "single_word": False, "lstrip": False,
            "rstrip": False, "normalized": False, "special": True}


def template(sequence):
    return [{"SpecialToken": {"id": "<s>", "type_id": 0}}, {"Sequence": {"id": sequence, "type_id": 0}}]


tokenizer = {
    "version": "1.0",
    "truncation": None,
    "padding": None,
    "added_tokens": [special(sp.unk_id()), special(sp.bos_id()), special(sp.eos_id())],
    "normalizer": {"type": "Sequence", "normalizers": [
        {"type": "Prepend", "prepend": "▁"},
        {"type": "Replace", "pattern": {"String": " "}, "content": "▁"}]},
    "pre_tokenizer": None,
    "post_processor": {
        "type": "TemplateProcessing",
        "single": template("A"),
        "pair": template("A") + [{"SpecialToken": {"id": "<s>", "type_id": 1}},
                                 {"Sequence": {"id": "B", "type_id": 1}}],
        "special_tokens": {"<s>": {"id": "<s>", "ids": [sp.bos_id()], "tokens": ["<s>"]}}},
    "decoder": {"type": "Sequence", "decoders": [
        {"type": "Replace", "pattern": {"String": "▁"}, "content": " "},
        {"type": "ByteFallback"},
        {"type": "Fuse"},
        {"type": "Strip", "content": " ", "start": 1, "stop": 0}]},
    "model": {"type": "BPE", "dropout": None, "unk_token": "<unk>",
              "continuing_subword_prefix": None, "end_of_word_suffix": None, "fuse_unk": True,
              "byte_fallback": True, "ignore_merges": False, "vocab": vocab,
              "merges": [f"{a} {b}" for a, b, _ in merges]},
}
os.makedirs(os.path.join(here, "llama2"), exist_ok=True)
with open(os.path.join(here, "llama2", "tokenizer.json"), "w", encoding="utf-8") as out:
    json.dump(tokenizer, out, ensure_ascii=False, separators=(",", ":"))

with open(os.path.join(here, "hard_texts.json"), encoding="utf-8") as f:
    texts = json.load(f)
ids = {t["name"]: [sp.bos_id()] + sp.encode(t["text"]) for t in texts}
with open(os.path.join(here, "llama2_sentencepiece_ids.json"), "w", encoding="utf-8") as out:
    json.dump(ids, out, separators=(",", ":"))
    out.write("\n")
print(f"{size} pieces, {len(merges)} merges")
