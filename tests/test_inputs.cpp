// The input layer: tokenisation, the Q, K, V that text, image, random and .npy inputs give
// (shapes, scaling, projections, seeds), the norm multiplier, image decoding and the errors each
// input raises for bad data.

#include "errors.h"
#include "experiment/image_loader.h"
#include "inputs/inputs.h"
#include "io/npy.h"
#include "inputs/text.h"
#include "test_support.h"

#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QImage>
#include <QTemporaryDir>
#include <QTest>

#include <cmath>
#include <cstring>
#include <functional>
#include <limits>

using namespace attnlab;
using namespace attnlab::test;

namespace {


// True when a and b have the same shape and the same bits.
bool sameBits(const MatrixD& a, const MatrixD& b)
{
    return a.rows() == b.rows() && a.cols() == b.cols() &&
           std::memcmp(a.data(), b.data(), sizeof(double) * std::size_t(a.size())) == 0;
}

// max |a - b| / max(|b|, tiny) over the entries; infinity when the shapes differ.
double relativeDifference(const MatrixD& a, const MatrixD& b)
{
    if (a.rows() != b.rows() || a.cols() != b.cols())
        return std::numeric_limits<double>::infinity();
    const double scale = std::max(b.cwiseAbs().maxCoeff(), 1e-300);
    return (a - b).cwiseAbs().maxCoeff() / scale;
}

// mean_i s |x_i|^2 over the rows of x with s = 1/sqrt(d), d its number of columns.
double meanScaledSquaredNorm(const MatrixD& x)
{
    return x.rowwise().squaredNorm().mean() / std::sqrt(double(x.cols()));
}

// A text of `count` words from a vocabulary of a few hundred made-up words, in a scrambled order,
// so that both the token embeddings and the positions vary.
QString variedText(int count)
{
    static const char* const syllables[] = {"ka", "lo", "mi", "ne", "ru", "sa", "ti", "vo",
                                            "be", "da", "fu", "go", "hi", "ju", "pe", "ze", "wa"};
    constexpr int n = int(sizeof(syllables) / sizeof(syllables[0]));
    QStringList words;
    for (int i = 0; i < count; ++i) {
        const int a = (i * 7 + 3) % n;
        const int b = (i * 13 / 5) % n;
        words.append(QString::fromLatin1(syllables[a]) + QString::fromLatin1(syllables[b]) +
                     (i % 3 == 0 ? QStringLiteral("n") : QString()));
    }
    return words.join(QLatin1Char(' '));
}

// An image of deterministic pseudo-random RGB values in [0, 1] (a linear congruential generator,
// so the pixels depend on nothing in the code under test).
ImagePixels noiseImage(int width, int height, std::uint32_t seed = 1)
{
    ImagePixels image;
    image.width = width;
    image.height = height;
    image.rgb.resize(std::size_t(width) * height * 3);
    std::uint32_t state = seed;
    for (float& value : image.rgb) {
        state = state * 1664525u + 1013904223u;
        value = float(state >> 8) / float(1u << 24);
    }
    return image;
}

// Values f(p) for p = 0, 1, ... in C order: element (h, i, j) of a (H, L, d) array is at
// p = (h L + i) d + j.
std::vector<double> arrayValues(const std::vector<qint64>& shape,
                                const std::function<double(qint64)>& f)
{
    qint64 count = 1;
    for (const qint64 dim : shape)
        count *= dim;
    std::vector<double> values(std::size_t(count), 0.0);
    for (qint64 p = 0; p < count; ++p)
        values[std::size_t(p)] = f(p);
    return values;
}

}  // namespace

class TestInputs : public QObject {
    Q_OBJECT

private slots:
    void initTestCase();

    // tokenize
    void wordTokens_data();
    void wordTokens();
    void characterTokens_data();
    void characterTokens();

    // text input
    void textInputHasOneHeadPerTokenRow();
    void sameWordGivesSameRowsOnlyWithoutPositions();
    void textWithoutTokensIsRefused_data();
    void textWithoutTokensIsRefused();
    void textQueriesAndKeysHaveUnitScaledNorm_data();
    void textQueriesAndKeysHaveUnitScaledNorm();
    void identityProjectionGivesEqualQueriesAndKeys();
    void tiedProjectionGivesKeysEqualToQueries();
    void headsHaveTheirOwnProjections();
    void seedChangesTextEmbeddings();

    // every input
    void normMultiplierScalesQueriesAndKeysOnly_data();
    void normMultiplierScalesQueriesAndKeysOnly();
    void outOfRangeParametersAreRefused_data();
    void outOfRangeParametersAreRefused();
    void inputOverBudgetIsRefused_data();
    void inputOverBudgetIsRefused();

    // random input
    void randomRowsHaveTheRequestedNorm_data();
    void randomRowsHaveTheRequestedNorm();
    void clustersConcentrateRandomRows();
    void randomInputOfLengthOne();
    void randomSeedDecidesEverything();

    // image input
    void imagePatchGrid_data();
    void imagePatchGrid();
    void imageQueriesAndKeysHaveUnitScaledNorm();
    void imageSmallerThanAPatchIsRefused_data();
    void imageSmallerThanAPatchIsRefused();
    void imageInputWithoutPixelsIsRefused();

    // loadImagePixels
    void loadedImageIsScaledWithAspectKept_data();
    void loadedImageIsScaledWithAspectKept();
    void unreadableImageIsRefusedNamingTheFile_data();
    void unreadableImageIsRefusedNamingTheFile();
    void hugeDeclaredImageIsRefusedWithoutDecoding_data();
    void hugeDeclaredImageIsRefusedWithoutDecoding();

    // .npy file input
    void twoDimensionalFilesGiveOneHead();
    void threeDimensionalFilesGiveOneHeadPerSlice();
    void valuesDefaultToKeys();
    void inconsistentFilesAreRefusedNamingThem_data();
    void inconsistentFilesAreRefusedNamingThem();

private:
    // Writes an array given by f into the temporary folder as `name` (float64) and returns its
    // path.
    QString saveArray(const QString& name, const std::vector<qint64>& shape,
                      const std::function<double(qint64)>& f);
    QString writeTemp(const QString& name, const QByteArray& bytes);

    QTemporaryDir m_dir;
};

void TestInputs::initTestCase()
{
    QVERIFY(m_dir.isValid());
}

