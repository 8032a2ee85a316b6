// Hugging Face tokenizer.json pipelines (core/model/hf_tokenizer): on real vocabularies (GPT-2,
// Llama 2 converted from its SentencePiece model, Llama 3 from llama3-tokenizer-js, and Llama 3's
// vocabulary in Qwen2's pipeline, GPT-2's in SmolLM's, Llama 2's with the Metaspace pre-tokenizer
// of transformers' non-legacy layout) the ids and decoded texts equal those of Hugging Face's own
// JavaScript implementation, @huggingface/tokenizers, and the ids those of each vocabulary's own
// encoder (SentencePiece, llama3-tokenizer-js), on the hard texts of
// tests/data/tokenizers/hard_texts.json (tests/data/tokenizers/expected_ids.json, made by
// make_expected_ids.cjs). Split behaviours, Metaspace, Digits, byte fallback, unk_token and the
// added tokens' flags are checked on tiny files against what Hugging Face's documentation says;
// every component the lab does not read is refused with the file and the component named.

#include "errors.h"
#include "model/gpt2_tokenizer.h"
#include "model/hf_tokenizer.h"
#include "test_support.h"

#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QTest>

#include <map>
#include <memory>
#include <thread>

using namespace attnlab;
using namespace attnlab::test;

Q_DECLARE_METATYPE(std::vector<int>)

namespace {

const QString kFixtures = QStringLiteral(ATTNLAB_TEST_DATA "/tokenizers");
const QString kGpt2Files = QStringLiteral(ATTNLAB_TEST_DATA "/models/tokenizer");

QJsonObject readObject(const QString& path)
{
    return QJsonDocument::fromJson(fileBytes(path)).object();
}

QString idsText(const std::vector<int>& ids)
{
    QStringList numbers;
    for (int id : ids)
        numbers.append(QString::number(id));
    return numbers.join(u' ');
}

std::vector<int> idsOf(const QJsonValue& value)
{
    std::vector<int> ids;
    for (const QJsonValue id : value.toArray())
        ids.push_back(id.toInt());
    return ids;
}

// Llama 3's tokenizer.json, kept as qUncompress's format (4 bytes of size, a zlib stream).
QJsonObject llama3Json()
{
    const QByteArray json = qUncompress(fileBytes(kFixtures + "/llama3/tokenizer.json.zlib"));
    if (json.isEmpty())
        qFatal("cannot decompress llama3/tokenizer.json.zlib");
    return QJsonDocument::fromJson(json).object();
}

// json with the components of a *_pipeline.json file put in place of its own (the model's fields
// merged), as make_expected_ids.cjs makes them.
QJsonObject withPipeline(QJsonObject json, const QString& pipelineFile)
{
    const QJsonObject overlay = readObject(kFixtures + '/' + pipelineFile);
    for (auto it = overlay.begin(); it != overlay.end(); ++it) {
        if (it.key() != QStringLiteral("model")) {
            json.insert(it.key(), it.value());
            continue;
        }
        QJsonObject model = json.value(QStringLiteral("model")).toObject();
        const QJsonObject fields = it.value().toObject();
        for (auto field = fields.begin(); field != fields.end(); ++field)
            model.insert(field.key(), field.value());
        json.insert(QStringLiteral("model"), model);
    }
    return json;
}

// GPT-2's tokenizer.json: gpt2_pipeline.json with the vocabulary and merges of
// tests/data/models/tokenizer, as make_expected_ids.cjs makes it.
QJsonObject gpt2Json()
{
    QJsonObject json = readObject(kFixtures + "/gpt2_pipeline.json");
    QJsonObject model = json.value(QStringLiteral("model")).toObject();
    model.insert(QStringLiteral("vocab"), readObject(kGpt2Files + "/vocab.json"));
    QJsonArray merges;
    for (const QString& line :
         QString::fromUtf8(fileBytes(kGpt2Files + "/merges.txt")).split(u'\n')) {
        if (!line.isEmpty() && !line.startsWith(QStringLiteral("#version")))
            merges.append(line);
    }
    model.insert(QStringLiteral("merges"), merges);
    json.insert(QStringLiteral("model"), model);
    return json;
}

// The tokenizer of a tokenizer.json written into dir, through loadTextTokenizer.
std::shared_ptr<const TextTokenizer> loadJson(const QTemporaryDir& dir, const QJsonObject& json)
{
    writeBytes(dir.filePath(QStringLiteral("tokenizer.json")),
               QJsonDocument(json).toJson(QJsonDocument::Compact));
    return loadTextTokenizer(dir.path());
}

// A tiny BPE tokenizer.json: the symbols (ids in order), no merges, ignore_merges (so a piece
// that is a symbol is that symbol's id and the ids show how the text was cut), and the given
// top-level fields.
HfTokenizer tinyTokenizer(const QTemporaryDir& dir, const QStringList& symbols,
                          const QJsonObject& fields, const QJsonObject& modelFields = {})
{
    QJsonObject vocab;
    for (int id = 0; id < symbols.size(); ++id)
        vocab.insert(symbols[id], id);
    QJsonObject model{{QStringLiteral("type"), QStringLiteral("BPE")},
                      {QStringLiteral("vocab"), vocab},
                      {QStringLiteral("merges"), QJsonArray()},
                      {QStringLiteral("ignore_merges"), true}};
    for (auto it = modelFields.begin(); it != modelFields.end(); ++it)
        model.insert(it.key(), it.value());
    QJsonObject json = fields;
    json.insert(QStringLiteral("model"), model);
    const QString path = dir.filePath(QStringLiteral("tiny.json"));
    writeBytes(path, QJsonDocument(json).toJson());
    return HfTokenizer::fromFile(path);
}

// The symbols of ids, space-separated.
QString symbolsText(const HfTokenizer& tokenizer, const std::vector<int>& ids)
{
    QStringList symbols;
    for (int id : ids)
        symbols.append(tokenizer.symbol(id));
    return symbols.join(u' ');
}

QJsonObject splitBy(const QString& delimiter, const QString& behavior)
{
    return {{QStringLiteral("type"), QStringLiteral("Split")},
            {QStringLiteral("pattern"), QJsonObject{{QStringLiteral("String"), delimiter}}},
            {QStringLiteral("behavior"), behavior},
            {QStringLiteral("invert"), false}};
}

}  // namespace

