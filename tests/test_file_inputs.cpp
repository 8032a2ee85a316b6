// The inputs read from files: images (patches, scaling, decoding with loadImagePixels) and .npy
// files (shapes, heads, and the errors they raise for bad or inconsistent data).

#include "inputs_support.h"

using namespace attnlab;
using namespace attnlab::test;

namespace {

// An image of width x height pixels cut into patch x patch patches, and the grid of rows x cols
// patches it gives.
struct PatchGrid {
    int width;
    int height;
    int patch;
    int rows;
    int cols;
};

}  // namespace

Q_DECLARE_METATYPE(PatchGrid)

class TestFileInputs : public InputsFixture {
    Q_OBJECT

private slots:
    void initTestCase() { QVERIFY(m_dir.isValid()); }

    void imagePatchGrid_data();
    void imagePatchGrid();
    void imageQueriesAndKeysHaveUnitScaledNorm();
    void imageSmallerThanAPatchIsRefused_data();
    void imageSmallerThanAPatchIsRefused();
    void imageInputWithoutPixelsIsRefused();
    void loadedImageIsScaledWithAspectKept_data();
    void loadedImageIsScaledWithAspectKept();
    void unreadableImageIsRefusedNamingTheFile_data();
    void unreadableImageIsRefusedNamingTheFile();
    void folderRunSkipsUnreadableImages();
    void hugeDeclaredImageIsRefusedWithoutDecoding_data();
    void hugeDeclaredImageIsRefusedWithoutDecoding();
    void twoDimensionalFilesGiveOneHead();
    void threeDimensionalFilesGiveOneHeadPerSlice();
    void valuesDefaultToKeys();
    void inconsistentFilesAreRefusedNamingThem_data();
    void inconsistentFilesAreRefusedNamingThem();
};

// ---------------------------------------------------------------------------------------------
// Image input

// Property: an image of W x H pixels with p x p patches gives a grid of floor(H / p) rows and
// floor(W / p) columns, one position per patch, labelled "(row, col)" in raster order.
void TestFileInputs::imagePatchGrid_data()
{
    QTest::addColumn<PatchGrid>("grid");
    QTest::newRow("64 x 48, p 16")
        << PatchGrid{.width = 64, .height = 48, .patch = 16, .rows = 3, .cols = 4};
    QTest::newRow("70 x 50, p 16 (remainders dropped)")
        << PatchGrid{.width = 70, .height = 50, .patch = 16, .rows = 3, .cols = 4};
    QTest::newRow("16 x 16, p 16")
        << PatchGrid{.width = 16, .height = 16, .patch = 16, .rows = 1, .cols = 1};
    QTest::newRow("30 x 90, p 10")
        << PatchGrid{.width = 30, .height = 90, .patch = 10, .rows = 9, .cols = 3};
    QTest::newRow("5 x 3, p 1") << PatchGrid{
        .width = 5, .height = 3, .patch = 1, .rows = 3, .cols = 5};
}

void TestFileInputs::imagePatchGrid()
{
    QFETCH(PatchGrid, grid);
    InputSpec spec;
    spec.kind = InputKind::Image;
    spec.patchSize = grid.patch;
    spec.headDim = 16;
    const ImagePixels image = noiseImage(grid.width, grid.height);
    const AttentionInput input = buildInput(spec, &image);
    QCOMPARE(input.gridRows, grid.rows);
    QCOMPARE(input.gridCols, grid.cols);
    QStringList labels;
    for (int r = 0; r < grid.rows; ++r)
        for (int c = 0; c < grid.cols; ++c)
            labels.append(QStringLiteral("(%1, %2)").arg(r).arg(c));
    QCOMPARE(input.labels, labels);
    QCOMPARE(input.length(), Eigen::Index(grid.rows * grid.cols));
    QCOMPARE(input.headDim(), Eigen::Index(16));
    QVERIFY(input.heads.front().q.allFinite());
    QVERIFY(input.heads.front().v.allFinite());
}

