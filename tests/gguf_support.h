#pragma once

// Helpers of test_gguf (and bench_gguf): GGUF files built in memory (to be damaged one field at a
// time), and the metadata llama.cpp's converter writes for a Hugging Face tokenizer.json (its
// get_vocab_base and SpecialVocab), so that the tokenizer.json fixtures of tests/data/tokenizers
// can be read as GGUF tokenizers and checked against the same reference ids.

#include <QByteArray>
#include <QHash>
#include <QJsonArray>
#include <QJsonObject>
#include <QString>
#include <QStringList>
#include <QtEndian>

#include <cstdint>
#include <optional>
#include <vector>

namespace attnlab::test {

// A GGUF file (docs/gguf.md, version 3, little-endian), written as gguf_files.py writes them:
// the header, the metadata in the order added, the tensor infos, padding to the alignment, the
// data of each tensor aligned. The fields a damaged file needs can be overridden.
class GgufBuilder {
public:
    // gguf_metadata_value_type
    enum Type : quint32 {
        UInt8 = 0,
        Int32 = 5,
        UInt32 = 4,
        Float32 = 6,
        Bool = 7,
        String = 8,
        Array = 9,
        UInt64 = 10
    };

    QByteArray magic = "GGUF";
    quint32 version = 3;
    quint64 alignment = 32;
    std::optional<quint64> keyCount;     // instead of the number of entries added
    std::optional<quint64> tensorCount;  // instead of the number of tensors added

    // A value already encoded (the bytes after the type).
    void addRaw(const QString& key, quint32 type, const QByteArray& value)
    {
        m_metadata += text(key) + little<quint32>(type) + value;
        ++m_keys;
    }
    void addString(const QString& key, const QString& value) { addRaw(key, String, text(value)); }
    void addU32(const QString& key, quint32 value) { addRaw(key, UInt32, little(value)); }
    void addF32(const QString& key, float value) { addRaw(key, Float32, little(value)); }
    void addBool(const QString& key, bool value) { addRaw(key, Bool, QByteArray(1, char(value))); }
    void addStrings(const QString& key, const QStringList& values)
    {
        QByteArray array = little<quint32>(String) + little<quint64>(quint64(values.size()));
        for (const QString& value : values)
            array += text(value);
        addRaw(key, Array, array);
    }
    template <typename T>
    void addNumbers(const QString& key, quint32 elementType, const std::vector<T>& values)
    {
        QByteArray array = little<quint32>(elementType) + little<quint64>(quint64(values.size()));
        for (const T value : values)
            array += little(value);
        addRaw(key, Array, array);
    }
    // A tensor: dims fastest first, the data as stored; offset (from the start of the tensor
    // data) the next aligned one unless given.
    void addTensor(const QString& name, quint32 type, const std::vector<quint64>& dims,
                   const QByteArray& data, std::optional<quint64> offset = std::nullopt)
    {
        m_data += QByteArray(
            qsizetype((alignment - quint64(m_data.size()) % alignment) % alignment), '\0');
        m_infos += text(name) + little<quint32>(quint32(dims.size()));
        for (const quint64 dim : dims)
            m_infos += little(dim);
        m_infos += little(type) + little<quint64>(offset.value_or(quint64(m_data.size())));
        m_data += data;
        ++m_tensors;
    }

    QByteArray bytes() const
    {
        QByteArray file = magic + little(version) +
                          little<quint64>(tensorCount.value_or(m_tensors)) +
                          little<quint64>(keyCount.value_or(m_keys)) + m_metadata + m_infos;
        file +=
            QByteArray(qsizetype((alignment - quint64(file.size()) % alignment) % alignment), '\0');
        return file + m_data;
    }

