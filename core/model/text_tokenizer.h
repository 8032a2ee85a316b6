#pragma once

#include <QString>

#include <memory>
#include <vector>

namespace attnlab {

// What a language model's reader needs of its tokenizer, whatever files it came from: GPT-2's
// vocab.json + merges.txt (Gpt2Tokenizer) or a Hugging Face tokenizer.json pipeline. All
// functions are const and safe to call from several threads at once.
class TextTokenizer {
public:
    virtual ~TextTokenizer() = default;

    // The token ids of text, with the special tokens the tokenizer's files add (a Llama
    // tokenizer.json's post-processor puts BOS first; GPT-2 adds none). Throws InputError naming
    // the tokenizer's file when the text cannot be encoded.
    virtual std::vector<int> encode(const QString& text) const = 0;
    // The text of ids, decoded as the tokenizer's files say (bytes joined, then read as UTF-8).
    virtual QString decode(const std::vector<int>& ids) const = 0;
    // The text an id stands for ("␣" not applied): " cat".
    virtual QString text(int id) const = 0;
    // The label a heatmap shows for an id: a leading space drawn as "␣" (U+2423), a newline as
    // "\n", a tab as "\t", a carriage return as "\r"; a special token as its content ("<s>").
    virtual QString label(int id) const = 0;
    // The number of ids (the largest id + 1).
    virtual int vocabularySize() const = 0;
    // How many ids encode() puts before the text's own (a Llama's BOS) and after them. A text cut
    // to the model's positions keeps them, as Hugging Face's truncation does. GPT-2 adds none.
    virtual int specialIdsBefore() const { return 0; }
    virtual int specialIdsAfter() const { return 0; }
};

// The tokenizer of a model folder: GPT-2's vocab.json + merges.txt (Gpt2Tokenizer) when both are
// there, else a Hugging Face tokenizer.json (HfTokenizer). Throws InputError naming the folder or
// file at fault.
std::shared_ptr<const TextTokenizer> loadTextTokenizer(const QString& folder);

// ids, as tokenizer encodes a text, cut into windows of at most `length` ids (the last one
// shorter), each a sequence as the tokenizer makes one: the special ids it puts before and after a
// text (a Llama's BOS) begin and end every window, around the next stretch of the text's own ids
// (at least one a window).
std::vector<std::vector<int>> sequenceWindows(const TextTokenizer& tokenizer,
                                              const std::vector<int>& ids, int length);

// The label a heatmap shows for a token's text: a leading space drawn as "␣" (U+2423; every space
// of a token of spaces only), a newline as "\n" (the two characters), a tab as "\t", a carriage
// return as "\r": " cat" -> "␣cat".
QString tokenLabel(QString text);

}  // namespace attnlab