QString TestInputs::saveArray(const QString& name, const std::vector<qint64>& shape,
                              const std::function<double(qint64)>& f)
{
    const QString path = m_dir.filePath(name);
    const std::vector<double> values = arrayValues(shape, f);
    saveNpy(path, values.data(), shape, NpyDtype::Float64);
    return path;
}

QString TestInputs::writeTemp(const QString& name, const QByteArray& bytes)
{
    const QString path = m_dir.filePath(name);
    writeBytes(path, bytes);
    return path;
}

// ---------------------------------------------------------------------------------------------
// tokenize

// Property: words mode splits at Unicode word boundaries (UAX #29) and drops white space: each
// punctuation mark is a token, an apostrophe or a decimal point inside a word does not split it,
// accented letters (precomposed or with a combining mark) stay in their word, every Han
// ideograph is its own word (UAX #29 has no rule joining them), an emoji (with its skin-tone
// modifier) is one token, and any kind of space separates words.
void TestInputs::wordTokens_data()
{
    QTest::addColumn<QString>("text");
    QTest::addColumn<QStringList>("tokens");
    QTest::newRow("punctuation") << QStringLiteral("Hello, world!")
                                 << QStringList{"Hello", ",", "world", "!"};
    QTest::newRow("apostrophe") << QStringLiteral("don't stop")
                                << QStringList{"don't", "stop"};
    QTest::newRow("typographic apostrophe")
        << QStringLiteral(u"I don\u2019t") << QStringList{"I", QStringLiteral(u"don\u2019t")};
    QTest::newRow("decimal number") << QStringLiteral("pi is 3.14.")
                                    << QStringList{"pi", "is", "3.14", "."};
    QTest::newRow("precomposed accents")
        << QStringLiteral(u"na\u00efve caf\u00e9")
        << QStringList{QStringLiteral(u"na\u00efve"), QStringLiteral(u"caf\u00e9")};
    QTest::newRow("combining accent")
        << QStringLiteral(u"cafe\u0301 ok") << QStringList{QStringLiteral(u"cafe\u0301"), "ok"};
    QTest::newRow("CJK ideographs")
        << QStringLiteral(u"\u65e5\u672c\u8a9e")
        << QStringList{QStringLiteral(u"\u65e5"), QStringLiteral(u"\u672c"),
                       QStringLiteral(u"\u8a9e")};
    QTest::newRow("emoji") << QStringLiteral(u"I like \U0001F355 a lot")
                           << QStringList{"I", "like", QStringLiteral(u"\U0001F355"), "a", "lot"};
    QTest::newRow("emoji with skin tone")
        << QStringLiteral(u"\U0001F44D\U0001F3FD ok")
        << QStringList{QStringLiteral(u"\U0001F44D\U0001F3FD"), "ok"};
    QTest::newRow("all kinds of space")
        << QStringLiteral(u"  a \t b\r\n\nc\u00a0d\u3000e  ")
        << QStringList{"a", "b", "c", "d", "e"};
    QTest::newRow("empty") << QString() << QStringList();
    QTest::newRow("white space only") << QStringLiteral(u" \t\n\r\u00a0 ") << QStringList();
}

void TestInputs::wordTokens()
{
    QFETCH(QString, text);
    QFETCH(QStringList, tokens);
    QCOMPARE(tokenize(text, TokenMode::Words), tokens);
}

// Property: characters mode gives one token per user-perceived character (grapheme cluster,
// UAX #29): a base letter with its combining accent, an emoji ZWJ sequence, a flag (a pair of
// regional indicators) and a Hangul syllable written as jamo are one token each; white space is
// dropped.
void TestInputs::characterTokens_data()
{
    QTest::addColumn<QString>("text");
    QTest::addColumn<QStringList>("tokens");
    QTest::newRow("letters") << QStringLiteral("ab c") << QStringList{"a", "b", "c"};
    QTest::newRow("combining accent")
        << QStringLiteral(u"e\u0301") << QStringList{QStringLiteral(u"e\u0301")};
    QTest::newRow("accent in a word")
        << QStringLiteral(u"cafe\u0301")
        << QStringList{"c", "a", "f", QStringLiteral(u"e\u0301")};
    QTest::newRow("ZWJ family")
        << QStringLiteral(u"\U0001F468\u200D\U0001F469\u200D\U0001F467")
        << QStringList{QStringLiteral(u"\U0001F468\u200D\U0001F469\u200D\U0001F467")};
    QTest::newRow("two flags")
        << QStringLiteral(u"\U0001F1EB\U0001F1F7\U0001F1E9\U0001F1EA")
        << QStringList{QStringLiteral(u"\U0001F1EB\U0001F1F7"),
                       QStringLiteral(u"\U0001F1E9\U0001F1EA")};
    QTest::newRow("Hangul jamo")
        << QStringLiteral(u"\u1100\u1161") << QStringList{QStringLiteral(u"\u1100\u1161")};
    QTest::newRow("CJK") << QStringLiteral(u"\u65e5 \u672c")
                         << QStringList{QStringLiteral(u"\u65e5"), QStringLiteral(u"\u672c")};
    QTest::newRow("empty") << QString() << QStringList();
    QTest::newRow("white space only") << QStringLiteral(" \t\r\n ") << QStringList();
}

void TestInputs::characterTokens()
{
    QFETCH(QString, text);
    QFETCH(QStringList, tokens);
    QCOMPARE(tokenize(text, TokenMode::Characters), tokens);
}

// ---------------------------------------------------------------------------------------------
// Text input

// Property: the default spec (the default sentence, 18 tokens counted by hand: "The cat sat on
// the mat because the mat was warm , and the cat was tired .") gives one head with L = 18 rows
// and d = 64 columns for Q, K and V, labelled with the tokens.
void TestInputs::textInputHasOneHeadPerTokenRow()
{
    const AttentionInput input = buildInput(InputSpec());
    QCOMPARE(input.heads.size(), std::size_t(1));
    const QStringList expected = QStringLiteral(
                                     "The cat sat on the mat because the mat was warm , and the "
                                     "cat was tired .")
                                     .split(QLatin1Char(' '));
    QCOMPARE(input.labels, expected);
    const HeadTensors& head = input.heads.front();
    for (const MatrixD* m : {&head.q, &head.k, &head.v}) {
        QCOMPARE(m->rows(), Eigen::Index(18));
        QCOMPARE(m->cols(), Eigen::Index(64));
        QVERIFY(m->allFinite());
    }
    QCOMPARE(input.length(), Eigen::Index(18));
    QCOMPARE(input.headDim(), Eigen::Index(64));
    QCOMPARE(input.gridRows, 0);
}

