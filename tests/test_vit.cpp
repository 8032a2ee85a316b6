// The ViT (core/model/vit_model, core/model/image_preprocessing) and its place in the model input:
// - on two tiny checkpoints (tests/data/models/make_vit_fixtures.py: an independent float64
//   PyTorch ViT and ViTImageProcessor), the preprocessed pixels of the fixture's PNG, every
//   layer's Q, K, V, the attention formed from them and the logits equal the reference; so do the
//   channel conversions (a colour image into a 1-channel model, a grayscale one into 3);
// - config.json and preprocessor_config.json are read in both of their forms, and the damaged
//   checkpoints of a catalogue are refused with InputError naming the file and what is wrong;
// - the head-replacement hook runs unmasked; the model input gives [CLS] and the patches with
//   their grid; the downstream comparison compares classes;
// - the attention rollout over both layers equals the product of the reference attention's
//   (head mean + I) / 2, formed here; the approximation's rollout stays row-stochastic;
// - the built-in ViT classifies its shipped samples as the training script did.

#include "errors.h"
#include "attention/approximation.h"
#include "attention/exact_attention.h"
#include "parallel.h"
#include "ui/images/image_loader.h"
#include "inputs/model_input.h"
#include "model/vit_model.h"
#include "model_support.h"
#include "sweeps/downstream.h"
#include "sweeps/rollout.h"

#include <QJsonArray>
#include <QTemporaryDir>
#include <QTest>

#include <cmath>
#include <tuple>

using namespace attnlab;
using namespace attnlab::test;

namespace {

const QString kRgb = QStringLiteral("tiny-vit-rgb-f32");
const QString kGray = QStringLiteral("tiny-vit-gray-f16");

// Float tolerance against the float64 reference, relative to the largest reference value of the
// array compared (pixels reach about 2.5, logits about 4): the C++ pass runs in float (unit
// roundoff u = 6e-8) through the resize (sums of at most 8 products), the patch embedding (48
// products), two layers of sums of at most 32 products, LayerNorms and a softmax; its errors
// measure below 1e-6 of that scale. 1e-5 still fails for mistakes such as GELU's tanh form instead
// of its erf form (about 1e-4 here), a causal mask, the patches in column order, PIL's filter
// without its antialiasing, or luma weights rounded as PIL's 8-bit conversion does.
constexpr double kTolerance = 1e-5;

QString fixturePath(const QString& fixture)
{
    return kModelFixtures + QLatin1Char('/') + fixture;
}

// The fixture's image as the model reads it.
PixelTensor fixturePixels(const VitModel& model, const QString& imageFixture)
{
    const QString image = fixturePath(imageFixture) + QStringLiteral("/image.png");
    return model.preprocess(loadImagePixels(image, 0), image);
}

// The message of loading the ViT in folder (through the model cache, which reads model_type), or
// of preprocessing and running it on image.png.
QString loadMessage(const QString& folder)
{
    return thrownMessage<InputError>([&] {
        const auto model = loadVitModel(folder);
        model->forward(fixturePixels(*model, kRgb));
    });
}

// A row of --samples: training/fashion_vit/samples.csv.
struct Sample {
    QString file;
    int label = 0;
    int predicted = 0;  // by the training script's PyTorch model
};

std::vector<Sample> shippedSamples()
{
    QFile file(QStringLiteral(ATTNLAB_TEST_DATA "/../../training/fashion_vit/samples.csv"));
    if (!file.open(QIODevice::ReadOnly))
        qFatal("cannot read training/fashion_vit/samples.csv");
    std::vector<Sample> samples;
    const QStringList lines = QString::fromUtf8(file.readAll()).split('\n', Qt::SkipEmptyParts);
    for (const QString& line : lines.mid(1)) {
        const QStringList fields = line.split(',');
        samples.push_back({fields[0], fields[2].toInt(), fields[3].toInt()});
    }
    return samples;
}

}  // namespace

