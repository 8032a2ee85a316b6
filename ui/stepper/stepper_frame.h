#pragma once

#include "ui/plotting/figure_export.h"
#include "ui/stepper/stepper_plots.h"

#include <QWidget>

#include <array>
#include <memory>

class QCPPainter;
class QJsonObject;
class QGridLayout;
class QHBoxLayout;
class QScrollArea;

namespace attnlab {
struct AttentionInput;
struct ExperimentSpec;
class MemoryBudget;
}  // namespace attnlab

namespace attnlab::ui {

class ReservedHeightLabel;
class StepperFormulaPanel;
class StepperTokenStrip;
struct StepperData;

// What the Stepper page shows of a computation at one step, and what its export draws: a line
// saying how far the recurrent and parallel forms agree so far, the strip of tokens, and the
// body: the formula panel (StepperFormulaPanel) beside the eight panels of StepperPlots, in two
// rows of four beside it, three rows of three beside it, or on the narrowest page the normalizer
// beside it and the others below it, two rows of three and the error so far (the widest
// arrangement whose panels fit the page's width at their minimum sizes, so that the page never
// scrolls sideways). The formula panel ends with the memory line: the state's size against exact
// softmax's, and when only a window of states is kept, which.
class StepperFrame : public QWidget {
    Q_OBJECT

public:
    explicit StepperFrame(QWidget* parent = nullptr);

    StepperTokenStrip* strip() const { return m_strip; }
    StepperFormulaPanel* formulaPanel() const { return m_formula; }
    // Every plot of the body (for fonts and focus).
    QList<QCustomPlot*> plots() const { return m_plots.plots(); }

    // A new computation: the tokens and what is the same for every step.
    void showData(std::shared_ptr<const StepperData> data);
    // Makes token t the current one on the strip and scrolls it into view.
    void showPosition(int t);
    // Every panel at step t, whose state is kept. `budget` is the one the states were kept under.
    void showStep(int t, qint64 budget);
    // The two lines at step t (-1 before a computation: "waiting"): the forms' agreement and the
    // memory line, which says when step t's state is being computed.
    void showLines(int t, qint64 budget, bool stateKept);

    // Every text of the frame at `scale` times its designed size (the page's text scale), then
    // fitText().
    void setTextScale(double scale);
    // After a change of fonts: the formula panel's width, the strip's height, the heatmaps'
    // labels.
    void fitText();
    // Arranges the panels for the page's width.
    void fitPanels();

    // The frame as laid out now, as a figure (PNG at twice the frame's resolution; SVG and PDF
    // vector), titled with step i = t + 1.
    PaintedFigure paintedFigure(int t);
    // The frame as an image at `scale` times its logical size.
    QImage toImage(double scale);

private:
    enum class Arrangement { FourColumns, ThreeColumnsBeside, ThreeColumnsBelow };
    void arrangePanels(Arrangement arrangement);

    std::shared_ptr<const StepperData> m_data;
    ReservedHeightLabel* m_agreementLine;
    QScrollArea* m_stripScroll;
    StepperTokenStrip* m_strip;
    StepperFormulaPanel* m_formula;
    StepperPlots m_plots;
    QScrollArea* m_bodyScroll;
    QGridLayout* m_body;
    // On the narrowest page, the formula panel and the normalizer beside it (else null).
    QHBoxLayout* m_formulaRow = nullptr;
    Arrangement m_arrangement = Arrangement::FourColumns;
};

// The Stepper page's frame without the page (`attention-lab render` of a scenario on the Stepper
// page): spec on `input` computed here as the page computes it on its worker (computeStepper,
// the states kept as `budget` allows, around the step), at the head and step of the page's
// session state `state` (StepperView::state(): "head", "position"; clamped to the input), laid
// out in `frame` at `size` with the text scale a page of that size has, and returned as the
// figure the page's export writes (StepperFrame::paintedFigure). frame must outlive the figure.
// Throws as computeStepper does (InputError for a method without a recurrent form).
PaintedFigure drawStepperFrame(StepperFrame& frame, const ExperimentSpec& spec,
                               std::shared_ptr<const AttentionInput> input,
                               const QJsonObject& state, QSize size, const MemoryBudget& budget);

}  // namespace attnlab::ui