// Property: a token's embedding depends on its text only, so without positional encoding the same
// word at two positions has identical q, k and v rows; with it, the rows differ.
void TestInputs::sameWordGivesSameRowsOnlyWithoutPositions()
{
    InputSpec spec;
    spec.text = QStringLiteral("cat dog cat");
    spec.positionalEncoding = false;
    const AttentionInput plain = buildInput(spec);
    const HeadTensors& a = plain.heads.front();
    // Equal up to the rounding of the matrix product X Wq (which may take another code path for
    // another row): 1e-12 relative.
    QVERIFY(relativeDifference(a.q.row(2), a.q.row(0)) < 1e-12);
    QVERIFY(relativeDifference(a.k.row(2), a.k.row(0)) < 1e-12);
    QVERIFY(relativeDifference(a.v.row(2), a.v.row(0)) < 1e-12);
    QVERIFY(relativeDifference(a.q.row(1), a.q.row(0)) > 1e-3);

    spec.positionalEncoding = true;
    const AttentionInput positioned = buildInput(spec);
    const HeadTensors& b = positioned.heads.front();
    QVERIFY((b.q.row(0) - b.q.row(2)).norm() > 1e-3 * b.q.row(0).norm());
    QVERIFY((b.k.row(0) - b.k.row(2)).norm() > 1e-3 * b.k.row(0).norm());
}

// Property: a text with no tokens (empty, or only white space) is an InputError, in either token
// mode.
void TestInputs::textWithoutTokensIsRefused_data()
{
    QTest::addColumn<QString>("text");
    QTest::addColumn<TokenMode>("mode");
    QTest::newRow("empty, words") << QString() << TokenMode::Words;
    QTest::newRow("spaces, words") << QStringLiteral(" \n\t ") << TokenMode::Words;
    QTest::newRow("empty, characters") << QString() << TokenMode::Characters;
    QTest::newRow("spaces, characters") << QStringLiteral("   ") << TokenMode::Characters;
}

void TestInputs::textWithoutTokensIsRefused()
{
    QFETCH(QString, text);
    QFETCH(TokenMode, mode);
    InputSpec spec;
    spec.text = text;
    spec.tokenMode = mode;
    QVERIFY(!thrownMessage<InputError>([&] { buildInput(spec); }).isEmpty());
}

// Property (the promise of inputs.h): text input is scaled so that E|q_i|^2 = E|k_i|^2 = sqrt(d),
// i.e. |x'|^2 = s |q_i|^2 is about 1 at s = 1/sqrt(d). Over 2000 tokens of a few hundred words the
// mean of s |q_i|^2 (and of s |k_i|^2) is within 10% of 1.
void TestInputs::textQueriesAndKeysHaveUnitScaledNorm_data()
{
    QTest::addColumn<int>("d");
    QTest::addColumn<int>("heads");
    QTest::addColumn<bool>("positions");
    QTest::newRow("d 64") << 64 << 1 << true;
    QTest::newRow("d 64, no positions") << 64 << 1 << false;
    QTest::newRow("d 16") << 16 << 1 << true;
    QTest::newRow("d 32, 2 heads") << 32 << 2 << true;
}

void TestInputs::textQueriesAndKeysHaveUnitScaledNorm()
{
    QFETCH(int, d);
    QFETCH(int, heads);
    QFETCH(bool, positions);
    InputSpec spec;
    spec.text = variedText(2000);
    spec.headDim = d;
    spec.heads = heads;
    spec.positionalEncoding = positions;
    const AttentionInput input = buildInput(spec);
    QCOMPARE(input.length(), Eigen::Index(2000));
    for (const HeadTensors& head : input.heads) {
        const double q = meanScaledSquaredNorm(head.q);
        const double k = meanScaledSquaredNorm(head.k);
        QVERIFY2(std::abs(q - 1) < 0.1, qPrintable(QStringLiteral("mean s|q|^2 = %1").arg(q)));
        QVERIFY2(std::abs(k - 1) < 0.1, qPrintable(QStringLiteral("mean s|k|^2 = %1").arg(k)));
    }
}

// Property: the identity projection gives Q = K exactly, and V = Q / d^(1/4) (Q and K carry the
// factor d^(1/4) that makes |x'| about 1; V does not).
void TestInputs::identityProjectionGivesEqualQueriesAndKeys()
{
    InputSpec spec;
    spec.projection = HeadProjection::Identity;
    spec.headDim = 16;
    spec.heads = 2;
    const AttentionInput input = buildInput(spec);
    QCOMPARE(input.heads.size(), std::size_t(2));
    const double factor = std::pow(16.0, 0.25);
    for (const HeadTensors& head : input.heads) {
        QVERIFY(sameBits(head.q, head.k));
        QVERIFY(relativeDifference(head.v * factor, head.q) < 1e-12);
    }
    // The two heads see different blocks of the token vectors.
    QVERIFY(!sameBits(input.heads[0].q, input.heads[1].q));
}

// Property: the tied projection uses Wk = Wq, so K = Q for every row; then a token repeated at
// two positions (positional encoding off) has q_i.k_j = |q_i|^2. V (its own Wv) differs from Q.
// With the random projection K differs from Q.
void TestInputs::tiedProjectionGivesKeysEqualToQueries()
{
    InputSpec spec;
    spec.text = QStringLiteral("red blue red green blue");
    spec.positionalEncoding = false;
    spec.projection = HeadProjection::Tied;
    const HeadTensors tied = buildInput(spec).heads.front();
    QVERIFY(relativeDifference(tied.k, tied.q) < 1e-12);
    const double selfProduct = tied.q.row(0).dot(tied.k.row(2));
    QVERIFY(std::abs(selfProduct - tied.q.row(0).squaredNorm()) <=
            1e-12 * tied.q.row(0).squaredNorm());
    QVERIFY(relativeDifference(tied.v, tied.q) > 1e-3);

    spec.projection = HeadProjection::Random;
    const HeadTensors random = buildInput(spec).heads.front();
    QVERIFY(relativeDifference(random.k, random.q) > 1e-3);
}