class TestVit : public QObject {
    Q_OBJECT

private slots:
    void forwardMatchesReference_data();
    void forwardMatchesReference();
    void channelConversions_data();
    void channelConversions();
    void resizeKeepsWhatItShould();
    void readsConfigForms();
    void damagedCheckpoint_data();
    void damagedCheckpoint();
    void imagesTheModelCannotRead();
    void replacedLayerIsUnmasked();
    void modelInputOfAnImage();
    void downstreamComparesClasses();
    void downstreamNystromPastTheTokensRunsAsAtTheTokens();
    void rolloutMultipliesTheLayersMixing();
    void builtinClassifiesItsSamples();
};

void TestVit::forwardMatchesReference_data()
{
    QTest::addColumn<QString>("fixture");
    QTest::newRow("F32, vit. prefix, RGB, classifier") << kRgb;
    QTest::newRow("F16, no prefix, grayscale, pooler, no qkv bias") << kGray;
}

// The preprocessed pixels, Q, K, V of every layer and head, the attention P = softmax(Q K^T /
// sqrt(d)) formed from them and the logits all equal the reference within kTolerance.
void TestVit::forwardMatchesReference()
{
    QFETCH(QString, fixture);
    const auto model = VitModel::load(fixturePath(fixture));
    const VitConfig& config = model->config();

    const PixelTensor pixels = fixturePixels(*model, fixture);
    const NpyArray expectedPixels = reference(fixture, QStringLiteral("pixels.npy"));
    QCOMPARE(expectedPixels.shape,
             (std::vector<qint64>{pixels.channels, pixels.height, pixels.width}));
    double error = scaledError(expectedPixels, [&](qint64 i) { return pixels.values[i]; });
    QVERIFY2(error <= kTolerance, qPrintable(QStringLiteral("pixels: error %1").arg(error)));

    const ForwardResult result = model->forward(pixels);
    const QString mismatch = capturedLayersMismatch(
        fixture, result.layers, std::size_t(config.layers), config.heads, false, kTolerance);
    QVERIFY2(mismatch.isEmpty(), qPrintable(mismatch));
    if (fixture == kGray) {  // ViTModel: no classifier, no logits
        QVERIFY(model->classNames().isEmpty());
        QCOMPARE(result.logits.size(), Eigen::Index(0));
        return;
    }
    const NpyArray logits = reference(fixture, QStringLiteral("logits.npy"));
    QCOMPARE(result.logits.rows(), Eigen::Index(1));
    QCOMPARE(result.logits.cols(), Eigen::Index(logits.values.size()));
    error = scaledError(logits, [&](qint64 i) { return result.logits(0, i); });
    QVERIFY2(error <= kTolerance, qPrintable(QStringLiteral("logits: error %1").arg(error)));
}

void TestVit::channelConversions_data()
{
    QTest::addColumn<QString>("fixture");
    QTest::addColumn<QString>("imageFixture");
    QTest::newRow("grayscale image, 3-channel model: repeated") << kRgb << kGray;
    QTest::newRow("colour image, 1-channel model: luma") << kGray << kRgb;
}

// The other fixture's image, converted to the model's channels, resized and normalised, equals
// the reference's pixels_other_image.npy.
void TestVit::channelConversions()
{
    QFETCH(QString, fixture);
    QFETCH(QString, imageFixture);
    const auto model = VitModel::load(fixturePath(fixture));
    const PixelTensor pixels = fixturePixels(*model, imageFixture);
    const double error = scaledError(reference(fixture, QStringLiteral("pixels_other_image.npy")),
                                     [&](qint64 i) { return pixels.values[i]; });
    QVERIFY2(error <= kTolerance, qPrintable(QString::number(error)));
}

