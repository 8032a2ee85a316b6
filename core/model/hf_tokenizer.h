#pragma once

#include "model/hf_bpe_model.h"
#include "model/hf_decoder.h"
#include "model/hf_pretokenization.h"
#include "model/text_tokenizer.h"

#include <QHash>
#include <QString>

#include <array>
#include <vector>

namespace attnlab {

// A Hugging Face tokenizer.json whose model is BPE, run as the pipeline the file describes, with
// the semantics of Hugging Face's `tokenizers` library (encode with add_special_tokens):
// 1. the added tokens (added_tokens) whose `normalized` is false are found in the text, leftmost
//    and longest first (single_word: only between non-word characters; lstrip/rstrip: the white
//    space before/after goes with the token); each is its id;
// 2. the text between them is normalized (HfNormalizer), and the added tokens whose `normalized`
//    is true are found in it, their content normalized the same way;
// 3. the text between those is cut into pieces by the pre-tokenizer (HfPreTokenizer);
// 4. each piece becomes ids by the BPE model (HfBpeModel);
// 5. the post-processor adds its special tokens around the ids (TemplateProcessing's single
//    template: Llama 2's <s>, Llama 3's <|begin_of_text|>; ByteLevel adds none; Sequence applies
//    its processors in order).
// decode() runs the file's decoder (HfDecoder) with the special added tokens left out. Any
// component or model the lab does not read (WordPiece, Unigram, BertProcessing, ...) is refused
// by name; truncation and padding, which concern batches and lengths, are not applied.
// All functions are const and keep no cache: encode() may run in several threads at once.
class HfTokenizer : public TextTokenizer {
public:
    // An added token (added_tokens[i]).
    struct AddedToken {
        int id = 0;
        QString content;
        bool special = false;
        bool singleWord = false;
        bool lstrip = false;
        bool rstrip = false;
        bool normalized = false;
    };
    // The pipeline, however it was described: a tokenizer.json, or a GGUF file's metadata.
    struct Parts {
        HfNormalizer normalizer;
        HfPreTokenizer preTokenizer;
        HfBpeModel model;
        HfDecoder decoder;
        std::vector<AddedToken> added;  // ids distinct
        std::vector<int> prefixIds;     // the post-processor's ids before the text's
        std::vector<int> suffixIds;     // and after
    };

    // From a tokenizer.json. Throws InputError naming the file and the field at fault.
    static HfTokenizer fromFile(const QString& path);
    // From parts described by the file at path (named in messages).
    static HfTokenizer fromParts(const QString& path, Parts parts);

    // The token ids of text, the post-processor's special tokens included. Throws InputError
    // naming the file when a character needs an unk_token the vocabulary lacks.
    std::vector<int> encode(const QString& text) const override;
    // The text of ids by the file's decoder, special tokens left out (Hugging Face's
    // decode(ids, skip_special_tokens=True)); unknown ids are skipped.
    QString decode(const std::vector<int>& ids) const override;
    // The symbol of an id as the file has it ("▁the", "Ġthe", "<0x0A>", "<s>"); empty if unknown.
    QString symbol(int id) const;
    // The text an id stands for: an added token's content, else its symbol through the decoder
    // alone ("▁the" and "Ġthe" -> " the", "<0x0A>" -> "\n"); empty for an unknown id.
    QString text(int id) const override;
    // The label a heatmap shows: a special token as its content ("<s>", "<|begin_of_text|>"),
    // other tokens as tokenLabel of their text ("␣the").
    QString label(int id) const override;
    // The largest id of the vocabulary, the added tokens and the post-processor, + 1.
    int vocabularySize() const override;
    // The post-processor's ids before the text's, and after.
    int specialIdsBefore() const override { return int(m_prefixIds.size()); }
    int specialIdsAfter() const override { return int(m_suffixIds.size()); }

private:
    // A stretch of text between added tokens (addedId -1), or one added token.
    struct Section {
        int addedId;
        TextPiece text;
    };

    HfTokenizer(const QString& path, const TokenizerFields& root);
    explicit HfTokenizer(const QString& path) : m_path(path) {}
    // Reads added_tokens.
    void readAddedTokens(const TokenizerFields& root);
    // Adds an added token whose id no other has.
    void addAddedToken(const AddedToken& token);
    // Reads the post-processor `processor` (one other than Sequence) into m_prefixIds and
    // m_suffixIds.
    void readPostProcessor(const TokenizerFields& processor);
    // Reads TemplateProcessing's single template and special_tokens.
    void readTemplate(const TokenizerFields& processor);
    // piece cut at the added tokens whose `normalized` is `normalized`.
    std::vector<Section> sections(const TextPiece& piece, bool normalized) const;
    // The added token of an id, or nullptr.
    const AddedToken* addedToken(int id) const;

    QString m_path;
    HfNormalizer m_normalizer;
    HfPreTokenizer m_preTokenizer;
    HfBpeModel m_model;
    HfDecoder m_decoder;
    std::vector<AddedToken> m_added;
    std::vector<QString> m_addedMatch;   // what is looked for: the content, normalized when
                                         // `normalized` (one per m_added)
    QHash<int, qsizetype> m_addedIndex;  // id -> index in m_added
    // The added tokens looked for before (0) and after (1) normalization, by their first
    // character: indices in m_added.
    std::array<QHash<char16_t, std::vector<qsizetype>>, 2> m_addedByFirst;
    std::vector<int> m_prefixIds;  // the post-processor's ids before the text's
    std::vector<int> m_suffixIds;  // and after
    int m_size = 0;
};

}  // namespace attnlab
