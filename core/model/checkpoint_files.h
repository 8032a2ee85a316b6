#pragma once

#include <QJsonObject>
#include <QJsonValue>
#include <QString>

namespace attnlab {

// A Hugging Face checkpoint folder as GPT-2 and ViT share it: config.json (whose model_type says
// which architecture it is), other JSON files, and one .safetensors file of weights. Every
// problem is an InputError whose message starts with the file (or folder) at fault.

// Throws InputError "where: problem".
[[noreturn]] void refuseCheckpoint(const QString& where, const QString& problem);

// A JSON value as a message shows it: 12, "gelu", null, an array, missing.
QString jsonValueText(const QJsonValue& value);

// The JSON object of the text `json`, read from path. Throws InputError naming path when it is
// not JSON or not an object.
QJsonObject parseJsonObject(const QByteArray& json, const QString& path);

// The JSON object in the file at path. Throws InputError naming the file when it is missing
// (`whatItHolds` completes "no such file (...)"), unreadable, not JSON or not an object.
QJsonObject readJsonObject(const QString& path, const QString& whatItHolds);

// A language model's config.json at path, as readJsonObject reads it (a missing file is refused
// saying what a model folder holds).
QJsonObject readModelConfig(const QString& path);

// Throws InputError "folder: no such model folder (whatItIs)" unless folder is a folder.
void requireModelFolder(const QString& folder, const QString& whatItIs);

// json[key] as a positive int. Throws InputError naming path and key when it is missing or not a
// positive integer.
int positiveInteger(const QString& path, const QJsonObject& json, const QString& key);

// json[key] as a positive int, or fallback when the key is absent or null. Throws InputError
// naming path and key otherwise.
int optionalPositiveInteger(const QString& path, const QJsonObject& json, const QString& key,
                            int fallback);

// json[key] as a finite number > 0, or fallback when the key is absent. Throws InputError naming
// path and key otherwise.
double positiveNumber(const QString& path, const QJsonObject& json, const QString& key,
                      double fallback);

// json[key] as a boolean, or fallback when the key is absent or null. Throws InputError naming
// path and key for any other value.
bool booleanValue(const QString& path, const QJsonObject& json, const QString& key, bool fallback);

// The sizes every transformer's config.json gives: Hugging Face's num_hidden_layers,
// num_attention_heads, hidden_size and intermediate_size (GPT-2's n_layer, n_head, n_embd,
// n_inner). The architectures' configs start with them.
struct TransformerSizes {
    int layers = 0;      // blocks
    int heads = 0;       // (query) heads H
    int width = 0;       // the residual stream's width
    int innerWidth = 0;  // the MLP's hidden layer
};

// Hugging Face's four keys above, each a positive integer; with equalHeads, hidden_size must be a
// multiple of num_attention_heads (d = hidden_size / H). Throws InputError naming path and the
// key otherwise.
TransformerSizes readTransformerSizes(const QString& path, const QJsonObject& json,
                                      bool equalHeads);

// The weights of a model folder: folder/model.safetensors, or the folder's only .safetensors
// file. Throws InputError naming the folder when there is none, or several and no
// model.safetensors.
QString weightsPath(const QString& folder);

// The architectures Attention Lab runs.
enum class ModelArchitecture {
    Gpt2,     // model_type "gpt2" (or none: the GPT-2 checkpoints Attention Lab first read)
    Vit,      // model_type "vit"
    Llama,    // model_type "llama" (Llama 2 and 3, TinyLlama, SmolLM, SmolLM2)
    Mistral,  // model_type "mistral"
    Qwen2,    // model_type "qwen2"
    GptNeox,  // model_type "gpt_neox" (Pythia)
};

// config.json's model_type of an architecture: "gpt2", "vit", "llama", "mistral", "qwen2",
// "gpt_neox".
QString modelTypeName(ModelArchitecture architecture);

// An architecture's name for people: "GPT-2", "ViT", "Llama", "Mistral", "Qwen2", "GPT-NeoX".
QString architectureDisplayName(ModelArchitecture architecture);

// The architecture folder/config.json names. Throws InputError naming the folder when it does
// not exist, naming config.json when it is missing, not a JSON object, or names another
// model_type (the message lists the model types Attention Lab runs).
ModelArchitecture modelArchitecture(const QString& folder);

}  // namespace attnlab
