#pragma once

#include "ui/plotting/color_maps.h"
#include "experiment.h"
#include "sweeps/rollout.h"
#include "attention/metrics.h"

#include <QImage>
#include <QJsonObject>

#include <memory>

namespace attnlab::ui {

class HeatmapView;
class ImageOverlayView;
class RowComparisonView;

// How the figures show a result: which head and query, which error, which colours. Part of a
// session, so a view reopens as it was.
struct ViewSettings {
    int head = 0;
    int query = -1;  // the selected query row (or patch), -1 for none
    ErrorKind errorKind = ErrorKind::Signed;
    bool sharedScale = true;  // P and P^ on one colour scale
    ColorMap colorMap = ColorMap::Viridis;
    // The error cell shows histograms of the errors (ErrorDistributionView) instead of the map.
    bool errorDistribution = false;
    // A ViT's image page shows the attention rollout over every layer instead of the head's row.
    bool rollout = false;
    // The error map's colour range held at [-a, a] (signed) or [0, a] (absolute, relative) from
    // result to result, values beyond taking the end colours; 0: each result's own range.
    double errorScale = 0;
    // The scales an error map can be held at: from 1e-12 to 1e12 (QCustomPlot draws no range
    // past about 1e250, nor one narrower than about 1e-280).
    static bool isErrorScale(double a) { return a >= 1e-12 && a <= 1e12; }

    QJsonObject toJson() const;
    // Fields missing or of the wrong kind keep their defaults: view state is never worth
    // refusing a session for.
    static ViewSettings fromJson(const QJsonObject& json);
};

// "FAVOR+ positive, m = 64", "elu+1 linear attention", with ", causal" when masked.
QString approximationTitle(const ExperimentSpec& spec);

// The status bar's account of a result: its size, and the time of the approximation (named as
// the second checkpoint, "checkpoint model-q4_k_m.gguf", when one takes its place) and of exact
// attention ("L = 25, 4 head(s): approximation 3.1 ms, exact 1.2 ms").
QString resultStatusText(const ExperimentResult& result);

// Fills the three heatmaps of the window (and of `attention-lab render`) from a result: exact P,
// approximate P^ and the error map, with their titles, token (or patch) labels and colour scales.
// With settings.sharedScale P and P^ share one colour range: [min, max] over both, or, when a
// weight is negative, the diverging map over [-a, a] (a = max |weight|). The error map's range is
// settings.errorScale's when that is held. The views share the result's matrices (no copies).
void showAttention(HeatmapView& exact, HeatmapView& approx, HeatmapView& error,
                   const std::shared_ptr<const ExperimentResult>& result,
                   const ViewSettings& settings);

// The exact and approximate rows of the selected query, as bars over the keys (cleared when no
// query is selected).
void showQueryRow(RowComparisonView& view, const ExperimentResult& result,
                  const ViewSettings& settings);

// The position of the first patch among a result's tokens: 1 when a class token ([CLS]) comes
// first (a ViT's input), else 0.
int firstPatchToken(const ExperimentResult& result);

// Image input: the selected query's exact and approximate rows over the patches and their error,
// over the image. A ViT's query is its [CLS] token unless a patch is selected (settings.query),
// and with settings.rollout and a rollout, its row of the attention rollout over every layer.
void showImageOverlay(ImageOverlayView& view, const QImage& patchImage,
                      const ExperimentResult& result, const ViewSettings& settings,
                      const AttentionRollout* rollout = nullptr);

}  // namespace attnlab::ui
