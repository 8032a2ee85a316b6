#include "inputs/inputs.h"

#include "named_values.h"
#include "errors.h"
#include "inputs/model_input.h"
#include "io/npy.h"
#include "attention/random.h"
#include "cancellation.h"

#include <cmath>

namespace attnlab {

namespace {

void validate(const InputSpec& spec)
{
    require(spec.headDim >= 1,
            QStringLiteral("the head dimension d must be at least 1 (got %1)").arg(spec.headDim));
    require(spec.heads >= 1,
            QStringLiteral("the number of heads must be at least 1 (got %1)").arg(spec.heads));
    require(std::isfinite(spec.normMultiplier) && spec.normMultiplier > 0,
            QStringLiteral("the norm multiplier must be a positive number (got %1)")
                .arg(spec.normMultiplier));
    switch (spec.kind) {
        case InputKind::Image:
            require(spec.patchSize >= 1,
                    QStringLiteral("the patch size must be at least 1 pixel (got %1)")
                        .arg(spec.patchSize));
            require(spec.imageSize >= spec.patchSize,
                    QStringLiteral("the image size (%1 pixels) must be at least one patch (%2)")
                        .arg(spec.imageSize)
                        .arg(spec.patchSize));
            break;
        case InputKind::Random:
            require(spec.length >= 1,
                    QStringLiteral("the length L must be at least 1 (got %1)").arg(spec.length));
            require(!spec.rowNorm || (std::isfinite(*spec.rowNorm) && *spec.rowNorm >= 0),
                    QStringLiteral("the row norm must be a number >= 0 (got %1)")
                        .arg(spec.rowNorm.value_or(0)));
            require(
                spec.clusters >= 0,
                QStringLiteral("the number of clusters must be >= 0 (got %1)").arg(spec.clusters));
            break;
        case InputKind::Model:
            require(spec.layer >= 0,
                    QStringLiteral("the layer must be 0 or more (got %1)").arg(spec.layer));
            require(!spec.modelPath.isEmpty(),
                    QStringLiteral("model input needs a model (a folder, or \"builtin\")"));
            break;
        case InputKind::Text:
        case InputKind::Files: break;
    }
}

// The memory Q, K, V of every head (and X) take, with the projections a `projected` input draws,
// checked before they are allocated.
void requireTensorMemory(double length, const InputSpec& spec, const MemoryBudget& budget,
                         bool projected)
{
    const double dModel = double(spec.heads) * spec.headDim;
    // A projected input also holds one head's W_q, W_k, W_v (H d x d each) while it draws them.
    const double weights =
        projected && spec.projection != HeadProjection::Identity ? 3.0 * dModel * spec.headDim : 0;
    const double bytes = 8.0 * (length * (dModel + 3.0 * dModel) + weights);
    budget.require(bytes,
                   QStringLiteral("Q, K and V for %1 positions%2")
                       .arg(length)
                       .arg(weights > 0 ? QStringLiteral(", with a head's W_q, W_k, W_v (%1 x %2)")
                                              .arg(dModel)
                                              .arg(spec.headDim)
                                        : QString()),
                   QStringLiteral("Use fewer tokens or a smaller d, or raise the memory budget."));
}

// Sinusoidal encoding of `position` in `dims` dimensions (Vaswani et al.):
// PE_{2i} = sin(position / 10000^{2i/dims}), PE_{2i+1} = cos(...), scaled by sqrt(2 / dims) so
// that the row has norm about 1.
void addSinusoidalEncoding(double position, Eigen::Ref<VectorD> row, double weight)
{
    const Eigen::Index dims = row.size();
    const double norm = weight * std::sqrt(2.0 / double(dims));
    for (Eigen::Index i = 0; i < dims; i += 2) {
        const double angle = position / std::pow(10000.0, double(i) / double(dims));
        row[i] += norm * std::sin(angle);
        if (i + 1 < dims)
            row[i + 1] += norm * std::cos(angle);
    }
}

// A seeded matrix of independent N(0, variance) entries. Drawing the projections of many wide
// heads takes seconds (3 H (H d) d entries: 32 heads of d = 512 took 24 s), so the draw stops
// between blocks of rows when its caller is cancelled (throwIfCancelled).
MatrixD gaussianMatrix(Eigen::Index rows, Eigen::Index cols, double variance, std::uint64_t seed,
                       RandomStream stream, std::uint64_t substream)
{
    Rng rng(seed, stream, substream);
    const double sd = std::sqrt(variance);
    MatrixD m(rows, cols);
    for (Eigen::Index i = 0; i < rows; ++i) {
        if (i % 256 == 0)
            throwIfCancelled();
        for (Eigen::Index j = 0; j < cols; ++j)
            m(i, j) = sd * rng.normal();
    }
    return m;
}

// Per head Q, K, V from the position vectors X (L x H d, E|x_i|^2 about 1). Q and K are scaled by
// d^(1/4) so that E|x'|^2 = s E|q|^2 = 1 at s = 1/sqrt(d).
std::vector<HeadTensors> projectHeads(const MatrixD& x, const InputSpec& spec)
{
    const int d = spec.headDim;
    const double queryKeyScale = std::pow(double(d), 0.25);
    std::vector<HeadTensors> heads(spec.heads);
    for (int h = 0; h < spec.heads; ++h) {
        HeadTensors& head = heads[h];
        if (spec.projection == HeadProjection::Identity) {
            head.v = x.middleCols(Eigen::Index(h) * d, d) * std::sqrt(double(spec.heads));
            head.q = head.v * queryKeyScale;
            head.k = head.q;
            continue;
        }
        // N(0, 1/d) weights keep E|q|^2 = E|x|^2.
        const double variance = 1.0 / d;
        const MatrixD wq =
            gaussianMatrix(x.cols(), d, variance, spec.seed, RandomStream::QueryWeights, h);
        const MatrixD wk =
            spec.projection == HeadProjection::Tied
                ? wq
                : gaussianMatrix(x.cols(), d, variance, spec.seed, RandomStream::KeyWeights, h);
        const MatrixD wv =
            gaussianMatrix(x.cols(), d, variance, spec.seed, RandomStream::ValueWeights, h);
        head.q = (x * wq) * queryKeyScale;
        head.k = (x * wk) * queryKeyScale;
        head.v = x * wv;
    }
    return heads;
}

AttentionInput textInput(const InputSpec& spec, const MemoryBudget& budget)
{
    AttentionInput input;
    input.labels = tokenize(spec.text, spec.tokenMode);
    require(!input.labels.isEmpty(),
            QStringLiteral("the text has no tokens: type at least one word or character"));
    requireTensorMemory(double(input.labels.size()), spec, budget, true);
    const Eigen::Index dModel = Eigen::Index(spec.heads) * spec.headDim;
    // x_i = (e_i + PE(i)) / sqrt(2), e_i ~ N(0, I / d_model) seeded by the token's text.
    const double tokenWeight = spec.positionalEncoding ? std::sqrt(0.5) : 1.0;
    MatrixD x(input.labels.size(), dModel);
    for (Eigen::Index i = 0; i < x.rows(); ++i) {
        Rng rng(spec.seed, RandomStream::TokenEmbedding, hashText(input.labels[i]));
        VectorD row(dModel);
        for (double& value : row)
            value = tokenWeight * rng.normal() / std::sqrt(double(dModel));
        if (spec.positionalEncoding)
            addSinusoidalEncoding(double(i), row, std::sqrt(0.5));
        x.row(i) = row.transpose();
    }
    input.heads = projectHeads(x, spec);
    return input;
}

AttentionInput imageInput(const InputSpec& spec, const ImagePixels* image,
                          const MemoryBudget& budget)
{
    require(image != nullptr && image->width > 0 && image->height > 0,
            QStringLiteral("%1: no image pixels").arg(spec.imagePath));
    const int p = spec.patchSize;
    AttentionInput input;
    input.gridRows = image->height / p;
    input.gridCols = image->width / p;
    require(input.gridRows >= 1 && input.gridCols >= 1,
            QStringLiteral("%1: the image (%2 x %3 pixels) is smaller than one %4 x %4 patch")
                .arg(spec.imagePath)
                .arg(image->width)
                .arg(image->height)
                .arg(p));
    const Eigen::Index patches = Eigen::Index(input.gridRows) * input.gridCols;
    requireTensorMemory(double(patches), spec, budget, true);

    // Standardise the pixels over the image so that every patch vector has E|pixels|^2 = 3 p^2.
    double mean = 0;
    for (const float v : image->rgb)
        mean += v;
    mean /= double(image->rgb.size());
    double variance = 0;
    for (const float v : image->rgb)
        variance += (v - mean) * (v - mean);
    variance /= double(image->rgb.size());
    const double invSd = variance > 0 ? 1.0 / std::sqrt(variance) : 0.0;

    const Eigen::Index patchValues = Eigen::Index(3) * p * p;
    const Eigen::Index dModel = Eigen::Index(spec.heads) * spec.headDim;
    // Linear patch embedding as in ViT: e = E^T pixels / sqrt(d_model), E ~ N(0, 1 / (3 p^2)),
    // then a 2-D sinusoidal position (first half of the dimensions the row, second the column).
    const MatrixD embedding = gaussianMatrix(patchValues, dModel, 1.0 / double(patchValues),
                                             spec.seed, RandomStream::PatchEmbedding, 0);
    MatrixD pixels(patches, patchValues);
    for (int gr = 0; gr < input.gridRows; ++gr) {
        for (int gc = 0; gc < input.gridCols; ++gc) {
            const Eigen::Index patch = Eigen::Index(gr) * input.gridCols + gc;
            Eigen::Index column = 0;
            for (int y = gr * p; y < (gr + 1) * p; ++y)
                for (int x = gc * p; x < (gc + 1) * p; ++x)
                    for (int c = 0; c < 3; ++c)
                        pixels(patch, column++) =
                            (image->rgb[(std::size_t(y) * image->width + x) * 3 + c] - mean) *
                            invSd;
            input.labels.append(QStringLiteral("(%1, %2)").arg(gr).arg(gc));
        }
    }
    MatrixD x = (pixels * embedding) * (std::sqrt(0.5) / std::sqrt(double(dModel)));
    const Eigen::Index half = dModel / 2;
    for (Eigen::Index patch = 0; patch < patches; ++patch) {
        VectorD rowPart = VectorD::Zero(half);
        VectorD colPart = VectorD::Zero(dModel - half);
        addSinusoidalEncoding(double(patch / input.gridCols), rowPart, 0.5);
        addSinusoidalEncoding(double(patch % input.gridCols), colPart, 0.5);
        x.row(patch).head(half) += rowPart.transpose();
        x.row(patch).tail(dModel - half) += colPart.transpose();
    }
    input.heads = projectHeads(x, spec);
    return input;
}

// Rows of length `norm` in uniformly random directions, or, with clusters, near one of
// `centres` (rows of unit length).
MatrixD randomRows(Eigen::Index rows, int d, double norm, const MatrixD& centres, Rng& rng)
{
    MatrixD m(rows, d);
    for (Eigen::Index i = 0; i < rows; ++i) {
        VectorD direction(d);
        for (double& value : direction)
            value = rng.normal();
        direction.normalize();
        if (centres.rows() > 0) {
            const Eigen::Index centre = Eigen::Index(rng.uniform() * double(centres.rows()));
            direction = (centres.row(centre).transpose() + 0.35 * direction).normalized();
        }
        m.row(i) = norm * direction.transpose();
    }
    return m;
}

AttentionInput randomInput(const InputSpec& spec, const MemoryBudget& budget)
{
    requireTensorMemory(double(spec.length), spec, budget, false);
    const int d = spec.headDim;
    const double norm = spec.rowNorm.value_or(std::pow(double(d), 0.25));
    AttentionInput input;
    for (int h = 0; h < spec.heads; ++h) {
        Rng rng(spec.seed, RandomStream::RandomInput, h);
        MatrixD centres(spec.clusters, d);
        for (Eigen::Index c = 0; c < centres.rows(); ++c) {
            for (Eigen::Index j = 0; j < d; ++j)
                centres(c, j) = rng.normal();
            centres.row(c).normalize();
        }
        HeadTensors head;
        head.q = randomRows(spec.length, d, norm, centres, rng);
        head.k = randomRows(spec.length, d, norm, centres, rng);
        head.v = randomRows(spec.length, d, 1.0, MatrixD(), rng);
        input.heads.push_back(std::move(head));
    }
    for (int i = 0; i < spec.length; ++i)
        input.labels.append(QString::number(i));
    return input;
}

// Splits an array of shape (L, d) or (H, L, d) into H matrices L x d.
std::vector<MatrixD> headsOf(const NpyArray& array, const QString& path)
{
    require(array.shape.size() == 2 || array.shape.size() == 3,
            QStringLiteral("%1: the array is %2-D; Q, K and V must be 2-D (L x d) or 3-D "
                           "(H x L x d)")
                .arg(path)
                .arg(array.shape.size()));
    const bool threeD = array.shape.size() == 3;
    const qint64 heads = threeD ? array.shape[0] : 1;
    const qint64 rows = array.shape[threeD ? 1 : 0];
    const qint64 cols = array.shape[threeD ? 2 : 1];
    std::vector<MatrixD> result;
    for (qint64 h = 0; h < heads; ++h)
        result.push_back(
            Eigen::Map<const MatrixD>(array.values.data() + h * rows * cols, rows, cols));
    return result;
}

QString shapeText(const MatrixD& m, std::size_t heads)
{
    return heads > 1 ? QStringLiteral("(%1, %2, %3)").arg(heads).arg(m.rows()).arg(m.cols())
                     : QStringLiteral("(%1, %2)").arg(m.rows()).arg(m.cols());
}

AttentionInput fileInput(const InputSpec& spec, const MemoryBudget& budget)
{
    require(!spec.queryPath.isEmpty() && !spec.keyPath.isEmpty(),
            QStringLiteral("file input needs a query file and a key file (.npy)"));
    NpyReadOptions options;
    options.budget = budget;
    const std::vector<MatrixD> q = headsOf(readNpy(spec.queryPath, options), spec.queryPath);
    const std::vector<MatrixD> k = headsOf(readNpy(spec.keyPath, options), spec.keyPath);
    const std::vector<MatrixD> v =
        spec.valuePath.isEmpty() ? k : headsOf(readNpy(spec.valuePath, options), spec.valuePath);
    require(q.size() == k.size() && q.front().rows() == k.front().rows() &&
                q.front().cols() == k.front().cols(),
            QStringLiteral("%1 has shape %2 but %3 has shape %4: Q and K must have the same "
                           "number of heads, positions and dimensions")
                .arg(spec.queryPath, shapeText(q.front(), q.size()), spec.keyPath,
                     shapeText(k.front(), k.size())));
    require(v.size() == k.size() && v.front().rows() == k.front().rows(),
            QStringLiteral("%1 has shape %2 but %3 has shape %4: V must have the heads and "
                           "positions of K")
                .arg(spec.valuePath, shapeText(v.front(), v.size()), spec.keyPath,
                     shapeText(k.front(), k.size())));
    AttentionInput input;
    for (std::size_t h = 0; h < q.size(); ++h)
        input.heads.push_back({q[h], k[h], v[h]});
    for (Eigen::Index i = 0; i < q.front().rows(); ++i)
        input.labels.append(QString::number(i));
    return input;
}

}  // namespace

QString defaultText()
{
    return QStringLiteral(
        "The cat sat on the mat because the mat was warm, and the cat was tired.");
}

AttentionInput buildInput(const InputSpec& spec, const ImagePixels* image,
                          const MemoryBudget& budget, ModelRun* run)
{
    validate(spec);
    AttentionInput input;
    switch (spec.kind) {
        case InputKind::Text: input = textInput(spec, budget); break;
        case InputKind::Image: input = imageInput(spec, image, budget); break;
        case InputKind::Random: input = randomInput(spec, budget); break;
        case InputKind::Files: input = fileInput(spec, budget); break;
        case InputKind::Model: input = modelInput(spec, image, budget, run); break;
    }
    // The second checkpoint's queries and keys too, so that both sides see the same multiplier.
    for (std::vector<HeadTensors>* heads : {&input.heads, &input.comparison})
        for (HeadTensors& head : *heads) {
            head.q *= spec.normMultiplier;
            head.k *= spec.normMultiplier;
        }
    return input;
}

QString inputKindName(InputKind kind)
{
    switch (kind) {
        case InputKind::Text: return QStringLiteral("text");
        case InputKind::Image: return QStringLiteral("image");
        case InputKind::Random: return QStringLiteral("random");
        case InputKind::Files: return QStringLiteral("files");
        case InputKind::Model: return QStringLiteral("model");
    }
    Q_UNREACHABLE();
}

bool parseInputKind(const QString& name, InputKind* kind)
{
    return parseName(
        name,
        {InputKind::Text, InputKind::Image, InputKind::Random, InputKind::Files, InputKind::Model},
        inputKindName, kind);
}

QString headProjectionName(HeadProjection projection)
{
    switch (projection) {
        case HeadProjection::Random: return QStringLiteral("random");
        case HeadProjection::Tied: return QStringLiteral("tied");
        case HeadProjection::Identity: return QStringLiteral("identity");
    }
    Q_UNREACHABLE();
}

bool parseHeadProjection(const QString& name, HeadProjection* projection)
{
    return parseName(name, {HeadProjection::Random, HeadProjection::Tied, HeadProjection::Identity},
                     headProjectionName, projection);
}

}  // namespace attnlab
