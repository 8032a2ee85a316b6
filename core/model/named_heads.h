#pragma once

#include <QString>

#include <vector>

namespace attnlab {

// A head a model's folder names, with the measurement that names it: the built-in models'
// heads.json (resources/models/README.md), e.g.
//   { "heads": [ { "layer": 2, "head": 1, "name": "induction head",
//                  "evidence": "0.71 of its weight on the token after ..." } ] }
// A user may add one beside a model of their own; the Heads page shows it in the head's tooltip.
struct NamedHead {
    int layer = 0;
    int head = 0;
    QString name;      // "previous-token head"
    QString evidence;  // how it was measured, one sentence
};

// The heads folder/heads.json names; none when the file is absent (or folder is a .gguf file).
// Throws InputError naming the file and the field for a file that is not such JSON, or a layer
// or head outside [0, layers) or [0, heads).
std::vector<NamedHead> readNamedHeads(const QString& folder, int layers, int heads);

// The named head at (layer, head) of heads, or nullptr.
const NamedHead* namedHead(const std::vector<NamedHead>& heads, int layer, int head);

}  // namespace attnlab
