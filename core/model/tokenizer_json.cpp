#include "model/tokenizer_json.h"

#include "errors.h"
#include "io/json_types.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonParseError>
#include <QStringList>

#include <cmath>

namespace attnlab {
namespace {

// Files larger than this are refused before they are read (GPT-2's vocab.json is 1 MB, the
// tokenizer.json of the largest open models some 20 MB).
constexpr qint64 kLargestFile = qint64(1) << 30;
// Sequences nested deeper than this are refused (the real files nest none).
constexpr int kDeepestSequence = 16;
// Symbols are quoted in messages up to this many characters.
constexpr qsizetype kQuoteLength = 40;

// The value of a number field for messages: the number, or the JSON type of a non-number.
QString shownNumber(const QJsonValue& value)
{
    return value.isDouble() ? QString::number(value.toDouble()) : jsonTypeName(value);
}

// readComponents of the component `fields`, a Sequence nested `depth` deep.
void readComponentsOf(const TokenizerFields& fields, const QString& sequenceKey,
                      const std::function<void(const TokenizerFields&)>& readComponent, int depth)
{
    if (fields.type() != QStringLiteral("Sequence")) {
        readComponent(fields);
        return;
    }
    if (depth == kDeepestSequence)
        fields.refuse(sequenceKey, QStringLiteral("nests too deep"));
    const QJsonValue list = fields.value(sequenceKey);
    if (!list.isArray())
        fields.refuse(sequenceKey,
                      QStringLiteral("is %1; expected an array").arg(jsonTypeName(list)));
    const QJsonArray members = list.toArray();
    for (qsizetype i = 0; i < members.size(); ++i) {
        const QString member = QStringLiteral("%1[%2]").arg(fields.name(sequenceKey)).arg(i);
        readComponentsOf(TokenizerFields(fields.path(), member, members[i]), sequenceKey,
                         readComponent, depth + 1);
    }
}

}  // namespace

void refuseTokenizer(const QString& where, const QString& problem)
{
    throw InputError(QStringLiteral("%1: %2").arg(where, problem));
}

QString quotedSymbol(const QString& text)
{
    if (text.size() <= kQuoteLength)
        return u'"' + text + u'"';
    return u'"' + text.left(kQuoteLength) + QStringLiteral("...\"");
}

QByteArray readTokenizerFile(const QString& path)
{
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly))
        refuseTokenizer(path, QStringLiteral("cannot be read (%1)").arg(file.errorString()));
    if (file.size() > kLargestFile)
        refuseTokenizer(path, QStringLiteral("is %1 bytes; a tokenizer file has at most %2")
                                  .arg(file.size())
                                  .arg(kLargestFile));
    QByteArray bytes = file.readAll();
    if (file.error() != QFileDevice::NoError)
        refuseTokenizer(path, QStringLiteral("cannot be read (%1)").arg(file.errorString()));
    if (bytes.startsWith("\xEF\xBB\xBF"))  // a UTF-8 byte order mark
        bytes.remove(0, 3);
    return bytes;
}

QJsonDocument readTokenizerJson(const QString& path)
{
    const QByteArray bytes = readTokenizerFile(path);
    QJsonParseError error;
    const QJsonDocument document = QJsonDocument::fromJson(bytes, &error);
    if (error.error != QJsonParseError::NoError)
        refuseTokenizer(path, QStringLiteral("not JSON (%1 at byte %2)")
                                  .arg(error.errorString(), QString::number(error.offset)));
    return document;
}

QHash<QString, int> vocabularyOf(const QString& path, const QString& what, const QJsonValue& value)
{
    if (!value.isObject())
        refuseTokenizer(path, QStringLiteral("%1 is %2; expected a JSON object of symbol -> id")
                                  .arg(what, jsonTypeName(value)));
    const QJsonObject object = value.toObject();
    if (object.isEmpty())
        refuseTokenizer(path, QStringLiteral("%1 is empty").arg(what));
    QHash<QString, int> ids;
    ids.reserve(object.size());
    QHash<int, QString> symbols;
    symbols.reserve(object.size());
    for (auto it = object.begin(); it != object.end(); ++it) {
        const QJsonValue id = it.value();
        const double number = id.toDouble(-1.0);
        if (!id.isDouble() || number != std::trunc(number) || number < 0 ||
            number > kLargestTokenId)
            refuseTokenizer(
                path, QStringLiteral("in %1 the id of %2 is %3; ids are integers from 0 to %4")
                          .arg(what, quotedSymbol(it.key()), shownNumber(id),
                               QString::number(kLargestTokenId)));
        const int n = int(number);
        const auto other = symbols.constFind(n);
        if (other != symbols.constEnd())
            refuseTokenizer(path, QStringLiteral("in %1 %2 and %3 have the same id %4")
                                      .arg(what, quotedSymbol(*other), quotedSymbol(it.key()),
                                           QString::number(n)));
        symbols.insert(n, it.key());
        ids.insert(it.key(), n);
    }
    return ids;
}

