#include "ui/experiment/attention_figures.h"

#include "named_values.h"
#include "inputs/model_input.h"
#include "ui/plotting/heatmap_view.h"
#include "ui/experiment/image_overlay_view.h"
#include "ui/experiment/row_comparison_view.h"

#include <QJsonValue>

namespace attnlab::ui {

namespace {

const HeadResult& headOf(const ExperimentResult& result, const ViewSettings& settings)
{
    return result.heads[std::clamp<std::size_t>(std::size_t(std::max(settings.head, 0)), 0,
                                                result.heads.size() - 1)];
}

QString headSuffix(const ExperimentResult& result, const ViewSettings& settings)
{
    return result.heads.size() > 1 ? QStringLiteral(" (head %1)").arg(settings.head) : QString();
}

// What P^ is, in the status line: "approximation", or "checkpoint q4.gguf" for a second
// checkpoint in its place.
QString approximationName(const ExperimentSpec& spec)
{
    const QString& checkpoint = spec.input.comparisonModelPath;
    return checkpoint.isEmpty() ? QStringLiteral("approximation")
                                : QStringLiteral("checkpoint %1").arg(modelDisplayName(checkpoint));
}

QString errorTitle(ErrorKind kind)
{
    switch (kind) {
        case ErrorKind::Signed: return QStringLiteral("Error P\u0302 \u2212 P");
        case ErrorKind::Absolute: return QStringLiteral("Absolute error |P\u0302 \u2212 P|");
        case ErrorKind::Relative: return QStringLiteral("Relative error |P\u0302 \u2212 P| / P");
    }
    Q_UNREACHABLE();
}

}  // namespace

QJsonObject ViewSettings::toJson() const
{
    return QJsonObject{{QLatin1String("head"), head},
                       {QLatin1String("query"), query},
                       {QLatin1String("error"), errorKindName(errorKind)},
                       {QLatin1String("shared_scale"), sharedScale},
                       {QLatin1String("colors"), colorMapName(colorMap)},
                       {QLatin1String("error_view"),
                        errorDistribution ? QLatin1String("distribution") : QLatin1String("map")},
                       {QLatin1String("rollout"), rollout},
                       {QLatin1String("error_scale"), errorScale}};
}

ViewSettings ViewSettings::fromJson(const QJsonObject& json)
{
    ViewSettings settings;
    settings.head = std::max(0, json.value(QLatin1String("head")).toInt(settings.head));
    settings.query = std::max(-1, json.value(QLatin1String("query")).toInt(settings.query));
    parseErrorKind(json.value(QLatin1String("error")).toString(), &settings.errorKind);
    settings.sharedScale = json.value(QLatin1String("shared_scale")).toBool(settings.sharedScale);
    parseColorMap(json.value(QLatin1String("colors")).toString(), &settings.colorMap);
    settings.errorDistribution =
        json.value(QLatin1String("error_view")).toString() == QLatin1String("distribution");
    settings.rollout = json.value(QLatin1String("rollout")).toBool(settings.rollout);
    const double errorScale = json.value(QLatin1String("error_scale")).toDouble();
    if (isErrorScale(errorScale))
        settings.errorScale = errorScale;
    return settings;
}

QString approximationTitle(const ExperimentSpec& spec)
{
    // A second checkpoint in the approximation's place is named by its file.
    QString title = spec.methodTitle();
    if (spec.causal)
        title += QStringLiteral(", causal");
    return title;
}

QString resultStatusText(const ExperimentResult& result)
{
    return (result.exactKept ? QStringLiteral("L = %1, %2: %3 %4 ms, exact attention kept from the "
                                              "previous result, rows and metrics %5 ms")
                             : QStringLiteral("L = %1, %2: %3 %4 ms, exact %5 ms"))
        .arg(result.labels.size())
        .arg(countOf(qint64(result.heads.size()), QStringLiteral("head"), QStringLiteral("heads")))
        .arg(approximationName(result.spec))
        .arg(result.secondsApprox * 1e3, 0, 'f', 1)
        .arg(result.secondsExact * 1e3, 0, 'f', 1);
}

void showAttention(HeatmapView& exact, HeatmapView& approx, HeatmapView& error,
                   const std::shared_ptr<const ExperimentResult>& shared,
                   const ViewSettings& settings)
{
    const ExperimentResult& result = *shared;
    const HeadResult& head = headOf(result, settings);
    const QString suffix = headSuffix(result, settings);
    const QString axis = result.gridRows > 0 ? QStringLiteral("patch") : QStringLiteral("token");

    for (HeatmapView* view : {&exact, &approx, &error}) {
        view->setAxisLabels(result.labels, result.labels);
        view->setAxisTitles(QStringLiteral("key %1").arg(axis),
                            QStringLiteral("query %1").arg(axis));
    }
    // The views share the result's matrices and the pyramids the engine built with them.
    exact.setMatrix(head.attentionExact, head.exactPyramid);
    exact.setTitle(QStringLiteral("Exact softmax attention P") + suffix);
    approx.setMatrix(head.attentionApprox, head.approxPyramid);
    approx.setTitle(approximationTitle(result.spec) + QStringLiteral(": P\u0302") + suffix);
    for (HeatmapView* view : {&exact, &approx}) {
        view->setColorMap(settings.colorMap);
        view->setColorScaleLabel(QStringLiteral("attention weight"));
        view->setAutoColorRange();
    }
    if (settings.sharedScale) {
        // One scale: equal colours mean equal weights in both maps. [min, max] over P and P^
        // while no weight is negative; otherwise (Linformer, Nystrom and trigonometric features
        // give negative weights) a diverging map over [-a, a], a = max |weight|, on both: 0 is
        // the same neutral colour in each, so P's zeros look like zeros instead of taking the
        // colour of a weight above P^'s minimum, and P^'s negative weights show as such.
        const QCPRange a = exact.dataRange(), b = approx.dataRange();
        QCPRange shared(std::min(a.lower, b.lower), std::max(a.upper, b.upper));
        if (shared.lower < 0) {
            const double extent = std::max(-shared.lower, shared.upper);
            shared = QCPRange(-extent, extent);
            exact.setColorMap(ColorMap::Diverging);
            approx.setColorMap(ColorMap::Diverging);
        }
        exact.setColorRange(shared);
        approx.setColorRange(shared);
    }

    error.setErrorMatrix(head.attentionExact, head.attentionApprox, settings.errorKind,
                         head.errorPyramid);
    error.setTitle(errorTitle(settings.errorKind) + suffix);
    error.setColorMap(settings.errorKind == ErrorKind::Signed ? ColorMap::Diverging
                                                              : ColorMap::Magma);
    const QString errorLabel = settings.errorKind == ErrorKind::Relative
                                   ? QStringLiteral("relative error")
                                   : QStringLiteral("error");
    if (settings.errorScale > 0) {
        const double a = settings.errorScale;
        error.setColorRange(settings.errorKind == ErrorKind::Signed ? QCPRange(-a, a)
                                                                    : QCPRange(0, a));
        error.setColorScaleLabel(errorLabel + QStringLiteral(", scale held"));
    } else {
        error.setColorScaleLabel(errorLabel);
        error.setAutoColorRange();
    }

    const int query = settings.query < result.labels.size() ? settings.query : -1;
    for (HeatmapView* view : {&exact, &approx, &error})
        view->setSelectedRow(query);
}

void showQueryRow(RowComparisonView& view, const ExperimentResult& result,
                  const ViewSettings& settings)
{
    const HeadResult& head = headOf(result, settings);
    const int query = settings.query;
    if (query < 0 || query >= head.attentionExact.rows()) {
        view.clear();
        return;
    }
    view.setRows(head.attentionExact.row(query), head.attentionApprox.row(query), result.labels,
                 QStringLiteral("Query %1: \u201c%2\u201d%3")
                     .arg(query)
                     .arg(result.labels.value(query), headSuffix(result, settings)),
                 // The checkpoint's file is in the map's title: the legend stays short.
                 result.spec.input.comparisonModelPath.isEmpty() ? QStringLiteral("approximation")
                                                                 : QStringLiteral("checkpoint"));
}

int firstPatchToken(const ExperimentResult& result)
{
    return !result.labels.isEmpty() && result.labels.front() == QLatin1String("[CLS]") ? 1 : 0;
}

void showImageOverlay(ImageOverlayView& view, const QImage& patchImage,
                      const ExperimentResult& result, const ViewSettings& settings,
                      const AttentionRollout* rollout)
{
    if (result.gridRows == 0 || patchImage.isNull()) {
        view.clear();
        return;
    }
    const HeadResult& head = headOf(result, settings);
    view.setImage(patchImage, result.gridRows, result.gridCols);
    // Without a selected query, the class token, or the patch at the centre of the image.
    const int first = firstPatchToken(result);
    const int tokens = int(head.attentionExact.rows());
    const int patches = tokens - first;
    const int query = settings.query >= 0 && settings.query < tokens ? settings.query
                      : first > 0                                    ? 0
                                  : (result.gridRows / 2) * result.gridCols + result.gridCols / 2;
    const bool rolledOut = settings.rollout && rollout && rollout->exact.rows() == tokens;
    const VectorD exact = rolledOut ? VectorD(rollout->exact.row(query).transpose())
                                    : VectorD(head.attentionExact.row(query).transpose());
    VectorD approx = exact;
    if (rolledOut && rollout->approx.rows() == tokens)
        approx = rollout->approx.row(query).transpose();
    else if (!rolledOut)
        approx = head.attentionApprox.row(query).transpose();
    // Which row, over the figure; over each panel what it draws and, for a ViT, the weight the
    // query keeps on the class token, which is not drawn over the image.
    QString row = query < first ? QStringLiteral("[CLS] row")
                                : QStringLiteral("patch %1 row").arg(result.labels.value(query));
    row = rolledOut ? QStringLiteral("rollout over %1 layers, %2").arg(rollout->layers).arg(row)
                    : row + headSuffix(result, settings);
    const auto onClass = [first](double weight) {
        return first > 0 ? QStringLiteral("\n%1 on [CLS]").arg(weight, 0, 'f', 2) : QString();
    };
    view.setTitles(row, QStringLiteral("exact") + onClass(exact[0]),
                   approximationTitle(result.spec) + onClass(approx[0]), QStringLiteral("error"));
    // The panel draws the signed error: a scale held on the relative error means nothing there.
    view.setErrorScale(settings.errorKind != ErrorKind::Relative ? settings.errorScale : 0.0);
    view.setAttention(exact.tail(patches), approx.tail(patches), query - first);
}

}  // namespace attnlab::ui