// PIL's bilinear filter keeps a plane of the output's size as it is, a constant plane constant
// (its weights sum to 1, at the borders too), and a ramp along x in every row when enlarging
// (the triangle filter reproduces linear functions away from the borders).
void TestVit::resizeKeepsWhatItShould()
{
    std::vector<float> plane(7 * 5);
    for (std::size_t i = 0; i < plane.size(); ++i)
        plane[i] = float((i * 37) % 11);
    QCOMPARE(resizeBilinear(plane, 5, 7, 5, 7), plane);
    for (const auto& [height, width] : {std::pair{3, 11}, std::pair{13, 2}, std::pair{1, 1}}) {
        const std::vector<float> constant =
            resizeBilinear(std::vector<float>(7 * 5, 42.0f), 5, 7, height, width);
        for (const float value : constant)
            QVERIFY(std::abs(value - 42.0f) < 1e-4f);
    }
    std::vector<float> ramp(4 * 6);
    for (int y = 0; y < 4; ++y)
        for (int x = 0; x < 6; ++x)
            ramp[std::size_t(y * 6 + x)] = float(10 * x);
    const std::vector<float> wide = resizeBilinear(ramp, 4, 6, 4, 12);  // scale 1/2
    for (int x = 1; x < 11; ++x)  // output x sits at input (x + 1/2) / 2 - 1/2
        QVERIFY(std::abs(wide[std::size_t(x)] - 10.0f * ((x + 0.5f) / 2 - 0.5f)) < 1e-4f);
}

// Both fixtures' config.json and preprocessor_config.json, in their two forms: image_size and
// patch_size as numbers or [height, width] lists; size as {"height", "width"} or one number;
// layer_norm_eps and qkv_bias read or defaulted; id2label in id order.
void TestVit::readsConfigForms()
{
    const VitConfig rgb = VitConfig::fromJson(fixturePath(kRgb) + QStringLiteral("/config.json"));
    QCOMPARE(std::tie(rgb.layers, rgb.heads, rgb.width, rgb.innerWidth, rgb.channels),
             std::make_tuple(2, 2, 16, 32, 3));
    QCOMPARE(std::tie(rgb.imageHeight, rgb.imageWidth, rgb.patchHeight, rgb.patchWidth),
             std::make_tuple(16, 16, 4, 4));
    QCOMPARE(rgb.tokenCount(), 17);
    QCOMPARE(rgb.layerNormEpsilon, 1e-12);
    QVERIFY(rgb.qkvBias);
    QCOMPARE(rgb.classNames, (QStringList{"ankle", "boot", "coat", "dress", "shirt"}));
    const VitConfig gray = VitConfig::fromJson(fixturePath(kGray) + QStringLiteral("/config.json"));
    QCOMPARE(std::tie(gray.heads, gray.width, gray.channels, gray.imageHeight),
             std::make_tuple(3, 12, 1, 12));
    QCOMPARE(gray.tokenCount(), 10);
    QCOMPARE(gray.layerNormEpsilon, 1e-12);  // absent: Hugging Face's default
    QVERIFY(!gray.qkvBias);
    QVERIFY(gray.classNames.isEmpty());

    const ImagePreprocessing rgbPre = ImagePreprocessing::fromJson(
        fixturePath(kRgb) + QStringLiteral("/preprocessor_config.json"), 3);
    QCOMPARE(std::tie(rgbPre.height, rgbPre.width), std::make_tuple(16, 16));
    QCOMPARE(rgbPre.mean, (std::vector<double>{0.485, 0.456, 0.406}));
    QCOMPARE(rgbPre.std, (std::vector<double>{0.229, 0.224, 0.225}));
    const ImagePreprocessing grayPre = ImagePreprocessing::fromJson(
        fixturePath(kGray) + QStringLiteral("/preprocessor_config.json"), 1);
    QCOMPARE(std::tie(grayPre.height, grayPre.width), std::make_tuple(12, 12));  // "size": 12
    QCOMPARE(grayPre.mean, std::vector<double>{0.45});

    // [height, width] lists, a non-square image and one number for every channel's mean.
    QTemporaryDir dir;
    copyFixture(kRgb, dir.path());
    editConfig(dir.path(), [](QJsonObject& c) {
        c.insert("image_size", QJsonArray{16, 12});
        c.insert("patch_size", QJsonArray{4, 3});
    });
    editJson(dir.filePath("preprocessor_config.json"), [](QJsonObject& p) {
        p.insert("size", QJsonObject{{"height", 16}, {"width", 12}});
        p.insert("image_mean", 0.5);
    });
    const VitConfig lists = VitConfig::fromJson(dir.filePath("config.json"));
    QCOMPARE(std::tie(lists.imageHeight, lists.imageWidth, lists.patchHeight, lists.patchWidth),
             std::make_tuple(16, 12, 4, 3));
    QCOMPARE(lists.tokenCount(), 17);
    QCOMPARE(ImagePreprocessing::fromJson(dir.filePath("preprocessor_config.json"), 3).mean,
             (std::vector<double>{0.5, 0.5, 0.5}));
}