// Property: H heads each get their own Wq, Wk, Wv: H sets of Q, K, V with d columns each, and no
// two heads share their queries, keys or values.
void TestInputs::headsHaveTheirOwnProjections()
{
    InputSpec spec;
    spec.heads = 3;
    spec.headDim = 16;
    const AttentionInput input = buildInput(spec);
    QCOMPARE(input.heads.size(), std::size_t(3));
    for (const HeadTensors& head : input.heads) {
        QCOMPARE(head.q.cols(), Eigen::Index(16));
        QCOMPARE(head.k.cols(), Eigen::Index(16));
        QCOMPARE(head.v.cols(), Eigen::Index(16));
        QCOMPARE(head.q.rows(), Eigen::Index(18));
    }
    for (int a = 0; a < 3; ++a) {
        for (int b = a + 1; b < 3; ++b) {
            QVERIFY(relativeDifference(input.heads[a].q, input.heads[b].q) > 1e-3);
            QVERIFY(relativeDifference(input.heads[a].k, input.heads[b].k) > 1e-3);
            QVERIFY(relativeDifference(input.heads[a].v, input.heads[b].v) > 1e-3);
        }
    }
}

// Property: the input seed decides the embeddings and projections: the same seed gives the same
// bits, another seed other values.
void TestInputs::seedChangesTextEmbeddings()
{
    InputSpec spec;
    spec.seed = 5;
    const HeadTensors a = buildInput(spec).heads.front();
    const HeadTensors again = buildInput(spec).heads.front();
    QVERIFY(sameBits(a.q, again.q) && sameBits(a.k, again.k) && sameBits(a.v, again.v));
    spec.seed = 6;
    const HeadTensors b = buildInput(spec).heads.front();
    QVERIFY(relativeDifference(a.q, b.q) > 1e-3);
    QVERIFY(relativeDifference(a.k, b.k) > 1e-3);
    QVERIFY(relativeDifference(a.v, b.v) > 1e-3);
}

// ---------------------------------------------------------------------------------------------
// Every input

// Property: the norm multiplier multiplies Q and K by exactly that factor (compared with
// multiplier 1) and leaves V unchanged, for every kind of input.
void TestInputs::normMultiplierScalesQueriesAndKeysOnly_data()
{
    QTest::addColumn<InputKind>("kind");
    QTest::addColumn<double>("multiplier");
    for (const InputKind kind :
         {InputKind::Text, InputKind::Image, InputKind::Random, InputKind::Files}) {
        for (const double multiplier : {2.5, 0.1}) {
            QTest::addRow("%s x %g", qPrintable(inputKindName(kind)), multiplier)
                << kind << multiplier;
        }
    }
}

void TestInputs::normMultiplierScalesQueriesAndKeysOnly()
{
    QFETCH(InputKind, kind);
    QFETCH(double, multiplier);
    InputSpec spec;
    spec.kind = kind;
    spec.headDim = 8;
    spec.length = 20;
    spec.queryPath = saveArray(QStringLiteral("mult_q.npy"), {6, 5},
                               [](qint64 p) { return std::sin(0.7 * double(p)); });
    spec.keyPath = saveArray(QStringLiteral("mult_k.npy"), {6, 5},
                             [](qint64 p) { return std::cos(0.3 * double(p)); });
    const ImagePixels image = noiseImage(48, 32);
    const AttentionInput base = buildInput(spec, &image);
    spec.normMultiplier = multiplier;
    const AttentionInput scaled = buildInput(spec, &image);
    QCOMPARE(scaled.heads.size(), base.heads.size());
    for (std::size_t h = 0; h < base.heads.size(); ++h) {
        QVERIFY(relativeDifference(scaled.heads[h].q, multiplier * base.heads[h].q) < 1e-15);
        QVERIFY(relativeDifference(scaled.heads[h].k, multiplier * base.heads[h].k) < 1e-15);
        QVERIFY(sameBits(scaled.heads[h].v, base.heads[h].v));
    }
}

// Property: a parameter out of its range is an InputError, for the kinds it applies to.
void TestInputs::outOfRangeParametersAreRefused_data()
{
    QTest::addColumn<InputKind>("kind");
    QTest::addColumn<QString>("field");
    QTest::addColumn<double>("value");
    QTest::newRow("d 0") << InputKind::Text << "headDim" << 0.0;
    QTest::newRow("heads 0") << InputKind::Random << "heads" << 0.0;
    QTest::newRow("multiplier 0") << InputKind::Text << "normMultiplier" << 0.0;
    QTest::newRow("multiplier -1") << InputKind::Text << "normMultiplier" << -1.0;
    QTest::newRow("multiplier NaN")
        << InputKind::Random << "normMultiplier" << std::numeric_limits<double>::quiet_NaN();
    QTest::newRow("multiplier inf")
        << InputKind::Random << "normMultiplier" << std::numeric_limits<double>::infinity();
    QTest::newRow("length 0") << InputKind::Random << "length" << 0.0;
    QTest::newRow("row norm -1") << InputKind::Random << "rowNorm" << -1.0;
    QTest::newRow("row norm NaN")
        << InputKind::Random << "rowNorm" << std::numeric_limits<double>::quiet_NaN();
    QTest::newRow("clusters -1") << InputKind::Random << "clusters" << -1.0;
    QTest::newRow("patch 0") << InputKind::Image << "patchSize" << 0.0;
    QTest::newRow("image size below patch") << InputKind::Image << "imageSize" << 8.0;
}

void TestInputs::outOfRangeParametersAreRefused()
{
    QFETCH(InputKind, kind);
    QFETCH(QString, field);
    QFETCH(double, value);
    InputSpec spec;
    spec.kind = kind;
    if (field == QLatin1String("headDim"))
        spec.headDim = int(value);
    else if (field == QLatin1String("heads"))
        spec.heads = int(value);
    else if (field == QLatin1String("normMultiplier"))
        spec.normMultiplier = value;
    else if (field == QLatin1String("length"))
        spec.length = int(value);
    else if (field == QLatin1String("rowNorm"))
        spec.rowNorm = value;
    else if (field == QLatin1String("clusters"))
        spec.clusters = int(value);
    else if (field == QLatin1String("patchSize"))
        spec.patchSize = int(value);
    else if (field == QLatin1String("imageSize"))
        spec.imageSize = int(value);
    else
        QFAIL("unknown field");
    const ImagePixels image = noiseImage(64, 64);
    QVERIFY(!thrownMessage<InputError>([&] { buildInput(spec, &image); }).isEmpty());
}

// Property: Q, K and V that do not fit in the memory budget are a ResourceError, checked before
// they are built (a 1000-byte budget cannot hold even the 18 x 64 default text input).
void TestInputs::inputOverBudgetIsRefused_data()
{
    QTest::addColumn<InputKind>("kind");
    QTest::newRow("text") << InputKind::Text;
    QTest::newRow("image") << InputKind::Image;
    QTest::newRow("random") << InputKind::Random;
}