class TestHfTokenizer : public QObject {
    Q_OBJECT

private:
    QTemporaryDir m_dir;
    std::map<QString, std::shared_ptr<const TextTokenizer>> m_tokenizers;

    const HfTokenizer& hf(const QString& name) const
    {
        return dynamic_cast<const HfTokenizer&>(*m_tokenizers.at(name));
    }

private slots:
    void initTestCase()
    {
        QVERIFY(m_dir.isValid());
        const QJsonObject llama2 = readObject(kFixtures + "/llama2/tokenizer.json");
        const std::map<QString, QJsonObject> files = {
            {QStringLiteral("gpt2"), gpt2Json()},
            {QStringLiteral("llama3"), llama3Json()},
            {QStringLiteral("qwen2-style"),
             withPipeline(llama3Json(), QStringLiteral("qwen2_style_pipeline.json"))},
            {QStringLiteral("smollm-style"),
             withPipeline(gpt2Json(), QStringLiteral("smollm_style_pipeline.json"))},
            {QStringLiteral("llama2-metaspace"),
             withPipeline(llama2, QStringLiteral("llama2_metaspace_pipeline.json"))},
        };
        for (const auto& [name, json] : files) {
            QVERIFY(QDir(m_dir.path()).mkdir(name));
            const QString folder = m_dir.filePath(name);
            writeBytes(folder + "/tokenizer.json",
                       QJsonDocument(json).toJson(QJsonDocument::Compact));
            m_tokenizers[name] = loadTextTokenizer(folder);
        }
        m_tokenizers[QStringLiteral("llama2")] = loadTextTokenizer(kFixtures + "/llama2");
        for (const auto& [name, tokenizer] : m_tokenizers)
            QVERIFY2(dynamic_cast<const HfTokenizer*>(tokenizer.get()), qPrintable(name));
        QCOMPARE(m_tokenizers["gpt2"]->vocabularySize(), 50257);
        QCOMPARE(m_tokenizers["llama2"]->vocabularySize(), 32000);
        QCOMPARE(m_tokenizers.size(), size_t(6));
        QCOMPARE(m_tokenizers["llama3"]->vocabularySize(), 128256);
    }

