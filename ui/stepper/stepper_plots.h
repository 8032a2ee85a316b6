#pragma once

#include <QCoreApplication>
#include <QList>

#include <array>
#include <vector>

class QCPBars;
class QCPGraph;
class QCPItemRect;
class QCPItemStraightLine;
class QCustomPlot;
class QLabel;
class QWidget;

namespace attnlab::ui {

class HeatmapView;
struct StepperData;

// The eight plots of the Stepper page's frame and what each shows at step i = t + 1
// (docs/design.md section 2.6): phi(k_i) over v_i; the update phi(k_i) v_i^T and the state S_i,
// the cells that changed most outlined; z_i (the phi(k_i) just added stacked on z_{i-1}) over
// phi(q_i); y_i beside the exact o_i over y_i - o_i; the approximate causal attention matrix P^
// filling in row by row beside the exact causal P (one colour scale, the current row outlined);
// and the error of y against o over the steps. The frame lays the panels out.
class StepperPlots {
    Q_DECLARE_TR_FUNCTIONS(StepperPlots)

public:
    // The panels in the order a step reads them (for StepperFrame's grid): what step i adds, the
    // update, the state, the normalizer, the output, P^, P and the error so far.
    enum Panel { Input, Update, State, Normalizer, Output, Approx, Exact, Error, PanelCount };

    // Makes the plots and their panels (each a title over its plot), unparented.
    StepperPlots();

    const std::array<QWidget*, PanelCount>& panels() const { return m_panels; }
    // Every plot (the bar plots and the heatmaps), for fonts and focus.
    QList<QCustomPlot*> plots() const;

    // What is the same for every step of data: P and P^ on their colour scale (or why they are
    // not drawn), the normalizer's range, the error curve over all steps.
    void showData(const StepperData& data);
    // Step t of data.
    void showStep(const StepperData& data, int t);
    // Lays the heatmaps' labels out again for a new font.
    void relabel(const StepperData& data);

private:
    void showVectors(const StepperData& data, int t);
    void showState(const StepperData& data, int t);
    void showAttention(const StepperData& data, int t);
    void showErrorCurve(int t);

    std::array<QWidget*, PanelCount> m_panels;
    QLabel* m_approxTitle;
    QLabel* m_exactTitle;

    QCustomPlot* m_inputPlot;  // phi(k_i) over v_i
    QCPBars* m_keyBars;
    QCPBars* m_valueBars;
    HeatmapView* m_updateView;  // phi(k_i) v_i^T
    HeatmapView* m_stateView;   // S_i
    std::vector<QCPItemRect*> m_updateMarks;
    std::vector<QCPItemRect*> m_stateMarks;
    QCustomPlot* m_normalizerPlot;  // z_i over phi(q_i)
    QCPBars* m_previousNormalizerBars;
    QCPBars* m_addedNormalizerBars;
    QCPBars* m_queryBars;
    QCustomPlot* m_outputPlot;  // y_i and o_i over y_i - o_i
    QCPBars* m_exactOutputBars;
    QCPBars* m_outputBars;
    QCPBars* m_differenceBars;
    HeatmapView* m_approxView;  // P^, rows <= t
    HeatmapView* m_exactView;   // P
    QCustomPlot* m_errorPlot;   // errorToExact over the steps
    QCPGraph* m_errorAll;
    QCPGraph* m_errorSoFar;
    QCPGraph* m_errorNow;
    QCPItemStraightLine* m_errorMarker;
};

}  // namespace attnlab::ui