void TestInputs::inputOverBudgetIsRefused()
{
    QFETCH(InputKind, kind);
    InputSpec spec;
    spec.kind = kind;
    const ImagePixels image = noiseImage(64, 64);
    const QString message =
        thrownMessage<ResourceError>([&] { buildInput(spec, &image, MemoryBudget(1000)); });
    QVERIFY(!message.isEmpty());
}

// ---------------------------------------------------------------------------------------------
// Random input

// Property: every q and k row has exactly the requested norm (default d^(1/4), which makes
// |x'| = 1 at s = 1/sqrt(d)), with or without clusters, and V rows have norm 1.
void TestInputs::randomRowsHaveTheRequestedNorm_data()
{
    QTest::addColumn<int>("d");
    QTest::addColumn<double>("norm");  // < 0: the default
    QTest::addColumn<int>("clusters");
    QTest::addColumn<double>("expected");
    QTest::newRow("d 64, default") << 64 << -1.0 << 0 << std::sqrt(8.0);
    QTest::newRow("d 16, default, clusters") << 16 << -1.0 << 4 << 2.0;
    QTest::newRow("d 16, norm 2") << 16 << 2.0 << 0 << 2.0;
    QTest::newRow("d 7, norm 0.5, clusters") << 7 << 0.5 << 3 << 0.5;
    QTest::newRow("d 1, default") << 1 << -1.0 << 0 << 1.0;
    QTest::newRow("d 8, norm 0") << 8 << 0.0 << 0 << 0.0;
}

void TestInputs::randomRowsHaveTheRequestedNorm()
{
    QFETCH(int, d);
    QFETCH(double, norm);
    QFETCH(int, clusters);
    QFETCH(double, expected);
    InputSpec spec;
    spec.kind = InputKind::Random;
    spec.length = 50;
    spec.headDim = d;
    spec.clusters = clusters;
    if (norm >= 0)
        spec.rowNorm = norm;
    const AttentionInput input = buildInput(spec);
    QCOMPARE(input.length(), Eigen::Index(50));
    QCOMPARE(input.headDim(), Eigen::Index(d));
    const HeadTensors& head = input.heads.front();
    for (const MatrixD* m : {&head.q, &head.k}) {
        for (Eigen::Index i = 0; i < m->rows(); ++i) {
            QVERIFY2(std::abs(m->row(i).norm() - expected) <= 1e-12,
                     qPrintable(QStringLiteral("row %1 has norm %2").arg(i).arg(m->row(i).norm(),
                                                                                0, 'g', 17)));
        }
    }
    for (Eigen::Index i = 0; i < head.v.rows(); ++i)
        QVERIFY(std::abs(head.v.row(i).norm() - 1.0) <= 1e-12);
}

// Property: with clusters the rows gather around a few directions, so the mean |cos| between two
// query rows is far above that of independent uniform directions (about sqrt(2 / (pi d)) = 0.14
// for d = 32).
void TestInputs::clustersConcentrateRandomRows()
{
    const auto meanAbsCosine = [](const MatrixD& m) {
        const MatrixD unit = m.rowwise().normalized();
        const MatrixD cosines = unit * unit.transpose();
        double sum = 0;
        for (Eigen::Index i = 0; i < m.rows(); ++i)
            for (Eigen::Index j = i + 1; j < m.rows(); ++j)
                sum += std::abs(cosines(i, j));
        return sum / (double(m.rows()) * double(m.rows() - 1) / 2);
    };
    InputSpec spec;
    spec.kind = InputKind::Random;
    spec.length = 200;
    spec.headDim = 32;
    const HeadTensors spread = buildInput(spec).heads.front();
    spec.clusters = 2;
    const HeadTensors clustered = buildInput(spec).heads.front();
    const double without = meanAbsCosine(spread.q);
    const double with = meanAbsCosine(clustered.q);
    QVERIFY2(without < 0.2, qPrintable(QString::number(without)));
    QVERIFY2(with > 0.4, qPrintable(QString::number(with)));
    QVERIFY(meanAbsCosine(clustered.k) > 0.4);
}

// Property: L = 1 is a valid random input: one row, labelled "0".
void TestInputs::randomInputOfLengthOne()
{
    InputSpec spec;
    spec.kind = InputKind::Random;
    spec.length = 1;
    spec.headDim = 4;
    const AttentionInput input = buildInput(spec);
    QCOMPARE(input.length(), Eigen::Index(1));
    QCOMPARE(input.labels, QStringList{"0"});
    QCOMPARE(input.heads.front().k.rows(), Eigen::Index(1));
    QCOMPARE(input.heads.front().v.rows(), Eigen::Index(1));
}

// Property: the seed decides random Q, K and V completely: the same seed gives identical bits,
// another seed changes every one of them; labels are the indices.
void TestInputs::randomSeedDecidesEverything()
{
    InputSpec spec;
    spec.kind = InputKind::Random;
    spec.length = 30;
    spec.headDim = 8;
    spec.heads = 2;
    spec.clusters = 3;
    const AttentionInput a = buildInput(spec);
    const AttentionInput again = buildInput(spec);
    spec.seed = 1;
    const AttentionInput b = buildInput(spec);
    QCOMPARE(a.labels.size(), 30);
    QCOMPARE(a.labels.front(), QStringLiteral("0"));
    QCOMPARE(a.labels.back(), QStringLiteral("29"));
    for (std::size_t h = 0; h < 2; ++h) {
        QVERIFY(sameBits(a.heads[h].q, again.heads[h].q));
        QVERIFY(sameBits(a.heads[h].k, again.heads[h].k));
        QVERIFY(sameBits(a.heads[h].v, again.heads[h].v));
        QVERIFY(relativeDifference(a.heads[h].q, b.heads[h].q) > 1e-3);
        QVERIFY(relativeDifference(a.heads[h].k, b.heads[h].k) > 1e-3);
        QVERIFY(relativeDifference(a.heads[h].v, b.heads[h].v) > 1e-3);
    }
    QVERIFY(relativeDifference(a.heads[0].q, a.heads[1].q) > 1e-3);
}

// ---------------------------------------------------------------------------------------------
// Image input

