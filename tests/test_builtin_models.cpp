// The built-in models (core/inputs/builtin_models, resources/models/README.md):
// - every built-in model has an explicit id that names its folder; "builtin" names the default
//   text model;
// - heads.json files are read as documented, and a malformed one is refused naming the file and
//   the field;
// - the heads the shipped heads.json files name do what their names say on the shipped weights:
//   the KJV Llama's previous-token head and its induction heads (issue 29's scores, with the
//   thresholds the issue sets), with P formed in double from the model's own Q and K
//   (attentionByHand; the KJV GPT-2's named heads are checked so in test_model).

#include "errors.h"
#include "inputs/model_input.h"
#include "model/language_model.h"
#include "model/named_heads.h"
#include "model_support.h"
#include "sweeps/downstream.h"
#include "test_support.h"

#include <QDir>
#include <QFile>
#include <QTemporaryDir>
#include <QTest>

#include <cmath>
#include <random>

using namespace attnlab;
using namespace attnlab::test;

namespace {

// The chapters of resources/texts/kjv-heldout.txt: 12 of the 24 held-out chapters (every 50th),
// one verse a line, chapters apart by a blank line.
QStringList heldOutChapters()
{
    QFile file(QStringLiteral(ATTNLAB_TEST_DATA "/../../resources/texts/kjv-heldout.txt"));
    if (!file.open(QIODevice::ReadOnly))
        return {};
    return QString::fromUtf8(file.readAll()).split(QStringLiteral("\n\n"), Qt::SkipEmptyParts);
}

// Per head of `layer`, the induction score of ids = BOS, A, A (A of `span` tokens): the mean over
// the second copy's queries i of P[i, i - span + 1], the weight on the token after the query's
// earlier occurrence (Olsson et al. 2022).
std::vector<double> inductionScores(const LanguageModel& model, const ForwardResult& result,
                                    int layer, Eigen::Index span)
{
    std::vector<double> scores;
    for (int head = 0; head < model.heads(); ++head) {
        const MatrixD p =
            attentionByHand(result.layers[std::size_t(layer)], model.heads(), head, 0);
        double sum = 0;
        for (Eigen::Index i = 1 + span; i < 1 + 2 * span; ++i)
            sum += p(i, i - span + 1);
        scores.push_back(sum / double(span));
    }
    return scores;
}

// The mean loss -log p(ids[t + 1]) over the positions t in [from, to), in nats.
double meanNats(const ForwardResult& result, const std::vector<int>& ids, Eigen::Index from,
                Eigen::Index to)
{
    double sum = 0;
    for (Eigen::Index t = from; t < to; ++t)
        sum -= logSoftmax(result.logits.row(t).transpose())[ids[std::size_t(t + 1)]];
    return sum / double(to - from);
}

}  // namespace

class TestBuiltinModels : public QObject {
    Q_OBJECT

private slots:
    void idsNameTheirFolders();
    void whiteSpaceIsAText_data();
    void whiteSpaceIsAText();
    void namedHeadsAreRead();
    void badNamedHeadsAreRefused_data();
    void badNamedHeadsAreRefused();
    void shippedHeadsJsonFilesRead();
    void theLlamasPreviousTokenHeadLooksBackOneToken();
    void theLlamasInductionHeadsCopyRandomTokens();
    void theLlamasInductionHeadWorksOnRepeatedVerses();
};

// Each id names its own folder; "builtin" is the default's; names that are not built-in are
// paths.
void TestBuiltinModels::idsNameTheirFolders()
{
    QCOMPARE(explicitModelId(QStringLiteral("builtin")), QString::fromLatin1(kDefaultTextModel));
    QCOMPARE(explicitModelId(QStringLiteral("models/mine")), QStringLiteral("models/mine"));
    QCOMPARE(builtinTextModels().first(), QString::fromLatin1(kDefaultTextModel));
    QCOMPARE(builtinTextModels().size(), 2);
    const std::pair<const char*, const char*> folders[] = {{kBuiltinKjvLlama, "kjv-llama"},
                                                           {kBuiltinKjvGpt2, "kjv-gpt2"},
                                                           {kBuiltinVitModel, "fashion-vit"}};
    for (const auto& [id, folder] : folders) {
        QVERIFY(isBuiltinName(QString::fromLatin1(id)));
        QCOMPARE(QFileInfo(modelFolder(QString::fromLatin1(id))).fileName(),
                 QString::fromLatin1(folder));
        QVERIFY(modelDisplayName(QString::fromLatin1(id)).startsWith(QStringLiteral("built-in ")));
    }
    QCOMPARE(modelFolder(QStringLiteral("builtin")),
             modelFolder(QString::fromLatin1(kDefaultTextModel)));
    QVERIFY(!isBuiltinName(QStringLiteral("builtin-kjv")));
    QCOMPARE(modelFolder(QStringLiteral("builtin-kjv")), QStringLiteral("builtin-kjv"));
}

