#include "ui/stepper/stepper_frame.h"

#include "errors.h"
#include "ui/common/reserved_height_label.h"
#include "ui/stepper/stepper_formula_panel.h"
#include "ui/stepper/stepper_job.h"
#include "ui/stepper/stepper_style.h"
#include "ui/stepper/stepper_token_strip.h"

#include "ui/plotting/plot_style.h"

#include <QCoreApplication>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QJsonObject>
#include <QLabel>
#include <QScrollArea>
#include <QScrollBar>
#include <QVBoxLayout>
#include <qcustomplot.h>

#include <algorithm>
#include <tuple>

namespace attnlab::ui {

using namespace stepper;

namespace {

// The panels' body. In its scroll area a body whose labels wrap is given its preferred height for
// the page's width, which scrolled a page whose panels fit at their minimum sizes (1280 x 800
// presented: 539 pixels for a viewport of 460, where they need 456). Its height for a width is
// the least its panels take at that width: the page scrolls only where they cannot fit.
class PanelBody final : public QWidget {
public:
    int heightForWidth(int width) const override
    {
        return layout()->totalMinimumHeightForWidth(width);
    }
};

}  // namespace

StepperFrame::StepperFrame(QWidget* parent) : QWidget(parent)
{
    setObjectName(QStringLiteral("stepperFrame"));
    setAutoFillBackground(true);
    QPalette white = palette();
    white.setColor(QPalette::Window, Qt::white);
    setPalette(white);

    m_agreementLine = makeReservedLine(kLinePoints);
    m_agreementLine->setObjectName(QStringLiteral("agreementLine"));

    m_strip = new StepperTokenStrip;
    m_strip->setObjectName(QStringLiteral("tokenStrip"));
    setTextPoints(m_strip, kTokenPoints);
    m_strip->setFocusPolicy(Qt::ClickFocus);
    m_stripScroll = new QScrollArea;
    m_stripScroll->setWidget(m_strip);
    m_stripScroll->setWidgetResizable(true);
    m_stripScroll->setFrameShape(QFrame::NoFrame);
    m_stripScroll->setVerticalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    m_stripScroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAsNeeded);
    m_stripScroll->setFocusPolicy(Qt::NoFocus);
    m_stripScroll->horizontalScrollBar()->setFocusPolicy(Qt::NoFocus);

    m_formula = new StepperFormulaPanel;
    auto* bodyWidget = new PanelBody;
    bodyWidget->setObjectName(QStringLiteral("stepperBody"));
    m_body = new QGridLayout(bodyWidget);
    m_body->setContentsMargins(0, 0, 0, 0);
    m_body->setHorizontalSpacing(6);
    m_body->setVerticalSpacing(4);
    arrangePanels(Arrangement::FourColumns);
    // Below the panels' minimum sizes the body scrolls down rather than squeezing them; never
    // sideways: the panels are arranged in as many columns as the page's width holds.
    auto* bodyScroll = m_bodyScroll = new QScrollArea;
    bodyScroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    bodyScroll->setWidget(bodyWidget);
    bodyScroll->setWidgetResizable(true);
    bodyScroll->setFrameShape(QFrame::NoFrame);
    bodyScroll->setFocusPolicy(Qt::NoFocus);
    bodyScroll->viewport()->setAutoFillBackground(false);
    bodyWidget->setAutoFillBackground(false);

    auto* frameLayout = new QVBoxLayout(this);
    frameLayout->setContentsMargins(8, 6, 8, 6);
    frameLayout->setSpacing(4);
    frameLayout->addWidget(m_agreementLine);
    frameLayout->addWidget(m_stripScroll);
    frameLayout->addWidget(bodyScroll, 1);
}

void StepperFrame::showData(std::shared_ptr<const StepperData> data)
{
    m_data = std::move(data);
    m_strip->setTokens(m_data->steps->labels);
    m_plots.showData(*m_data);
}

void StepperFrame::showPosition(int t)
{
    m_strip->setCurrent(t);
    const QRect box = m_strip->tokenRect(t);
    m_stripScroll->ensureVisible(box.center().x(), box.center().y(), box.width() / 2 + 80, 0);
}

void StepperFrame::showStep(int t, qint64 budget)
{
    m_formula->showStep(*m_data, t);
    m_plots.showStep(*m_data, t);
    showLines(t, budget, true);
    // The panels' rows are shared out again from the plots' minimum sizes as they are now: a
    // plot's minimum changes with its tick labels when it replots, without telling the layout,
    // so the rows of the first step depended on when the layout last ran (under the sanitizers,
    // 242, 242 and 217 pixels high at step 1, and 234, 233 and 234 from step 2 on).
    m_body->invalidate();
}

void StepperFrame::setTextScale(double scale)
{
    scaleMarkedFonts(*this, scale);
    for (QCustomPlot* plot : plots())
        scalePlotFonts(plot, scale);
    fitText();
}