    // The ids of @huggingface/tokenizers and, where recorded, of the vocabulary's own encoder.
    void encodesLikeTheReferences_data()
    {
        QTest::addColumn<QString>("tokenizer");
        QTest::addColumn<QString>("text");
        QTest::addColumn<std::vector<int>>("ids");
        QTest::addColumn<QString>("decoded");
        const QJsonObject expected = readObject(kFixtures + "/expected_ids.json");
        QCOMPARE(expected.size(), 6);
        for (auto it = expected.begin(); it != expected.end(); ++it) {
            for (const QJsonValue entry : it.value().toArray()) {
                const QString name = entry[QStringLiteral("name")].toString();
                const QString text = entry[QStringLiteral("text")].toString();
                const QString decoded = entry[QStringLiteral("decoded")].toString();
                QTest::addRow("%s/%s/huggingface", qPrintable(it.key()), qPrintable(name))
                    << it.key() << text << idsOf(entry[QStringLiteral("ids")]) << decoded;
                if (entry.toObject().contains(QStringLiteral("own_encoder_ids")))
                    QTest::addRow("%s/%s/own-encoder", qPrintable(it.key()), qPrintable(name))
                        << it.key() << text << idsOf(entry[QStringLiteral("own_encoder_ids")])
                        << decoded;
            }
        }
    }
    void encodesLikeTheReferences()
    {
        QFETCH(QString, tokenizer);
        QFETCH(QString, text);
        QFETCH(std::vector<int>, ids);
        QCOMPARE(idsText(m_tokenizers.at(tokenizer)->encode(text)), idsText(ids));
    }

    // decode() gives Hugging Face's decode(ids, skip_special_tokens=True) of the reference ids,
    // which is the text itself where no special token is in it, but for Qwen2 (NFC applied) and
    // Llama 2 with Metaspace (the first of the text's leading spaces is lost).
    void decodesLikeHuggingFace_data() { encodesLikeTheReferences_data(); }
    void decodesLikeHuggingFace()
    {
        QFETCH(QString, tokenizer);
        QFETCH(QString, text);
        QFETCH(std::vector<int>, ids);
        QFETCH(QString, decoded);
        QCOMPARE(m_tokenizers.at(tokenizer)->decode(ids), decoded);
        const bool lossless = tokenizer != QStringLiteral("qwen2-style") &&
                              tokenizer != QStringLiteral("llama2-metaspace");
        if (!text.contains(u'<') && lossless)
            QCOMPARE(decoded, text);
    }

    // GPT-2's own tokenizer.json gives the ids of Gpt2Tokenizer (vocab.json + merges.txt) on the
    // texts of its two outside references.
    void gpt2JsonGivesGpt2Ids()
    {
        const Gpt2Tokenizer gpt2 = Gpt2Tokenizer::fromVocabAndMerges(kGpt2Files + "/vocab.json",
                                                                     kGpt2Files + "/merges.txt");
        int texts = 0;
        for (const char* file : {"expected_ids.json", "expected_ids_python.json"}) {
            const QJsonArray entries =
                QJsonDocument::fromJson(fileBytes(kGpt2Files + '/' + file)).array();
            for (const QJsonValue entry : entries) {
                const QString text = entry[QStringLiteral("text")].toString();
                QCOMPARE(idsText(m_tokenizers["gpt2"]->encode(text)), idsText(gpt2.encode(text)));
                QCOMPARE(idsText(gpt2.encode(text)), idsText(idsOf(entry[QStringLiteral("ids")])));
                ++texts;
            }
        }
        QVERIFY(texts > 20);
    }

