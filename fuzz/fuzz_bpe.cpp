// libFuzzer target: GPT-2's byte-level BPE (Gpt2Tokenizer::encode) with GPT-2's own vocabulary
// (tests/data/models/tokenizer) on arbitrary text. The first byte picks how the rest is read
// (even: UTF-8, invalid sequences becoming U+FFFD as when a text is typed or pasted; odd: raw
// UTF-16 code units, lone surrogates included). Every id must be a known id, and the ids must
// decode to the text (a lone surrogate to U+FFFD); an exception, a crash, a leak or undefined
// behaviour is a finding.

#include "model/gpt2_tokenizer.h"

#include <QStringDecoder>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>

namespace {

const attnlab::Gpt2Tokenizer& gpt2()
{
    static const attnlab::Gpt2Tokenizer tokenizer = [] {
        try {
            return attnlab::Gpt2Tokenizer::fromFolder(QStringLiteral(ATTNLAB_GPT2_TOKENIZER));
        } catch (const std::exception& error) {
            std::fprintf(stderr, "fuzz_bpe: %s\n", error.what());
            std::abort();  // not the encoder's fault: stop rather than fuzz nothing
        }
    }();
    return tokenizer;
}

// text as encode() reads it: each lone surrogate replaced by U+FFFD.
QString withoutLoneSurrogates(QString text)
{
    for (qsizetype i = 0; i < text.size(); ++i) {
        if (text[i].isHighSurrogate() && i + 1 < text.size() && text[i + 1].isLowSurrogate())
            ++i;
        else if (text[i].isSurrogate())
            text[i] = QChar(0xFFFD);
    }
    return text;
}

}  // namespace

// Encodes the text and checks the ids.
extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    using namespace attnlab;
    if (size == 0)
        return 0;
    const char* rest = reinterpret_cast<const char*>(data + 1);
    QString text;
    if (data[0] % 2 == 0) {
        // UTF-8, a byte order mark at the start kept as U+FEFF (it is text to encode).
        QStringDecoder utf8(QStringDecoder::Utf8, QStringDecoder::Flag::Stateless |
                                                      QStringDecoder::Flag::ConvertInitialBom);
        text = utf8.decode(QByteArrayView(rest, qsizetype(size - 1)));
    } else {
        text.resize(qsizetype((size - 1) / 2));
        std::memcpy(text.data(), rest, size_t(text.size()) * 2);
    }

    const Gpt2Tokenizer& tokenizer = gpt2();
    std::vector<int> ids;
    try {
        ids = tokenizer.encode(text);
    } catch (const std::exception& error) {
        std::fprintf(stderr, "fuzz_bpe: encode threw: %s\n", error.what());
        std::abort();  // GPT-2's vocabulary has a symbol for every byte
    }
    QByteArray bytes;
    for (const int id : ids) {
        if (id < 0 || id >= tokenizer.vocabularySize() || tokenizer.symbol(id).isEmpty())
            std::abort();
        bytes += tokenizer.bytes(id);
    }
    const QString expected = withoutLoneSurrogates(text);
    if (bytes != expected.toUtf8() || tokenizer.decode(ids) != expected)
        std::abort();
    if (text.isEmpty() != ids.empty())
        std::abort();
    return 0;
}
