#include "inputs/text.h"

#include "named_values.h"
#include <QTextBoundaryFinder>

namespace attnlab {

QStringList tokenize(const QString& text, TokenMode mode)
{
    const auto type =
        mode == TokenMode::Words ? QTextBoundaryFinder::Word : QTextBoundaryFinder::Grapheme;
    QTextBoundaryFinder finder(type, text);
    QStringList tokens;
    qsizetype start = 0;
    for (qsizetype end = finder.toNextBoundary(); end != -1; end = finder.toNextBoundary()) {
        const QString segment = text.mid(start, end - start);
        start = end;
        if (!segment.trimmed().isEmpty())
            tokens.append(segment.trimmed());
    }
    return tokens;
}

QString tokenModeName(TokenMode mode)
{
    return mode == TokenMode::Words ? QStringLiteral("words") : QStringLiteral("characters");
}

bool parseTokenMode(const QString& name, TokenMode* mode)
{
    return parseName(name, {TokenMode::Words, TokenMode::Characters}, tokenModeName, mode);
}

}  // namespace attnlab