TokenizerFields::TokenizerFields(const QString& path, const QString& field, const QJsonValue& value)
    : m_path(path), m_field(field), m_object(value.toObject())
{
    if (!value.isObject())
        refuseTokenizer(path, QStringLiteral("%1 is %2; expected an object")
                                  .arg(field.isEmpty() ? QStringLiteral("the file") : field,
                                       jsonTypeName(value)));
}

void TokenizerFields::refuseChoice(const QString& key, const QString& text,
                                   const QStringList& names) const
{
    const QString listed = names.size() < 2
                               ? names.join(QString())
                               : names.mid(0, names.size() - 1).join(QStringLiteral(", ")) +
                                     QStringLiteral(" or ") + names.last();
    refuse(key, QStringLiteral("is %1; expected %2").arg(quotedSymbol(text), listed));
}

QString TokenizerFields::name(const QString& key) const
{
    return m_field.isEmpty() ? key : m_field + u'.' + key;
}

bool TokenizerFields::isNull(const QString& key) const
{
    const QJsonValue v = m_object.value(key);
    return v.isUndefined() || v.isNull();
}

TokenizerFields TokenizerFields::object(const QString& key) const
{
    return TokenizerFields(m_path, name(key), m_object.value(key));
}

QString TokenizerFields::string(const QString& key) const
{
    const QJsonValue v = m_object.value(key);
    if (!v.isString())
        refuse(key, QStringLiteral("is %1; expected a string").arg(jsonTypeName(v)));
    return v.toString();
}

QString TokenizerFields::string(const QString& key, const QString& fallback) const
{
    return isNull(key) ? fallback : string(key);
}

bool TokenizerFields::boolean(const QString& key, bool fallback) const
{
    if (isNull(key))
        return fallback;
    const QJsonValue v = m_object.value(key);
    if (!v.isBool())
        refuse(key, QStringLiteral("is %1; expected true or false").arg(jsonTypeName(v)));
    return v.toBool();
}

int TokenizerFields::integer(const QString& key, int least, int most, int fallback) const
{
    if (isNull(key))
        return fallback;
    const QJsonValue v = m_object.value(key);
    const double number = v.toDouble(-1.0);
    if (!v.isDouble() || number != std::trunc(number) || number < least || number > most)
        refuse(key, QStringLiteral("is %1; expected an integer from %2 to %3")
                        .arg(shownNumber(v))
                        .arg(least)
                        .arg(most));
    return int(number);
}

void TokenizerFields::refuse(const QString& key, const QString& problem) const
{
    refuseTokenizer(m_path, name(key) + u' ' + problem);
}

void TokenizerFields::refuseType(const QString& why) const
{
    const QString shown = type().size() <= 40 ? type() : type().left(40) + QStringLiteral("...");
    refuseTokenizer(m_path,
                    QStringLiteral("%1 type %2 is not supported (%3)").arg(m_field, shown, why));
}

std::vector<std::pair<QString, QString>> mergePairs(const TokenizerFields& model)
{
    const QJsonValue merges = model.value(QStringLiteral("merges"));
    if (!merges.isArray())
        model.refuse(QStringLiteral("merges"),
                     QStringLiteral("is %1; expected an array").arg(jsonTypeName(merges)));
    const QJsonArray list = merges.toArray();
    std::vector<std::pair<QString, QString>> pairs;
    pairs.reserve(size_t(list.size()));
    for (qsizetype i = 0; i < list.size(); ++i) {
        const QJsonValue merge = list[i];
        QStringList symbols;
        if (merge.isString()) {
            symbols = merge.toString().split(u' ');
        } else if (merge.isArray()) {
            for (const QJsonValue symbol : merge.toArray())
                symbols.append(symbol.isString() ? symbol.toString() : QString());
        }
        if (symbols.size() != 2 || symbols[0].isEmpty() || symbols[1].isEmpty())
            refuseTokenizer(model.path(),
                            QStringLiteral("%1[%2] is not \"left right\" or [\"left\", \"right\"]")
                                .arg(model.name(QStringLiteral("merges")))
                                .arg(i));
        pairs.emplace_back(symbols[0], symbols[1]);
    }
    return pairs;
}

bool readComponents(const QString& path, const QString& field, const QJsonValue& value,
                    const QString& sequenceKey,
                    const std::function<void(const TokenizerFields&)>& readComponent)
{
    if (value.isUndefined() || value.isNull())
        return false;
    readComponentsOf(TokenizerFields(path, field, value), sequenceKey, readComponent, 0);
    return true;
}

}  // namespace attnlab
