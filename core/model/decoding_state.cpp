#include "model/decoding_state.h"

#include <QElapsedTimer>

namespace attnlab {

DecodingState::DecodingState(std::vector<std::unique_ptr<LayerMemory>> layers)
    : m_layers(std::move(layers))
{
}

double DecodingState::bytes() const
{
    double total = 0;
    for (const std::unique_ptr<LayerMemory>& memory : m_layers)
        total += memory->bytes();
    return total;
}

void DecodingState::attend(int l, const Matrix<float>& qkv, Matrix<float>& out)
{
    QElapsedTimer timer;
    timer.start();
    m_layers[std::size_t(l)]->attend(qkv, out);
    m_attentionSeconds += double(timer.nsecsElapsed()) * 1e-9;
}

}  // namespace attnlab