    // Labels: BOS and special tokens as their content, a leading space (Metaspace "▁", ByteLevel
    // "Ġ") as "␣", byte-fallback bytes as their character.
    void labels_data()
    {
        QTest::addColumn<QString>("tokenizer");
        QTest::addColumn<QString>("symbol");
        QTest::addColumn<QString>("text");
        QTest::addColumn<QString>("label");
        QTest::newRow("llama2 BOS") << "llama2"
                                    << "<s>"
                                    << "<s>"
                                    << "<s>";
        QTest::newRow("llama2 word") << "llama2"
                                     << "▁the"
                                     << " the"
                                     << "␣the";
        QTest::newRow("llama2 inner") << "llama2"
                                      << "ing"
                                      << "ing"
                                      << "ing";
        QTest::newRow("llama2 space") << "llama2"
                                      << "▁"
                                      << " "
                                      << "␣";
        QTest::newRow("llama2 newline") << "llama2"
                                        << "<0x0A>"
                                        << "\n"
                                        << "\\n";
        QTest::newRow("llama2 half a character") << "llama2"
                                                 << "<0xE2>"
                                                 << "\uFFFD"
                                                 << "\uFFFD";
        QTest::newRow("llama3 BOS") << "llama3"
                                    << "<|begin_of_text|>"
                                    << "<|begin_of_text|>"
                                    << "<|begin_of_text|>";
        QTest::newRow("llama3 eot") << "llama3"
                                    << "<|eot_id|>"
                                    << "<|eot_id|>"
                                    << "<|eot_id|>";
        QTest::newRow("llama3 word") << "llama3"
                                     << "Ġthe"
                                     << " the"
                                     << "␣the";
        QTest::newRow("llama3 spaces") << "llama3"
                                       << "ĠĠ"
                                       << "  "
                                       << "␣␣";
        QTest::newRow("llama3 tab") << "llama3"
                                    << "ĉ"
                                    << "\t"
                                    << "\\t";
        QTest::newRow("gpt2 end of text") << "gpt2"
                                          << "<|endoftext|>"
                                          << "<|endoftext|>"
                                          << "<|endoftext|>";
    }
    void labels()
    {
        QFETCH(QString, tokenizer);
        QFETCH(QString, symbol);
        QFETCH(QString, text);
        QFETCH(QString, label);
        const HfTokenizer& t = hf(tokenizer);
        int id = -1;
        for (int i = 0; i < t.vocabularySize() && id < 0; ++i) {
            if (t.symbol(i) == symbol)
                id = i;
        }
        QVERIFY2(id >= 0, qPrintable(symbol));
        QCOMPARE(t.text(id), text);
        QCOMPARE(t.label(id), label);
    }

    // BOS where the file's post-processor puts it: Llama 2 and 3 first, GPT-2 and Qwen2 none.
    void beginningOfText()
    {
        QCOMPARE(idsText(m_tokenizers["llama2"]->encode(QStringLiteral("Hi"))).section(u' ', 0, 0),
                 QStringLiteral("1"));
        QCOMPARE(idsText(m_tokenizers["llama3"]->encode(QStringLiteral("Hi"))).section(u' ', 0, 0),
                 QStringLiteral("128000"));
        QCOMPARE(idsText(m_tokenizers["qwen2-style"]->encode(QStringLiteral("Hi"))),
                 QStringLiteral("13347"));
        QCOMPARE(m_tokenizers["gpt2"]->encode(QString()).size(), size_t(0));
    }

    // encode() runs in several threads at once with the same results.
    void encodesConcurrently()
    {
        const QString text =
            QStringLiteral("It's 2024: naïve café, 日本語 and 🤗 emoji.\n").repeated(50);
        const std::vector<int> alone = m_tokenizers["llama3"]->encode(text);
        std::vector<std::vector<int>> results(4);
        std::vector<std::thread> threads;
        for (auto& result : results)
            threads.emplace_back([&] { result = m_tokenizers["llama3"]->encode(text); });
        for (auto& thread : threads)
            thread.join();
        for (const auto& result : results)
            QCOMPARE(idsText(result), idsText(alone));
    }

    // Split's behaviours on Hugging Face's documented example: "the-final--countdown" split on
    // "-" is removed: the final countdown; isolated: the - final - - countdown;
    // merged_with_previous: the- final- - countdown; merged_with_next: the -final - -countdown;
    // contiguous: the - final -- countdown.
    void splitBehaviors_data()
    {
        QTest::addColumn<QString>("behavior");
        QTest::addColumn<bool>("invert");
        QTest::addColumn<QString>("pieces");
        QTest::newRow("Removed") << "Removed" << false << "the final countdown";
        QTest::newRow("Isolated") << "Isolated" << false << "the - final - - countdown";
        QTest::newRow("MergedWithPrevious")
            << "MergedWithPrevious" << false << "the- final- - countdown";
        QTest::newRow("MergedWithNext") << "MergedWithNext" << false << "the -final - -countdown";
        QTest::newRow("Contiguous") << "Contiguous" << false << "the - final -- countdown";
        // Inverted, the text between the delimiters is what is matched.
        QTest::newRow("Removed inverted") << "Removed" << true << "- - -";
    }
    void splitBehaviors()
    {
        QFETCH(QString, behavior);
        QFETCH(bool, invert);
        QFETCH(QString, pieces);
        QTemporaryDir dir;
        QJsonObject split = splitBy(QStringLiteral("-"), behavior);
        split.insert(QStringLiteral("invert"), invert);
        const QStringList symbols = QStringLiteral("t h e f i n a l c o u n t d w - the final "
                                                   "countdown the- final- -- -final -countdown")
                                        .split(u' ');
        const HfTokenizer tokenizer =
            tinyTokenizer(dir, symbols, {{QStringLiteral("pre_tokenizer"), split}});
        QCOMPARE(symbolsText(tokenizer, tokenizer.encode(QStringLiteral("the-final--countdown"))),
                 pieces);
    }

