// GPT-2's byte-level BPE tokenizer (core/model/gpt2_tokenizer): the ids of GPT-2's own vocabulary
// equal those of two independent encoders (tests/data/models/tokenizer: expected_ids.json from the
// JavaScript gpt-3-encoder, expected_ids_python.json from openai's encoder.py with the `regex`
// module), decoding gives the text back, merges apply by rank on hand-made vocabularies, encode()
// runs in several threads at once and fast, and bad files are refused with their name.

#include "errors.h"
#include "model/gpt2_tokenizer.h"
#include "test_support.h"

#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QTest>

#include <optional>
#include <thread>

using namespace attnlab;
using namespace attnlab::test;

Q_DECLARE_METATYPE(std::vector<int>)

namespace {

const QString kFixtures = QStringLiteral(ATTNLAB_TEST_DATA "/models/tokenizer");

struct ExpectedIds {
    QString name;
    QString text;
    std::vector<int> ids;
};

// The texts and ids of expected_ids.json or expected_ids_python.json.
std::vector<ExpectedIds> readExpected(const QString& fileName)
{
    QFile file(QDir(kFixtures).filePath(fileName));
    if (!file.open(QIODevice::ReadOnly))
        qFatal("cannot read %s", qPrintable(file.fileName()));
    std::vector<ExpectedIds> cases;
    for (const QJsonValue entry : QJsonDocument::fromJson(file.readAll()).array()) {
        ExpectedIds expected{
            entry[QStringLiteral("name")].toString(), entry[QStringLiteral("text")].toString(), {}};
        for (const QJsonValue id : entry[QStringLiteral("ids")].toArray())
            expected.ids.push_back(id.toInt());
        cases.push_back(expected);
    }
    if (cases.empty())
        qFatal("no texts in %s", qPrintable(file.fileName()));
    return cases;
}

QString idsText(const std::vector<int>& ids)
{
    QStringList numbers;
    for (int id : ids)
        numbers.append(QString::number(id));
    return numbers.join(u' ');
}

// A tokenizer of the given symbols (ids in order) and merges ("left right" lines), written to
// vocab.json and merges.txt in dir.
Gpt2Tokenizer tinyTokenizer(const QTemporaryDir& dir, const QStringList& symbols,
                            const QStringList& merges)
{
    QJsonObject vocab;
    for (int id = 0; id < symbols.size(); ++id)
        vocab.insert(symbols[id], id);
    writeBytes(dir.filePath(QStringLiteral("vocab.json")), QJsonDocument(vocab).toJson());
    writeBytes(dir.filePath(QStringLiteral("merges.txt")),
               ("#version: 0.2\n" + merges.join(u'\n') + u'\n').toUtf8());
    return Gpt2Tokenizer::fromFolder(dir.path());
}

// The symbols of ids, space-separated.
QString symbolsText(const Gpt2Tokenizer& tokenizer, const std::vector<int>& ids)
{
    QStringList symbols;
    for (int id : ids)
        symbols.append(tokenizer.symbol(id));
    return symbols.join(u' ');
}

// A tokenizer.json holding GPT-2's vocabulary and merges, the merges as "a b" strings or as
// ["a", "b"] pairs, with <|endoftext|> as an added token.
QByteArray gpt2TokenizerJson(bool mergesAsPairs)
{
    QFile vocabFile(QDir(kFixtures).filePath(QStringLiteral("vocab.json")));
    QFile mergesFile(QDir(kFixtures).filePath(QStringLiteral("merges.txt")));
    if (!vocabFile.open(QIODevice::ReadOnly) || !mergesFile.open(QIODevice::ReadOnly))
        qFatal("cannot read the GPT-2 fixtures");
    QJsonArray merges;
    const QStringList lines = QString::fromUtf8(mergesFile.readAll()).split(u'\n');
    for (const QString& line : lines) {
        if (line.isEmpty() || line.startsWith(QStringLiteral("#version")))
            continue;
        if (mergesAsPairs)
            merges.append(QJsonArray::fromStringList(line.split(u' ')));
        else
            merges.append(line);
    }
    const QJsonObject model{
        {QStringLiteral("type"), QStringLiteral("BPE")},
        {QStringLiteral("vocab"), QJsonDocument::fromJson(vocabFile.readAll()).object()},
        {QStringLiteral("merges"), merges},
    };
    const QJsonObject endOfText{
        {QStringLiteral("id"), 50256},
        {QStringLiteral("content"), QStringLiteral("<|endoftext|>")},
        {QStringLiteral("special"), true},
    };
    const QJsonObject root{
        {QStringLiteral("version"), QStringLiteral("1.0")},
        {QStringLiteral("added_tokens"), QJsonArray{endOfText}},
        {QStringLiteral("pre_tokenizer"),
         QJsonObject{{QStringLiteral("type"), QStringLiteral("ByteLevel")},
                     {QStringLiteral("add_prefix_space"), false}}},
        {QStringLiteral("model"), model},
    };
    return QJsonDocument(root).toJson(QJsonDocument::Compact);
}

}  // namespace