void StepperFrame::fitText()
{
    if (m_data)  // the heatmaps measure their labels when given them
        m_plots.relabel(*m_data);
    m_stripScroll->setFixedHeight(m_strip->sizeHint().height() +
                                  m_stripScroll->horizontalScrollBar()->sizeHint().height());
    m_formula->fitWidth();
}

void StepperFrame::showLines(int t, qint64 budget, bool stateKept)
{
    ReservedHeightLabel* stateLine = m_formula->memoryLine();
    if (!m_data || t < 0) {
        m_agreementLine->setReservedText(QString());
        m_agreementLine->setText(tr("Recurrent and parallel forms: waiting for a computation."));
        stateLine->setReservedText(QString());
        stateLine->clear();
        return;
    }
    const CausalSteps& steps = *m_data->steps;
    const int last = int(steps.length()) - 1;
    const QString forms =
        m_data->followed.isEmpty()
            ? tr("Recurrent and parallel (chunked) forms")
            : tr("Following %1: the generation's recurrent outputs and the parallel (masked) "
                 "form of its features")
                  .arg(m_data->followed);
    const auto agreement = [&](int step) {
        const FormAgreement through = steps.agreementThrough(step);
        return tr("%1 agree to %2 (largest difference so far, steps 1 to %3; relative to the "
                  "largest output: %4)")
            .arg(forms, displayDifference(through.absolute))
            .arg(step + 1)
            .arg(displayDifference(through.relative));
    };
    // Both lines keep the height of their text at the last step, whose numbers are the longest
    // (the differences so far only grow), so that stepping does not move what is below them.
    m_agreementLine->setReservedText(agreement(last));
    m_agreementLine->setText(agreement(t));
    const qint64 c = steps.featureCount;
    const qint64 m = steps.valueDim;
    const qint64 d = m_data->input->headDim();
    // The memory note at a step, whose states are kept or being computed.
    const auto memory = [&](int step, bool kept) {
        QString text =
            tr("<b>Memory.</b> State S<sub>i</sub>: C \u00d7 M = %1 \u00d7 %2 = %3 numbers "
               "(+ z<sub>i</sub>: %1), whatever i is: O(C M), not O(i).<br>Exact softmax keeps "
               "all i keys and values: i (d + M) = %4 \u00d7 %5 = %6 numbers at this step, "
               "growing with i.")
                .arg(c)
                .arg(m)
                .arg(c * m)
                .arg(step + 1)
                .arg(d + m)
                .arg(qint64(step + 1) * (d + m));
        if (steps.statesFrom != 0 || steps.statesTo != steps.length())
            text += tr("<br><span style='color:#b01c1c'>States kept for steps %1 to %2 only (all "
                       "%3 would need %4, over the memory budget of %5); moving outside "
                       "recomputes them%6.</span>")
                        .arg(steps.statesFrom + 1)
                        .arg(steps.statesTo)
                        .arg(steps.length())
                        .arg(formatBytes(m_data->allStatesBytes))
                        .arg(formatBytes(double(budget)))
                        .arg(kept ? QString() : tr(": computing them now"));
        // What running causally changes in the method (FAVOR++: the fixed A instead of A*).
        const QString causalNote = methodInfo(steps.spec.approximation.kind).causalNote;
        if (!causalNote.isEmpty())
            text += tr("<br><b>Causal form.</b> %1").arg(causalNote.toHtmlEscaped());
        return text;
    };
    stateLine->setReservedText(memory(last, false));
    stateLine->setText(memory(t, stateKept));
}