    // Metaspace: spaces become "▁"; prepend_scheme always puts one before every section, first
    // only before the one that starts the text, never none; split cuts before each "▁" (the
    // Rust library's MergedWithNext).
    void metaspace_data()
    {
        QTest::addColumn<QString>("scheme");
        QTest::addColumn<bool>("split");
        QTest::addColumn<QString>("text");
        QTest::addColumn<QString>("pieces");
        QTest::newRow("always") << "always" << true << "Hey friend"
                                << "▁Hey ▁friend";
        QTest::newRow("always, no split") << "always" << false << "Hey friend"
                                          << "▁Hey▁friend";
        // The Rust library's own example: every space but the last is a piece of its own.
        QTest::newRow("runs of spaces") << "always" << true << "Hey   friend"
                                        << "▁Hey ▁ ▁ ▁friend";
        QTest::newRow("first") << "first" << true << "Hey friend"
                               << "▁Hey ▁friend";
        QTest::newRow("never") << "never" << true << "Hey friend"
                               << "Hey ▁friend";
        QTest::newRow("always after a token") << "always" << true << "<s>Hey"
                                              << "<s> ▁Hey";
        QTest::newRow("first after a token") << "first" << true << "<s>Hey"
                                             << "<s> Hey";
    }
    void metaspace()
    {
        QFETCH(QString, scheme);
        QFETCH(bool, split);
        QFETCH(QString, text);
        QFETCH(QString, pieces);
        QTemporaryDir dir;
        const QJsonObject metaspace{{QStringLiteral("type"), QStringLiteral("Metaspace")},
                                    {QStringLiteral("replacement"), QStringLiteral("▁")},
                                    {QStringLiteral("prepend_scheme"), scheme},
                                    {QStringLiteral("split"), split}};
        const QJsonObject bos{{QStringLiteral("id"), 0},
                              {QStringLiteral("content"), QStringLiteral("<s>")},
                              {QStringLiteral("special"), true}};
        const HfTokenizer tokenizer =
            tinyTokenizer(dir, QStringLiteral("<s> ▁Hey ▁friend ▁Hey▁friend Hey ▁").split(u' '),
                          {{QStringLiteral("pre_tokenizer"), metaspace},
                           {QStringLiteral("added_tokens"), QJsonArray{bos}}});
        QCOMPARE(symbolsText(tokenizer, tokenizer.encode(text)), pieces);
        // The Metaspace decoder reads "▁" as a space and drops the first one.
        const QJsonObject decoder{{QStringLiteral("type"), QStringLiteral("Metaspace")},
                                  {QStringLiteral("replacement"), QStringLiteral("▁")},
                                  {QStringLiteral("prepend_scheme"), QStringLiteral("always")}};
        const HfTokenizer decoding = tinyTokenizer(dir, QStringLiteral("▁Hey ▁friend").split(u' '),
                                                   {{QStringLiteral("decoder"), decoder}});
        QCOMPARE(decoding.decode({0, 1}), QStringLiteral("Hey friend"));
        QCOMPARE(decoding.text(0), QStringLiteral(" Hey"));
    }

    // Digits: each digit alone (individual_digits), or each run of digits.
    void digits()
    {
        QTemporaryDir dir;
        const QStringList symbols = QStringLiteral("a b 1 2 3 123 a123b").split(u' ');
        for (const bool individual : {true, false}) {
            const QJsonObject digits{{QStringLiteral("type"), QStringLiteral("Digits")},
                                     {QStringLiteral("individual_digits"), individual}};
            const HfTokenizer tokenizer =
                tinyTokenizer(dir, symbols, {{QStringLiteral("pre_tokenizer"), digits}});
            QCOMPARE(symbolsText(tokenizer, tokenizer.encode(QStringLiteral("a123b"))),
                     individual ? QStringLiteral("a 1 2 3 b") : QStringLiteral("a 123 b"));
        }
    }

