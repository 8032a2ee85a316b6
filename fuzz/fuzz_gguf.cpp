// libFuzzer target: arbitrary bytes read as a GGUF file (GgufFile), then everything in it used:
// every metadata value read as each kind (integer, number, bool, string, arrays of strings,
// numbers, integers), every tensor of up to 2^16 values dequantized, the tokenizer of the metadata
// built and run on a fixed text, and the model's shape read. Any input is either refused with
// InputError naming the file, or read: the tensors' data inside the file, each value finite.
// Anything else (a crash, a hang, a leak, undefined behaviour, another exception) is a finding.

#include "errors.h"
#include "fuzz_input.h"
#include "model/gguf_file.h"
#include "model/gguf_model.h"
#include "model/gguf_tokenizer.h"

#include <cmath>
#include <cstdlib>

using namespace attnlab;
using attnlab::fuzz::readOrRefused;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    const QString path = fuzz::inputFile(data, size, ".gguf");
    readOrRefused(path, [&] {
        const GgufFile file(path);
        for (const QString& key : file.keys()) {
            readOrRefused(path, [&] { static_cast<void>(file.unsignedInteger(key)); });
            readOrRefused(path, [&] { static_cast<void>(file.number(key)); });
            readOrRefused(path, [&] { static_cast<void>(file.boolean(key, false)); });
            readOrRefused(path, [&] { static_cast<void>(file.string(key)); });
            readOrRefused(path, [&] { static_cast<void>(file.byteStrings(key)); });
            readOrRefused(path, [&] { static_cast<void>(file.floats(key)); });
            readOrRefused(path, [&] { static_cast<void>(file.integers(key)); });
        }
        for (const GgufTensor& tensor : file.tensors()) {
            if (file.dataStart() + tensor.offset + tensor.bytes > size)
                std::abort();  // data outside the file was accepted
            if (tensor.elementCount() > (1 << 16))
                continue;
            readOrRefused(path, [&] {
                for (const float value : file.values(tensor))
                    if (!std::isfinite(value))
                        std::abort();
            });
        }
        readOrRefused(path, [&] {
            const auto tokenizer = ggufTokenizer(file);
            for (const int id :
                 tokenizer->encode(QStringLiteral("Hello <s> wörld 123 \n日本 🤗"))) {
                if (id < 0 || id >= tokenizer->vocabularySize())
                    std::abort();
                static_cast<void>(tokenizer->label(id));
            }
        });
    });
    readOrRefused(path, [&] { static_cast<void>(ggufLanguageModelInfo(path)); });
    return 0;
}
