#include "ui/stepper/stepper_plots.h"

#include "ui/stepper/stepper_job.h"
#include "ui/stepper/stepper_style.h"

#include "ui/plotting/heatmap_view.h"
#include "ui/plotting/plot_style.h"

#include <QLabel>

#include <algorithm>
#include <cmath>
#include <limits>

namespace attnlab::ui {

using namespace stepper;

StepperPlots::StepperPlots()
{
    m_inputPlot = new QCustomPlot;
    paintWithTheWindow(m_inputPlot);
    m_inputPlot->setObjectName(QStringLiteral("inputPlot"));
    const QList<QCPAxisRect*> inputRects = stackedAxisRects(
        m_inputPlot, {QStringLiteral("\u03c6(k\u1d62)"), QStringLiteral("v\u1d62")},
        {QStringLiteral("feature c"), QStringLiteral("value dimension")});
    m_keyBars = addBars(inputRects[0], QStringLiteral("\u03c6(k\u1d62)"), kAddedColor);
    m_valueBars = addBars(inputRects[1], QStringLiteral("v\u1d62"), kAddedColor);

    m_updateView = new HeatmapView;
    m_updateView->setObjectName(QStringLiteral("updateView"));
    m_stateView = new HeatmapView;
    m_stateView->setObjectName(QStringLiteral("stateView"));
    for (HeatmapView* view : {m_updateView, m_stateView}) {
        view->setColorMap(ColorMap::Diverging);
        view->setAxisTitles(tr("value dimension"), tr("feature c"));
    }

    m_normalizerPlot = new QCustomPlot;
    paintWithTheWindow(m_normalizerPlot);
    m_normalizerPlot->setObjectName(QStringLiteral("normalizerPlot"));
    const QList<QCPAxisRect*> normalizerRects =
        stackedAxisRects(m_normalizerPlot,
                         {QStringLiteral("z\u1d62 = z\u1d62\u208b\u2081 + \u03c6(k\u1d62)"),
                          QStringLiteral("\u03c6(q\u1d62)")},
                         {QStringLiteral("feature c"), QStringLiteral("feature c")});
    m_previousNormalizerBars =
        addBars(normalizerRects[0], QStringLiteral("z\u1d62\u208b\u2081"), kStateColor);
    m_addedNormalizerBars =
        addBars(normalizerRects[0], QStringLiteral("+ \u03c6(k\u1d62)"), kAddedColor);
    m_addedNormalizerBars->moveAbove(m_previousNormalizerBars);
    addLegend(m_normalizerPlot, normalizerRects[0],
              {m_previousNormalizerBars, m_addedNormalizerBars});
    m_queryBars = addBars(normalizerRects[1], QStringLiteral("\u03c6(q\u1d62)"), kQueryColor);

    m_outputPlot = new QCustomPlot;
    paintWithTheWindow(m_outputPlot);
    m_outputPlot->setObjectName(QStringLiteral("outputPlot"));
    const QList<QCPAxisRect*> outputRects =
        stackedAxisRects(m_outputPlot, {QString(), QStringLiteral("y\u1d62 \u2212 o\u1d62")},
                         {QStringLiteral("value dimension"), QStringLiteral("value dimension")});
    auto* group = new QCPBarsGroup(m_outputPlot);
    group->setSpacingType(QCPBarsGroup::stAbsolute);
    group->setSpacing(0);
    m_exactOutputBars = addBars(outputRects[0], QStringLiteral("exact o\u1d62"), kExactColor, 0.45);
    m_outputBars = addBars(outputRects[0], QStringLiteral("y\u1d62"), kApproxColor, 0.45);
    m_exactOutputBars->setBarsGroup(group);
    m_outputBars->setBarsGroup(group);
    addLegend(m_outputPlot, outputRects[0], {m_outputBars, m_exactOutputBars});
    m_differenceBars =
        addBars(outputRects[1], QStringLiteral("y\u1d62 \u2212 o\u1d62"), kDifferenceColor);

    m_approxView = new HeatmapView;
    m_approxView->setObjectName(QStringLiteral("stepperApproxView"));
    m_exactView = new HeatmapView;
    m_exactView->setObjectName(QStringLiteral("stepperExactView"));

    m_errorPlot = new QCustomPlot;
    paintWithTheWindow(m_errorPlot);
    m_errorPlot->setObjectName(QStringLiteral("errorPlot"));
    const QList<QCPAxisRect*> errorRects =
        stackedAxisRects(m_errorPlot, {QStringLiteral("|y\u1d62 \u2212 o\u1d62| / |o\u1d62|")},
                         {QStringLiteral("step i")});
    QCPAxis* stepAxis = errorRects[0]->axis(QCPAxis::atBottom);
    QCPAxis* errorAxis = errorRects[0]->axis(QCPAxis::atLeft);
    m_errorAll = m_errorPlot->addGraph(stepAxis, errorAxis);
    m_errorAll->setName(tr("all steps"));
    m_errorAll->setPen(QPen(QColor(190, 190, 190), 2));
    m_errorSoFar = m_errorPlot->addGraph(stepAxis, errorAxis);
    m_errorSoFar->setName(tr("so far"));
    m_errorSoFar->setPen(QPen(kApproxColor, 2.5));
    m_errorSoFar->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, 5));
    m_errorNow = m_errorPlot->addGraph(stepAxis, errorAxis);
    m_errorNow->setName(tr("step i"));
    m_errorNow->setLineStyle(QCPGraph::lsNone);
    m_errorNow->setScatterStyle(
        QCPScatterStyle(QCPScatterStyle::ssCircle, QPen(kExactColor, 3), Qt::white, 13));
    m_errorMarker = new QCPItemStraightLine(m_errorPlot);
    m_errorMarker->setClipAxisRect(errorRects[0]);
    m_errorMarker->setPen(QPen(kExactColor, 1.5, Qt::DashLine));
    m_errorMarker->point1->setAxes(stepAxis, errorAxis);
    m_errorMarker->point2->setAxes(stepAxis, errorAxis);

    const auto title = [](const QString& text) { return makeLabel(text, kPanelTitlePoints, true); };
    m_approxTitle = title(QString());
    m_exactTitle = title(QString());
    m_panels = {
        makePanel(title(tr("What step i adds")), m_inputPlot),
        makePanel(title(tr("<span style='color:#d55e00'>+ \u03c6(k<sub>i</sub>) "
                           "v<sub>i</sub><sup>T</sup></span> (own colour scale)")),
                  m_updateView),
        makePanel(title(tr("= state S<sub>i</sub>, largest changes outlined")), m_stateView),
        makePanel(title(tr("Normalizer and query")), m_normalizerPlot),
        makePanel(title(tr("Output y<sub>i</sub>, exact o<sub>i</sub>")), m_outputPlot),
        makePanel(m_approxTitle, m_approxView),
        makePanel(m_exactTitle, m_exactView),
        makePanel(title(tr("Error to exact, by step")), m_errorPlot),
    };
    // The grid's stretch factors alone size the plots: their size hints follow what they show
    // (tick labels, colour scales), and would move the panels at every step.
    for (HeatmapView* view : {m_updateView, m_stateView, m_approxView, m_exactView}) {
        view->setMinimumSize(kMinimumHeatmapSize);
        view->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Ignored);
    }
    for (QCustomPlot* plot : {m_inputPlot, m_normalizerPlot, m_outputPlot, m_errorPlot}) {
        plot->setMinimumSize(kMinimumPlotSize);
        plot->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Ignored);
    }
}

