#!/usr/bin/env python3
"""Writes expected_ids_python.json: the GPT-2 token ids of every text of texts.json, computed by
a transcription of openai/gpt-2's src/encoder.py (the reference encoder, with the `regex`
module; Debian: python3-regex), on vocab.json and merges.txt beside this script. Then checks
that it agrees with expected_ids.json, written by make_expected.js from the independent
JavaScript encoder of gpt-3-encoder, on every text both have.

    python3 make_expected.py
"""

import json
import os
import sys

import regex as re

HERE = os.path.dirname(os.path.abspath(__file__))


def bytes_to_unicode():
    bs = (list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) +
          list(range(ord("®"), ord("ÿ") + 1)))
    cs = bs[:]
    n = 0
    for b in range(2**8):
        if b not in bs:
            bs.append(b)
            cs.append(2**8 + n)
            n += 1
    cs = [chr(n) for n in cs]
    return dict(zip(bs, cs))


def get_pairs(word):
    pairs = set()
    prev_char = word[0]
    for char in word[1:]:
        pairs.add((prev_char, char))
        prev_char = char
    return pairs


class Encoder:
    def __init__(self, encoder, bpe_merges, errors="replace"):
        self.encoder = encoder
        self.decoder = {v: k for k, v in self.encoder.items()}
        self.errors = errors
        self.byte_encoder = bytes_to_unicode()
        self.byte_decoder = {v: k for k, v in self.byte_encoder.items()}
        self.bpe_ranks = dict(zip(bpe_merges, range(len(bpe_merges))))
        self.cache = {}
        self.pat = re.compile(
            r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+""")

    def bpe(self, token):
        if token in self.cache:
            return self.cache[token]
        word = tuple(token)
        pairs = get_pairs(word)
        if not pairs:
            return token
        while True:
            bigram = min(pairs, key=lambda pair: self.bpe_ranks.get(pair, float("inf")))
            if bigram not in self.bpe_ranks:
                break
            first, second = bigram
            new_word = []
            i = 0
            while i < len(word):
                try:
                    j = word.index(first, i)
                    new_word.extend(word[i:j])
                    i = j
                except ValueError:
                    new_word.extend(word[i:])
                    break
                if word[i] == first and i < len(word) - 1 and word[i + 1] == second:
                    new_word.append(first + second)
                    i += 2
                else:
                    new_word.append(word[i])
                    i += 1
            word = tuple(new_word)
            if len(word) == 1:
                break
            pairs = get_pairs(word)
        word = " ".join(word)
        self.cache[token] = word
        return word

    def encode(self, text):
        bpe_tokens = []
        for token in re.findall(self.pat, text):
            token = "".join(self.byte_encoder[b] for b in token.encode("utf-8"))
            bpe_tokens.extend(self.encoder[bpe_token] for bpe_token in self.bpe(token).split(" "))
        return bpe_tokens

    def decode(self, tokens):
        text = "".join([self.decoder[token] for token in tokens])
        return bytearray([self.byte_decoder[c] for c in text]).decode("utf-8", errors=self.errors)


def get_encoder():
    with open(os.path.join(HERE, "vocab.json"), "r", encoding="utf-8") as f:
        encoder = json.load(f)
    with open(os.path.join(HERE, "merges.txt"), "r", encoding="utf-8") as f:
        bpe_data = f.read()
    bpe_merges = [tuple(merge_str.split()) for merge_str in bpe_data.split("\n")[1:-1]]
    return Encoder(encoder=encoder, bpe_merges=bpe_merges)


def main():
    encoder = get_encoder()
    with open(os.path.join(HERE, "texts.json"), encoding="utf-8") as f:
        texts = json.load(f)
    with open(os.path.join(HERE, "expected_ids.json"), encoding="utf-8") as f:
        javascript = {entry["name"]: entry["ids"] for entry in json.load(f)}

    lines = []
    disagreements = 0
    for case in texts:
        name, text = case["name"], case["text"]
        ids = encoder.encode(text)
        if encoder.decode(ids) != text:
            sys.exit(f"{name}: decode(encode(text)) is not the text")
        if name in javascript and javascript[name] != ids:
            print(f"{name}: Python {ids}\n{' ' * len(name)}  JavaScript {javascript[name]}")
            disagreements += 1
        lines.append("  " + json.dumps({"name": name, "text": text, "ids": ids},
                                       separators=(",", ":")))
    with open(os.path.join(HERE, "expected_ids_python.json"), "w", encoding="utf-8") as f:
        f.write("[\n" + ",\n".join(lines) + "\n]\n")
    print(f"wrote {len(lines)} texts to expected_ids_python.json (regex {re.__version__}); "
          f"{len(javascript) - disagreements} of the {len(javascript)} texts of "
          f"expected_ids.json agree")
    if disagreements:
        sys.exit(1)


if __name__ == "__main__":
    main()