// A text of white space only ("\n", "  ") is a text for both built-in text models: it has tokens
// of its own besides the special ids the tokenizer adds (the Llama's BOS), and the model reads
// it; the empty text has none and is refused.
void TestBuiltinModels::whiteSpaceIsAText_data()
{
    QTest::addColumn<QString>("model");
    QTest::addColumn<QString>("text");
    for (const QString& model : builtinTextModels()) {
        const QByteArray name = model.toLatin1();
        QTest::newRow((name + ", a new line").constData()) << model << QStringLiteral("\n");
        QTest::newRow((name + ", two spaces").constData()) << model << QStringLiteral("  ");
        QTest::newRow((name + ", a tab and new lines").constData())
            << model << QStringLiteral("\t\n\n");
        QTest::newRow((name + ", empty").constData()) << model << QString();
    }
}

void TestBuiltinModels::whiteSpaceIsAText()
{
    QFETCH(QString, model);
    QFETCH(QString, text);
    const std::shared_ptr<const LanguageModel> loaded = loadModel(model);
    InputSpec spec;
    spec.kind = InputKind::Model;
    spec.modelPath = model;
    spec.text = text;
    if (text.isEmpty()) {
        const QString message = thrownMessage<InputError>([&] { buildInput(spec); });
        QVERIFY2(message.contains(QStringLiteral("the text has no tokens")), qPrintable(message));
        return;
    }
    const ModelTokens tokens = modelTokens(*loaded, text, false);
    const int special =
        loaded->tokenizer().specialIdsBefore() + loaded->tokenizer().specialIdsAfter();
    QVERIFY2(int(tokens.ids.size()) > special, qPrintable(tokens.labels.join(' ')));
    const AttentionInput input = buildInput(spec);
    QCOMPARE(input.labels, tokens.labels);
    QCOMPARE(int(input.heads.size()), loaded->heads());
    QVERIFY(input.heads.front().q.allFinite());
}

// A heads.json beside a model names its heads; without one, none are named.
void TestBuiltinModels::namedHeadsAreRead()
{
    QTemporaryDir folder;
    QVERIFY(folder.isValid());
    QVERIFY(readNamedHeads(folder.path(), 2, 4).empty());
    writeBytes(folder.filePath(QStringLiteral("heads.json")),
               R"({"heads": [{"layer": 1, "head": 3, "name": "induction head",
                              "evidence": "0.7 on the next token"},
                             {"layer": 0, "head": 0, "name": "previous-token head"}]})");
    const std::vector<NamedHead> heads = readNamedHeads(folder.path(), 2, 4);
    QCOMPARE(heads.size(), std::size_t(2));
    const NamedHead* induction = namedHead(heads, 1, 3);
    QVERIFY(induction);
    QCOMPARE(induction->name, QStringLiteral("induction head"));
    QCOMPARE(induction->evidence, QStringLiteral("0.7 on the next token"));
    QCOMPARE(namedHead(heads, 0, 0)->name, QStringLiteral("previous-token head"));
    QVERIFY(namedHead(heads, 0, 0)->evidence.isEmpty());
    QVERIFY(!namedHead(heads, 1, 2));
}