class TestTokenizer : public QObject {
    Q_OBJECT

private:
    std::optional<Gpt2Tokenizer> m_gpt2;  // GPT-2's vocab.json and merges.txt

private slots:
    void initTestCase()
    {
        m_gpt2 = Gpt2Tokenizer::fromFolder(kFixtures);
        QCOMPARE(m_gpt2->vocabularySize(), 50257);
    }

    // GPT-2's ids, as the JavaScript and the Python encoders give them.
    void encodesLikeGpt2_data()
    {
        QTest::addColumn<QString>("text");
        QTest::addColumn<std::vector<int>>("ids");
        for (const ExpectedIds& expected : readExpected(QStringLiteral("expected_ids.json")))
            QTest::addRow("js/%s", qPrintable(expected.name)) << expected.text << expected.ids;
        for (const ExpectedIds& expected : readExpected(QStringLiteral("expected_ids_python.json")))
            QTest::addRow("python/%s", qPrintable(expected.name)) << expected.text << expected.ids;
    }
    void encodesLikeGpt2()
    {
        QFETCH(QString, text);
        QFETCH(std::vector<int>, ids);
        const std::vector<int> encoded = m_gpt2->encode(text);
        QCOMPARE(idsText(encoded), idsText(ids));
    }

    // decode(encode(text)) is the text, and so are the bytes of the ids joined.
    void decodesBack_data() { encodesLikeGpt2_data(); }
    void decodesBack()
    {
        QFETCH(QString, text);
        const std::vector<int> ids = m_gpt2->encode(text);
        QCOMPARE(m_gpt2->decode(ids), text);
        QByteArray joined;
        for (int id : ids) {
            QVERIFY(id >= 0 && id < m_gpt2->vocabularySize());
            QVERIFY(!m_gpt2->bytes(id).isEmpty());
            joined += m_gpt2->bytes(id);
        }
        QCOMPARE(joined, text.toUtf8());
    }

    // A Hugging Face tokenizer.json of the same vocabulary and merges gives the same ids, with
    // the merges in either of its two forms.
    void tokenizerJsonGivesTheSameIds_data()
    {
        QTest::addColumn<bool>("mergesAsPairs");
        QTest::newRow("merges as \"a b\"") << false;
        QTest::newRow("merges as [a, b]") << true;
    }
    void tokenizerJsonGivesTheSameIds()
    {
        QFETCH(bool, mergesAsPairs);
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        writeBytes(dir.filePath(QStringLiteral("tokenizer.json")),
                   gpt2TokenizerJson(mergesAsPairs));
        const Gpt2Tokenizer fromJson = Gpt2Tokenizer::fromFolder(dir.path());
        QCOMPARE(fromJson.vocabularySize(), 50257);
        QCOMPARE(fromJson.text(50256), QStringLiteral("<|endoftext|>"));
        for (const ExpectedIds& expected : readExpected(QStringLiteral("expected_ids_python.json")))
            QCOMPARE(idsText(fromJson.encode(expected.text)), idsText(expected.ids));
    }

