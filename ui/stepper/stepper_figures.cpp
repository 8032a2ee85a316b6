// The Stepper page's figures: the plots built once (buildPlots) and what each shows at position t
// (the vectors, the state S_i, the attention rows, the lines and the error curve).

#include "stepper/stepper_jobs.h"
#include "stepper/stepper_style.h"
#include "stepper/stepper_view.h"

#include "plotting/heatmap_view.h"
#include "plotting/plot_style.h"

#include <QLabel>

#include <algorithm>
#include <cmath>
#include <limits>

namespace attnlab::ui {

using namespace stepper;

void StepperView::buildPlots()
{
    m_inputPlot = new QCustomPlot;
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
    m_normalizerPlot->setObjectName(QStringLiteral("normalizerPlot"));
    const QList<QCPAxisRect*> normalizerRects = stackedAxisRects(
        m_normalizerPlot, {QStringLiteral("z\u1d62 = z\u1d62\u208b\u2081 + \u03c6(k\u1d62)"),
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
    m_outputPlot->setObjectName(QStringLiteral("outputPlot"));
    const QList<QCPAxisRect*> outputRects = stackedAxisRects(
        m_outputPlot, {QString(), QStringLiteral("y\u1d62 \u2212 o\u1d62")},
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
    m_errorPlot->setObjectName(QStringLiteral("errorPlot"));
    const QList<QCPAxisRect*> errorRects = stackedAxisRects(
        m_errorPlot, {QStringLiteral("|y\u1d62 \u2212 o\u1d62| / |o\u1d62|")},
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
}

// ---------------------------------------------------------------------------------------------
// StepperView: showing a computation

void StepperView::showData(std::shared_ptr<StepperData> data)
{
    m_data = std::move(data);
    m_errorBar->hide();
    const CausalSteps& steps = *m_data->steps;
    const int length = int(steps.length());
    const int previous = m_position;
    m_position = std::clamp(m_position, 0, length - 1);

    m_strip->setTokens(steps.labels);
    {
        const QSignalBlocker blockSlider(m_slider), blockHead(m_headBox);
        m_slider->setRange(0, length - 1);
        m_slider->setPageStep(std::max(1, length / 10));
        const int heads = int(m_data->input->heads.size());
        m_headBox->setRange(0, heads - 1);
        m_headBox->setValue(steps.head);
        m_headLabel->setVisible(heads > 1);
        m_headBox->setVisible(heads > 1);
    }

    // The causal P and P^ on one colour scale, fixed for all steps: viridis from 0, or diverging
    // about 0 when the approximation has negative weights (trigonometric features).
    const QString approxTitle = tr("P\u0302, filled row by row");
    const QString exactTitle = tr("Exact causal softmax P");
    if (m_data->exactAttention) {
        const double exactHigh = largestMagnitude(*m_data->exactAttention);
        const double approxHigh = largestMagnitude(*m_data->approxAttention);
        const bool negative = (m_data->approxAttention->array() < 0).any();
        const double high = std::max({exactHigh, approxHigh, 1e-12});
        const QCPRange range = negative ? QCPRange(-high, high) : QCPRange(0, high);
        for (HeatmapView* view : {m_exactView, m_approxView}) {
            view->setColorMap(negative ? ColorMap::Diverging : ColorMap::Viridis);
            view->setAxisLabels(steps.labels, steps.labels);
            view->setColorRange(range);
        }
        m_exactView->setMatrix(m_data->exactAttention);
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
        m_approxTitle->setToolTip(m_data->matricesNote);
        m_exactTitle->setToolTip(m_data->matricesNote);
    }

    // z_i over all steps sets the normalizer's axis once, so that its growth shows.
    const VectorD allNormalizers = Eigen::Map<const VectorD>(steps.normalizers.data(),
                                                             steps.normalizers.size());
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

    m_shownPosition = -1;
    showPosition();
    if (m_position != previous)
        emit positionChanged(m_position);
    emit experimentShown();
}

void StepperView::showPosition()
{
    if (!m_data)
        return;
    const int t = m_position;
    const int length = this->length();
    m_strip->setCurrent(t);
    const QRect box = m_strip->tokenRect(t);
    m_stripScroll->ensureVisible(box.center().x(), box.center().y(), box.width() / 2 + 80, 0);
    {
        const QSignalBlocker block(m_slider);
        m_slider->setValue(t);
    }
    m_positionLabel->setText(tr("step i = %1 of %2").arg(t + 1).arg(length));
    m_firstButton->setEnabled(t > 0);
    m_backButton->setEnabled(t > 0);
    m_stepButton->setEnabled(t < length - 1);
    m_lastButton->setEnabled(t < length - 1);
    m_playButton->setEnabled(length > 1);
    if (stateAvailable(t)) {
        showFrame();
    } else {
        showLines(t);
        requestWindow();
    }
}

void StepperView::showFrame()
{
    const int t = m_position;
    showFormula(t);
    showVectors(t);
    showState(t);
    showAttention(t);
    showLines(t);
    showErrorCurve(t);
    m_shownPosition = t;
}

void StepperView::showFormula(int t)
{
    const CausalSteps& steps = *m_data->steps;
    const CausalStepRecord& record = steps.records[std::size_t(t)];
    const MatrixD& values = m_data->input->heads[std::size_t(steps.head)].v;
    const QString token =
        QFontMetrics(m_stepTitle->font())
            .elidedText(steps.labels.value(t).simplified(), Qt::ElideRight, 200);
    m_stepTitle->setText(tr("Step i = %1 of %2: \u201c%3\u201d")
                             .arg(t + 1)
                             .arg(steps.length())
                             .arg(token.toHtmlEscaped()));
    m_keyNorm->setText(displayNumber(steps.keyFeatures.row(t).stableNorm()));
    m_valueNorm->setText(displayNumber(values.row(t).stableNorm()));
    m_stateNorm->setText(displayNumber(record.stateNorm));
    m_normalizerNorm->setText(displayNumber(record.normalizerNorm));
    m_denominator->setText(displayNumber(record.denominator));
    const bool positive = record.denominator > 0;
    QPalette palette = m_denominator->palette();
    palette.setColor(QPalette::WindowText, positive ? kExactColor : kWarningColor);
    m_denominator->setPalette(palette);
    m_denominatorNote->setVisible(!positive);
    m_outputValues->setText(vectorPreview(steps.outputs.row(t)));
    m_exactValues->setText(vectorPreview(steps.outputsExact.row(t)));
    m_outputError->setText(displayNumber(record.errorToExact));
}

void StepperView::showVectors(int t)
{
    const CausalSteps& steps = *m_data->steps;
    const VectorD key = steps.keyFeatures.row(t).transpose();
    const VectorD value = m_data->input->heads[std::size_t(steps.head)].v.row(t).transpose();
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

void StepperView::showState(int t)
{
    const CausalSteps& steps = *m_data->steps;
    const VectorD key = steps.keyFeatures.row(t).transpose();
    const VectorD value = m_data->input->heads[std::size_t(steps.head)].v.row(t).transpose();
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

void StepperView::showAttention(int t)
{
    if (!m_data->approxAttention)
        return;
    const MatrixD& approx = *m_data->approxAttention;
    const Eigen::Index rows = approx.rows();
    std::shared_ptr<const MatrixD> shown = m_data->approxAttention;
    if (t + 1 < rows) {
        auto filled = std::make_shared<MatrixD>(approx);
        filled->bottomRows(rows - t - 1).setConstant(std::numeric_limits<double>::quiet_NaN());
        shown = std::move(filled);
    }
    m_approxView->setMatrix(std::move(shown));
    m_approxView->setSelectedRow(t);
    m_exactView->setSelectedRow(t);
}

void StepperView::showLines(int t)
{
    if (!m_data) {
        m_agreementLine->setText(tr("Recurrent and parallel forms: waiting for a computation."));
        m_stateLine->clear();
        return;
    }
    const CausalSteps& steps = *m_data->steps;
    const FormAgreement agreement = steps.agreementThrough(t);
    m_agreementLine->setText(
        tr("Recurrent and parallel (chunked) forms agree to %1 (largest difference so far, "
           "steps 1 to %2; relative to the largest output: %3)")
            .arg(displayDifference(agreement.absolute))
            .arg(t + 1)
            .arg(displayDifference(agreement.relative)));
    const qint64 c = steps.featureCount;
    const qint64 m = steps.valueDim;
    const qint64 d = m_data->input->headDim();
    const auto memory = [&](int step) {
        return tr("<b>Memory.</b> State S<sub>i</sub>: C \u00d7 M = %1 \u00d7 %2 = %3 numbers "
                  "(+ z<sub>i</sub>: %1), whatever i is: O(C M), not O(i).<br>Exact softmax "
                  "keeps all i keys and values: i (d + M) = %4 \u00d7 %5 = %6 numbers at this "
                  "step, growing with i.")
            .arg(c)
            .arg(m)
            .arg(c * m)
            .arg(step + 1)
            .arg(d + m)
            .arg(qint64(step + 1) * (d + m));
    };
    // The note is as tall as at the last step, whose numbers are the longest, so that stepping
    // does not move what is below it.
    if (m_stateLine->width() > 0) {
        m_stateLine->setText(memory(steps.length() - 1));
        m_stateLine->setMinimumHeight(0);
        m_stateLine->setMinimumHeight(m_stateLine->heightForWidth(m_stateLine->width()));
    }
    QString text = memory(t);
    if (!keepsAllStates()) {
        text += tr("<br><span style='color:#b01c1c'>States kept for steps %1 to %2 only (all %3 "
                   "would need %4, over the memory budget of %5); moving outside recomputes "
                   "them%6.</span>")
                    .arg(steps.statesFrom + 1)
                    .arg(steps.statesTo)
                    .arg(steps.length())
                    .arg(formatBytes(m_data->allStatesBytes))
                    .arg(formatBytes(double(m_budget.bytes())))
                    .arg(stateAvailable(t) ? QString() : tr(": computing them now"));
    }
    // What running causally changes in the method (FAVOR++: the fixed A instead of A*).
    const QString causalNote = methodInfo(steps.spec.approximation.kind).causalNote;
    if (!causalNote.isEmpty())
        text += tr("<br><b>Causal form.</b> %1").arg(causalNote.toHtmlEscaped());
    m_stateLine->setText(text);
}

void StepperView::showErrorCurve(int t)
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