    // A character outside the vocabulary: its bytes as <0xNN> with byte_fallback; else unk_token,
    // one for a run of them with fuse_unk; else nothing.
    void unknownCharacters_data()
    {
        QTest::addColumn<bool>("byteFallback");
        QTest::addColumn<bool>("fuseUnk");
        QTest::addColumn<QString>("unk");
        QTest::addColumn<QString>("symbols");
        QTest::newRow("byte fallback") << true << false << "<unk>"
                                       << "a <0xC3> <0xA9> <0xC3> <0xA9> a";
        QTest::newRow("unk") << false << false << "<unk>"
                             << "a <unk> <unk> a";
        QTest::newRow("fused unk") << false << true << "<unk>"
                                   << "a <unk> a";
        QTest::newRow("no unk") << false << false << ""
                                << "a a";
    }
    void unknownCharacters()
    {
        QFETCH(bool, byteFallback);
        QFETCH(bool, fuseUnk);
        QFETCH(QString, unk);
        QFETCH(QString, symbols);
        QTemporaryDir dir;
        QJsonObject model{{QStringLiteral("byte_fallback"), byteFallback},
                          {QStringLiteral("fuse_unk"), fuseUnk},
                          {QStringLiteral("ignore_merges"), false}};
        if (!unk.isEmpty())
            model.insert(QStringLiteral("unk_token"), unk);
        const HfTokenizer tokenizer =
            tinyTokenizer(dir, QStringLiteral("<unk> a <0xC3> <0xA9>").split(u' '), {}, model);
        QCOMPARE(symbolsText(tokenizer, tokenizer.encode(QStringLiteral("aééa"))), symbols);
    }

    // Added tokens are found before splitting; lstrip and rstrip take the white space beside
    // them, single_word only matches between non-word characters, normalized ones are looked
    // for in the normalized text.
    void addedTokenFlags_data()
    {
        QTest::addColumn<QString>("flag");
        QTest::addColumn<QString>("text");
        QTest::addColumn<QString>("symbols");
        QTest::newRow("plain") << ""
                               << "x <m> x"
                               << "x ▁ <m> ▁ x";
        QTest::newRow("lstrip") << "lstrip"
                                << "x <m> x"
                                << "x <m> ▁ x";
        QTest::newRow("rstrip") << "rstrip"
                                << "x <m> x"
                                << "x ▁ <m> x";
        QTest::newRow("single_word, alone") << "single_word"
                                            << "x <m> x"
                                            << "x ▁ <m> ▁ x";
        QTest::newRow("single_word, in a word") << "single_word"
                                                << "x<m>"
                                                << "x < m >";
    }
    void addedTokenFlags()
    {
        QFETCH(QString, flag);
        QFETCH(QString, text);
        QFETCH(QString, symbols);
        QTemporaryDir dir;
        QJsonObject mask{{QStringLiteral("id"), 0},
                         {QStringLiteral("content"), QStringLiteral("<m>")},
                         {QStringLiteral("special"), true}};
        if (!flag.isEmpty())
            mask.insert(flag, true);
        const QJsonObject replace{{QStringLiteral("type"), QStringLiteral("Replace")},
                                  {QStringLiteral("pattern"),
                                   QJsonObject{{QStringLiteral("String"), QStringLiteral(" ")}}},
                                  {QStringLiteral("content"), QStringLiteral("▁")}};
        const QJsonObject digits{{QStringLiteral("type"), QStringLiteral("Split")},
                                 {QStringLiteral("pattern"),
                                  QJsonObject{{QStringLiteral("Regex"), QStringLiteral(".")}}},
                                 {QStringLiteral("behavior"), QStringLiteral("Isolated")}};
        const HfTokenizer tokenizer =
            tinyTokenizer(dir, QStringLiteral("<m> x ▁ < m >").split(u' '),
                          {{QStringLiteral("added_tokens"), QJsonArray{mask}},
                           {QStringLiteral("normalizer"), replace},
                           {QStringLiteral("pre_tokenizer"), digits}});
        QCOMPARE(symbolsText(tokenizer, tokenizer.encode(text)), symbols);
    }

