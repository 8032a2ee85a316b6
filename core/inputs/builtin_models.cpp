#include "inputs/builtin_models.h"

#include <array>

namespace attnlab {

namespace {

struct BuiltinModelEntry {
    const char* id;
    const char* folder;
    const char* displayName;
    bool text;
};

constexpr std::array<BuiltinModelEntry, 3> kBuiltinModels = {{
    {kBuiltinKjvLlama, "kjv-llama", "built-in KJV Llama", true},
    {kBuiltinKjvGpt2, "kjv-gpt2", "built-in KJV GPT-2", true},
    {kBuiltinVitModel, "fashion-vit", "built-in Fashion-MNIST ViT", false},
}};

const BuiltinModelEntry* entryOf(const QString& path)
{
    const QString id = explicitModelId(path);
    for (const BuiltinModelEntry& entry : kBuiltinModels)
        if (id == QLatin1String(entry.id))
            return &entry;
    return nullptr;
}

}  // namespace

bool isBuiltinName(const QString& path)
{
    return entryOf(path) != nullptr;
}

QString explicitModelId(const QString& path)
{
    return path == QLatin1String(kBuiltinModel) ? QString::fromLatin1(kDefaultTextModel) : path;
}

QStringList builtinTextModels()
{
    QStringList ids{QString::fromLatin1(kDefaultTextModel)};
    for (const BuiltinModelEntry& entry : kBuiltinModels)
        if (entry.text && !ids.contains(QLatin1String(entry.id)))
            ids.append(QString::fromLatin1(entry.id));
    return ids;
}

QString builtinFolderName(const QString& builtinName)
{
    const BuiltinModelEntry* entry = entryOf(builtinName);
    return entry ? QString::fromLatin1(entry->folder) : QString();
}

QString builtinDisplayName(const QString& builtinName)
{
    const BuiltinModelEntry* entry = entryOf(builtinName);
    return entry ? QString::fromLatin1(entry->displayName) : QString();
}

BuiltinExample builtinExample(const QString& builtinName)
{
    // Layer 1, head 1 of the KJV Llama is an induction head (heads.json): on words said twice,
    // each token of the second copy looks at the token that followed it in the first, a stripe
    // parallel to the diagonal.
    if (explicitModelId(builtinName) == QLatin1String(kBuiltinKjvLlama))
        return {QStringLiteral("vengeance candace ordinance lois chariots these open ramathlehi "
                               "run answered.\nvengeance candace ordinance lois chariots these "
                               "open ramathlehi run answered."),
                1, 1};
    // Layer 1, head 0 of the KJV GPT-2 is its punctuation head: each token looks back to the
    // latest punctuation mark (resources/models/README.md), and this sentence has four.
    return {QStringLiteral("In the beginning God created the heaven and the earth. And God said, "
                           "Let there be light: and there was light."),
            1, 0};
}

}  // namespace attnlab
