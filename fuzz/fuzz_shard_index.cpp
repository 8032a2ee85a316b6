// libFuzzer target: parseShardIndex (a model.safetensors.index.json) on arbitrary bytes. Any
// input is either parsed into a nonempty map whose shards are file names of the folder (nonempty,
// no '/', '\' or ".."), or refused with InputError naming the file. Anything else (a crash, a
// leak, undefined behaviour, another exception) is a finding.

#include "errors.h"
#include "fuzz_input.h"
#include "model/checkpoint_weights.h"

#include <QByteArrayView>
#include <QString>

#include <cstdlib>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    using namespace attnlab;
    const QByteArrayView json(reinterpret_cast<const char*>(data), qsizetype(size));
    const QString fileName = QStringLiteral("model.safetensors.index.json");
    std::map<QString, QString> shards;
    if (!fuzz::readOrRefused(fileName, [&] { shards = parseShardIndex(json, fileName); }))
        return 0;
    if (shards.empty())
        std::abort();
    for (const auto& [tensor, shard] : shards)
        if (shard.isEmpty() || shard.contains(QLatin1Char('/')) ||
            shard.contains(QLatin1Char('\\')) || shard.contains(QStringLiteral("..")))
            std::abort();
    return 0;
}