QList<QCustomPlot*> StepperPlots::plots() const
{
    return {m_inputPlot,  m_updateView, m_stateView, m_normalizerPlot,
            m_outputPlot, m_approxView, m_exactView, m_errorPlot};
}

void StepperPlots::showData(const StepperData& data)
{
    const CausalSteps& steps = *data.steps;
    const int length = int(steps.length());

    // The causal P and P^ on one colour scale, fixed for all steps: viridis from 0, or diverging
    // about 0 when the approximation has negative weights (trigonometric features).
    const QString approxTitle = tr("P\u0302, filled row by row");
    const QString exactTitle = tr("Exact causal softmax P");
    if (data.exactAttention) {
        const double exactHigh = largestMagnitude(*data.exactAttention);
        const double approxHigh = largestMagnitude(*data.approxAttention);
        const bool negative = (data.approxAttention->array() < 0).any();
        const double high = std::max({exactHigh, approxHigh, 1e-12});
        const QCPRange range = negative ? QCPRange(-high, high) : QCPRange(0, high);
        for (HeatmapView* view : {m_exactView, m_approxView}) {
            view->setColorMap(negative ? ColorMap::Diverging : ColorMap::Viridis);
            view->setAxisLabels(steps.labels, steps.labels);
            view->setColorRange(range);
        }
        m_exactView->setMatrix(data.exactAttention);
        for (QLabel* title : {m_approxTitle, m_exactTitle})
            title->setToolTip(QString());
        m_approxTitle->setText(approxTitle);
        m_exactTitle->setText(exactTitle);
    } else {
        for (HeatmapView* view : {m_exactView, m_approxView})
            view->setMatrix(MatrixD());
        const QString missing =
            tr("<br><span style='color:#b01c1c; font-weight:normal'>not drawn: L \u00d7 L is over "
               "the memory budget</span>");
        m_approxTitle->setText(approxTitle + missing);
        m_exactTitle->setText(exactTitle + missing);
        m_approxTitle->setToolTip(data.matricesNote);
        m_exactTitle->setToolTip(data.matricesNote);
    }

    // z_i over all steps sets the normalizer's axis once, so that its growth shows.
    const VectorD allNormalizers =
        Eigen::Map<const VectorD>(steps.normalizers.data(), steps.normalizers.size());
    const QCPRange normalizerRange = barRange({&allNormalizers});
    m_previousNormalizerBars->valueAxis()->setRange(normalizerRange);
    const bool negativeFeatures = methodInfo(steps.spec.approximation.kind).canBeNegative;
    // Stacking shows z_i = z_{i-1} + phi(k_i) only when no feature is negative; otherwise z_i is
    // drawn alone.
    m_addedNormalizerBars->setVisible(!negativeFeatures);
    m_previousNormalizerBars->setName(negativeFeatures ? QStringLiteral("z\u1d62")
                                                       : QStringLiteral("z\u1d62\u208b\u2081"));
    m_addedNormalizerBars->removeFromLegend();
    if (!negativeFeatures)
        m_addedNormalizerBars->addToLegend();

    QVector<double> stepNumbers(length);
    QVector<double> errors(length);
    double highest = 0;
    for (int t = 0; t < length; ++t) {
        stepNumbers[t] = t + 1;
        const double error = steps.records[std::size_t(t)].errorToExact;
        errors[t] = std::isfinite(error) ? error : std::numeric_limits<double>::quiet_NaN();
        if (std::isfinite(error))
            highest = std::max(highest, error);
    }
    m_errorAll->setData(stepNumbers, errors, true);
    m_errorAll->keyAxis()->setRange(0, length + 1);  // room for the marker at both ends
    m_errorAll->valueAxis()->setRange(0, highest > 0 ? 1.1 * highest : 1.0);
}

