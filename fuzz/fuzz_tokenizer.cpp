// libFuzzer target: tokenize on arbitrary text. The first byte picks the mode (even: words, odd:
// characters), the rest is decoded as UTF-8 (invalid sequences become U+FFFD, as when a text is
// typed or pasted). Every token must be non-empty white-space-free at both ends; a crash, a leak
// or undefined behaviour is a finding.

#include "inputs/text.h"

#include <cstdlib>

// Tokenizes the bytes and checks the tokens.
extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    using namespace attnlab;
    if (size == 0)
        return 0;
    const TokenMode mode = data[0] % 2 == 0 ? TokenMode::Words : TokenMode::Characters;
    const QString text =
        QString::fromUtf8(reinterpret_cast<const char*>(data + 1), qsizetype(size - 1));
    qsizetype characters = 0;
    for (const QString& token : tokenize(text, mode)) {
        if (token.isEmpty() || token != token.trimmed())
            std::abort();
        characters += token.size();
    }
    if (characters > text.size())
        std::abort();
    return 0;
}