    // Every component the lab does not read, and every malformed field, is refused with an
    // InputError that starts with the file's path and names the field or component.
    void refusals_data()
    {
        QTest::addColumn<QString>("file");
        QTest::addColumn<QString>("problem");
        const QList<QPair<const char*, const char*>> cases = {
            {"model-unigram", "model type Unigram is not supported (Attention Lab reads BPE "
                              "tokenizers)"},
            {"model-wordpiece", "model type WordPiece is not supported"},
            {"model-missing", "model is missing; expected an object"},
            {"model-dropout", "model.dropout is 0.1; Attention Lab reads BPE without dropout"},
            {"model-subword-prefix", "model.continuing_subword_prefix is \"##\""},
            {"vocab-array", "model.vocab is an array"},
            {"vocab-id-negative", "in model.vocab the id of \"b\" is -1"},
            {"merge-three-symbols", "model.merges[0] is not \"left right\""},
            {"merge-not-in-vocab", "model.merges[0] makes \"ba\" from \"b\" and \"a\", but \"ba\" "
                                   "is not in model.vocab"},
            {"normalizer-lowercase", "normalizer type Lowercase is not supported"},
            {"normalizer-in-sequence", "normalizer.normalizers[1] type BertNormalizer is not "
                                       "supported"},
            {"replace-without-pattern", "normalizer.pattern is missing; expected an object"},
            {"pre-tokenizer-whitespace", "pre_tokenizer type Whitespace is not supported"},
            {"split-bad-regex", "pre_tokenizer.pattern is not a valid expression"},
            {"split-bad-behavior", "pre_tokenizer.behavior is \"Sideways\""},
            {"metaspace-bad-scheme", "pre_tokenizer.prepend_scheme is \"sometimes\""},
            {"post-processor-roberta", "post_processor type RobertaProcessing is not supported"},
            {"template-unknown-token", "post_processor.single[0].SpecialToken names \"<s>\""},
            {"decoder-wordpiece", "decoder type WordPiece is not supported"},
            {"added-token-content", "added_tokens[0].content is a number; expected a string"},
            {"not-json", "not JSON"},
        };
        for (const auto& [file, problem] : cases)
            QTest::newRow(file) << QString::fromLatin1(file) << QString::fromUtf8(problem);
    }
    void refusals()
    {
        QFETCH(QString, file);
        QFETCH(QString, problem);
        const QString path = kFixtures + "/bad/" + file + ".json";
        const QString message = thrownMessage<InputError>([&] { HfTokenizer::fromFile(path); });
        QVERIFY2(blames(message, path + ": ", problem), qPrintable(message));
    }

    // A normalizer that doubles the text at every step is stopped with the file named, not run
    // until memory runs out.
    void growingTextIsRefused()
    {
        QTemporaryDir dir;
        QJsonArray doublings;
        for (int i = 0; i < 40; ++i)
            doublings.append(
                QJsonObject{{QStringLiteral("type"), QStringLiteral("Replace")},
                            {QStringLiteral("pattern"),
                             QJsonObject{{QStringLiteral("String"), QStringLiteral("a")}}},
                            {QStringLiteral("content"), QStringLiteral("aa")}});
        const QJsonObject normalizer{{QStringLiteral("type"), QStringLiteral("Sequence")},
                                     {QStringLiteral("normalizers"), doublings}};
        const HfTokenizer tokenizer =
            tinyTokenizer(dir, {QStringLiteral("a")}, {{QStringLiteral("normalizer"), normalizer}});
        const QString message =
            thrownMessage<InputError>([&] { tokenizer.encode(QStringLiteral("aaaa")); });
        QVERIFY2(blames(message, dir.filePath(QStringLiteral("tiny.json")),
                        QStringLiteral("the normalizer makes a text of")),
                 qPrintable(message));
    }

    // loadTextTokenizer takes vocab.json + merges.txt when both are there (Gpt2Tokenizer), else
    // tokenizer.json (HfTokenizer), else names the folder.
    void folderFiles()
    {
        QVERIFY(dynamic_cast<const Gpt2Tokenizer*>(loadTextTokenizer(kGpt2Files).get()));
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const QString message = thrownMessage<InputError>([&] { loadTextTokenizer(dir.path()); });
        QVERIFY2(blames(message, dir.path(), QStringLiteral("tokenizer.json")),
                 qPrintable(message));
        const auto fromJson = loadJson(dir, gpt2Json());
        QVERIFY(dynamic_cast<const HfTokenizer*>(fromJson.get()));
    }
};

QTEST_GUILESS_MAIN(TestHfTokenizer)
#include "test_hf_tokenizer.moc"
