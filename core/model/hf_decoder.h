#pragma once

#include "model/tokenizer_json.h"

#include <QRegularExpression>
#include <QString>
#include <QStringList>

#include <vector>

namespace attnlab {

// The decoder of a Hugging Face tokenizer.json: how a list of token symbols becomes text, as the
// Rust library's decoders do it. ByteLevel (byte-level characters back to bytes, then UTF-8),
// Metaspace ("▁" back to a space, none kept in the first symbol unless its prepend_scheme is
// "never"), Replace, ByteFallback ("<0xNN>" symbols back to bytes, joined
// while they run), Fuse (all symbols joined into one), Strip (up to `start` leading and `stop`
// trailing copies of `content` cut from each symbol), a Sequence of these, or none (the symbols
// joined with spaces, as the Rust library does without a decoder).
class HfDecoder {
public:
    // From the JSON value at `field` of `path`. Any other type is refused by name.
    static HfDecoder read(const QString& path, const QString& field, const QJsonValue& value);
    // The text of symbols. With wholeText false (one token shown alone), the steps that undo what
    // was added at the start of a whole text (Strip; Metaspace's dropping of the first symbol's
    // spaces) are left out, so "▁the" reads " the".
    QString decode(QStringList symbols, bool wholeText) const;

private:
    struct Step {
        enum class Kind { ByteLevel, Metaspace, Replace, ByteFallback, Fuse, Strip } kind;
        QString text;                 // Metaspace's replacement, Replace's content, Strip's content
        QRegularExpression pattern;   // Replace's pattern
        bool dropFirstSpace = false;  // Metaspace with a prepend scheme other than "never"
        int start = 0;                // Strip
        int stop = 0;
    };
    // Appends the step `fields` (a decoder other than Sequence).
    void readStep(const TokenizerFields& fields);
    // symbols after one step.
    static QStringList apply(const Step& step, const QStringList& symbols, bool wholeText);

    bool m_none = true;  // no decoder: symbols joined with spaces
    std::vector<Step> m_steps;
};

}  // namespace attnlab