// Property: an image of W x H pixels with p x p patches gives a grid of floor(H / p) rows and
// floor(W / p) columns, one position per patch, labelled "(row, col)" in raster order.
void TestInputs::imagePatchGrid_data()
{
    QTest::addColumn<int>("width");
    QTest::addColumn<int>("height");
    QTest::addColumn<int>("patch");
    QTest::addColumn<int>("rows");
    QTest::addColumn<int>("cols");
    QTest::newRow("64 x 48, p 16") << 64 << 48 << 16 << 3 << 4;
    QTest::newRow("70 x 50, p 16 (remainders dropped)") << 70 << 50 << 16 << 3 << 4;
    QTest::newRow("16 x 16, p 16") << 16 << 16 << 16 << 1 << 1;
    QTest::newRow("30 x 90, p 10") << 30 << 90 << 10 << 9 << 3;
    QTest::newRow("5 x 3, p 1") << 5 << 3 << 1 << 3 << 5;
}

void TestInputs::imagePatchGrid()
{
    QFETCH(int, width);
    QFETCH(int, height);
    QFETCH(int, patch);
    QFETCH(int, rows);
    QFETCH(int, cols);
    InputSpec spec;
    spec.kind = InputKind::Image;
    spec.patchSize = patch;
    spec.headDim = 16;
    const ImagePixels image = noiseImage(width, height);
    const AttentionInput input = buildInput(spec, &image);
    QCOMPARE(input.gridRows, rows);
    QCOMPARE(input.gridCols, cols);
    QStringList labels;
    for (int r = 0; r < rows; ++r)
        for (int c = 0; c < cols; ++c)
            labels.append(QStringLiteral("(%1, %2)").arg(r).arg(c));
    QCOMPARE(input.labels, labels);
    QCOMPARE(input.length(), Eigen::Index(rows * cols));
    QCOMPARE(input.headDim(), Eigen::Index(16));
    QVERIFY(input.heads.front().q.allFinite());
    QVERIFY(input.heads.front().v.allFinite());
}

// Property (the promise of inputs.h for image input): E|q_i|^2 = E|k_i|^2 = sqrt(d), the
// expectation taken over the seeded weights too. For one seed the mean of s |q_i|^2 over the 196
// patches of a 224 x 224 noise image scatters by about 7% (the positional part of the patch
// vectors spans few directions, so a single Wq weighs it unevenly); over 16 seeds (and images) the
// mean is within 5% of 1 (about 3 standard errors), and no seed is off by more than 30%.
void TestInputs::imageQueriesAndKeysHaveUnitScaledNorm()
{
    constexpr int seeds = 16;
    double sumQ = 0;
    double sumK = 0;
    for (int seed = 0; seed < seeds; ++seed) {
        InputSpec spec;
        spec.kind = InputKind::Image;
        spec.seed = std::uint64_t(seed);
        const ImagePixels image = noiseImage(224, 224, std::uint32_t(7 + seed));
        const AttentionInput input = buildInput(spec, &image);
        QCOMPARE(input.length(), Eigen::Index(196));
        const double q = meanScaledSquaredNorm(input.heads.front().q);
        const double k = meanScaledSquaredNorm(input.heads.front().k);
        QVERIFY2(std::abs(q - 1) < 0.3 && std::abs(k - 1) < 0.3,
                 qPrintable(QStringLiteral("seed %1: mean s|q|^2 = %2, s|k|^2 = %3")
                                .arg(seed)
                                .arg(q)
                                .arg(k)));
        sumQ += q;
        sumK += k;
    }
    const double q = sumQ / seeds;
    const double k = sumK / seeds;
    QVERIFY2(std::abs(q - 1) < 0.05, qPrintable(QStringLiteral("mean s|q|^2 = %1").arg(q)));
    QVERIFY2(std::abs(k - 1) < 0.05, qPrintable(QStringLiteral("mean s|k|^2 = %1").arg(k)));
}

// Property: an image smaller than one patch in either direction is an InputError.
void TestInputs::imageSmallerThanAPatchIsRefused_data()
{
    QTest::addColumn<int>("width");
    QTest::addColumn<int>("height");
    QTest::newRow("10 x 10") << 10 << 10;
    QTest::newRow("64 x 15") << 64 << 15;
    QTest::newRow("15 x 64") << 15 << 64;
}

void TestInputs::imageSmallerThanAPatchIsRefused()
{
    QFETCH(int, width);
    QFETCH(int, height);
    InputSpec spec;
    spec.kind = InputKind::Image;
    spec.patchSize = 16;
    const ImagePixels image = noiseImage(width, height);
    QVERIFY(!thrownMessage<InputError>([&] { buildInput(spec, &image); }).isEmpty());
}

// Property: image input without pixels (no buffer, or an empty one) is an InputError.
void TestInputs::imageInputWithoutPixelsIsRefused()
{
    InputSpec spec;
    spec.kind = InputKind::Image;
    QVERIFY(!thrownMessage<InputError>([&] { buildInput(spec, nullptr); }).isEmpty());
    const ImagePixels empty;
    QVERIFY(!thrownMessage<InputError>([&] { buildInput(spec, &empty); }).isEmpty());
}

// ---------------------------------------------------------------------------------------------
// loadImagePixels

// Property: a PNG is decoded and scaled so that its longest side has the requested length, the
// other side in proportion (to within one pixel of rounding); values are in [0, 1] and a solid
// colour (255, 128, 0) is preserved at every pixel.
void TestInputs::loadedImageIsScaledWithAspectKept_data()
{
    QTest::addColumn<int>("width");
    QTest::addColumn<int>("height");
    QTest::addColumn<int>("longest");
    QTest::newRow("64 x 48 up to 224") << 64 << 48 << 224;
    QTest::newRow("48 x 64 down to 32") << 48 << 64 << 32;
    QTest::newRow("100 x 100 down to 50") << 100 << 100 << 50;
    QTest::newRow("300 x 100 down to 90") << 300 << 100 << 90;
    QTest::newRow("1 x 1 up to 16") << 1 << 1 << 16;
}