    // The symbol, text and label of single ids of GPT-2.
    void textsAndLabels_data()
    {
        QTest::addColumn<int>("id");
        QTest::addColumn<QString>("symbol");
        QTest::addColumn<QString>("text");
        QTest::addColumn<QString>("label");
        QTest::newRow("word") << 3797 << QStringLiteral("Ġcat") << QStringLiteral(" cat")
                              << QStringLiteral("␣cat");
        QTest::newRow("space") << 220 << QStringLiteral("Ġ") << QStringLiteral(" ")
                               << QStringLiteral("␣");
        QTest::newRow("newline") << 198 << QStringLiteral("Ċ") << QStringLiteral("\n")
                                 << QStringLiteral("\\n");
        QTest::newRow("two newlines")
            << 628 << QStringLiteral("ĊĊ") << QStringLiteral("\n\n") << QStringLiteral("\\n\\n");
        QTest::newRow("tab") << 197 << QStringLiteral("ĉ") << QStringLiteral("\t")
                             << QStringLiteral("\\t");
        QTest::newRow("carriage return")
            << 201 << QStringLiteral("č") << QStringLiteral("\r") << QStringLiteral("\\r");
        QTest::newRow("punctuation")
            << 357 << QStringLiteral("Ġ(") << QStringLiteral(" (") << QStringLiteral("␣(");
        QTest::newRow("accented") << 40304 << QStringLiteral("ĠcafÃ©") << QStringLiteral(" café")
                                  << QStringLiteral("␣café");
        QTest::newRow("part of a character")
            << 171 << QStringLiteral("ï") << QStringLiteral("\uFFFD") << QStringLiteral("\uFFFD");
        QTest::newRow("first id") << 0 << QStringLiteral("!") << QStringLiteral("!")
                                  << QStringLiteral("!");
        QTest::newRow("end of text")
            << 50256 << QStringLiteral("<|endoftext|>") << QStringLiteral("<|endoftext|>")
            << QStringLiteral("<|endoftext|>");
        QTest::newRow("negative id") << -1 << QString() << QString() << QString();
        QTest::newRow("id past the end") << 50257 << QString() << QString() << QString();
    }
    void textsAndLabels()
    {
        QFETCH(int, id);
        QFETCH(QString, symbol);
        QFETCH(QString, text);
        QFETCH(QString, label);
        QCOMPARE(m_gpt2->symbol(id), symbol);
        QCOMPARE(m_gpt2->text(id), text);
        QCOMPARE(m_gpt2->label(id), label);
    }

    // bpe() merges the adjacent pair of lowest rank first (not the leftmost pair, not one pass in
    // file order), every occurrence left to right without overlap, and a pair listed twice has
    // the rank of its last line.
    void mergesApplyByRank_data()
    {
        QTest::addColumn<QStringList>("merges");
        QTest::addColumn<QString>("text");
        QTest::addColumn<QString>("symbols");
        QTest::newRow("a b first") << QStringList{"a b", "b c"} << "abc"
                                   << "ab c";
        QTest::newRow("b c first: the lower rank, not the leftmost pair")
            << QStringList{"b c", "a b"} << "abc"
            << "a bc";
        // One pass in file order would stop at "a bc": "a bc" is listed before "bc" exists.
        QTest::newRow("rank order, not one pass in file order")
            << QStringList{"a bc", "b c"} << "abc"
            << "abc";
        QTest::newRow("left to right without overlap") << QStringList{"a a"} << "aaa"
                                                       << "aa a";
        QTest::newRow("every occurrence") << QStringList{"a a"} << "aaaa"
                                          << "aa aa";
        QTest::newRow("then the merged symbols") << QStringList{"a a", "aa aa"} << "aaaaa"
                                                 << "aaaa a";
        QTest::newRow("a pair listed twice takes its last rank")
            << QStringList{"b c", "a b", "b c"} << "abc"
            << "ab c";
        QTest::newRow("no merges") << QStringList{} << "abc"
                                   << "a b c";
        QTest::newRow("a space joins the word after it")
            << QStringList{"Ġ a", "Ġa b", "a b"} << "ab ab"
            << "ab Ġab";
        QTest::newRow("no merge across pieces") << QStringList{"a Ġ"} << "a a"
                                                << "a Ġ a";
    }
    void mergesApplyByRank()
    {
        QFETCH(QStringList, merges);
        QFETCH(QString, text);
        QFETCH(QString, symbols);
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const QStringList symbolsOfIds = {"a",  "b",    "c", "ab", "bc",  "abc",
                                          "aa", "aaaa", "Ġ", "Ġa", "Ġab", "aĠ"};
        const Gpt2Tokenizer tokenizer = tinyTokenizer(dir, symbolsOfIds, merges);
        const std::vector<int> ids = tokenizer.encode(text);
        QCOMPARE(symbolsText(tokenizer, ids), symbols);
        QCOMPARE(tokenizer.decode(ids), text);
    }

