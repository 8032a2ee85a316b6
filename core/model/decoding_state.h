#pragma once

#include "model/layer_memory.h"
#include "types.h"

#include <memory>
#include <vector>

namespace attnlab {

// A language model's incremental decoding in progress (docs/design.md section 3.4): the position
// reached (the tokens read so far) and, per layer, what that layer keeps of them and how it
// attends with it (LayerMemory: a key/value cache, or an approximation's recurrent state).
// LanguageModel::decode reads the next tokens through it; LanguageModel::decodingState makes one
// with a key/value cache in every layer (core/generation's approximateDecodingState one with an
// approximation in some).
class DecodingState {
public:
    explicit DecodingState(std::vector<std::unique_ptr<LayerMemory>> layers);

    // The tokens read: the next token is at this position.
    Eigen::Index position() const { return m_position; }
    int layers() const { return int(m_layers.size()); }
    LayerMemory& layer(int l) { return *m_layers[std::size_t(l)]; }
    const LayerMemory& layer(int l) const { return *m_layers[std::size_t(l)]; }

    // The bytes every layer holds from token to token.
    double bytes() const;
    // The wall-clock seconds spent in the layers' attention (attend) so far.
    double attentionSeconds() const { return m_attentionSeconds; }

    // Layer l's attention for the rows being read (LayerMemory::attend), timed into
    // attentionSeconds(). The models' decode calls it layer by layer, then advance().
    void attend(int l, const Matrix<float>& qkv, Matrix<float>& out);
    // Moves the position on by `tokens`, once every layer has read them.
    void advance(Eigen::Index tokens) { m_position += tokens; }

private:
    std::vector<std::unique_ptr<LayerMemory>> m_layers;
    Eigen::Index m_position = 0;
    double m_attentionSeconds = 0;
};

}  // namespace attnlab