void TestInputs::loadedImageIsScaledWithAspectKept()
{
    QFETCH(int, width);
    QFETCH(int, height);
    QFETCH(int, longest);
    QImage source(width, height, QImage::Format_RGB32);
    source.fill(QColor(255, 128, 0));
    const QString path = m_dir.filePath(QStringLiteral("solid_%1x%2.png").arg(width).arg(height));
    QVERIFY(source.save(path, "PNG"));

    const ImagePixels pixels = loadImagePixels(path, longest);
    const double expectedWidth = width >= height ? longest : double(longest) * width / height;
    const double expectedHeight = height >= width ? longest : double(longest) * height / width;
    QCOMPARE(std::max(pixels.width, pixels.height), longest);
    QVERIFY2(std::abs(pixels.width - expectedWidth) <= 1.0,
             qPrintable(QString::number(pixels.width)));
    QVERIFY2(std::abs(pixels.height - expectedHeight) <= 1.0,
             qPrintable(QString::number(pixels.height)));
    QCOMPARE(pixels.rgb.size(), std::size_t(pixels.width) * pixels.height * 3);
    const float expected[3] = {1.0f, 128.0f / 255.0f, 0.0f};
    for (std::size_t i = 0; i < pixels.rgb.size(); ++i) {
        const float value = pixels.rgb[i];
        QVERIFY(value >= 0.0f && value <= 1.0f);
        QVERIFY2(std::abs(value - expected[i % 3]) <= 0.5f / 255.0f,
                 qPrintable(QStringLiteral("value %1 is %2").arg(i).arg(value)));
    }
}

// Property: a file that is not a readable image (missing, empty, random bytes named .png, a PNG
// cut in half) is an InputError whose message names the file.
void TestInputs::unreadableImageIsRefusedNamingTheFile_data()
{
    QTest::addColumn<QString>("name");
    QTest::addColumn<QString>("kind");
    QTest::newRow("missing") << "missing.png" << "missing";
    QTest::newRow("empty") << "empty.png" << "empty";
    QTest::newRow("random bytes") << "noise.png" << "random";
    QTest::newRow("truncated PNG") << "truncated.png" << "truncated";
    QTest::newRow("directory") << "folder.png" << "directory";
}

void TestInputs::unreadableImageIsRefusedNamingTheFile()
{
    QFETCH(QString, name);
    QFETCH(QString, kind);
    const QString path = m_dir.filePath(name);
    if (kind == QLatin1String("empty")) {
        writeTemp(name, QByteArray());
    } else if (kind == QLatin1String("random")) {
        QByteArray bytes;
        std::uint32_t state = 12345;
        for (int i = 0; i < 4096; ++i) {
            state = state * 1664525u + 1013904223u;
            bytes.append(char(state >> 24));
        }
        writeTemp(name, bytes);
    } else if (kind == QLatin1String("truncated")) {
        // Noise does not compress, so half of the file cuts deep into the pixel data.
        QImage noise(128, 128, QImage::Format_RGB32);
        std::uint32_t state = 99;
        for (int y = 0; y < noise.height(); ++y) {
            for (int x = 0; x < noise.width(); ++x) {
                state = state * 1664525u + 1013904223u;
                noise.setPixel(x, y, 0xFF000000u | (state >> 8));
            }
        }
        const QString whole = m_dir.filePath(QStringLiteral("whole.png"));
        QVERIFY(noise.save(whole, "PNG"));
        QFile file(whole);
        QVERIFY(file.open(QIODevice::ReadOnly));
        const QByteArray bytes = file.readAll();
        QVERIFY(bytes.size() > 20000);
        writeTemp(name, bytes.left(bytes.size() / 2));
    } else if (kind == QLatin1String("directory")) {
        QVERIFY(QDir(m_dir.path()).mkpath(name));
    }
    const QString message = thrownMessage<InputError>([&] { loadImagePixels(path, 64); });
    QVERIFY2(message.contains(path), qPrintable(message));
}

// Property: a PNG whose header declares more pixels than kMaxImagePixels (100 million) is refused
// from its header, quickly and without decoding (the files hold one row of data). 12000 x 9000 is
// 108 million pixels: over the limit, but under Qt's 512 MiB allocation limit, so only the
// declared-size check refuses it.
void TestInputs::hugeDeclaredImageIsRefusedWithoutDecoding_data()
{
    QTest::addColumn<quint32>("width");
    QTest::addColumn<quint32>("height");
    QTest::newRow("30000 x 30000") << 30000u << 30000u;
    QTest::newRow("12000 x 9000") << 12000u << 9000u;
}

void TestInputs::hugeDeclaredImageIsRefusedWithoutDecoding()
{
    QFETCH(quint32, width);
    QFETCH(quint32, height);
    // The file name holds no digits, so the message can name the size only from the header.
    const QString path = writeTemp(width == height ? QStringLiteral("huge_square.png")
                                                   : QStringLiteral("huge_wide.png"),
                                   pngDeclaring(width, height));
    QElapsedTimer timer;
    timer.start();
    const QString message = thrownMessage<InputError>([&] { loadImagePixels(path, 224); });
    const qint64 elapsed = timer.elapsed();
    QVERIFY2(message.contains(path), qPrintable(message));
    QVERIFY2(message.contains(QString::number(width)), qPrintable(message));
    QVERIFY2(elapsed < 3000, qPrintable(QStringLiteral("%1 ms").arg(elapsed)));
}

// ---------------------------------------------------------------------------------------------
// .npy file input

// Property: 2-D Q and K (L x d) give one head holding exactly the stored values, the labels are
// the indices, and a value file of another width d_v is used as V.
void TestInputs::twoDimensionalFilesGiveOneHead()
{
    InputSpec spec;
    spec.kind = InputKind::Files;
    const auto qValue = [](qint64 p) { return double(p) / 7.0 - 1.0; };
    const auto kValue = [](qint64 p) { return std::sin(double(p)); };
    const auto vValue = [](qint64 p) { return double(p * p) / 3.0; };
    spec.queryPath = saveArray(QStringLiteral("q2.npy"), {5, 3}, qValue);
    spec.keyPath = saveArray(QStringLiteral("k2.npy"), {5, 3}, kValue);
    spec.valuePath = saveArray(QStringLiteral("v2.npy"), {5, 2}, vValue);
    const AttentionInput input = buildInput(spec);
    QCOMPARE(input.heads.size(), std::size_t(1));
    QCOMPARE(input.labels, (QStringList{"0", "1", "2", "3", "4"}));
    const HeadTensors& head = input.heads.front();
    QCOMPARE(head.q.rows(), Eigen::Index(5));
    QCOMPARE(head.q.cols(), Eigen::Index(3));
    QCOMPARE(head.v.cols(), Eigen::Index(2));
    for (int i = 0; i < 5; ++i) {
        for (int j = 0; j < 3; ++j) {
            QCOMPARE(head.q(i, j), qValue(i * 3 + j));
            QCOMPARE(head.k(i, j), kValue(i * 3 + j));
        }
        for (int j = 0; j < 2; ++j)
            QCOMPARE(head.v(i, j), vValue(i * 2 + j));
    }
}

