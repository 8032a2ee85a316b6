#include "model/byte_level.h"

#include <QStringDecoder>

#include <array>

namespace attnlab {
namespace {

// bytes_to_unicode() both ways.
struct ByteCharacters {
    std::array<char16_t, 256> characterOf{};
    std::array<int, 0x144> byteOf{};  // character -> byte, -1 for characters that stand for none

    ByteCharacters()
    {
        byteOf.fill(-1);
        int next = 0x100;
        for (int b = 0; b < 256; ++b) {
            const bool printable =
                (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
            characterOf[size_t(b)] = char16_t(printable ? b : next++);
            byteOf[characterOf[size_t(b)]] = b;
        }
    }
};

const ByteCharacters& byteCharacters()
{
    static const ByteCharacters characters;
    return characters;
}

}  // namespace

QChar byteLevelCharacter(quint8 byte)
{
    return QChar(byteCharacters().characterOf[byte]);
}

int byteOfByteLevelCharacter(QChar c)
{
    const char16_t u = c.unicode();
    return u < byteCharacters().byteOf.size() ? byteCharacters().byteOf[u] : -1;
}

QString byteLevelSymbols(const QByteArray& bytes)
{
    QString symbols(bytes.size(), Qt::Uninitialized);
    for (qsizetype i = 0; i < bytes.size(); ++i)
        symbols[i] = byteLevelCharacter(quint8(bytes[i]));
    return symbols;
}

QString whiteSpaceClass()
{
    return QStringLiteral(
        "\\t-\\r\\x{20}\\x{85}\\x{A0}\\x{1680}\\x{2000}-\\x{200A}\\x{2028}\\x{2029}\\x{202F}"
        "\\x{205F}\\x{3000}");
}

const QRegularExpression& gpt2PieceExpression()
{
    // [^%1] stands for \S. PCRE2 in Qt matches code points (UTF-16 mode), as Python does.
    static const QRegularExpression expression = [] {
        const QString pattern =
            QStringLiteral("'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^%1\\p{L}\\p{N}]+"
                           "|[%1]+(?![^%1])|[%1]+")
                .arg(whiteSpaceClass());
        QRegularExpression built(pattern, QRegularExpression::UseUnicodePropertiesOption);
        Q_ASSERT(built.isValid());
        return built;
    }();
    return expression;
}

QString withoutLoneSurrogates(const QString& text)
{
    QString fixed;
    for (qsizetype i = 0; i < text.size(); ++i) {
        const QChar c = text[i];
        if (c.isHighSurrogate() && i + 1 < text.size() && text[i + 1].isLowSurrogate()) {
            ++i;
            continue;
        }
        if (c.isSurrogate()) {
            if (fixed.isNull())
                fixed = text;
            fixed[i] = QChar(u'\uFFFD');
        }
    }
    return fixed.isNull() ? text : fixed;
}

QString decodeUtf8(const QByteArray& bytes)
{
    QStringDecoder decoder(QStringDecoder::Utf8, QStringDecoder::Flag::Stateless |
                                                     QStringDecoder::Flag::ConvertInitialBom);
    return decoder.decode(bytes);
}

}  // namespace attnlab
