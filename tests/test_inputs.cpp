// The input layer: tokenisation, the Q, K, V that text and random inputs give (shapes, scaling,
// projections, seeds), what every input shares (the norm multiplier, refusals of bad data).

#include "cancellation.h"
#include "inputs_support.h"

using namespace attnlab;
using namespace attnlab::test;

class TestInputs : public InputsFixture {
    Q_OBJECT

private slots:
    void initTestCase() { QVERIFY(m_dir.isValid()); }

    void wordTokens_data();
    void wordTokens();
    void characterTokens_data();
    void characterTokens();
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
    void normMultiplierScalesQueriesAndKeysOnly_data();
    void normMultiplierScalesQueriesAndKeysOnly();
    void outOfRangeParametersAreRefused_data();
    void outOfRangeParametersAreRefused();
    void inputOverBudgetIsRefused_data();
    void inputOverBudgetIsRefused();
    void projectionsCountAgainstTheBudget();
    void drawingProjectionsStopsWhenCancelled();
    void randomRowsHaveTheRequestedNorm_data();
    void randomRowsHaveTheRequestedNorm();
    void clustersConcentrateRandomRows();
    void randomInputOfLengthOne();
    void randomSeedDecidesEverything();
};

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
    QTest::newRow("apostrophe") << QStringLiteral("don't stop") << QStringList{"don't", "stop"};
    QTest::newRow("typographic apostrophe")
        << QStringLiteral(u"I don\u2019t") << QStringList{"I", QStringLiteral(u"don\u2019t")};
    QTest::newRow("decimal number")
        << QStringLiteral("pi is 3.14.") << QStringList{"pi", "is", "3.14", "."};
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
    QTest::newRow("all kinds of space") << QStringLiteral(u"  a \t b\r\n\nc\u00a0d\u3000e  ")
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
        << QStringLiteral(u"cafe\u0301") << QStringList{"c", "a", "f", QStringLiteral(u"e\u0301")};
    QTest::newRow("ZWJ family") << QStringLiteral(u"\U0001F468\u200D\U0001F469\u200D\U0001F467")
                                << QStringList{QStringLiteral(
                                       u"\U0001F468\u200D\U0001F469\u200D\U0001F467")};
    QTest::newRow("two flags") << QStringLiteral(u"\U0001F1EB\U0001F1F7\U0001F1E9\U0001F1EA")
                               << QStringList{QStringLiteral(u"\U0001F1EB\U0001F1F7"),
                                              QStringLiteral(u"\U0001F1E9\U0001F1EA")};
    QTest::newRow("Hangul jamo") << QStringLiteral(u"\u1100\u1161")
                                 << QStringList{QStringLiteral(u"\u1100\u1161")};
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
    const QStringList expected =
        QStringLiteral("The cat sat on the mat because the mat was warm , and the "
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
    QTest::newRow("row norm NaN") << InputKind::Random << "rowNorm"
                                  << std::numeric_limits<double>::quiet_NaN();
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

// Property: a text input's budget holds the projections it draws, one head's W_q, W_k, W_v of
// H d x d entries each: 3 tokens of 16 heads of d = 256 need 0.4 MB of Q, K, V and X but 25 MB
// with them, refused by a 1 MB budget naming them (they were left out).
void TestInputs::projectionsCountAgainstTheBudget()
{
    InputSpec spec;
    spec.kind = InputKind::Text;
    spec.text = QStringLiteral("the cat sat");
    spec.heads = 16;
    spec.headDim = 256;
    const QString message =
        thrownMessage<ResourceError>([&] { buildInput(spec, nullptr, MemoryBudget(1 << 20)); });
    QVERIFY2(message.contains(QStringLiteral("W_q, W_k, W_v (4096 x 256)")), qPrintable(message));
    spec.projection = HeadProjection::Identity;  // draws none
    buildInput(spec, nullptr, MemoryBudget(1 << 20));
}

// Property: drawing the projections of many wide heads (seconds: 32 heads of d = 512 took 24 s)
// stops when the calling thread's work is cancelled (CancellationScope), polling between blocks
// of 256 rows: with a check that turns true at its 6th call, buildInput throws Cancelled at that
// call (the draw ran to its end before).
void TestInputs::drawingProjectionsStopsWhenCancelled()
{
    InputSpec spec;
    spec.kind = InputKind::Text;
    spec.text = QStringLiteral("the cat sat");
    spec.heads = 8;
    spec.headDim = 256;  // W_q is 2048 x 256: 8 polls
    int polls = 0;
    const CancellationScope cancellation([&polls] { return ++polls >= 6; });
    QVERIFY_THROWS_EXCEPTION(Cancelled, buildInput(spec));
    QCOMPARE(polls, 6);
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
            QVERIFY2(
                std::abs(m->row(i).norm() - expected) <= 1e-12,
                qPrintable(
                    QStringLiteral("row %1 has norm %2").arg(i).arg(m->row(i).norm(), 0, 'g', 17)));
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

QTEST_GUILESS_MAIN(TestInputs)
#include "test_inputs.moc"