void TestVit::damagedCheckpoint_data()
{
    QTest::addColumn<QString>("damage");
    QTest::addColumn<QString>("file");  // the file the message starts with ("" = the folder)
    QTest::addColumn<QString>("expected");
    const auto row = [](const char* name, const char* damage, const char* file,
                        const char* expected) {
        QTest::newRow(name) << QString::fromLatin1(damage) << QString::fromLatin1(file)
                            << QString::fromLatin1(expected);
    };
    row("config: no num_attention_heads", "config drop num_attention_heads", "config.json",
        "num_attention_heads is missing");
    row("config: hidden 16, 3 heads", "config num_attention_heads 3", "config.json",
        "not a multiple");
    row("config: 4 channels", "config num_channels 4", "config.json", "1 (grayscale) or 3");
    row("config: patch larger than image", "config patch_size 32", "config.json", "larger");
    row("config: relu", "config hidden_act relu", "config.json", "erf");
    row("config: 4 billion patches", "config image_size 65536 patch_size 1", "config.json",
        "4294967296 patches");
    row("config: id2label with a gap", "config id2label gap", "config.json", "id2label");
    row("config: image_size 20 (positions for 16)", "config image_size 20",
        "preprocessor_config.json", "image_size is 20 x 20");
    row("config: image_size 20 and the preprocessor's", "config+size 20", "model.safetensors",
        "vit.embeddings.position_embeddings has shape [1, 17, 16], expected [1, 26, 16]");
    row("preprocessor: missing", "remove preprocessor_config.json", "preprocessor_config.json",
        "no such file");
    row("preprocessor: bicubic", "preprocessor resample 3", "preprocessor_config.json", "bilinear");
    row("preprocessor: center crop", "preprocessor do_center_crop true", "preprocessor_config.json",
        "do_center_crop");
    row("preprocessor: two means for three channels", "preprocessor image_mean 2",
        "preprocessor_config.json", "image_mean");
    row("preprocessor: a zero std", "preprocessor image_std 0", "preprocessor_config.json",
        "positive numbers");
    row("preprocessor: shortest_edge", "preprocessor size shortest_edge",
        "preprocessor_config.json", "height is missing");
    row("weights: no key weight", "drop vit.encoder.layer.1.attention.attention.key.weight",
        "model.safetensors", "vit.encoder.layer.1.attention.attention.key.weight is missing");
    row("weights: patch embedding 2-D",
        "reshape vit.embeddings.patch_embeddings.projection.weight 16 48", "model.safetensors",
        "expected [16, 3, 4, 4]");
    row("weights: 5 classes, id2label of 4", "config id2label 4", "model.safetensors",
        "classifier.weight has shape [5, 16], expected [4, 16]");
    row("weights: I32", "retype vit.layernorm.bias I32", "model.safetensors", "I32");
    row("weights: truncated", "truncate", "model.safetensors", "truncated");
    row("architecture: BERT", "config model_type bert", "config.json", "model_type is \"bert\"");
}

