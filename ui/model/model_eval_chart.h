#pragma once

#include "ui/plotting/figure_export.h"
#include "ui/plotting/headed_chart.h"
#include "ui/plotting/plot_style.h"
#include "sweeps/downstream.h"

#include <qcustomplot.h>

#include <vector>

namespace attnlab::ui {

// What the x axis of the model-eval chart shows.
enum class ModelEvalAxis {
    Features,  // m, log2: one line per (method, replaced layers)
    Layer,     // the replaced layers ("0", "1", ..., "all" last): one line per (method, m)
};

// What an approximation inside a trained model does to its predictions (core/sweeps/downstream.h),
// as one figure: top-1 agreement of the next-token predictions (left, in %) and the mean KL
// divergence of the next-token distributions (right, log scale) against m or against the replaced
// layer. Points are the mean over the seeds, with bars from the smallest to the largest seed.
// The exact method (streaming exact softmax in the replaced layers: no approximation) is drawn as
// a dashed grey reference line, a method without m (elu+1, Taylor) as a dashed line in its
// colour, and a second checkpoint of the model (the row "checkpoint") as a dashed purple line.
// A KL of 0 (or below the axis) is drawn at the axis floor, never dropped. A title, a subtitle with
// the model and the text length, and a legend under the plots. Without rows it shows the title
// and a hint in the plots' place (no axes).
class ModelEvalChart : public HeadedChart {
    Q_OBJECT

public:
    explicit ModelEvalChart(QWidget* parent = nullptr);

    // Shows rows; subtitle names the model and text ("built-in KJV GPT-2, 31 tokens").
    void setRows(const std::vector<ModelEvalRow>& rows, ModelEvalAxis axis,
                 const QString& subtitle = QString());
    const std::vector<ModelEvalRow>& rows() const { return m_rows; }
    ModelEvalAxis axis() const { return m_axis; }

    QCPAxisRect* agreementRect() const { return m_agreement; }
    QCPAxisRect* klRect() const { return m_kl; }
    // The hint shown instead of the plots while there are no rows (visible or not).
    const QCPItemText* hint() const { return m_hint; }

private:
    void rebuild();

    std::vector<ModelEvalRow> m_rows;
    ModelEvalAxis m_axis = ModelEvalAxis::Features;
    QCPAxisRect* m_agreement;
    QCPAxisRect* m_kl;
    FigureHint* m_hint;
};

// Draws rows as ModelEvalChart does, offscreen, into path (PNG at twice size, SVG or PDF), for
// `attention-lab model-eval --plot`. Throws OutputError naming the path.
void saveModelEvalChart(const std::vector<ModelEvalRow>& rows, ModelEvalAxis axis,
                        const QString& path, FigureFormat format, QSize size,
                        const QString& subtitle = QString());

}  // namespace attnlab::ui