    // A GGUF string: uint64 length, then the UTF-8 bytes.
    static QByteArray text(const QString& value)
    {
        const QByteArray utf8 = value.toUtf8();
        return little<quint64>(quint64(utf8.size())) + utf8;
    }
    template <typename T>
    static QByteArray little(T value)
    {
        QByteArray bytes(sizeof(T), '\0');
        qToLittleEndian(value, bytes.data());
        return bytes;
    }

private:
    QByteArray m_metadata;
    QByteArray m_infos;
    QByteArray m_data;
    quint64 m_keys = 0;
    quint64 m_tensors = 0;
};

// The ids of the special tokens a post-processor puts before the text (TemplateProcessing's
// single template, inside a Sequence too), as gguf-py's SpecialVocab reads add_bos_token and the
// BOS id from it.
inline std::vector<int> templatePrefix(const QJsonObject& processor)
{
    if (processor.value(QStringLiteral("type")).toString() == QStringLiteral("Sequence")) {
        for (const QJsonValue member : processor.value(QStringLiteral("processors")).toArray())
            if (const std::vector<int> ids = templatePrefix(member.toObject()); !ids.empty())
                return ids;
        return {};
    }
    std::vector<int> ids;
    const QJsonObject specials = processor.value(QStringLiteral("special_tokens")).toObject();
    for (const QJsonValue item : processor.value(QStringLiteral("single")).toArray()) {
        if (item.toObject().contains(QStringLiteral("Sequence")))
            break;
        const QString name = item[QStringLiteral("SpecialToken")][QStringLiteral("id")].toString();
        for (const QJsonValue id : specials.value(name)[QStringLiteral("ids")].toArray())
            ids.push_back(id.toInt());
    }
    return ids;
}

// The "gpt2" tokenizer metadata convert_hf_to_gguf.py writes for a byte-level BPE tokenizer.json:
// the tokens by id (a hole "[PAD<id>]", user defined), their types (an added special token
// CONTROL (3), another added token USER_DEFINED (4), the rest NORMAL (1)), the merges as
// "left right", the pre-tokenizer's name, BOS and add_bos_token from the post-processor.
inline void addByteLevelTokenizer(GgufBuilder& gguf, const QJsonObject& json, const QString& pre)
{
    const QJsonObject vocab = json[QStringLiteral("model")][QStringLiteral("vocab")].toObject();
    QHash<int, std::pair<QString, qint32>> byId;
    int size = 0;
    for (auto it = vocab.begin(); it != vocab.end(); ++it) {
        byId.insert(it.value().toInt(), {it.key(), 1});
        size = std::max(size, it.value().toInt() + 1);
    }
    for (const QJsonValue added : json[QStringLiteral("added_tokens")].toArray()) {
        const int id = added[QStringLiteral("id")].toInt();
        byId.insert(id, {added[QStringLiteral("content")].toString(),
                         added[QStringLiteral("special")].toBool() ? 3 : 4});
        size = std::max(size, id + 1);
    }
    QStringList tokens;
    std::vector<qint32> types;
    for (int id = 0; id < size; ++id) {
        const auto token = byId.value(id, {QStringLiteral("[PAD%1]").arg(id), 4});
        tokens.append(token.first);
        types.push_back(token.second);
    }
    QStringList merges;
    for (const QJsonValue merge : json[QStringLiteral("model")][QStringLiteral("merges")].toArray())
        merges.append(merge.isString() ? merge.toString()
                                       : merge[0].toString() + u' ' + merge[1].toString());
    gguf.addString(QStringLiteral("tokenizer.ggml.model"), QStringLiteral("gpt2"));
    gguf.addString(QStringLiteral("tokenizer.ggml.pre"), pre);
    gguf.addStrings(QStringLiteral("tokenizer.ggml.tokens"), tokens);
    gguf.addNumbers(QStringLiteral("tokenizer.ggml.token_type"), GgufBuilder::Int32, types);
    gguf.addStrings(QStringLiteral("tokenizer.ggml.merges"), merges);
    const std::vector<int> prefix =
        templatePrefix(json[QStringLiteral("post_processor")].toObject());
    if (!prefix.empty()) {
        gguf.addU32(QStringLiteral("tokenizer.ggml.bos_token_id"), quint32(prefix.front()));
        gguf.addBool(QStringLiteral("tokenizer.ggml.add_bos_token"), true);
    }
}

}  // namespace attnlab::test
