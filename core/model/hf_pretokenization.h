#pragma once

#include "model/tokenizer_json.h"

#include <QRegularExpression>
#include <QString>

#include <vector>

namespace attnlab {

// The text steps of a Hugging Face tokenizer.json before its model: the normalizer and the
// pre-tokenizer, read from the file as the pipeline it describes, with the semantics of Hugging
// Face's `tokenizers` (Rust) library.

// A piece of text on its way through the pipeline, and whether it starts where the encoded text
// starts (offset 0 of the original text, which Metaspace's prepend_scheme "first" looks at).
struct TextPiece {
    QString text;
    bool startsText = false;
};

// A pattern of a Split pre-tokenizer or a Replace normalizer or decoder, {"String": s} (s matched
// literally) or {"Regex": r} (r in Oniguruma's syntax, as the Rust library compiles it; \s and \S
// are rewritten to Unicode's White_Space characters, which Oniguruma's \s is and PCRE2's is not).
// Refused when neither, empty, or not a valid expression.
QRegularExpression readPattern(const TokenizerFields& fields, const QString& key);
// text with every match of pattern replaced by content (taken literally, "$1" is no reference).
QString replaceMatches(const QString& text, const QRegularExpression& pattern,
                       const QString& content);

// The longest text a normalizer or pre-tokenizer may make of a text of `length` characters: the
// real files' steps add a few characters at most (NFC, "▁" for " ", UTF-8 bytes as characters),
// while a file of many Replace or ByteLevel steps could grow the text without bound.
constexpr qsizetype longestStepOutput(qsizetype length)
{
    return 8 * length + 1024;
}

// The normalizer: NFC, Prepend, Replace, a Sequence of these, or none (null).
class HfNormalizer {
public:
    // From the JSON value at `field` of `path` (null or absent: no normalizer). Any other type is
    // refused by name.
    static HfNormalizer read(const QString& path, const QString& field, const QJsonValue& value);
    // The normalized text. Throws InputError naming the file when it is longer than
    // longestStepOutput of the text's length.
    QString normalize(const QString& text) const;
    // Whether there is no step (the text is left as it is).
    bool isIdentity() const { return m_steps.empty(); }

private:
    struct Step {
        enum class Kind { Nfc, Prepend, Replace } kind;
        QString text;                // Prepend's prefix, Replace's content
        QRegularExpression pattern;  // Replace's pattern
    };
    // Appends the step `fields` (a normalizer other than Sequence).
    void readStep(const TokenizerFields& fields);

    QString m_path;  // the tokenizer.json, for messages
    std::vector<Step> m_steps;
};

// What a Split makes of a match of its pattern (Hugging Face's SplitDelimiterBehavior).
enum class SplitBehavior { Removed, Isolated, MergedWithPrevious, MergedWithNext, Contiguous };

// piece cut by the matches of pattern (or, with invert, by the text between them), each match
// handled as behavior says; empty pieces dropped. Pieces keep startsText only at offset 0.
std::vector<TextPiece> splitPiece(const TextPiece& piece, const QRegularExpression& pattern,
                                  SplitBehavior behavior, bool invert);

// The pre-tokenizer: ByteLevel, Split, Digits, Metaspace, a Sequence of these, or none (null).
class HfPreTokenizer {
public:
    // From the JSON value at `field` of `path`. Any other type is refused by name.
    static HfPreTokenizer read(const QString& path, const QString& field, const QJsonValue& value);
    // The pieces of one normalized section of the text (the part between two added tokens), each
    // step applied to every piece of the step before; empty pieces dropped. Throws InputError
    // naming the file when the pieces hold more than longestStepOutput of the section's length.
    std::vector<TextPiece> split(const TextPiece& section) const;

private:
    enum class PrependScheme { Always, First, Never };
    struct Step {
        enum class Kind { ByteLevel, Split, Metaspace } kind;
        QRegularExpression pattern;  // Split's pattern (Digits is a Split by [0-9])
        SplitBehavior behavior = SplitBehavior::Isolated;
        bool invert = false;
        bool addPrefixSpace = false;  // ByteLevel
        bool useRegex = false;        // ByteLevel: split by GPT-2's pattern first
        QString replacement;          // Metaspace's "▁"
        PrependScheme prepend = PrependScheme::Always;
        bool splitAtReplacement = false;  // Metaspace's split
    };
    // Appends the step `fields` (a pre-tokenizer other than Sequence).
    void readStep(const TokenizerFields& fields);
    // The pieces step makes of piece, appended to out.
    static void apply(const Step& step, const TextPiece& piece, std::vector<TextPiece>& out);

    QString m_path;  // the tokenizer.json, for messages
    std::vector<Step> m_steps;
};

}  // namespace attnlab