// Property: each damage is refused with InputError whose message starts with the file at fault
// and says what is wrong.
void TestVit::damagedCheckpoint()
{
    QFETCH(QString, damage);
    QFETCH(QString, file);
    QFETCH(QString, expected);
    QTemporaryDir dir;
    const QString folder = dir.path();
    copyFixture(kRgb, folder);
    const QString preprocessor = folder + QStringLiteral("/preprocessor_config.json");
    const QStringList words = damage.split(' ');
    if (damage == QLatin1String("config id2label gap")) {
        editConfig(folder, [](QJsonObject& c) {
            c.insert("id2label", QJsonObject{{"0", "a"}, {"1", "b"}, {"3", "d"}});
        });
    } else if (damage == QLatin1String("config id2label 4")) {
        editConfig(folder, [](QJsonObject& c) {
            c.insert("id2label", QJsonObject{{"0", "a"}, {"1", "b"}, {"2", "c"}, {"3", "d"}});
        });
    } else if (words[0] == QLatin1String("config+size")) {
        editConfig(folder, [&](QJsonObject& c) { c.insert("image_size", words[1].toInt()); });
        editJson(preprocessor, [&](QJsonObject& p) { p.insert("size", words[1].toInt()); });
    } else if (damage == QLatin1String("preprocessor size shortest_edge")) {
        editJson(preprocessor, [](QJsonObject& p) {
            p.insert("size", QJsonObject{{"shortest_edge", 16}});
        });
    } else if (damage == QLatin1String("preprocessor image_mean 2")) {
        editJson(preprocessor, [](QJsonObject& p) {
            p.insert("image_mean", QJsonArray{0.5, 0.5});
        });
    } else if (damage == QLatin1String("preprocessor image_std 0")) {
        editJson(preprocessor, [](QJsonObject& p) {
            p.insert("image_std", QJsonArray{0.2, 0.0, 0.2});
        });
    } else if (words[0] == QLatin1String("preprocessor")) {
        editJson(preprocessor, [&](QJsonObject& p) {
            p.insert(words[1], words[2] == QLatin1String("true") ? QJsonValue(true)
                                                                 : QJsonValue(words[2].toInt()));
        });
    } else if (!damageCheckpoint(folder, words)) {  // an I32 retype keeps F32's 4 bytes an element
        QFAIL(qPrintable(damage));
    }
    const QString message = loadMessage(folder);
    QVERIFY2(blames(message, folder + QLatin1Char('/') + file, expected), qPrintable(message));
}

// An image without pixels, or of the wrong size for a preprocessor that does not resize, is
// refused naming it; so is a pixel tensor that is not the model's.
void TestVit::imagesTheModelCannotRead()
{
    const auto model = VitModel::load(fixturePath(kRgb));
    QString message = thrownMessage<InputError>([&] { model->preprocess(ImagePixels(), "x.png"); });
    QVERIFY2(blames(message, "x.png: ", "no pixels"), qPrintable(message));

    ImagePreprocessing fixed = model->preprocessing();
    fixed.resize = false;
    ImagePixels image{20, 16, std::vector<float>(20 * 16 * 3, 0.5f)};
    message = thrownMessage<InputError>([&] { preprocessImage(image, fixed, 3, "y.png"); });
    QVERIFY2(blames(message, "y.png: ", "20 x 16") && message.contains("do_resize is false"),
             qPrintable(message));
    image = {16, 16, std::vector<float>(16 * 16 * 3, 0.5f)};
    QCOMPARE(preprocessImage(image, fixed, 3, "z.png").values.size(), std::size_t(3 * 16 * 16));

    PixelTensor wrong = fixturePixels(*model, kRgb);
    wrong.height = 12;
    message = thrownMessage<InputError>([&] { model->forward(wrong); });
    QVERIFY2(message.contains("3 x 16 x 16"), qPrintable(message));
}