    // A token of spaces only shows every space as "␣"; others only the leading one.
    void labelsOfSpaces()
    {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const Gpt2Tokenizer tokenizer =
            tinyTokenizer(dir, {"Ġ", "ĠĠ", "ĠĠĠ", "a", "Ġa", "aĠ"}, {"Ġ Ġ", "ĠĠ Ġ", "Ġ a"});
        QCOMPARE(symbolsText(tokenizer, tokenizer.encode(QStringLiteral("   a"))),
                 QStringLiteral("ĠĠ Ġa"));
        QCOMPARE(tokenizer.label(1), QStringLiteral("␣␣"));
        QCOMPARE(tokenizer.label(2), QStringLiteral("␣␣␣"));
        QCOMPARE(tokenizer.label(4), QStringLiteral("␣a"));
        QCOMPARE(tokenizer.label(5), QStringLiteral("a "));
    }

    // A byte whose symbol the vocabulary lacks is refused with the symbol and the vocabulary.
    void missingByteSymbolIsNamed()
    {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const Gpt2Tokenizer tokenizer = tinyTokenizer(dir, {"a", "b", "ab"}, {"a b"});
        QCOMPARE(symbolsText(tokenizer, tokenizer.encode(QStringLiteral("ab"))),
                 QStringLiteral("ab"));
        const QString message =
            thrownMessage<InputError>([&] { tokenizer.encode(QStringLiteral("ab z")); });
        QVERIFY2(message.startsWith(dir.filePath(QStringLiteral("vocab.json"))),
                 qPrintable(message));
        QVERIFY2(message.contains(QStringLiteral("\"Ġ\"")), qPrintable(message));
    }

    // Text that is not valid UTF-16 (a lone surrogate) is read as U+FFFD; control characters,
    // NUL and noncharacters are bytes like any other.
    void oddCharacters()
    {
        const QString lone =
            QStringLiteral("a") + QChar(0xD800) + QStringLiteral("b ") + QChar(0xDC00);
        const QString replaced = QStringLiteral("a\uFFFDb \uFFFD");
        QCOMPARE(idsText(m_gpt2->encode(lone)), idsText(m_gpt2->encode(replaced)));
        const QString odd = QStringLiteral("x") + QChar(0) + QStringLiteral("\x01\x7f\uFFFF");
        QCOMPARE(m_gpt2->decode(m_gpt2->encode(odd)), odd);
        QVERIFY(m_gpt2->encode(QString()).empty());
    }

    // Long runs of one kind of character (one piece each) are encoded in full, without PCRE2
    // running out of stack.
    void longRuns_data()
    {
        QTest::addColumn<QString>("text");
        QTest::newRow("punctuation") << QString(200000, u'!');
        QTest::newRow("letters") << QString(20000, u'a');
        QTest::newRow("spaces then a word") << QString(200000, u' ') + QStringLiteral("word");
        QTest::newRow("digits") << QString(50000, u'7');
        QTest::newRow("emoji") << QStringLiteral("🙂").repeated(20000);
    }
    void longRuns()
    {
        QFETCH(QString, text);
        QCOMPARE(m_gpt2->decode(m_gpt2->encode(text)), text);
    }

    // Several threads encoding at once give the ids one thread gives.
    void encodesConcurrently()
    {
        const std::vector<ExpectedIds> cases =
            readExpected(QStringLiteral("expected_ids_python.json"));
        std::vector<int> wrong(4, 0);
        std::vector<std::thread> threads;
        for (size_t t = 0; t < wrong.size(); ++t) {
            threads.emplace_back([&, t] {
                for (int round = 0; round < 20; ++round)
                    for (const ExpectedIds& expected : cases)
                        wrong[t] += m_gpt2->encode(expected.text) != expected.ids;
            });
        }
        for (std::thread& thread : threads)
            thread.join();
        QCOMPARE(wrong, std::vector<int>(wrong.size(), 0));
    }

