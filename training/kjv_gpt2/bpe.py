#!/usr/bin/python3
"""Byte-level BPE in GPT-2's file format: a trainer and an encoder.

GPT-2's tokenizer (Radford et al. 2019; openai/gpt-2 encoder.py) splits text with one regular
expression into pre-tokens (contractions, runs of letters, digits or other symbols with at most
one leading space, runs of white space), maps each byte of a pre-token to a printable character
(bytes_to_unicode) and applies the merges in the order of merges.txt. vocab.json maps every
symbol to its id. This file learns such merges from a corpus (the most frequent adjacent pair of
symbols is merged, again and again; ties go to the pair that sorts first) and writes the two
files, so that Attention Lab's GPT-2 tokenizer reads the built-in model's vocabulary unchanged.
"""

import collections
import json

import regex

PATTERN = regex.compile(
    r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+""")
END_OF_TEXT = "<|endoftext|>"


def bytes_to_unicode():
    """GPT-2's map from the 256 bytes to printable characters."""
    bs = (list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) +
          list(range(ord("®"), ord("ÿ") + 1)))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return dict(zip(bs, [chr(c) for c in cs]))


BYTE_SYMBOL = bytes_to_unicode()


def pre_tokens(text):
    """The pre-tokens of text, each as its string of byte symbols."""
    return ["".join(BYTE_SYMBOL[b] for b in piece.encode("utf-8"))
            for piece in PATTERN.findall(text)]


def train(text, vocab_size):
    """Merges (list of symbol pairs) that bring the vocabulary to vocab_size entries: the 256
    byte symbols, one per merge, and <|endoftext|>."""
    word_counts = collections.Counter(pre_tokens(text))
    words = [list(word) for word in word_counts]
    counts = [word_counts[word] for word in word_counts]
    pair_counts = collections.Counter()
    where = collections.defaultdict(set)  # pair -> indices of the words that hold it
    for index, symbols in enumerate(words):
        for pair in zip(symbols, symbols[1:]):
            pair_counts[pair] += counts[index]
            where[pair].add(index)

    merges = []
    while len(merges) < vocab_size - 257 and pair_counts:
        best = max(pair_counts.items(), key=lambda item: (item[1], _reverse_order(item[0])))[0]
        merges.append(best)
        merged = best[0] + best[1]
        for index in list(where[best]):
            symbols = words[index]
            for pair in zip(symbols, symbols[1:]):
                pair_counts[pair] -= counts[index]
                if pair_counts[pair] <= 0:
                    del pair_counts[pair]
            out, i = [], 0
            while i < len(symbols):
                if i + 1 < len(symbols) and (symbols[i], symbols[i + 1]) == best:
                    out.append(merged)
                    i += 2
                else:
                    out.append(symbols[i])
                    i += 1
            words[index] = out
            for pair in zip(out, out[1:]):
                pair_counts[pair] += counts[index]
                where[pair].add(index)
        del where[best]
        pair_counts.pop(best, None)
    return merges


def _reverse_order(pair):
    """A key under which max() prefers the pair that sorts first."""
    return tuple(-ord(c) for c in pair[0]) + (1,) + tuple(-ord(c) for c in pair[1])


def write(folder, merges):
    """vocab.json (bytes in bytes_to_unicode order, merged symbols, <|endoftext|>), merges.txt."""
    vocab = {}
    for symbol in BYTE_SYMBOL.values():
        vocab[symbol] = len(vocab)
    for left, right in merges:
        vocab[left + right] = len(vocab)
    vocab[END_OF_TEXT] = len(vocab)
    with open(f"{folder}/vocab.json", "w", encoding="utf-8") as f:
        json.dump(vocab, f, ensure_ascii=False)
    with open(f"{folder}/merges.txt", "w", encoding="utf-8") as f:
        f.write("#version: 0.2\n")
        f.writelines(f"{left} {right}\n" for left, right in merges)
    return vocab


class Encoder:
    """GPT-2's encoding: per pre-token, merge the pair of lowest rank until none is left."""

    def __init__(self, vocab, merges):
        self.vocab = vocab
        self.ranks = {pair: rank for rank, pair in enumerate(merges)}
        self.cache = {}

    def encode(self, text):
        ids = []
        for word in pre_tokens(text):
            if word not in self.cache:
                self.cache[word] = [self.vocab[s] for s in self._merge(list(word))]
            ids.extend(self.cache[word])
        return ids

    def _merge(self, symbols):
        while len(symbols) > 1:
            pairs = list(zip(symbols, symbols[1:]))
            best = min(pairs, key=lambda pair: self.ranks.get(pair, float("inf")))
            if best not in self.ranks:
                break
            out, i = [], 0
            while i < len(symbols):
                if i + 1 < len(symbols) and (symbols[i], symbols[i + 1]) == best:
                    out.append(best[0] + best[1])
                    i += 2
                else:
                    out.append(symbols[i])
                    i += 1
            symbols = out
        return symbols