void StepperPlots::showStep(const StepperData& data, int t)
{
    showVectors(data, t);
    showState(data, t);
    showAttention(data, t);
    showErrorCurve(t);
}

void StepperPlots::relabel(const StepperData& data)
{
    for (HeatmapView* view : {m_approxView, m_exactView})
        view->setAxisLabels(data.steps->labels, data.steps->labels);
}

void StepperPlots::showVectors(const StepperData& data, int t)
{
    const CausalSteps& steps = *data.steps;
    const VectorD key = steps.keyFeatures.row(t).transpose();
    const VectorD value = data.input->heads[std::size_t(steps.head)].v.row(t).transpose();
    const VectorD query = steps.queryFeatures.row(t).transpose();
    const VectorD normalizer = steps.normalizers.row(t).transpose();
    const VectorD output = steps.outputs.row(t).transpose();
    const VectorD exact = steps.outputsExact.row(t).transpose();
    const VectorD difference = output - exact;

    const auto show = [](QCPBars* bars, const VectorD& values, const QCPRange& range) {
        setBars(bars, values);
        bars->keyAxis()->setRange(-0.6, double(values.size()) - 0.4);
        bars->valueAxis()->setRange(range);
    };
    show(m_keyBars, key, barRange({&key}));
    show(m_valueBars, value, barRange({&value}));
    m_inputPlot->replot(QCustomPlot::rpQueuedReplot);

    // The normalizer's range is fixed for all steps (showData).
    const QCPRange normalizerRange = m_previousNormalizerBars->valueAxis()->range();
    if (m_addedNormalizerBars->visible()) {
        const VectorD previous = t > 0 ? VectorD(steps.normalizers.row(t - 1).transpose())
                                       : VectorD::Zero(normalizer.size());
        show(m_previousNormalizerBars, previous, normalizerRange);
        show(m_addedNormalizerBars, key, normalizerRange);
    } else {
        show(m_previousNormalizerBars, normalizer, normalizerRange);
    }
    show(m_queryBars, query, barRange({&query}));
    m_normalizerPlot->replot(QCustomPlot::rpQueuedReplot);

    show(m_exactOutputBars, exact, barRange({&output, &exact}));
    setBars(m_outputBars, output);
    const double spread = std::max(largestMagnitude(difference), 1e-300) * 1.15;
    show(m_differenceBars, difference, QCPRange(-spread, spread));
    m_outputPlot->replot(QCustomPlot::rpQueuedReplot);
}