// Property (the promise of inputs.h for image input): E|q_i|^2 = E|k_i|^2 = sqrt(d), the
// expectation taken over the seeded weights too. For one seed the mean of s |q_i|^2 over the 196
// patches of a 224 x 224 noise image scatters by about 7% (the positional part of the patch
// vectors spans few directions, so a single Wq weighs it unevenly); over 16 seeds (and images) the
// mean is within 5% of 1 (about 3 standard errors), and no seed is off by more than 30%.
void TestFileInputs::imageQueriesAndKeysHaveUnitScaledNorm()
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
        QVERIFY2(
            std::abs(q - 1) < 0.3 && std::abs(k - 1) < 0.3,
            qPrintable(
                QStringLiteral("seed %1: mean s|q|^2 = %2, s|k|^2 = %3").arg(seed).arg(q).arg(k)));
        sumQ += q;
        sumK += k;
    }
    const double q = sumQ / seeds;
    const double k = sumK / seeds;
    QVERIFY2(std::abs(q - 1) < 0.05, qPrintable(QStringLiteral("mean s|q|^2 = %1").arg(q)));
    QVERIFY2(std::abs(k - 1) < 0.05, qPrintable(QStringLiteral("mean s|k|^2 = %1").arg(k)));
}

// Property: an image smaller than one patch in either direction is an InputError.
void TestFileInputs::imageSmallerThanAPatchIsRefused_data()
{
    QTest::addColumn<int>("width");
    QTest::addColumn<int>("height");
    QTest::newRow("10 x 10") << 10 << 10;
    QTest::newRow("64 x 15") << 64 << 15;
    QTest::newRow("15 x 64") << 15 << 64;
}

void TestFileInputs::imageSmallerThanAPatchIsRefused()
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
void TestFileInputs::imageInputWithoutPixelsIsRefused()
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
void TestFileInputs::loadedImageIsScaledWithAspectKept_data()
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

void TestFileInputs::loadedImageIsScaledWithAspectKept()
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
// cut in half, a folder) is an InputError whose message names the file and says "no such" only
// when nothing is there.
void TestFileInputs::unreadableImageIsRefusedNamingTheFile_data()
{
    QTest::addColumn<QString>("name");
    QTest::addColumn<QString>("kind");
    QTest::newRow("missing") << "missing.png"
                             << "missing";
    QTest::newRow("empty") << "empty.png"
                           << "empty";
    QTest::newRow("random bytes") << "noise.png"
                                  << "random";
    QTest::newRow("truncated PNG") << "truncated.png"
                                   << "truncated";
    QTest::newRow("directory") << "folder.png"
                               << "directory";
}

void TestFileInputs::unreadableImageIsRefusedNamingTheFile()
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
    // "no such" only when nothing is there; a folder is named as one.
    QCOMPARE(message.contains(QStringLiteral("no such image file")), kind == "missing");
    if (kind == QLatin1String("directory"))
        QCOMPARE(message, path + QStringLiteral(": a folder, not an image file"));
}

// Property: a run over a folder's images reads the readable ones, skips each unreadable one with a
// warning that names it, and is refused, naming the folder, only when it read none; a run over one
// image lets that image's own error through.
void TestFileInputs::folderRunSkipsUnreadableImages()
{
    QImage red(8, 8, QImage::Format_RGB32);
    red.fill(Qt::red);
    const QString good = m_dir.filePath(QStringLiteral("good.png"));
    QVERIFY(red.save(good, "PNG"));
    const QString bad = writeTemp(QStringLiteral("bad.png"), QByteArray("not a PNG"));
    const QString folder = m_dir.path();

    QStringList warnings;
    FolderImageReader reader(folder, [&](const QString& warning) { warnings.append(warning); });
    QVERIFY(!reader.read(bad));
    const std::optional<ImagePixels> read = reader.read(good);
    QVERIFY(read);
    QCOMPARE(read->width, 8);
    QCOMPARE(warnings.size(), 1);
    QVERIFY2(warnings.front().startsWith(bad) &&
                 warnings.front().endsWith(
                     QStringLiteral("; skipped, the folder's other images are read")),
             qPrintable(warnings.front()));
    reader.requireSomeRead();  // one image read: no refusal

    FolderImageReader none(folder, [](const QString&) {});
    none.requireSomeRead();  // nothing tried yet: nothing to refuse
    QVERIFY(!none.read(bad));
    QVERIFY(!none.read(m_dir.filePath(QStringLiteral("missing.png"))));
    const QString message = thrownMessage<InputError>([&] { none.requireSomeRead(); });
    QVERIFY2(message.startsWith(folder +
                                QStringLiteral(": none of the folder's image files can "
                                               "be read (2 tried; the first: ") +
                                bad),
             qPrintable(message));

    FolderImageReader single(QString(), [](const QString&) { QFAIL("a single image warned"); });
    QVERIFY(thrownMessage<InputError>([&] { single.read(bad); }).contains(bad));
}

