#include "model/text_tokenizer.h"

#include "model/gpt2_tokenizer.h"

namespace attnlab {

std::shared_ptr<const TextTokenizer> loadTextTokenizer(const QString& folder)
{
    return std::make_shared<Gpt2Tokenizer>(Gpt2Tokenizer::fromFolder(folder));
}

}  // namespace attnlab