void StepperPlots::showState(const StepperData& data, int t)
{
    const CausalSteps& steps = *data.steps;
    const VectorD key = steps.keyFeatures.row(t).transpose();
    const VectorD value = data.input->heads[std::size_t(steps.head)].v.row(t).transpose();
    const MatrixD change = finiteOrNaN(key * value.transpose());
    const MatrixD state = finiteOrNaN(steps.state(t));
    // Symmetric colour scales about 0, each its own: the change is small against the state
    // after a few steps, and on the state's scale its rank-one pattern would fade to grey. The
    // scales' numbers say how large each is.
    const double stateHigh = std::max(largestMagnitude(state), 1e-300);
    const double changeHigh = std::max(largestMagnitude(change), 1e-300);
    m_stateView->setMatrix(state);
    m_stateView->setColorRange(QCPRange(-stateHigh, stateHigh));
    m_updateView->setMatrix(change);
    m_updateView->setColorRange(QCPRange(-changeHigh, changeHigh));
    const std::vector<std::pair<int, int>> cells = largestCells(change);
    markCells(m_updateView, m_updateMarks, cells);
    markCells(m_stateView, m_stateMarks, cells);
    m_updateView->replot(QCustomPlot::rpQueuedReplot);
    m_stateView->replot(QCustomPlot::rpQueuedReplot);
}

void StepperPlots::showAttention(const StepperData& data, int t)
{
    if (!data.approxAttention)
        return;
    const MatrixD& approx = *data.approxAttention;
    const Eigen::Index rows = approx.rows();
    std::shared_ptr<const MatrixD> shown = data.approxAttention;
    if (t + 1 < rows) {
        auto filled = std::make_shared<MatrixD>(approx);
        filled->bottomRows(rows - t - 1).setConstant(std::numeric_limits<double>::quiet_NaN());
        shown = std::move(filled);
    }
    m_approxView->setMatrix(std::move(shown));
    m_approxView->setSelectedRow(t);
    m_exactView->setSelectedRow(t);
}

void StepperPlots::showErrorCurve(int t)
{
    QVector<double> steps;
    QVector<double> errors;
    for (auto it = m_errorAll->data()->constBegin();
         it != m_errorAll->data()->constEnd() && it->key <= t + 1; ++it) {
        steps.append(it->key);
        errors.append(it->value);
    }
    m_errorSoFar->setData(steps, errors, true);
    m_errorNow->setData({double(t + 1)}, {errors.isEmpty() ? 0.0 : errors.back()}, true);
    m_errorMarker->point1->setCoords(t + 1, 0);
    m_errorMarker->point2->setCoords(t + 1, 1);
    m_errorPlot->replot(QCustomPlot::rpQueuedReplot);
}

}  // namespace attnlab::ui
