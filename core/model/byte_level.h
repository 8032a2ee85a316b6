#pragma once

#include <QByteArray>
#include <QRegularExpression>
#include <QString>

namespace attnlab {

// The byte-level pieces GPT-2 introduced and Hugging Face's ByteLevel components reuse.

// GPT-2's bytes_to_unicode(): the character that stands for byte b in a byte-level symbol. The
// printable bytes '!'..'~', '¡'..'¬', '®'..'ÿ' stand for themselves; the other 68 bytes, in
// increasing order, for U+0100, U+0101, ... (space 0x20 -> U+0120 "Ġ", newline 0x0A -> U+010A "Ċ").
QChar byteLevelCharacter(quint8 byte);
// The byte a byte-level character stands for, or -1 for a character that stands for none.
int byteOfByteLevelCharacter(QChar c);
// Each byte of bytes as its byte-level character: " cat" -> "Ġcat".
QString byteLevelSymbols(const QByteArray& bytes);

// The characters of Unicode's White_Space property, as the inside of a PCRE2 character class
// (PCRE2's \s is ASCII only, and with Unicode properties it adds U+180E, a format character since
// Unicode 6.3).
QString whiteSpaceClass();

// GPT-2's pre-tokenization pattern
//     's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
// with the semantics of Python's `regex` module that encoder.py uses: matched on code points (an
// emoji outside the BMP is one character), case-sensitive ("'S" is not a contraction), \s the
// White_Space characters, \p{L} and \p{N} by the Unicode tables of the PCRE2 that Qt uses. Its
// matches cover any text without a lone surrogate.
const QRegularExpression& gpt2PieceExpression();

// text with each lone surrogate replaced by U+FFFD, as PCRE2 matches valid UTF-16 only (and UTF-8
// cannot hold a lone surrogate).
QString withoutLoneSurrogates(const QString& text);

// bytes decoded as UTF-8, a byte order mark at the start kept as U+FEFF (QString::fromUtf8 drops
// it) and each invalid sequence shown as U+FFFD.
QString decodeUtf8(const QByteArray& bytes);

}  // namespace attnlab