// A replaced layer's hook receives every head's Q, K, V over [CLS] and the patches; unmasked
// softmax attention computed by hand gives the model's own logits, zeros change them.
void TestVit::replacedLayerIsUnmasked()
{
    const auto model = VitModel::load(fixturePath(kRgb));
    const PixelTensor pixels = fixturePixels(*model, kRgb);
    const ForwardResult exact = model->forward(pixels);
    ForwardOptions options;
    options.replaced = {false, true};
    int calls = 0;
    options.replacement = [&](int layer, int head, const Matrix<float>& q, const Matrix<float>& k,
                              const Matrix<float>& v) {
        ++calls;
        const int d = int(q.cols());
        if (q != exact.layers[std::size_t(layer)].q.middleCols(head * d, d) || k.rows() != 17)
            qFatal("the replacement did not receive the head's q, k, v");
        return materialisedAttention<float>(q, k, v, 1 / std::sqrt(double(d)), false).output;
    };
    const ForwardResult byHand = model->forward(pixels, options);
    QCOMPARE(calls, 2);
    const double difference = (byHand.logits - exact.logits).cwiseAbs().maxCoeff();
    QVERIFY2(difference <= 1e-5, qPrintable(QString::number(difference)));

    options.replacement = [](int, int, const Matrix<float>& q, const Matrix<float>&,
                             const Matrix<float>&) {
        return Matrix<float>::Zero(q.rows(), q.cols()).eval();
    };
    QVERIFY((model->forward(pixels, options).logits - exact.logits).cwiseAbs().maxCoeff() > 0.1);
}

// InputKind::Model serves a ViT: labels [CLS] and (row, col), the patch grid, every head of the
// layer with the reference's Q; without pixels, or as a text model, it is refused.
void TestVit::modelInputOfAnImage()
{
    InputSpec spec;
    spec.kind = InputKind::Model;
    spec.modelPath = fixturePath(kRgb);
    spec.imagePath = fixturePath(kRgb) + QStringLiteral("/image.png");
    spec.layer = 1;
    QCOMPARE(modelArchitectureOf(spec.modelPath), ModelArchitecture::Vit);
    const ImagePixels image = loadImagePixels(spec.imagePath, 0);
    const AttentionInput input = buildInput(spec, &image);
    QCOMPARE(input.heads.size(), std::size_t(2));
    QCOMPARE(input.length(), Eigen::Index(17));
    QCOMPARE(input.labels.front(), QStringLiteral("[CLS]"));
    QCOMPARE(input.labels.at(6), QStringLiteral("(1, 1)"));
    QCOMPARE(std::tie(input.gridRows, input.gridCols), std::make_tuple(4, 4));
    const NpyArray q = reference(kRgb, QStringLiteral("q_layer1.npy"));
    const double error = scaledError(q, [&](qint64 index) {
        return input.heads[std::size_t(index / (17 * 8))].q(index / 8 % 17, index % 8);
    });
    QVERIFY2(error <= kTolerance, qPrintable(QString::number(error)));

    QString message = thrownMessage<InputError>([&] { buildInput(spec, nullptr); });
    QVERIFY2(message.contains("no image pixels"), qPrintable(message));
    message = thrownMessage<InputError>([&] { loadModel(spec.modelPath); });
    QVERIFY2(message.contains("ViT") && message.contains("not text"), qPrintable(message));
    message = thrownMessage<InputError>([&] { loadVitModel(fixturePath("tiny-gpt2-f16")); });
    QVERIFY2(message.contains("GPT-2") && message.contains("not an image"), qPrintable(message));
}

