#pragma once

#include <QString>
#include <QStringList>

namespace attnlab {

// The models built into Attention Lab (resources/models/README.md), each named by an explicit id:
//   builtin-kjv-llama  a 2-layer Llama trained on the King James Bible, with a previous-token
//                      head and induction heads (resources/models/kjv-llama); the default
//   builtin-kjv-gpt2   a 4-layer GPT-2 trained on the King James Bible (resources/models/kjv-gpt2)
//   builtin-vit        a ViT trained on Fashion-MNIST (resources/models/fashion-vit)
// "builtin" names the default text model. Sessions store the explicit id; a session written
// before the ids existed (version 1) meant the KJV GPT-2 by "builtin" (readSession maps it).
// Scenarios and tests that name the KJV GPT-2's heads name it by its id.
inline constexpr const char* kBuiltinModel = "builtin";
inline constexpr const char* kBuiltinKjvLlama = "builtin-kjv-llama";
inline constexpr const char* kBuiltinKjvGpt2 = "builtin-kjv-gpt2";
inline constexpr const char* kBuiltinVitModel = "builtin-vit";
// The model "builtin" names.
inline constexpr const char* kDefaultTextModel = kBuiltinKjvLlama;

// Whether path is a built-in model's id or "builtin".
bool isBuiltinName(const QString& path);

// The explicit id a built-in name stands for ("builtin" -> kDefaultTextModel); any other path as
// it is.
QString explicitModelId(const QString& path);

// The built-in text models' explicit ids, the default first.
QStringList builtinTextModels();

// The folder name of a built-in model under resources/models ("kjv-llama"); empty for a path that
// is not a built-in name.
QString builtinFolderName(const QString& builtinName);

// A readable name: "built-in KJV Llama", "built-in KJV GPT-2", "built-in Fashion-MNIST ViT".
QString builtinDisplayName(const QString& builtinName);

// What a new user sees first of a built-in text model: a text it reads, and the head whose
// pattern that text shows best.
struct BuiltinExample {
    QString text;
    int layer;
    int head;
};
BuiltinExample builtinExample(const QString& builtinName = QString::fromLatin1(kBuiltinModel));

}  // namespace attnlab
