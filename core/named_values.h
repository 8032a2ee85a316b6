#pragma once

#include <QString>
#include <QtGlobal>

#include <initializer_list>

namespace attnlab {

// Reading the names the command line and the files give a kind ("signed", "features", "png"):
// the candidate whose name(candidate) is `text` (compared as `sensitivity` says) goes to *value
// and the result is true; when no candidate has that name the result is false and *value is
// left alone. candidates is any range of the kind's values.
template <typename Candidates, typename Enum, typename Name>
bool parseName(const QString& text, const Candidates& candidates, Name name, Enum* value,
               Qt::CaseSensitivity sensitivity = Qt::CaseSensitive)
{
    for (const Enum candidate : candidates) {
        if (text.compare(name(candidate), sensitivity) == 0) {
            *value = candidate;
            return true;
        }
    }
    return false;
}

template <typename Enum, typename Name>
bool parseName(const QString& text, std::initializer_list<Enum> candidates, Name name, Enum* value,
               Qt::CaseSensitivity sensitivity = Qt::CaseSensitive)
{
    return parseName<std::initializer_list<Enum>, Enum, Name>(text, candidates, name, value,
                                                              sensitivity);
}

// `singular` for a count of exactly one, else `plural`: the word that agrees with a count given
// elsewhere in the sentence ("1 of 14 rows has", "3 entries exceed").
inline QString inNumber(qint64 count, const QString& singular, const QString& plural)
{
    return count == 1 ? singular : plural;
}

// "1 token", "0 tokens", "3 tokens": count and its noun, singular for exactly one.
inline QString countOf(qint64 count, const QString& singular, const QString& plural)
{
    return QStringLiteral("%1 %2").arg(count).arg(inNumber(count, singular, plural));
}

}  // namespace attnlab