void TestBuiltinModels::badNamedHeadsAreRefused_data()
{
    QTest::addColumn<QByteArray>("json");
    QTest::addColumn<QString>("expected");
    QTest::newRow("not JSON") << QByteArray("{\"heads\": [") << QStringLiteral("not a JSON object");
    QTest::newRow("an array") << QByteArray("[]") << QStringLiteral("not a JSON object");
    QTest::newRow("heads not an array") << QByteArray(R"({"heads": 3})") << QStringLiteral("heads");
    QTest::newRow("an entry not an object")
        << QByteArray(R"({"heads": [3]})") << QStringLiteral("heads[0] must be an object");
    QTest::newRow("no name") << QByteArray(R"({"heads": [{"layer": 0, "head": 0}]})")
                             << QStringLiteral("heads[0].name is missing");
    QTest::newRow("layer past the model")
        << QByteArray(R"({"heads": [{"layer": 2, "head": 0, "name": "x"}]})")
        << QStringLiteral("heads[0].layer");
    QTest::newRow("head past the model")
        << QByteArray(R"({"heads": [{"layer": 0, "head": 0, "name": "x"},
                                    {"layer": 1, "head": 4, "name": "y"}]})")
        << QStringLiteral("heads[1].head");
    QTest::newRow("a name that is a number")
        << QByteArray(R"({"heads": [{"layer": 0, "head": 0, "name": 7}]})")
        << QStringLiteral("heads[0].name");
}

// A malformed heads.json is refused with its path and the field, not read in part.
void TestBuiltinModels::badNamedHeadsAreRefused()
{
    QFETCH(QByteArray, json);
    QFETCH(QString, expected);
    QTemporaryDir folder;
    QVERIFY(folder.isValid());
    const QString path = folder.filePath(QStringLiteral("heads.json"));
    writeBytes(path, json);
    const QString message = thrownMessage<InputError>([&] { readNamedHeads(folder.path(), 2, 4); });
    QVERIFY2(blames(message, path, expected), qPrintable(message));
}

// The shipped models' heads.json files read, and name the heads their READMEs name.
void TestBuiltinModels::shippedHeadsJsonFilesRead()
{
    const std::vector<NamedHead> gpt2 =
        readNamedHeads(modelFolder(QString::fromLatin1(kBuiltinKjvGpt2)), 4, 4);
    QVERIFY(namedHead(gpt2, 1, 0));
    QCOMPARE(namedHead(gpt2, 1, 0)->name, QStringLiteral("punctuation head"));
}

// Layer 0, head 0 of the KJV Llama, which its heads.json names the previous-token head, puts more
// weight on the previous token than any other head on the first 256 tokens of held-out chapters
// (resources/texts/kjv-heldout.txt, "<s>" first): 1.000 by training/kjv_llama/analyse_heads.py's
// float64 forward pass over all the held-out chapters; issue 29 asks at least 0.6.
void TestBuiltinModels::theLlamasPreviousTokenHeadLooksBackOneToken()
{
    const QString id = QString::fromLatin1(kBuiltinKjvLlama);
    const auto model = loadModel(id);
    const std::vector<NamedHead> named =
        readNamedHeads(modelFolder(id), model->layers(), model->heads());
    QVERIFY(namedHead(named, 0, 0));
    QCOMPARE(namedHead(named, 0, 0)->name, QStringLiteral("previous-token head"));

    const QStringList chapters = heldOutChapters();
    QVERIFY(!chapters.isEmpty());
    std::vector<int> ids = model->tokenizer().encode(chapters.join(QStringLiteral("\n\n")));
    ids.resize(256);
    const ForwardResult result = model->forward(ids);
    // Per head: the mean over queries i >= 1 of P[i, i - 1].
    std::vector<std::tuple<double, int, int>> scores;
    for (int layer = 0; layer < model->layers(); ++layer)
        for (int head = 0; head < model->heads(); ++head) {
            const MatrixD p =
                attentionByHand(result.layers[std::size_t(layer)], model->heads(), head, 0);
            scores.emplace_back(p.diagonal(-1).mean(), layer, head);
        }
    const auto best = std::max_element(scores.begin(), scores.end());
    QCOMPARE(std::get<1>(*best), 0);
    QCOMPARE(std::get<2>(*best), 0);
    QVERIFY2(std::get<0>(*best) >= 0.6, qPrintable(QString::number(std::get<0>(*best))));
}

