// libFuzzer target: arbitrary bytes read as a Hugging Face tokenizer.json (HfTokenizer::fromFile),
// then a fixed text with Unicode, digits, white space, emoji and special-token look-alikes
// encoded, decoded and labelled. Any input is either refused with InputError naming the file, or
// gives ids in [0, vocabularySize()) whose decode, text and label return. Anything else (a crash,
// a hang, a leak, undefined behaviour, another exception) is a finding.

#include "errors.h"
#include "fuzz_input.h"
#include "model/hf_tokenizer.h"

#include <cstdlib>

// Loads the bytes as tokenizer.json and runs the fixed text through it.
extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    using namespace attnlab;
    static const QString text = QStringLiteral("Hello <s>wörld</s> it's 12345  \n\n\t Cafe\u0301 "
                                               "日本 🤗👨\u200d👩 <|endoftext|> ▁Ġ");
    const QString path = fuzz::inputFile(data, size, "-tokenizer.json");
    try {
        const HfTokenizer tokenizer = HfTokenizer::fromFile(path);
        const std::vector<int> ids = tokenizer.encode(text);
        for (const int id : ids) {
            if (id < 0 || id >= tokenizer.vocabularySize())
                std::abort();
            static_cast<void>(tokenizer.label(id));
        }
        static_cast<void>(tokenizer.decode(ids));
    } catch (const InputError& error) {
        if (!error.message().startsWith(path))
            std::abort();  // a refusal must name the file
    }
    return 0;
}