// Abnar and Zuidema's rollout R = A'_1 A'_0, A'_l = (mean over heads of A_l + I) / 2, formed here
// in double from the fixture's reference attention (H x L x L per layer, the independent PyTorch
// pass), against attentionRollout of the C++ forward pass: equal to float tolerance. The order of
// the product matters (A'_0 A'_1 differs by about 6e-2 here), as does the residual half.
void TestVit::rolloutMultipliesTheLayersMixing()
{
    const auto model = VitModel::load(fixturePath(kRgb));
    const ForwardResult forward = model->forward(fixturePixels(*model, kRgb));
    ExperimentSpec spec;
    QVERIFY(spec.setMethod(QStringLiteral("exact")));
    const AttentionRollout rollout = attentionRollout(forward, model->config().heads, spec);
    QCOMPARE(rollout.layers, 2);
    QCOMPARE(rollout.approx.size(), Eigen::Index(0));

    MatrixD expected;
    for (int layer = 0; layer < 2; ++layer) {
        const NpyArray attention =
            reference(kRgb, QStringLiteral("attention_layer%1.npy").arg(layer));
        const qint64 heads = attention.shape.at(0), length = attention.shape.at(1);
        MatrixD mixing = MatrixD::Identity(length, length) / 2;
        for (qint64 h = 0; h < heads; ++h)
            for (qint64 i = 0; i < length; ++i)
                for (qint64 j = 0; j < length; ++j)
                    mixing(i, j) += attention.values[std::size_t((h * length + i) * length + j)] /
                                    double(2 * heads);
        expected = layer == 0 ? mixing : MatrixD(mixing * expected);
    }
    QCOMPARE(rollout.exact.rows(), expected.rows());
    const double error = (rollout.exact - expected).cwiseAbs().maxCoeff();
    QVERIFY2(error <= kTolerance, qPrintable(QString::number(error)));

    QVERIFY(spec.setMethod(QStringLiteral("favor-positive")));
    spec.approximation.features = 16;
    const AttentionRollout approx = attentionRollout(forward, model->config().heads, spec);
    QCOMPARE(approx.approx.rows(), expected.rows());
    QVERIFY((approx.approx.rowwise().sum().array() - 1).abs().maxCoeff() < 1e-5);
    QVERIFY((approx.approx.array() > 0).all());
    QVERIFY((approx.approx - expected).cwiseAbs().maxCoeff() > 1e-3);
}

// Exact attention plugged in agrees with the model (one class, KL 0); an approximation with few
// features on these large random weights changes the distribution; a ViT without classifier has
// no classes to compare.
void TestVit::downstreamComparesClasses()
{
    const auto model = VitModel::load(fixturePath(kRgb));
    const PixelTensor pixels = fixturePixels(*model, kRgb);
    const ForwardResult exact = model->forward(pixels);
    ExperimentSpec method;
    QVERIFY(method.setMethod(QStringLiteral("exact")));
    DownstreamComparison same = compareDownstream(*model, pixels, exact, method, {0, 1});
    QCOMPARE(same.exactTop1.size(), std::size_t(1));
    QCOMPARE(same.exactTop1.front(), 0);  // logits.npy: class 0 is the largest (4.0)
    QCOMPARE(same.top1Agreement, 1.0);
    QVERIFY(same.maxKl < 1e-9);
    QCOMPARE(same.exactTop5.front().size(), std::size_t(5));

    QVERIFY(method.setMethod(QStringLiteral("favor-positive")));
    method.approximation.features = 4;
    const DownstreamComparison approx = compareDownstream(*model, pixels, exact, method, {0});
    QVERIFY(approx.meanKl > 1e-4);
    QVERIFY(approx.relFrobeniusAttentionMean > 0.01);
    const ModelEvalRow row =
        modelEvalRow(method, std::vector<DownstreamComparison>{same, approx}, 2, 17);
    QCOMPARE(row.tokens, 17);
    QCOMPARE(row.meanKl, (same.kl.front() + approx.kl.front()) / 2);

    const auto gray = VitModel::load(fixturePath(kGray));
    const PixelTensor grayPixels = fixturePixels(*gray, kGray);
    const QString message = thrownMessage<InputError>(
        [&] { compareDownstream(*gray, grayPixels, gray->forward(grayPixels), method, {0}); });
    QVERIFY2(message.contains("no classifier"), qPrintable(message));
}

