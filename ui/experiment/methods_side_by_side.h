#pragma once

#include "experiment.h"
#include "ui/common/background_job.h"
#include "ui/plotting/figure_export.h"

#include <QWidget>

#include <memory>
#include <vector>

class QCheckBox;
class QGridLayout;
class QLabel;

namespace attnlab::ui {

class HeatmapView;

// One head under several methods at once, the comparison a lecture slide needs: exact P on the
// left, then for every method ticked (exact, FAVOR+, elu+1, the fitted maps, their window
// variant, or any other of the registry) its P^ above its error map and its numbers under them:
// the relative error of P, the mean row KL, the mean row entropy of P^ against P's, and its
// monotonicity in q.k (row_properties.h). The error maps share one colour scale, [-a, a] with a
// the largest |P^ - P| of any method, so that equal colours mean equal errors across the
// columns. Every method runs on the same input, head, scale and
// mask (one BackgroundJob runs them all: the newest request wins). The whole figure exports as
// one picture (PNG at twice the size, SVG or PDF). Until its first experiment it says it waits for
// one; with nothing ticked it says to tick methods.
class MethodsSideBySide : public QWidget {
    Q_OBJECT

public:
    explicit MethodsSideBySide(QWidget* parent = nullptr);
    ~MethodsSideBySide() override;

    // The experiment to compare: its input, head and everything but the method (spec's own
    // method, its fitted maps and parameters serve the methods ticked).
    void setExperiment(const ExperimentSpec& spec, std::shared_ptr<const AttentionInput> input,
                       int head);
    // The methods shown, in registry order (those without a causal form are left out when the
    // attention is causal: their boxes are greyed out, their tooltips saying why).
    void setMethods(const std::vector<Method>& methods);
    std::vector<Method> methods() const;

    // The results shown (one per method, in order), once computed.
    const std::vector<std::shared_ptr<const ExperimentResult>>& results() const
    {
        return m_results;
    }
    // The numbers under method i's maps; the message when the comparison failed.
    QString numbers(int i) const;
    QString errorMessage() const;
    bool isComputing() const { return m_job->isRunning(); }
    // Waits for the comparisons asked for and shows the newest now (`attention-lab render
    // --methods`).
    void finishNow()
    {
        while (m_job->isRunning())
            m_job->finishNow();
    }

    // The figure: the maps and numbers, without the check boxes, at their size on screen.
    PaintedFigure figure() const;
    // Writes the figure to path. Throws OutputError naming the path.
    void exportFigure(const QString& path, FigureFormat format) const;

signals:
    // The results of the latest request are shown.
    void shown();

private:
    void build();
    void recompute();
    void showResults(std::vector<std::shared_ptr<const ExperimentResult>> results);
    void clearColumns();
    void exportDialog();
    // Puts the top edges of the maps in each row (the P^ row with exact P, the error row) at one
    // height, the lowest of their centred tops: their decorations differ in height, and the
    // maps of some columns stood 12 pixels below the others. Every map labels the tokens at one
    // step (labelMapsAlike).
    void lineUpMaps() const;

    BackgroundJob* m_job;
    ExperimentSpec m_spec;
    std::shared_ptr<const AttentionInput> m_input;
    int m_head = 0;
    std::vector<std::pair<Method, QCheckBox*>> m_boxes;
    QWidget* m_figure;
    QGridLayout* m_grid;
    QLabel* m_message;
    std::vector<std::shared_ptr<const ExperimentResult>> m_results;
    std::vector<QLabel*> m_numbers;
    std::vector<HeatmapView*> m_attentionMaps;  // the top row: exact P, then each method's P^
    std::vector<HeatmapView*> m_errorMaps;      // the row below: each method's P^ - P
};

}  // namespace attnlab::ui