// Property: 3-D arrays (H x L x d) give H heads, head h holding slice [h, :, :].
void TestInputs::threeDimensionalFilesGiveOneHeadPerSlice()
{
    InputSpec spec;
    spec.kind = InputKind::Files;
    // Element (h, i, j) holds 100 h + 10 i + j (+ 0.5 in K), so any mix-up of axes shows.
    const auto qValue = [](qint64 p) { return double(100 * (p / 12) + 10 * (p % 12 / 3) + p % 3); };
    const auto kValue = [&](qint64 p) { return qValue(p) + 0.5; };
    spec.queryPath = saveArray(QStringLiteral("q3.npy"), {2, 4, 3}, qValue);
    spec.keyPath = saveArray(QStringLiteral("k3.npy"), {2, 4, 3}, kValue);
    const AttentionInput input = buildInput(spec);
    QCOMPARE(input.heads.size(), std::size_t(2));
    QCOMPARE(input.length(), Eigen::Index(4));
    QCOMPARE(input.headDim(), Eigen::Index(3));
    for (int h = 0; h < 2; ++h) {
        for (int i = 0; i < 4; ++i) {
            for (int j = 0; j < 3; ++j) {
                QCOMPARE(input.heads[h].q(i, j), double(100 * h + 10 * i + j));
                QCOMPARE(input.heads[h].k(i, j), double(100 * h + 10 * i + j) + 0.5);
            }
        }
    }
}

// Property: without a value file, V equals K (for 2-D and 3-D files).
void TestInputs::valuesDefaultToKeys()
{
    InputSpec spec;
    spec.kind = InputKind::Files;
    for (const std::vector<qint64>& shape : {std::vector<qint64>{6, 4}, {3, 6, 4}}) {
        spec.queryPath = saveArray(QStringLiteral("qd.npy"), shape,
                                   [](qint64 p) { return std::cos(double(p)); });
        spec.keyPath = saveArray(QStringLiteral("kd.npy"), shape,
                                 [](qint64 p) { return std::sin(1.5 * double(p)); });
        const AttentionInput input = buildInput(spec);
        QCOMPARE(input.heads.size(), std::size_t(shape.size() == 3 ? 3 : 1));
        for (const HeadTensors& head : input.heads)
            QVERIFY(sameBits(head.v, head.k));
    }
}

// Property: inconsistent or unusable files are an InputError whose message names every file at
// fault: Q and K of different shapes (width, length or heads), V with another length or number
// of heads than K, a 1-D array, NaN or infinity in a file, a missing file.
void TestInputs::inconsistentFilesAreRefusedNamingThem_data()
{
    using Shape = std::vector<qint64>;
    QTest::addColumn<Shape>("qShape");
    QTest::addColumn<Shape>("kShape");
    QTest::addColumn<Shape>("vShape");  // empty: no value file
    QTest::addColumn<QString>("poison");  // "q-nan", "k-inf", "q-missing" or ""
    QTest::addColumn<QStringList>("named");  // which of "q", "k", "v" the message must name
    QTest::newRow("d differs")
        << Shape{5, 3} << Shape{5, 4} << Shape{} << "" << QStringList{"q", "k"};
    QTest::newRow("L differs")
        << Shape{5, 3} << Shape{6, 3} << Shape{} << "" << QStringList{"q", "k"};
    QTest::newRow("heads differ")
        << Shape{2, 5, 3} << Shape{5, 3} << Shape{} << "" << QStringList{"q", "k"};
    QTest::newRow("V length differs")
        << Shape{5, 3} << Shape{5, 3} << Shape{4, 3} << "" << QStringList{"v"};
    QTest::newRow("V heads differ")
        << Shape{5, 3} << Shape{5, 3} << Shape{2, 5, 3} << "" << QStringList{"v"};
    QTest::newRow("1-D queries") << Shape{15} << Shape{5, 3} << Shape{} << "" << QStringList{"q"};
    QTest::newRow("1-D values")
        << Shape{5, 3} << Shape{5, 3} << Shape{15} << "" << QStringList{"v"};
    QTest::newRow("NaN in Q")
        << Shape{5, 3} << Shape{5, 3} << Shape{} << "q-nan" << QStringList{"q"};
    QTest::newRow("inf in K")
        << Shape{5, 3} << Shape{5, 3} << Shape{} << "k-inf" << QStringList{"k"};
    QTest::newRow("missing Q")
        << Shape{5, 3} << Shape{5, 3} << Shape{} << "q-missing" << QStringList{"q"};
}

void TestInputs::inconsistentFilesAreRefusedNamingThem()
{
    using Shape = std::vector<qint64>;
    QFETCH(Shape, qShape);
    QFETCH(Shape, kShape);
    QFETCH(Shape, vShape);
    QFETCH(QString, poison);
    QFETCH(QStringList, named);
    const QString tag = QString::fromLatin1(QTest::currentDataTag()).replace(QLatin1Char(' '), '_');
    InputSpec spec;
    spec.kind = InputKind::Files;
    spec.queryPath = saveArray(tag + "_q.npy", qShape, [&](qint64 p) {
        return poison == QLatin1String("q-nan") && p == 4 ? std::numeric_limits<double>::quiet_NaN()
                                                          : double(p) / 10.0;
    });
    spec.keyPath = saveArray(tag + "_k.npy", kShape, [&](qint64 p) {
        return poison == QLatin1String("k-inf") && p == 2 ? std::numeric_limits<double>::infinity()
                                                          : double(p) / 20.0;
    });
    if (!vShape.empty())
        spec.valuePath = saveArray(tag + "_v.npy", vShape, [](qint64 p) { return double(p); });
    if (poison == QLatin1String("q-missing")) {
        QVERIFY(QFile::remove(spec.queryPath));
    }
    const QString message = thrownMessage<InputError>([&] { buildInput(spec); });
    QVERIFY2(!message.isEmpty(), "no InputError");
    const QString paths[3] = {spec.queryPath, spec.keyPath, spec.valuePath};
    const char* const names[3] = {"q", "k", "v"};
    for (int i = 0; i < 3; ++i) {
        if (named.contains(QLatin1String(names[i]))) {
            QVERIFY2(message.contains(paths[i]),
                     qPrintable(QStringLiteral("%1 does not name %2").arg(message, paths[i])));
        }
    }
}

QTEST_GUILESS_MAIN(TestInputs)
#include "test_inputs.moc"