void StepperFrame::arrangePanels(Arrangement arrangement)
{
    m_arrangement = arrangement;
    if (m_formulaRow) {
        // Deleting the row leaves its widgets to the body's widget; they are placed again below.
        m_body->removeItem(m_formulaRow);
        delete m_formulaRow;
        m_formulaRow = nullptr;
    }
    m_body->removeWidget(m_formula);
    for (QWidget* panel : m_plots.panels())
        m_body->removeWidget(panel);
    for (int i = 0; i < 5; ++i) {  // every row and column an arrangement uses (at most 5)
        m_body->setColumnStretch(i, 0);
        m_body->setRowStretch(i, 0);
    }
    // The panels in the order a step reads: what step i adds, the update, the state; the output
    // and the two attention maps; the normalizer and the error so far.
    using P = StepperPlots;
    const auto place = [this](int panel, int row, int column, int columnSpan = 1) {
        m_body->addWidget(m_plots.panels()[std::size_t(panel)], row, column, 1, columnSpan);
    };
    if (arrangement == Arrangement::FourColumns) {
        // Two rows of four beside the formula panel; the heatmaps get more of the width than
        // the bar plots: their cells are square.
        m_body->addWidget(m_formula, 0, 0, 2, 1);
        for (const int panel : {P::Input, P::Update, P::State, P::Normalizer})
            place(panel, 0, 1 + panel);
        for (const int panel : {P::Output, P::Approx, P::Exact, P::Error})
            place(panel, 1, 1 + panel - P::Output);
        for (const int column : {1, 4})
            m_body->setColumnStretch(column, 2);
        for (const int column : {2, 3})
            m_body->setColumnStretch(column, 3);
        m_body->setRowStretch(0, 1);
        m_body->setRowStretch(1, 1);
        return;
    }
    // Two rows of three beside the formula panel and, below them, the normalizer under the
    // formula panel beside the error so far; on a narrower page, the formula panel with the
    // normalizer filling the width beside it (the panel of z_i and phi(q_i), which the formula
    // panel's last lines use) above two rows of three and the error so far.
    const bool beside = arrangement == Arrangement::ThreeColumnsBeside;
    const int top = beside ? 0 : 1;
    const int left = beside ? 1 : 0;
    if (beside) {
        m_body->addWidget(m_formula, 0, 0, 2, 1, Qt::AlignLeft);
    } else {
        m_formulaRow = new QHBoxLayout;
        m_formulaRow->setSpacing(m_body->horizontalSpacing());
        m_formulaRow->addWidget(m_formula);
        m_formulaRow->addWidget(m_plots.panels()[std::size_t(P::Normalizer)], 1);
        m_body->addLayout(m_formulaRow, 0, 0, 1, 3);
    }
    for (const auto& [panel, row, column] : {std::tuple{P::Input, 0, 0},
                                             {P::Update, 0, 1},
                                             {P::State, 0, 2},
                                             {P::Output, 1, 0},
                                             {P::Approx, 1, 1},
                                             {P::Exact, 1, 2}})
        place(panel, top + row, left + column);
    if (beside) {
        place(P::Normalizer, 2, 0);
        place(P::Error, 2, 1, 3);
    } else {
        place(P::Error, 3, 0, 3);
    }
    for (int column = left; column < left + 3; ++column)
        m_body->setColumnStretch(column, 1);
    for (int row = top; row < top + 3; ++row)
        m_body->setRowStretch(row, 1);
}

void StepperFrame::fitPanels()
{
    // The widest arrangement whose panels fit the page's width at their minimum sizes.
    const int width = m_bodyScroll->viewport()->width();
    const int spacing = m_body->horizontalSpacing();
    const int formula = m_formula->width() + spacing;
    const int margins = 4;  // makePanel's, left and right
    const int plot = kMinimumPlotSize.width() + margins + spacing;
    const int heatmap = kMinimumHeatmapSize.width() + margins + spacing;
    Arrangement arrangement = Arrangement::ThreeColumnsBelow;
    if (width >= formula + 2 * plot + 2 * heatmap)
        arrangement = Arrangement::FourColumns;
    else if (width >= formula + plot + 2 * heatmap)
        arrangement = Arrangement::ThreeColumnsBeside;
    if (arrangement != m_arrangement)
        arrangePanels(arrangement);
}

QImage StepperFrame::toImage(double scale)
{
    return paintedImage(size(), scale,
                        [this](QCPPainter& painter) { paintWidgetOnWhite(painter, *this); });
}

PaintedFigure StepperFrame::paintedFigure(int t)
{
    QCoreApplication::sendPostedEvents(nullptr, QEvent::LayoutRequest);
    PaintedFigure figure = widgetFigure(*this, tr("Attention Lab stepper, step %1").arg(t + 1));
    figure.dpi = logicalDpiX();
    figure.description = QStringLiteral("Attention Lab frame");
    figure.what = QStringLiteral("frame");
    return figure;
}

PaintedFigure drawStepperFrame(StepperFrame& frame, const ExperimentSpec& spec,
                               std::shared_ptr<const AttentionInput> input,
                               const QJsonObject& state, QSize size, const MemoryBudget& budget)
{
    const int heads = input ? int(input->heads.size()) : 0;
    if (heads == 0)
        throw InputError(QStringLiteral("stepper: there is no input to step through"));
    StepperJob job;
    job.spec = spec;
    job.input = std::move(input);
    job.head = std::clamp(state.value(QLatin1String("head")).toInt(0), 0, heads - 1);
    job.budget = budget;
    job.around = std::max(state.value(QLatin1String("position")).toInt(0), 0);
    auto data = std::make_shared<const StepperData>(computeStepper(job, {}));
    const CausalSteps& steps = *data->steps;
    const int t = std::clamp(int(job.around), 0, int(steps.length()) - 1);

    frame.setAttribute(Qt::WA_DontShowOnScreen);  // laid out as on screen, not shown
    frame.resize(size);
    frame.show();
    frame.setTextScale(textScaleFor(size));
    frame.showData(data);
    frame.showPosition(t);
    if (t >= steps.statesFrom && t < steps.statesTo)
        frame.showStep(t, budget.bytes());
    else
        frame.showLines(t, budget.bytes(), false);
    QCoreApplication::sendPostedEvents(nullptr, QEvent::LayoutRequest);
    frame.fitPanels();
    return frame.paintedFigure(t);
}

}  // namespace attnlab::ui
