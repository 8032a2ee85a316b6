#pragma once

#include <QHash>
#include <QJsonDocument>
#include <QJsonObject>
#include <QJsonValue>
#include <QString>
#include <QStringList>

#include <functional>
#include <initializer_list>
#include <utility>
#include <vector>

namespace attnlab {

// Reading the tokenizer files (GPT-2's vocab.json, a Hugging Face tokenizer.json): the file, its
// JSON, and its fields, each refused with an InputError that names the file and the field.

// Ids above this are refused: the id -> symbol tables are allocated up to the largest id (the
// largest open vocabularies hold some 260,000 symbols).
constexpr int kLargestTokenId = (1 << 22) - 1;

// Throws InputError "where: problem".
[[noreturn]] void refuseTokenizer(const QString& where, const QString& problem);
// "\"text\"", cut to 40 characters, for messages.
QString quotedSymbol(const QString& text);
// The bytes of a tokenizer file (a UTF-8 byte order mark dropped); refused when it cannot be read
// or is over 1 GiB.
QByteArray readTokenizerFile(const QString& path);
// The JSON document of a tokenizer file; refused when it is not JSON.
QJsonDocument readTokenizerJson(const QString& path);
// The symbol -> id pairs of a JSON object; `what` names it in messages ("the vocabulary",
// "model.vocab"). Ids must be integers in [0, kLargestTokenId], each given to one symbol only.
QHash<QString, int> vocabularyOf(const QString& path, const QString& what, const QJsonValue& value);

// The fields of one JSON object of a file, read with their full name ("model.byte_fallback") in
// every message: a field of the wrong type is refused, never taken for its default.
class TokenizerFields {
public:
    // The object `value` at `field` of `path`; refused when value is not an object.
    TokenizerFields(const QString& path, const QString& field, const QJsonValue& value);

    const QString& path() const { return m_path; }
    // The object's own name ("model", "pre_tokenizer.pretokenizers[0]"; empty at the top level).
    const QString& field() const { return m_field; }
    // "field.key" (or "key" at the top level).
    QString name(const QString& key) const;
    // The raw value of key (undefined when absent).
    QJsonValue value(const QString& key) const { return m_object.value(key); }
    // Whether key is absent or null.
    bool isNull(const QString& key) const;
    // The object at key, as TokenizerFields.
    TokenizerFields object(const QString& key) const;
    // The string at key; `fallback` when absent or null and a fallback is given.
    QString string(const QString& key) const;
    QString string(const QString& key, const QString& fallback) const;
    // The boolean at key; `fallback` when absent or null.
    bool boolean(const QString& key, bool fallback) const;
    // The integer at key, from `least` to `most`; `fallback` when absent or null.
    int integer(const QString& key, int least, int most, int fallback) const;
    // The "type" of the object, for the component readers.
    QString type() const { return string(QStringLiteral("type")); }
    // The value of `text`, the string at key, among `options` (name, value); refused, listing the
    // names, for any other.
    template <typename Value>
    Value choice(const QString& key, const QString& text,
                 std::initializer_list<std::pair<const char*, Value>> options) const
    {
        QStringList names;
        for (const auto& [name, value] : options) {
            if (text == QLatin1String(name))
                return value;
            names.append(QLatin1String(name));
        }
        refuseChoice(key, text, names);
    }
    // Throws InputError "path: field.key is "text"; expected a, b or c".
    [[noreturn]] void refuseChoice(const QString& key, const QString& text,
                                   const QStringList& names) const;
    // Throws InputError "path: field.key problem".
    [[noreturn]] void refuse(const QString& key, const QString& problem) const;
    // Throws InputError "path: field type X is not supported (why)", X the object's "type".
    [[noreturn]] void refuseType(const QString& why) const;

private:
    QString m_path;
    QString m_field;  // empty at the top level
    QJsonObject m_object;
};

// The components of one kind (a normalizer, pre-tokenizer, post-processor or decoder) in the JSON
// value at `field` of `path`: none when it is absent or null; else readComponent(component) for
// it, or, when its type is Sequence, for each member of its list at sequenceKey
// ("field.sequenceKey[i]"), in order, a member that is a Sequence read the same way. Refused when
// the value or a member is not an object, a list is not an array, or Sequences nest 16 deep (the
// real files nest none). Returns whether the value is present.
bool readComponents(const QString& path, const QString& field, const QJsonValue& value,
                    const QString& sequenceKey,
                    const std::function<void(const TokenizerFields&)>& readComponent);

// The merges of a BPE model's object (model.merges: "left right" strings or [left, right] pairs)
// as (left, right) pairs in rank order; refused, naming the entry, when it is not an array or an
// entry is neither.
std::vector<std::pair<QString, QString>> mergePairs(const TokenizerFields& model);

}  // namespace attnlab
