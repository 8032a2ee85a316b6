#include "model/hf_pretokenization.h"

#include "io/json_types.h"
#include "model/byte_level.h"

#include <QJsonArray>

namespace attnlab {
namespace {

// pattern, in Oniguruma's syntax, with \s and \S spelled out as Unicode's White_Space characters:
// \s outside a class becomes [ws], inside one ws; \S outside a class becomes [^ws].
QString withWhiteSpaceSpelledOut(const QString& pattern)
{
    const QString space = whiteSpaceClass();
    QString out;
    bool inClass = false;
    for (qsizetype i = 0; i < pattern.size(); ++i) {
        const QChar c = pattern[i];
        if (c == u'\\' && i + 1 < pattern.size()) {
            const QChar next = pattern[++i];
            if (next == u's')
                out += inClass ? space : u'[' + space + u']';
            else if (next == u'S' && !inClass)
                out += QStringLiteral("[^") + space + u']';
            else
                out += c + QString(next);
            continue;
        }
        if (c == u'[' && !inClass) {
            inClass = true;
            out += c;
            // A ']' right after "[" or "[^" is a member, not the end.
            if (i + 1 < pattern.size() && pattern[i + 1] == u'^')
                out += pattern[++i];
            if (i + 1 < pattern.size() && pattern[i + 1] == u']')
                out += pattern[++i];
            continue;
        }
        if (c == u']' && inClass)
            inClass = false;
        out += c;
    }
    return out;
}

SplitBehavior behaviorOf(const TokenizerFields& fields)
{
    return fields.choice<SplitBehavior>(QStringLiteral("behavior"),
                                        fields.string(QStringLiteral("behavior")),
                                        {{"Removed", SplitBehavior::Removed},
                                         {"Isolated", SplitBehavior::Isolated},
                                         {"MergedWithPrevious", SplitBehavior::MergedWithPrevious},
                                         {"MergedWithNext", SplitBehavior::MergedWithNext},
                                         {"Contiguous", SplitBehavior::Contiguous}});
}

// One piece of a split: [start, end) of the piece's text, and whether it is a match.
struct Part {
    qsizetype start;
    qsizetype end;
    bool isMatch;
};

// The parts of Hugging Face's Pattern::find_matches: every match and every gap between matches,
// in order (an empty text is one empty gap).
std::vector<Part> partsOf(const QString& text, const QRegularExpression& pattern)
{
    std::vector<Part> parts;
    qsizetype previous = 0;
    QRegularExpressionMatchIterator matches = pattern.globalMatch(text);
    while (matches.hasNext()) {
        const QRegularExpressionMatch match = matches.next();
        if (match.capturedStart() != previous)
            parts.push_back({previous, match.capturedStart(), false});
        parts.push_back({match.capturedStart(), match.capturedEnd(), true});
        previous = match.capturedEnd();
    }
    if (previous != text.size() || parts.empty())
        parts.push_back({previous, text.size(), false});
    return parts;
}

// The parts after behavior: Hugging Face's NormalizedString::split folds, part by part. The
// parts it returns are all kept but those marked as matches (Removed only).
std::vector<Part> applyBehavior(const std::vector<Part>& parts, SplitBehavior behavior)
{
    std::vector<Part> out;
    bool previousMatch = false;
    switch (behavior) {
        case SplitBehavior::Removed:
        case SplitBehavior::Isolated: return parts;
        case SplitBehavior::MergedWithPrevious:
            for (const Part& part : parts) {
                if (part.isMatch && !previousMatch && !out.empty())
                    out.back().end = part.end;
                else
                    out.push_back({part.start, part.end, false});
                previousMatch = part.isMatch;
            }
            return out;
        case SplitBehavior::MergedWithNext:
            for (auto it = parts.rbegin(); it != parts.rend(); ++it) {
                if (it->isMatch && !previousMatch && !out.empty())
                    out.back().start = it->start;
                else
                    out.push_back({it->start, it->end, false});
                previousMatch = it->isMatch;
            }
            return {out.rbegin(), out.rend()};
        case SplitBehavior::Contiguous:
            for (const Part& part : parts) {
                if (part.isMatch == previousMatch && !out.empty())
                    out.back().end = part.end;
                else
                    out.push_back({part.start, part.end, false});
                previousMatch = part.isMatch;
            }
            return out;
    }
    return out;
}

// The [0-9] digits (Rust's char::is_ascii_digit) of the Digits pre-tokenizer: one a piece, or a
// run of them a piece.
const QRegularExpression& digitsExpression(bool individual)
{
    static const QRegularExpression one(QStringLiteral("[0-9]"));
    static const QRegularExpression run(QStringLiteral("[0-9]+"));
    return individual ? one : run;
}

}  // namespace

QRegularExpression readPattern(const TokenizerFields& fields, const QString& key)
{
    const TokenizerFields pattern = fields.object(key);
    const bool literal = !pattern.isNull(QStringLiteral("String"));
    if (literal == !pattern.isNull(QStringLiteral("Regex")))
        fields.refuse(key, QStringLiteral("is not {\"String\": text} or {\"Regex\": expression}"));
    const QString source =
        pattern.string(literal ? QStringLiteral("String") : QStringLiteral("Regex"));
    if (source.isEmpty())
        fields.refuse(key, QStringLiteral("is empty"));
    QRegularExpression expression(
        literal ? QRegularExpression::escape(source) : withWhiteSpaceSpelledOut(source),
        QRegularExpression::UseUnicodePropertiesOption);
    if (!expression.isValid())
        fields.refuse(key, QStringLiteral("is not a valid expression (%1 at character %2)")
                               .arg(expression.errorString())
                               .arg(expression.patternErrorOffset()));
    return expression;
}

QString replaceMatches(const QString& text, const QRegularExpression& pattern,
                       const QString& content)
{
    QString out;
    qsizetype previous = 0;
    QRegularExpressionMatchIterator matches = pattern.globalMatch(text);
    while (matches.hasNext()) {
        const QRegularExpressionMatch match = matches.next();
        out += QStringView(text).mid(previous, match.capturedStart() - previous);
        out += content;
        previous = match.capturedEnd();
    }
    out += QStringView(text).mid(previous);
    return out;
}

HfNormalizer HfNormalizer::read(const QString& path, const QString& field, const QJsonValue& value)
{
    HfNormalizer normalizer;
    normalizer.m_path = path;
    readComponents(path, field, value, QStringLiteral("normalizers"),
                   [&](const TokenizerFields& step) { normalizer.readStep(step); });
    return normalizer;
}

void HfNormalizer::readStep(const TokenizerFields& fields)
{
    const QString type = fields.type();
    if (type == QStringLiteral("NFC")) {
        m_steps.push_back({Step::Kind::Nfc, {}, {}});
    } else if (type == QStringLiteral("Prepend")) {
        m_steps.push_back({Step::Kind::Prepend, fields.string(QStringLiteral("prepend")), {}});
    } else if (type == QStringLiteral("Replace")) {
        m_steps.push_back({Step::Kind::Replace, fields.string(QStringLiteral("content")),
                           readPattern(fields, QStringLiteral("pattern"))});
    } else {
        fields.refuseType(QStringLiteral("Attention Lab reads the normalizers NFC, Prepend, "
                                         "Replace and Sequence"));
    }
}

QString HfNormalizer::normalize(const QString& text) const
{
    QString normalized = text;
    for (const Step& step : m_steps) {
        switch (step.kind) {
            case Step::Kind::Nfc:
                normalized = normalized.normalized(QString::NormalizationForm_C);
                break;
            case Step::Kind::Prepend:
                if (!normalized.isEmpty())
                    normalized.prepend(step.text);
                break;
            case Step::Kind::Replace:
                normalized = replaceMatches(normalized, step.pattern, step.text);
                break;
        }
        if (normalized.size() > longestStepOutput(text.size()))
            refuseTokenizer(m_path, QStringLiteral("the normalizer makes a text of %1 characters "
                                                   "from one of %2; Attention Lab allows %3")
                                        .arg(normalized.size())
                                        .arg(text.size())
                                        .arg(longestStepOutput(text.size())));
    }
    return normalized;
}

std::vector<TextPiece> splitPiece(const TextPiece& piece, const QRegularExpression& pattern,
                                  SplitBehavior behavior, bool invert)
{
    std::vector<Part> parts = partsOf(piece.text, pattern);
    if (invert) {
        for (Part& part : parts)
            part.isMatch = !part.isMatch;
    }
    std::vector<TextPiece> pieces;
    for (const Part& part : applyBehavior(parts, behavior)) {
        if (part.end == part.start || (behavior == SplitBehavior::Removed && part.isMatch))
            continue;
        pieces.push_back({piece.text.mid(part.start, part.end - part.start),
                          piece.startsText && part.start == 0});
    }
    return pieces;
}

HfPreTokenizer HfPreTokenizer::read(const QString& path, const QString& field,
                                    const QJsonValue& value)
{
    HfPreTokenizer preTokenizer;
    preTokenizer.m_path = path;
    readComponents(path, field, value, QStringLiteral("pretokenizers"),
                   [&](const TokenizerFields& step) { preTokenizer.readStep(step); });
    return preTokenizer;
}

void HfPreTokenizer::readStep(const TokenizerFields& fields)
{
    const QString type = fields.type();
    Step step{};
    if (type == QStringLiteral("ByteLevel")) {
        // The Rust library's defaults for fields an older file leaves out.
        step.kind = Step::Kind::ByteLevel;
        step.addPrefixSpace = fields.boolean(QStringLiteral("add_prefix_space"), true);
        step.useRegex = fields.boolean(QStringLiteral("use_regex"), true);
    } else if (type == QStringLiteral("Split")) {
        step.kind = Step::Kind::Split;
        step.pattern = readPattern(fields, QStringLiteral("pattern"));
        step.behavior = behaviorOf(fields);
        step.invert = fields.boolean(QStringLiteral("invert"), false);
    } else if (type == QStringLiteral("Digits")) {
        step.kind = Step::Kind::Split;
        step.pattern = digitsExpression(fields.boolean(QStringLiteral("individual_digits"), false));
    } else if (type == QStringLiteral("Metaspace")) {
        step.kind = Step::Kind::Metaspace;
        step.replacement = fields.string(QStringLiteral("replacement"), QStringLiteral("\u2581"));
        const qsizetype length = step.replacement.size();
        if (length == 0 || length > 2 || (length == 2 && !step.replacement[0].isHighSurrogate()))
            fields.refuse(QStringLiteral("replacement"),
                          QStringLiteral("is %1; expected one character")
                              .arg(quotedSymbol(step.replacement)));
        // Older files have add_prefix_space instead of prepend_scheme.
        const bool prefix = fields.boolean(QStringLiteral("add_prefix_space"), true);
        const QString scheme =
            fields.string(QStringLiteral("prepend_scheme"),
                          prefix ? QStringLiteral("always") : QStringLiteral("never"));
        step.prepend = fields.choice<PrependScheme>(QStringLiteral("prepend_scheme"), scheme,
                                                    {{"always", PrependScheme::Always},
                                                     {"first", PrependScheme::First},
                                                     {"never", PrependScheme::Never}});
        step.splitAtReplacement = fields.boolean(QStringLiteral("split"), true);
        step.pattern = QRegularExpression(QRegularExpression::escape(step.replacement));
    } else {
        fields.refuseType(QStringLiteral("Attention Lab reads the pre-tokenizers ByteLevel, "
                                         "Split, Digits, Metaspace and Sequence"));
    }
    m_steps.push_back(step);
}

void HfPreTokenizer::apply(const Step& step, const TextPiece& piece, std::vector<TextPiece>& out)
{
    switch (step.kind) {
        case Step::Kind::Split:
            for (TextPiece& part : splitPiece(piece, step.pattern, step.behavior, step.invert))
                out.push_back(std::move(part));
            return;
        case Step::Kind::ByteLevel: {
            // A space before every piece that has none, GPT-2's pattern, then bytes as characters.
            TextPiece spaced = piece;
            if (step.addPrefixSpace && !spaced.text.startsWith(u' '))
                spaced.text.prepend(u' ');
            std::vector<TextPiece> parts{spaced};
            if (step.useRegex)
                parts = splitPiece(spaced, gpt2PieceExpression(), SplitBehavior::Isolated, false);
            for (TextPiece& part : parts)
                out.push_back({byteLevelSymbols(part.text.toUtf8()), part.startsText});
            return;
        }
        case Step::Kind::Metaspace: {
            TextPiece replaced = piece;
            replaced.text.replace(u' ', step.replacement);
            const bool prepend = step.prepend == PrependScheme::Always ||
                                 (step.prepend == PrependScheme::First && replaced.startsText);
            if (prepend && !replaced.text.startsWith(step.replacement))
                replaced.text.prepend(step.replacement);
            if (!step.splitAtReplacement) {
                out.push_back(std::move(replaced));
                return;
            }
            for (TextPiece& part :
                 splitPiece(replaced, step.pattern, SplitBehavior::MergedWithNext, false))
                out.push_back(std::move(part));
            return;
        }
    }
}

std::vector<TextPiece> HfPreTokenizer::split(const TextPiece& section) const
{
    std::vector<TextPiece> pieces;
    if (!section.text.isEmpty())
        pieces.push_back(section);
    std::vector<TextPiece> next;
    for (const Step& step : m_steps) {
        next.clear();
        for (const TextPiece& piece : pieces)
            apply(step, piece, next);
        pieces.swap(next);
        qsizetype total = 0;
        for (const TextPiece& piece : pieces)
            total += piece.text.size();
        if (total > longestStepOutput(section.text.size()))
            refuseTokenizer(m_path, QStringLiteral("the pre-tokenizer makes pieces of %1 "
                                                   "characters from a text of %2; Attention Lab "
                                                   "allows %3")
                                        .arg(total)
                                        .arg(section.text.size())
                                        .arg(longestStepOutput(section.text.size())));
    }
    return pieces;
}

}  // namespace attnlab