// After "<s>", 50 tokens drawn uniformly from the ordinary tokens (not "<s>"; 16 sequences, fixed
// seed) and the same 50 again: the heads heads.json names induction heads (layer 1, heads 0 to 2)
// put at least 0.5 of each second-copy query's weight on the token after its first occurrence
// (issue 29's threshold; analyse_heads.py measured 0.894, 0.897 and 0.928 on 64 sequences), no
// other head of the model half as much, and the second copy costs at most half the nats per token
// of the first (measured: 1.73 against 8.59).
void TestBuiltinModels::theLlamasInductionHeadsCopyRandomTokens()
{
    const QString id = QString::fromLatin1(kBuiltinKjvLlama);
    const auto model = loadModel(id);
    const std::vector<NamedHead> named =
        readNamedHeads(modelFolder(id), model->layers(), model->heads());
    const int bos = model->tokenizer().encode(QStringLiteral("x")).front();
    const Eigen::Index span = 50;
    const int sequences = 16;
    std::mt19937 generator(29);
    std::uniform_int_distribution<int> ordinary(0, model->vocabularySize() - 2);
    QCOMPARE(bos, model->vocabularySize() - 1);  // so that `ordinary` leaves out only "<s>"
    std::vector<std::vector<double>> scores(std::size_t(model->layers()),
                                            std::vector<double>(std::size_t(model->heads())));
    double first = 0, second = 0;
    for (int n = 0; n < sequences; ++n) {
        std::vector<int> half(static_cast<std::size_t>(span));
        for (int& token : half)
            token = ordinary(generator);
        std::vector<int> ids{bos};
        ids.insert(ids.end(), half.begin(), half.end());
        ids.insert(ids.end(), half.begin(), half.end());
        const ForwardResult result = model->forward(ids);
        for (int layer = 0; layer < model->layers(); ++layer) {
            const std::vector<double> layerScores = inductionScores(*model, result, layer, span);
            for (int head = 0; head < model->heads(); ++head)
                scores[std::size_t(layer)][std::size_t(head)] +=
                    layerScores[std::size_t(head)] / sequences;
        }
        // Tokens 2..50 of each copy: the first token of a copy is not predictable from the other.
        first += meanNats(result, ids, 1, span) / sequences;
        second += meanNats(result, ids, 1 + span, 2 * span) / sequences;
    }
    for (int layer = 0; layer < model->layers(); ++layer)
        for (int head = 0; head < model->heads(); ++head) {
            const double score = scores[std::size_t(layer)][std::size_t(head)];
            const NamedHead* name = namedHead(named, layer, head);
            const QString where =
                QStringLiteral("layer %1, head %2: %3").arg(layer).arg(head).arg(score);
            if (name && name->name == QLatin1String("induction head"))
                QVERIFY2(score >= 0.5, qPrintable(where));
            else
                QVERIFY2(score < 0.25, qPrintable(where));
        }
    QVERIFY(namedHead(named, 1, 1) &&
            namedHead(named, 1, 1)->name == QLatin1String("induction head"));
    QVERIFY2(second <= 0.5 * first, qPrintable(QStringLiteral("%1 -> %2").arg(first).arg(second)));
}

// The same score on natural text: the first 8 verses of each of the 12 held-out chapters of
// kjv-heldout.txt said twice ("<s>", the verses, each ending in a newline, then the verses again).
// Layer 1, head 1 scores at least 0.3 (issue 29's threshold; analyse_heads.py's float64 forward
// pass gives 0.311 on these chapters, 0.336 on all 24 held-out chapters).
void TestBuiltinModels::theLlamasInductionHeadWorksOnRepeatedVerses()
{
    const auto model = loadModel(QString::fromLatin1(kBuiltinKjvLlama));
    const QStringList chapters = heldOutChapters();
    QCOMPARE(chapters.size(), 12);
    double score = 0;
    for (const QString& chapter : chapters) {
        const QString verses =
            chapter.split(QLatin1Char('\n')).mid(0, 8).join(QLatin1Char('\n')) + QLatin1Char('\n');
        const std::vector<int> once = model->tokenizer().encode(verses);  // "<s>" first
        const Eigen::Index span = Eigen::Index(once.size()) - 1;
        std::vector<int> ids = once;
        ids.insert(ids.end(), once.begin() + 1, once.end());
        const ForwardResult result = model->forward(ids);
        score += inductionScores(*model, result, 1, span)[1] / double(chapters.size());
    }
    QVERIFY2(score >= 0.3, qPrintable(QString::number(score)));
}

QTEST_GUILESS_MAIN(TestBuiltinModels)
#include "test_builtin_models.moc"