// Property: in the built-in ViT's comparison (50 tokens), Nystrom with m = 256 landmarks is
// m = 50: the same comparison, bit for bit, and the same work, on the one engine thread
// engineThreadsFor gives such a small input (the comparison ran on every hardware thread, where
// Eigen split each 50 x 50 product of the pseudo-inverse over threads that wait for one another by
// spinning: 10 s against 2 s at m = 16 in the window on a busy 2-core machine).
void TestVit::downstreamNystromPastTheTokensRunsAsAtTheTokens()
{
    const auto model = loadVitModel(QString::fromLatin1(kBuiltinVitModel));
    const int tokens = int(model->config().tokenCount());
    QCOMPARE(tokens, 50);
    const QString path = model->folder() + QStringLiteral("/samples/09-ankle-boot.png");
    const PixelTensor pixels = model->preprocess(loadImagePixels(path, 0), path);
    const ForwardResult exact = model->forward(pixels);
    ExperimentSpec method;
    QVERIFY(method.setMethod(QStringLiteral("nystrom")));
    const auto compare = [&](int m, int* threads) {
        method.approximation.features = m;
        setEngineThreads(0);
        const DownstreamComparison comparison =
            compareDownstream(*model, pixels, exact, method, {0, 1, 2, 3});
        *threads = engineThreads();
        setEngineThreads(0);
        return comparison;
    };
    int threadsAtTokens = 0, threadsPast = 0;
    const DownstreamComparison atTokens = compare(tokens, &threadsAtTokens);
    const DownstreamComparison past = compare(256, &threadsPast);
    QCOMPARE(threadsAtTokens, 1);
    QCOMPARE(threadsPast, threadsAtTokens);
    QCOMPARE(past.kl, atTokens.kl);
    QCOMPARE(past.approxTop1, atTokens.approxTop1);
    QCOMPARE(past.relFrobeniusPerLayer, atTokens.relFrobeniusPerLayer);
    QCOMPARE(sizePastLengthNote(Method::Nystrom, {16, 50, 64, 256}, tokens),
             QStringLiteral("Nystr\u00f6m takes at most L landmarks: m = 64 and 256 act as "
                            "m = L = 50, with the same result and cost."));
    QVERIFY(sizePastLengthNote(Method::Nystrom, {16, 50}, tokens).isEmpty());
}

// The built-in ViT classifies every shipped sample as training/fashion_vit/train.py's PyTorch
// model did (samples.csv), so the right class for each one the training script got right.
void TestVit::builtinClassifiesItsSamples()
{
    const auto model = loadVitModel(QString::fromLatin1(kBuiltinVitModel));
    QCOMPARE(model->classNames().size(), 10);
    const std::vector<Sample> samples = shippedSamples();
    QVERIFY(samples.size() >= 8);
    int right = 0;
    for (const Sample& sample : samples) {
        const QString path = model->folder() + QStringLiteral("/samples/") + sample.file;
        const ForwardResult result =
            model->forward(model->preprocess(loadImagePixels(path, 0), path));
        Eigen::Index predicted = 0;
        result.logits.row(0).maxCoeff(&predicted);
        QVERIFY2(predicted == sample.predicted,
                 qPrintable(QStringLiteral("%1: %2, the training script %3")
                                .arg(sample.file)
                                .arg(predicted)
                                .arg(sample.predicted)));
        right += predicted == sample.label;
    }
    QVERIFY(right >= int(samples.size()) - 2);
}

QTEST_GUILESS_MAIN(TestVit)
#include "test_vit.moc"
