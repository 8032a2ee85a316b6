#pragma once

#include <QString>
#include <QStringList>

namespace attnlab {

enum class TokenMode {
    Words,       // each word and each punctuation mark is a token
    Characters,  // each user-perceived character (grapheme cluster) is a token
};

// Splits text into tokens, dropping white space. Words: Unicode word boundaries (UAX #29, through
// QTextBoundaryFinder), so "don't" stays one token and "naïve" or "日本" are handled as Unicode
// says. Characters: grapheme clusters, so "e" + combining accent is one token.
QStringList tokenize(const QString& text, TokenMode mode);

QString tokenModeName(TokenMode mode);  // "words", "characters"
bool parseTokenMode(const QString& name, TokenMode* mode);

}  // namespace attnlab
