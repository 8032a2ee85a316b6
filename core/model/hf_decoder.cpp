#include "model/hf_decoder.h"

#include "io/json_types.h"
#include "model/byte_level.h"
#include "model/hf_pretokenization.h"

#include <QJsonArray>
#include <QStringDecoder>

namespace attnlab {
namespace {

// The byte of a ByteFallback symbol "<0xNN>" (upper- or lower-case hex digits, as Rust's
// from_str_radix reads them), or -1.
int fallbackByte(const QString& symbol)
{
    if (symbol.size() != 6 || !symbol.startsWith(QStringLiteral("<0x")) || !symbol.endsWith(u'>'))
        return -1;
    const auto hexDigit = [](QChar c) {
        return (c >= u'0' && c <= u'9') || (c >= u'a' && c <= u'f') || (c >= u'A' && c <= u'F');
    };
    if (!hexDigit(symbol[3]) || !hexDigit(symbol[4]))
        return -1;
    return symbol.mid(3, 2).toInt(nullptr, 16);
}

// Whether bytes are valid UTF-8 (Rust's String::from_utf8 succeeds).
bool isValidUtf8(const QByteArray& bytes)
{
    QStringDecoder decoder(QStringDecoder::Utf8, QStringDecoder::Flag::Stateless);
    static_cast<void>(QString(decoder.decode(bytes)));  // the decoding happens on conversion
    return !decoder.hasError();
}

// ByteFallback: each run of "<0xNN>" symbols becomes the text of its bytes, or one U+FFFD per
// byte when they are not valid UTF-8; other symbols stay.
QStringList joinFallbackBytes(const QStringList& symbols)
{
    QStringList out;
    QByteArray run;
    const auto flush = [&] {
        if (run.isEmpty())
            return;
        if (isValidUtf8(run))
            out.append(decodeUtf8(run));
        else
            for (qsizetype i = 0; i < run.size(); ++i)
                out.append(QString(QChar(u'\uFFFD')));
        run.clear();
    };
    for (const QString& symbol : symbols) {
        const int byte = fallbackByte(symbol);
        if (byte >= 0) {
            run.append(char(byte));
            continue;
        }
        flush();
        out.append(symbol);
    }
    flush();
    return out;
}

// ByteLevel: all symbols' characters back to bytes (a symbol with a character that stands for no
// byte gives its own UTF-8), joined and read as UTF-8 into one text.
QString byteLevelText(const QStringList& symbols)
{
    QByteArray bytes;
    for (const QString& symbol : symbols) {
        QByteArray own;
        bool allBytes = true;
        for (const QChar c : symbol) {
            const int byte = byteOfByteLevelCharacter(c);
            if (byte < 0) {
                allBytes = false;
                break;
            }
            own.append(char(byte));
        }
        bytes.append(allBytes ? own : symbol.toUtf8());
    }
    return decodeUtf8(bytes);
}

// symbol with up to `start` leading and `stop` trailing copies of content cut.
QString stripped(const QString& symbol, const QString& content, int start, int stop)
{
    QStringView view(symbol);
    for (int i = 0; i < start && view.startsWith(content); ++i)
        view = view.mid(content.size());
    for (int i = 0; i < stop && view.endsWith(content); ++i)
        view.chop(content.size());
    return view.toString();
}

}  // namespace

HfDecoder HfDecoder::read(const QString& path, const QString& field, const QJsonValue& value)
{
    HfDecoder decoder;
    decoder.m_none = !readComponents(path, field, value, QStringLiteral("decoders"),
                                     [&](const TokenizerFields& step) { decoder.readStep(step); });
    return decoder;
}

void HfDecoder::readStep(const TokenizerFields& fields)
{
    const QString type = fields.type();
    Step step{};
    if (type == QStringLiteral("ByteLevel")) {
        step.kind = Step::Kind::ByteLevel;
    } else if (type == QStringLiteral("Metaspace")) {
        step.kind = Step::Kind::Metaspace;
        step.text = fields.string(QStringLiteral("replacement"), QStringLiteral("\u2581"));
        if (step.text.isEmpty())
            fields.refuse(QStringLiteral("replacement"), QStringLiteral("is empty"));
        const bool prefix = fields.boolean(QStringLiteral("add_prefix_space"), true);
        step.dropFirstSpace =
            fields.string(QStringLiteral("prepend_scheme"),
                          prefix ? QStringLiteral("always") : QStringLiteral("never")) !=
            QStringLiteral("never");
    } else if (type == QStringLiteral("Replace")) {
        step.kind = Step::Kind::Replace;
        step.pattern = readPattern(fields, QStringLiteral("pattern"));
        step.text = fields.string(QStringLiteral("content"));
    } else if (type == QStringLiteral("ByteFallback")) {
        step.kind = Step::Kind::ByteFallback;
    } else if (type == QStringLiteral("Fuse")) {
        step.kind = Step::Kind::Fuse;
    } else if (type == QStringLiteral("Strip")) {
        step.kind = Step::Kind::Strip;
        step.text = fields.string(QStringLiteral("content"));
        if (step.text.isEmpty())
            fields.refuse(QStringLiteral("content"), QStringLiteral("is empty"));
        constexpr int kLongestStrip = 1 << 20;
        step.start = fields.integer(QStringLiteral("start"), 0, kLongestStrip, 0);
        step.stop = fields.integer(QStringLiteral("stop"), 0, kLongestStrip, 0);
    } else {
        fields.refuseType(QStringLiteral("Attention Lab reads the decoders ByteLevel, Metaspace, "
                                         "Replace, ByteFallback, Fuse, Strip and Sequence"));
    }
    m_steps.push_back(step);
}

QStringList HfDecoder::apply(const Step& step, const QStringList& symbols, bool wholeText)
{
    QStringList out;
    switch (step.kind) {
        case Step::Kind::ByteLevel: return {byteLevelText(symbols)};
        case Step::Kind::Fuse: return {symbols.join(QString())};
        case Step::Kind::ByteFallback: return joinFallbackBytes(symbols);
        case Step::Kind::Metaspace:
            for (qsizetype i = 0; i < symbols.size(); ++i) {
                // The Rust library drops every "▁" of the first symbol, not only a leading one.
                QString symbol = symbols[i];
                const bool first = i == 0 && wholeText && step.dropFirstSpace;
                out.append(symbol.replace(step.text, first ? QString() : QStringLiteral(" ")));
            }
            return out;
        case Step::Kind::Replace:
            for (const QString& symbol : symbols)
                out.append(replaceMatches(symbol, step.pattern, step.text));
            return out;
        case Step::Kind::Strip:
            if (!wholeText)
                return symbols;
            for (const QString& symbol : symbols)
                out.append(stripped(symbol, step.text, step.start, step.stop));
            return out;
    }
    return symbols;
}

QString HfDecoder::decode(QStringList symbols, bool wholeText) const
{
    if (m_none)
        return symbols.join(u' ');
    for (const Step& step : m_steps)
        symbols = apply(step, symbols, wholeText);
    return symbols.join(QString());
}

}  // namespace attnlab
