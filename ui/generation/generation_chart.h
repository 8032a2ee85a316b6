#pragma once

#include "generation/generation.h"
#include "ui/plotting/figure_export.h"
#include "ui/plotting/headed_chart.h"

#include <qcustomplot.h>

#include <vector>

namespace attnlab::ui {

// What a generation chart shows against the position of the token each step reads.
enum class GenerationChartKind {
    Kl,      // KL(p || q) of the next-token distributions, teacher-forced (log scale), with the
             // first step whose tokens differ marked
    Cost,    // milliseconds per token (log scale): each run's whole step (solid) and its attention
             // (dashed)
    Memory,  // what each run holds from token to token: the key/value cache against the state
};

// One chart of a generation (core/generation/generation.h), for `attention-lab generate --plot`
// and a page that shows the steps as they come (setSteps again with more steps): a title, a
// subtitle naming the model and the method, one plot, the legend under it. A KL of 0 is drawn
// at the axis floor (1e-6), never dropped; an infinite KL at the top, as a cross. Before any step
// it shows its title and, in the plot's place, what will be there (no axes).
class GenerationChart : public HeadedChart {
    Q_OBJECT

public:
    explicit GenerationChart(GenerationChartKind kind, QWidget* parent = nullptr);

    // Shows steps; method colours the approximate run's curves.
    void setSteps(const std::vector<GenerationStep>& steps, Method method,
                  const QString& subtitle = QString());
    GenerationChartKind kind() const { return m_kind; }
    // Compact (a page's panel beside others): a short title on as many lines as it needs, no
    // subtitle (the page says what the generation is), a short x label and legend. Exports of
    // a page's chart draw the full one (saveGenerationChart).
    void setCompact(bool compact);

private:
    // Draws m_steps as m_kind says, with the y range the curves need.
    void rebuild();
    // The curves of each kind (GenerationChartKind) at the steps' positions; each returns the y
    // range they need.
    QCPRange plotKl(const QVector<double>& positions);
    QCPRange plotCost(const QVector<double>& positions);
    QCPRange plotMemory(const QVector<double>& positions);
    QCPGraph* addCurve(const QString& name, const QColor& color, Qt::PenStyle style);

    GenerationChartKind m_kind;
    std::vector<GenerationStep> m_steps;
    Method m_method = Method::FavorPositive;
    bool m_compact = false;
};

// Draws the chart of `kind` for steps offscreen into path (PNG at twice size, SVG or PDF). Throws
// OutputError naming the path.
void saveGenerationChart(GenerationChartKind kind, const std::vector<GenerationStep>& steps,
                         Method method, const QString& subtitle, const QString& path,
                         FigureFormat format, QSize size);

}  // namespace attnlab::ui
