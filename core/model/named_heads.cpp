#include "model/named_heads.h"

#include "errors.h"
#include "io/json_fields.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QJsonParseError>

namespace attnlab {

std::vector<NamedHead> readNamedHeads(const QString& folder, int layers, int heads)
{
    const QString path = QDir(folder).filePath(QStringLiteral("heads.json"));
    if (!QFileInfo(folder).isDir() || !QFileInfo::exists(path))
        return {};
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly))
        refuse(path, QStringLiteral("cannot read the file: %1").arg(file.errorString()));
    QJsonParseError error;
    const QJsonDocument document = QJsonDocument::fromJson(file.read(1 << 20), &error);
    if (error.error != QJsonParseError::NoError || !document.isObject())
        refuse(path,
               QStringLiteral("not a JSON object with \"heads\" (%1)")
                   .arg(error.error != QJsonParseError::NoError ? error.errorString()
                                                                : QStringLiteral("an array")));
    std::vector<NamedHead> named;
    try {
        const QJsonObject root = document.object();
        const QJsonArray entries = JsonFields(root, QString()).array("heads");
        for (qsizetype i = 0; i < entries.size(); ++i) {
            const QString prefix = QStringLiteral("heads[%1].").arg(i);
            JsonFields::require(entries.at(i).isObject(),
                                QStringLiteral("heads[%1] must be an object").arg(i));
            const QJsonObject entry = entries.at(i).toObject();
            const JsonFields fields(entry, prefix);
            NamedHead head;
            for (const char* key : {"layer", "head", "name"})
                JsonFields::require(fields.has(key),
                                    fields.name(key) + QStringLiteral(" is missing"));
            fields.read("layer", &head.layer, 0, layers - 1);
            fields.read("head", &head.head, 0, heads - 1);
            fields.read("name", &head.name);
            fields.read("evidence", &head.evidence);
            named.push_back(head);
        }
    } catch (const InputError& problem) {
        refuse(path, problem.message());
    }
    return named;
}

const NamedHead* namedHead(const std::vector<NamedHead>& heads, int layer, int head)
{
    for (const NamedHead& named : heads)
        if (named.layer == layer && named.head == head)
            return &named;
    return nullptr;
}

}  // namespace attnlab
