#pragma once

#include "model/gguf_file.h"
#include "model/text_tokenizer.h"

#include <QStringList>

#include <memory>

namespace attnlab {

// The tokenizer a GGUF file's metadata describes (tokenizer.ggml.*), run by HfTokenizer as the
// tokenizer.json of the model it was converted from, so that a model tokenizes its text the same
// from its .gguf as from its Hugging Face folder:
// - tokenizer.ggml.model "gpt2": byte-level BPE with tokenizer.ggml.tokens (by id) and
//   tokenizer.ggml.merges ("left right", by rank); tokenizer.ggml.pre names the pre-tokenizer of
//   the models llama.cpp's converter recognised (ggufPreTokenizerNames(): GPT-2's byte-level
//   pattern for "default", "gpt-2" and the models that share it; Llama 3's pattern for
//   "llama-bpe"; Qwen2's NFC and pattern for "qwen2"; single digits then GPT-2's pattern for
//   "smollm" and "starcoder"); any other name is refused rather than tokenized wrongly;
// - "llama": SentencePiece's BPE as Hugging Face's Llama tokenizer.json runs it: "▁" before the
//   text (tokenizer.ggml.add_space_prefix, default true) and for every space, merges made from
//   tokenizer.ggml.scores as transformers' SentencePieceExtractor makes them (every split of a
//   piece into two pieces, ranked by the piece's score, higher first), <0xNN> byte tokens for
//   characters outside the vocabulary, the unknown token (tokenizer.ggml.unknown_token_id);
// - tokens of tokenizer.ggml.token_type 3 (control) and 2 (unknown) are special added tokens, 4
//   (user defined) added tokens: found in the text as they are, as their tokenizer.json has them;
// - tokenizer.ggml.bos_token_id first when tokenizer.ggml.add_bos_token (default: true for
//   "llama", false for "gpt2"); tokenizer.ggml.eos_token_id last when add_eos_token.
// Throws InputError naming the file and the key: a missing key, arrays of other lengths than the
// tokens, a token twice, an id out of range, a merge of symbols outside the vocabulary, another
// tokenizer model or pre-tokenizer (named).
std::shared_ptr<const TextTokenizer> ggufTokenizer(const GgufFile& file);

// The tokenizer.ggml.pre names read, for messages and the README.
QStringList ggufPreTokenizerNames();

}  // namespace attnlab