// Property: a PNG whose header declares more pixels than kMaxImagePixels (100 million) is refused
// from its header, quickly and without decoding (the files hold one row of data). 12000 x 9000 is
// 108 million pixels: over the limit, but under Qt's 512 MiB allocation limit, so only the
// declared-size check refuses it.
void TestFileInputs::hugeDeclaredImageIsRefusedWithoutDecoding_data()
{
    QTest::addColumn<quint32>("width");
    QTest::addColumn<quint32>("height");
    QTest::newRow("30000 x 30000") << 30000u << 30000u;
    QTest::newRow("12000 x 9000") << 12000u << 9000u;
}

void TestFileInputs::hugeDeclaredImageIsRefusedWithoutDecoding()
{
    QFETCH(quint32, width);
    QFETCH(quint32, height);
    // The file name holds no digits, so the message can name the size only from the header.
    const QString path = writeTemp(
        width == height ? QStringLiteral("huge_square.png") : QStringLiteral("huge_wide.png"),
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
void TestFileInputs::twoDimensionalFilesGiveOneHead()
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
void TestFileInputs::threeDimensionalFilesGiveOneHeadPerSlice()
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
void TestFileInputs::valuesDefaultToKeys()
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
void TestFileInputs::inconsistentFilesAreRefusedNamingThem_data()
{
    using Shape = std::vector<qint64>;
    QTest::addColumn<Shape>("qShape");
    QTest::addColumn<Shape>("kShape");
    QTest::addColumn<Shape>("vShape");       // empty: no value file
    QTest::addColumn<QString>("poison");     // "q-nan", "k-inf", "q-missing" or ""
    QTest::addColumn<QStringList>("named");  // which of "q", "k", "v" the message must name
    QTest::newRow("d differs") << Shape{5, 3} << Shape{5, 4} << Shape{} << ""
                               << QStringList{"q", "k"};
    QTest::newRow("L differs") << Shape{5, 3} << Shape{6, 3} << Shape{} << ""
                               << QStringList{"q", "k"};
    QTest::newRow("heads differ") << Shape{2, 5, 3} << Shape{5, 3} << Shape{} << ""
                                  << QStringList{"q", "k"};
    QTest::newRow("V length differs")
        << Shape{5, 3} << Shape{5, 3} << Shape{4, 3} << "" << QStringList{"v"};
    QTest::newRow("V heads differ")
        << Shape{5, 3} << Shape{5, 3} << Shape{2, 5, 3} << "" << QStringList{"v"};
    QTest::newRow("1-D queries") << Shape{15} << Shape{5, 3} << Shape{} << "" << QStringList{"q"};
    QTest::newRow("1-D values") << Shape{5, 3} << Shape{5, 3} << Shape{15} << ""
                                << QStringList{"v"};
    QTest::newRow("NaN in Q") << Shape{5, 3} << Shape{5, 3} << Shape{} << "q-nan"
                              << QStringList{"q"};
    QTest::newRow("inf in K") << Shape{5, 3} << Shape{5, 3} << Shape{} << "k-inf"
                              << QStringList{"k"};
    QTest::newRow("missing Q") << Shape{5, 3} << Shape{5, 3} << Shape{} << "q-missing"
                               << QStringList{"q"};
}

void TestFileInputs::inconsistentFilesAreRefusedNamingThem()
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

QTEST_GUILESS_MAIN(TestFileInputs)
#include "test_file_inputs.moc"