    // A text of 10,000 words is encoded in well under a second.
    void encodesFast()
    {
        QString text;
        int words = 0;
        for (int round = 0; words < 10000; ++round) {
            for (const ExpectedIds& expected :
                 readExpected(QStringLiteral("expected_ids_python.json"))) {
                text += expected.text + QStringLiteral(" %1\n").arg(round);
                words += int(expected.text.split(u' ', Qt::SkipEmptyParts).size()) + 1;
            }
        }
        QElapsedTimer timer;
        timer.start();
        const std::vector<int> ids = m_gpt2->encode(text);
        const qint64 elapsed = timer.elapsed();
        qInfo("%d words (%lld characters) -> %zu tokens in %lld ms", words, qlonglong(text.size()),
              ids.size(), qlonglong(elapsed));
        QCOMPARE(m_gpt2->decode(ids), text);
        QVERIFY2(elapsed < 500, qPrintable(QStringLiteral("%1 ms").arg(elapsed)));
    }

    // Bad tokenizer files are refused with an InputError that starts with the file's path and
    // says what is wrong.
    void badFilesAreNamed_data()
    {
        QTest::addColumn<QByteArray>("vocab");
        QTest::addColumn<QByteArray>("merges");
        QTest::addColumn<QByteArray>("tokenizerJson");
        QTest::addColumn<QString>("named");    // the file whose path starts the message
        QTest::addColumn<QString>("problem");  // a part of the message

        const QByteArray vocab = R"({"a": 0, "b": 1, "ab": 2, "c": 3})";
        const QByteArray merges = "#version: 0.2\na b\n";
        // Rows of a bad vocab.json beside good merges, of bad merges beside a good vocab, and of a
        // bad tokenizer.json alone, and a part of the message.
        const auto badVocab = [&](const char* name, const QByteArray& bad, const char* problem) {
            QTest::newRow(name) << bad << merges << QByteArray() << "vocab.json" << problem;
        };
        const auto badMerges = [&](const char* name, const QByteArray& bad, const char* problem) {
            QTest::newRow(name) << vocab << bad << QByteArray() << "merges.txt" << problem;
        };
        const auto badTokenizerJson = [](const char* name, const QByteArray& bad,
                                         const char* problem) {
            QTest::newRow(name) << QByteArray() << QByteArray() << bad << "tokenizer.json"
                                << problem;
        };
        badVocab("vocab not JSON", "{\"a\": 0,", "not JSON");
        badVocab("vocab an array", "[\"a\", \"b\"]", "expected a JSON object");
        badVocab("vocab empty", "{}", "empty");
        badVocab("id a string", R"({"a": "0"})", "the id of \"a\" is a string");
        badVocab("id negative", R"({"a": -1})", "the id of \"a\" is -1");
        badVocab("id a fraction", R"({"a": 0.5})", "the id of \"a\" is 0.5");
        badVocab("id too large", R"({"a": 1e12})", "ids are integers from 0 to");
        badVocab("duplicate id", R"({"a": 0, "b": 0})", "the same id 0");
        badMerges("merge of one symbol", "#version: 0.2\na b\nab\n",
                  "merges.txt line 3: expected two symbols separated by a space, found 1");
        badMerges("merge of three symbols", "a b c\n", "merges.txt line 1: expected two symbols");
        badMerges("blank line inside", "#version: 0.2\n\na b\n",
                  "line 2: expected two symbols separated by a space, found 0");
        badMerges("merge of an unknown symbol", "#version: 0.2\na b\nab z\n",
                  "line 3: the merge \"ab\" \"z\" makes \"abz\", but \"z\" is not");
        badMerges("merge making an unknown symbol", "b c\n", "but \"bc\" is not in the vocabulary");

        const QByteArray model = R"("model": {"type": "BPE", "vocab": {"a": 0, "b": 1, "ab": 2},
                                              "merges": ["a b"]})";
        badTokenizerJson("tokenizer.json not JSON", "{\"model\": ", "not JSON");
        badTokenizerJson("no model", "{}", "model is missing");
        badTokenizerJson("not BPE", R"({"model": {"type": "WordPiece", "vocab": {"a": 0}}})",
                         "model.type is \"WordPiece\"");
        badTokenizerJson("model.vocab an array",
                         R"({"model": {"type": "BPE", "vocab": ["a"], "merges": []}})",
                         "model.vocab is an array");
        badTokenizerJson("model.merges missing", R"({"model": {"type": "BPE", "vocab": {"a": 0}}})",
                         "model.merges is missing");
        badTokenizerJson("merge of numbers",
                         R"({"model": {"type": "BPE", "vocab": {"a": 0}, "merges": [[1, 2]]}})",
                         "model.merges[0]");
        badTokenizerJson("merge without a space",
                         R"({"model": {"type": "BPE", "vocab": {"a": 0}, "merges": ["ab"]}})",
                         "model.merges[0]");
        badTokenizerJson("added token on a taken id",
                         "{" + model + R"(, "added_tokens": [{"id": 1, "content": "<s>"}]})",
                         "added_tokens[0] gives the id 1 to \"<s>\", which is \"b\"'s");
        badTokenizerJson("not byte-level",
                         "{" + model + R"(, "pre_tokenizer": {"type": "Metaspace"}})",
                         "pre_tokenizer.type is \"Metaspace\"");
    }
    void badFilesAreNamed()
    {
        QFETCH(QByteArray, vocab);
        QFETCH(QByteArray, merges);
        QFETCH(QByteArray, tokenizerJson);
        QFETCH(QString, named);
        QFETCH(QString, problem);
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        if (!vocab.isNull())
            writeBytes(dir.filePath(QStringLiteral("vocab.json")), vocab);
        if (!merges.isNull())
            writeBytes(dir.filePath(QStringLiteral("merges.txt")), merges);
        if (!tokenizerJson.isNull())
            writeBytes(dir.filePath(QStringLiteral("tokenizer.json")), tokenizerJson);
        const QString message =
            thrownMessage<InputError>([&] { Gpt2Tokenizer::fromFolder(dir.path()); });
        QVERIFY2(blames(message, dir.filePath(named), problem), qPrintable(message));
    }

    // fromFolder takes vocab.json + merges.txt when both are there, else tokenizer.json, else
    // names the folder and the files it looked for.
    void folderFiles()
    {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const auto message = [&] {
            return thrownMessage<InputError>([&] { Gpt2Tokenizer::fromFolder(dir.path()); });
        };
        QString text = message();
        QVERIFY2(text.startsWith(dir.path()), qPrintable(text));
        for (const char* file : {"vocab.json", "merges.txt", "tokenizer.json"})
            QVERIFY2(text.contains(QLatin1String(file)), qPrintable(text));

        writeBytes(dir.filePath(QStringLiteral("vocab.json")), R"({"a": 0, "b": 1, "ab": 2})");
        text = message();
        QVERIFY2(text.startsWith(dir.path()) && text.contains(QStringLiteral("merges.txt")),
                 qPrintable(text));

        writeBytes(dir.filePath(QStringLiteral("tokenizer.json")),
                   R"({"model": {"type": "BPE", "vocab": {"a": 0, "b": 1}, "merges": []}})");
        QCOMPARE(Gpt2Tokenizer::fromFolder(dir.path()).vocabularySize(), 2);

        writeBytes(dir.filePath(QStringLiteral("merges.txt")), "#version: 0.2\na b\n\n\n");
        const Gpt2Tokenizer both = Gpt2Tokenizer::fromFolder(dir.path());
        QCOMPARE(both.vocabularySize(), 3);
        QCOMPARE(both.encode(QStringLiteral("ab")), std::vector<int>{2});

        const QString missing = dir.filePath(QStringLiteral("no-such-folder"));
        text = thrownMessage<InputError>([&] { Gpt2Tokenizer::fromFolder(missing); });
        QVERIFY2(text.startsWith(missing), qPrintable(text));
        text = thrownMessage<InputError>([&] {
            Gpt2Tokenizer::fromVocabAndMerges(missing + QStringLiteral("/vocab.json"),
                                              missing + QStringLiteral("/merges.txt"));
        });
        QVERIFY2(text.startsWith(missing + QStringLiteral("/vocab.json")), qPrintable(text));
    }
};

QTEST_GUILESS_MAIN(TestTokenizer)
#include "test_tokenizer.moc"
