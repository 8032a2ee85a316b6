// The Stepper page: causal linear attention stepped as a recurrent network. Each test drives the
// real widget (offscreen) and checks what it displays against the engine, computed again in the
// test: causalSteps() for the records, and a CausalStepper stepped independently for the states,
// norms, denominators and outputs.

#include "sweeps/causal_stepper.h"
#include "sweeps/causal_steps.h"
#include "errors.h"
#include "experiment.h"
#include "attention/feature_maps.h"
#include "fitted_maps_support.h"
#include "chart_support.h"
#include "ui/plotting/heatmap_view.h"
#include "inputs/inputs.h"
#include "ui/stepper/stepper_token_strip.h"
#include "ui/stepper/stepper_view.h"

#include <QDir>
#include <QFile>
#include <QImage>
#include <QLabel>
#include <QRegularExpression>
#include <QScrollArea>
#include <QSignalSpy>
#include <QSvgRenderer>
#include <QTemporaryDir>
#include <QTest>
#include <qcustomplot.h>

#include <cmath>
#include <memory>

using namespace attnlab;
using namespace attnlab::ui;

namespace {

constexpr int kWaitMs = 30000;

// The default spec of core/experiment.h (the default sentence, FAVOR+ positive) with the given
// method and fewer features, to keep the tests quick.
ExperimentSpec specFor(const QString& method, double normMultiplier = 1.0)
{
    ExperimentSpec spec;
    if (!spec.setMethod(method))
        qFatal("unknown method %s", qPrintable(method));
    spec.approximation.features = 16;
    spec.approximation = test::withFittedMaps(spec.approximation, spec.input.headDim);
    spec.input.normMultiplier = normMultiplier;
    return spec;
}

std::shared_ptr<const AttentionInput> inputFor(const ExperimentSpec& spec)
{
    return std::make_shared<const AttentionInput>(buildInput(spec.input));
}

// A number as the page writes it (a true minus sign, 4 significant digits).
double parseNumber(QString text)
{
    bool ok = false;
    const double value = text.replace(QChar(0x2212), QLatin1Char('-')).trimmed().toDouble(&ok);
    if (!ok)
        qWarning("not a number: %s", qPrintable(text));
    return ok ? value : std::nan("");
}

// The numbers of "(0.1234, −0.5678, 0.9012, …)".
QList<double> parseVector(QString text)
{
    text.remove(QLatin1Char('(')).remove(QLatin1Char(')')).remove(QChar(0x2026));
    QList<double> values;
    for (const QString& part : text.split(QLatin1Char(','), Qt::SkipEmptyParts))
        if (!part.trimmed().isEmpty())
            values.append(parseNumber(part));
    return values;
}

// |shown - expected| within the rounding of 4 significant digits (and a tiny absolute floor).
bool closeAsDisplayed(double shown, double expected)
{
    return std::abs(shown - expected) <= 1e-3 * std::abs(expected) + 1e-9;
}

QString labelText(const StepperView& view, const char* name)
{
    auto* label = view.findChild<QLabel*>(QLatin1String(name));
    if (!label)
        qFatal("no label %s", name);
    return label->text();
}

// The plottable called `name` of the plot called `plotName`.
QCPBars* barsNamed(const StepperView& view, const char* plotName, const QString& name)
{
    auto* plot = view.findChild<QCustomPlot*>(QLatin1String(plotName));
    for (int i = 0; plot && i < plot->plottableCount(); ++i)
        if (plot->plottable(i)->name() == name)
            return qobject_cast<QCPBars*>(plot->plottable(i));
    qFatal("no bars %s in %s", qPrintable(name), plotName);
}

// Everything written on the page: its labels and the texts inside its plots.
QStringList shownTexts(const StepperView& view)
{
    QStringList texts;
    for (const QLabel* label : view.findChildren<QLabel*>())
        if (label->isVisibleTo(&view))
            texts.append(label->text());
    for (const QCustomPlot* plot : view.findChildren<QCustomPlot*>())
        for (const QCPTextElement* element : plot->findChildren<QCPTextElement*>())
            texts.append(element->text());
    return texts;
}

// The first text on the page that reads "nan" (as a word, in any case); empty when none does.
QString textReadingNan(const StepperView& view)
{
    const QRegularExpression nan(QStringLiteral("\\bnan\\b"),
                                 QRegularExpression::CaseInsensitiveOption);
    for (const QString& text : shownTexts(view))
        if (nan.match(text).hasMatch())
            return text;
    return {};
}

// Whether every cell (r, c) of the S_i heatmap is within 1e-5 max |S_i| of state(r, c).
bool showsState(const HeatmapView& stateView, const MatrixD& state)
{
    const double largest = state.cwiseAbs().maxCoeff();
    for (int r = 0; r < state.rows(); ++r)
        for (int c = 0; c < state.cols(); ++c)
            if (!(std::abs(stateView.value(r, c) - state(r, c)) <= 1e-5 * largest))
                return false;
    return true;
}

// Waits until the page shows the result of the latest request.
bool waitShown(const StepperView& view)
{
    QTest::qWait(0);
    return QTest::qWaitFor([&] { return !view.isBusy() && view.length() > 0; }, kWaitMs);
}

// Shows the page at 1280 x 800 pixels (a lecturer's laptop screen).
void showPage(StepperView& view)
{
    view.resize(1280, 800);
    view.show();
}

// Shows the page; true once its window is exposed.
bool showExposed(StepperView& view)
{
    showPage(view);
    return QTest::qWaitForWindowExposed(&view);
}

// Shows the page and gives it `spec` on `input` (by default the spec's own); true once the
// result is shown.
bool showExperiment(StepperView& view, const ExperimentSpec& spec,
                    std::shared_ptr<const AttentionInput> input = nullptr)
{
    showPage(view);
    view.setExperiment(spec, input ? input : inputFor(spec));
    return waitShown(view);
}

// P^ of the causal linear form from true-scale features, row by row: A^_rj = phi(q_r).phi(k_j) for
// j <= r, divided by its row sum.
MatrixD causalApproxAttention(const CausalStepper<float>& stepper, Eigen::Index length)
{
    MatrixD attention = MatrixD::Zero(length, length);
    for (Eigen::Index r = 0; r < length; ++r) {
        const VectorD query = stepper.queryFeatures(r);
        for (Eigen::Index j = 0; j <= r; ++j)
            attention(r, j) = query.dot(stepper.keyFeatures(j));
        attention.row(r) /= attention.row(r).sum();
    }
    return attention;
}

}  // namespace

class TestStepperView : public QObject {
    Q_OBJECT

private slots:
    void computesAndStepsWithKeys();
    void displayedNumbersMatchEngine_data();
    void displayedNumbersMatchEngine();
    void clickingTokenGoesThere();
    void longInputKeepsCurrentTokenVisible();
    void everyFeatureMapSteps_data();
    void everyFeatureMapSteps();
    void playAdvancesPauseStopsLastStops();
    void trigonometricShowsNonPositiveDenominatorsWithoutNaN();
    void exactMethodAndBadSpecShowMessages();
    void windowOfStatesOverBudgetShowsEngineStates();
    void exportsFrameAsPngSvgPdf();
    void exportsAllFramesAsNumberedPngs();
    void stateRoundTripRestoresPosition();
    void smallPlotsKeepTickLabelsApart_data();
    void smallPlotsKeepTickLabelsApart();
};

// setExperiment computes on the worker; setPosition and the keys Right, Left, Home, End move the
// position (clamped to 0..L-1) and emit positionChanged; Space plays and pauses.
void TestStepperView::computesAndStepsWithKeys()
{
    StepperView view;
    QVERIFY(showExposed(view));
    const ExperimentSpec spec = specFor(QStringLiteral("favor-positive"));
    const auto input = inputFor(spec);
    QSignalSpy shown(&view, &StepperView::experimentShown);
    view.setExperiment(spec, input);
    QVERIFY(waitShown(view));
    QCOMPARE(shown.count(), 1);
    QCOMPARE(view.length(), int(input->length()));
    QCOMPARE(view.position(), 0);
    QVERIFY(view.errorMessage().isEmpty());

    QSignalSpy moved(&view, &StepperView::positionChanged);
    view.setPosition(3);
    QCOMPARE(view.position(), 3);
    QCOMPARE(moved.count(), 1);
    QCOMPARE(moved.last().at(0).toInt(), 3);
    view.setPosition(1000);
    QCOMPARE(view.position(), view.length() - 1);
    view.setPosition(-5);
    QCOMPARE(view.position(), 0);

    view.setFocus();
    QTest::keyClick(&view, Qt::Key_Right);
    QTest::keyClick(&view, Qt::Key_Right);
    QCOMPARE(view.position(), 2);
    QTest::keyClick(&view, Qt::Key_Left);
    QCOMPARE(view.position(), 1);
    QTest::keyClick(&view, Qt::Key_End);
    QCOMPARE(view.position(), view.length() - 1);
    QTest::keyClick(&view, Qt::Key_Home);
    QCOMPARE(view.position(), 0);
    QTest::keyClick(&view, Qt::Key_Left);  // stays at the first token
    QCOMPARE(view.position(), 0);
    QTest::keyClick(&view, Qt::Key_Space);
    QVERIFY(view.isPlaying());
    QTest::keyClick(&view, Qt::Key_Space);
    QVERIFY(!view.isPlaying());

    // The slider and the strip follow the position.
    view.setPosition(4);
    QCOMPARE(view.findChild<QSlider*>(QStringLiteral("positionSlider"))->value(), 4);
    QCOMPARE(view.findChild<StepperTokenStrip*>(QStringLiteral("tokenStrip"))->current(), 4);
}

void TestStepperView::displayedNumbersMatchEngine_data()
{
    QTest::addColumn<QString>("method");
    QTest::newRow("elu+1") << QStringLiteral("elu");
    QTest::newRow("FAVOR+ positive") << QStringLiteral("favor-positive");
}

// At several positions every displayed number equals the engine's: the formula panel (|phi(k_i)|,
// |v_i|, |S_i|, |z_i|, the denominator, y_i's first entries) and the y bars against an
// independently stepped CausalStepper, the S_i heatmap cell by cell, the filled rows of P^ against
// phi(Q) phi(K)^T masked and normalised (the later rows blank), and the agreement line against
// agreementThrough(position).
void TestStepperView::displayedNumbersMatchEngine()
{
    QFETCH(QString, method);
    StepperView view;
    const ExperimentSpec spec = specFor(method);
    const auto input = inputFor(spec);
    QVERIFY(showExperiment(view, spec, input));
    QVERIFY(view.keepsAllStates());
    const std::shared_ptr<const CausalSteps> steps = view.steps();
    QVERIFY(steps);

    const HeadTensors& head = input->heads.front();
    const Eigen::Index length = head.q.rows();
    const double scale = spec.resolvedScale(head.q.cols());
    const auto phi = makeFeatureMap<float>(spec.approximation, int(head.q.cols()), scale, 0);
    CausalStepper<float> stepper(*phi, head.q.cast<float>(), head.k.cast<float>(),
                                 head.v.cast<float>());
    const MatrixD approx = causalApproxAttention(stepper, length);
    auto* stateView = view.findChild<HeatmapView*>(QStringLiteral("stateView"));
    auto* approxView = view.findChild<HeatmapView*>(QStringLiteral("stepperApproxView"));
    QCPBars* outputBars = barsNamed(view, "outputPlot", QStringLiteral("y\u1d62"));

    for (const int t : {0, 1, int(length) / 2, int(length) - 1}) {
        view.setPosition(t);
        stepper.seek(t + 1);
        QVERIFY(closeAsDisplayed(parseNumber(labelText(view, "keyNorm")),
                                 stepper.keyFeatures(t).norm()));
        QVERIFY(closeAsDisplayed(parseNumber(labelText(view, "valueNorm")), head.v.row(t).norm()));
        QVERIFY(
            closeAsDisplayed(parseNumber(labelText(view, "stateNorm")), stepper.state().norm()));
        QVERIFY(closeAsDisplayed(parseNumber(labelText(view, "normalizerNorm")),
                                 stepper.normalizer().norm()));
        QVERIFY(
            closeAsDisplayed(parseNumber(labelText(view, "denominator")), stepper.denominator()));
        const VectorD output = stepper.output();
        const QList<double> preview = parseVector(labelText(view, "outputValues"));
        QCOMPARE(preview.size(), 3);
        for (int c = 0; c < preview.size(); ++c)
            QVERIFY(std::abs(preview[c] - output[c]) <= 1e-3 * std::abs(output[c]) + 1e-6);

        // The y bars hold the engine's y_i exactly, and equal the independent stepper's.
        QCOMPARE(outputBars->data()->size(), int(output.size()));
        for (int c = 0; c < output.size(); ++c) {
            const double bar = outputBars->data()->at(c)->value;
            QCOMPARE(bar, steps->outputs(t, c));
            QVERIFY(std::abs(bar - output[c]) <= 1e-5 * output.cwiseAbs().maxCoeff());
        }

        // S_i, cell by cell.
        const MatrixD state = stepper.state();
        QCOMPARE(stateView->rowCount(), int(state.rows()));
        QCOMPARE(stateView->columnCount(), int(state.cols()));
        QVERIFY(showsState(*stateView, state));

        // P^: rows 0..t filled, the rest blank.
        for (int r = 0; r < length; ++r)
            for (int j = 0; j < length; ++j) {
                const double value = approxView->value(r, j);
                if (r <= t)
                    QVERIFY(std::abs(value - approx(r, j)) <= 1e-4);
                else
                    QVERIFY(std::isnan(value));
            }
        QCOMPARE(approxView->selectedRow(), t);

        // "agree to 3.1e-08": two significant digits of agreementThrough(t).
        const QString line = labelText(view, "agreementLine");
        const QRegularExpressionMatch match =
            QRegularExpression(QStringLiteral("agree to (\\S+) \\(largest difference so far"))
                .match(line);
        QVERIFY2(match.hasMatch(), qPrintable(line));
        const double agreement = steps->agreementThrough(t).absolute;
        const double shown = parseNumber(match.captured(1));
        QVERIFY2(std::abs(shown - agreement) <= 0.06 * agreement, qPrintable(line));
    }
    // The state's size is explained with the real C and M.
    QVERIFY(labelText(view, "stateLine")
                .contains(QStringLiteral("%1 \u00d7 %2 = %3 numbers")
                              .arg(steps->featureCount)
                              .arg(steps->valueDim)
                              .arg(steps->featureCount * steps->valueDim)));
}

// A click on a token of the strip makes it the current position.
void TestStepperView::clickingTokenGoesThere()
{
    StepperView view;
    QVERIFY(showExposed(view));
    const ExperimentSpec spec = specFor(QStringLiteral("elu"));
    view.setExperiment(spec, inputFor(spec));
    QVERIFY(waitShown(view));
    auto* strip = view.findChild<StepperTokenStrip*>(QStringLiteral("tokenStrip"));
    QCOMPARE(strip->count(), view.length());
    QTest::mouseClick(strip, Qt::LeftButton, {}, strip->tokenRect(5).center());
    QCOMPARE(view.position(), 5);
    QCOMPARE(strip->current(), 5);
}

// For an input longer than the strip, the strip scrolls so that the current token stays in view.
void TestStepperView::longInputKeepsCurrentTokenVisible()
{
    StepperView view;
    QVERIFY(showExposed(view));
    ExperimentSpec spec = specFor(QStringLiteral("elu"));
    spec.input.kind = InputKind::Random;
    spec.input.length = 150;
    view.setExperiment(spec, inputFor(spec));
    QVERIFY(waitShown(view));
    auto* strip = view.findChild<StepperTokenStrip*>(QStringLiteral("tokenStrip"));
    auto* scroll = qobject_cast<QScrollArea*>(strip->parentWidget()->parentWidget());
    QVERIFY(scroll);
    QVERIFY(strip->width() > scroll->viewport()->width());
    for (const int t : {view.length() - 1, 70, 0}) {
        view.setPosition(t);
        QCoreApplication::processEvents();
        const QRect box = strip->tokenRect(t).translated(strip->pos());
        QVERIFY2(scroll->viewport()->rect().contains(box),
                 qPrintable(QStringLiteral("token %1 is out of view").arg(t)));
    }
}

void TestStepperView::everyFeatureMapSteps_data()
{
    QTest::addColumn<QString>("method");
    for (const MethodInfo& info : featureMapMethods())
        QTest::newRow(qPrintable(info.name)) << info.name;
}

// Every feature map of the registry runs on the page: the result is shown without an error, the
// records are the engine's (|S_i| and the denominator in the formula panel at a middle step), and
// no text on the page reads "nan".
void TestStepperView::everyFeatureMapSteps()
{
    QFETCH(QString, method);
    StepperView view;
    const ExperimentSpec spec = specFor(method);
    QVERIFY(showExperiment(view, spec));
    QVERIFY2(view.errorMessage().isEmpty(), qPrintable(view.errorMessage()));
    const int t = view.length() / 2;
    view.setPosition(t);
    const CausalStepRecord& record = view.steps()->records[std::size_t(t)];
    QVERIFY(closeAsDisplayed(parseNumber(labelText(view, "stateNorm")), record.stateNorm));
    QVERIFY(closeAsDisplayed(parseNumber(labelText(view, "denominator")), record.denominator));
    const QString nan = textReadingNan(view);
    QVERIFY2(nan.isEmpty(), qPrintable(nan));
}

// play() advances the position over time; pause() stops it; played to the last token, it stops
// there by itself.
void TestStepperView::playAdvancesPauseStopsLastStops()
{
    StepperView view;
    const ExperimentSpec spec = specFor(QStringLiteral("favor-positive"));
    QVERIFY(showExperiment(view, spec));
    view.setSpeed(20);
    QCOMPARE(view.speed(), 20.0);
    QSignalSpy playing(&view, &StepperView::playingChanged);
    view.play();
    QVERIFY(view.isPlaying());
    QTRY_VERIFY_WITH_TIMEOUT(view.position() >= 2, 5000);
    view.pause();
    QVERIFY(!view.isPlaying());
    const int paused = view.position();
    QTest::qWait(250);
    QCOMPARE(view.position(), paused);

    view.setPosition(view.length() - 3);
    view.play();
    QTRY_VERIFY_WITH_TIMEOUT(!view.isPlaying(), 5000);
    QCOMPARE(view.position(), view.length() - 1);
    QCOMPARE(playing.count(), 4);  // on, off, on, off
}

// Trigonometric features with large norms give denominators phi(q_i)^T z_i <= 0: the page shows
// them (the number, in the formula panel, with a note) and no text on the page reads "nan".
void TestStepperView::trigonometricShowsNonPositiveDenominatorsWithoutNaN()
{
    StepperView view;
    const ExperimentSpec spec = specFor(QStringLiteral("favor-trig"), 3.0);
    QVERIFY(showExperiment(view, spec));
    const std::vector<Eigen::Index> nonPositive = view.steps()->nonPositivePositions;
    QVERIFY2(!nonPositive.empty(), "norm multiplier 3 gives no non-positive denominator");
    auto* note = view.findChild<QLabel*>(QStringLiteral("denominatorNote"));
    for (int t = 0; t < view.length(); ++t) {
        view.setPosition(t);
        const bool expected =
            std::find(nonPositive.begin(), nonPositive.end(), t) != nonPositive.end();
        const double shown = parseNumber(labelText(view, "denominator"));
        QCOMPARE(shown <= 0, expected);
        QVERIFY(closeAsDisplayed(shown, view.steps()->records[std::size_t(t)].denominator));
        QCOMPARE(note->isVisibleTo(&view), expected);
        const QString nan = textReadingNan(view);
        QVERIFY2(nan.isEmpty(), qPrintable(nan));
    }
}

// The method "exact" has no recurrent form and a spec out of range cannot run: the page says so
// in its error bar and keeps the previous frame; a good spec afterwards clears the message.
void TestStepperView::exactMethodAndBadSpecShowMessages()
{
    StepperView view;
    ExperimentSpec spec = specFor(QStringLiteral("favor-positive"));
    const auto input = inputFor(spec);
    QVERIFY(showExperiment(view, spec, input));
    view.setPosition(4);

    ExperimentSpec exact = spec;
    exact.exactMethod = true;
    QSignalSpy failed(&view, &StepperView::failed);
    view.setExperiment(exact, input);
    QVERIFY(failed.wait(kWaitMs));
    QVERIFY2(view.errorMessage().contains(QStringLiteral("\"exact\"")),
             qPrintable(view.errorMessage()));
    QCOMPARE(view.length(), int(input->length()));  // the previous frame stays
    QCOMPARE(view.position(), 4);

    ExperimentSpec bad = spec;
    bad.chunkSize = 0;
    view.setExperiment(bad, input);
    QVERIFY(failed.wait(kWaitMs));
    QVERIFY2(view.errorMessage().contains(QStringLiteral("chunk size")),
             qPrintable(view.errorMessage()));

    QSignalSpy shown(&view, &StepperView::experimentShown);
    view.setExperiment(spec, input);
    QVERIFY(shown.wait(kWaitMs));
    QVERIFY(view.errorMessage().isEmpty());

    view.setExperiment(spec, nullptr);
    QVERIFY(!view.errorMessage().isEmpty());
}

// When the states of every position exceed the memory budget, the page keeps a window of them
// and says so; moving outside the window recomputes it, and the S_i shown is still the engine's.
void TestStepperView::windowOfStatesOverBudgetShowsEngineStates()
{
    const ExperimentSpec spec = specFor(QStringLiteral("elu"));
    const auto input = inputFor(spec);
    const Eigen::Index length = input->length();
    const Eigen::Index features = featureCountOf(spec.approximation, int(input->headDim()));
    const Eigen::Index valueDim = input->valueDim();
    const double matrices = 2.0 * 8.0 * double(length * length);
    const double perState = 8.0 * double(features * valueDim);
    StepperView view;
    showPage(view);
    view.setMemoryBudget(MemoryBudget(
        qint64(causalStepsBytes(length, features, valueDim, 0, true) + matrices + 3.5 * perState)));
    view.setExperiment(spec, input);
    QVERIFY(waitShown(view));
    QVERIFY(!view.keepsAllStates());
    QCOMPARE(view.steps()->statesTo - view.steps()->statesFrom, Eigen::Index(3));
    QVERIFY(labelText(view, "stateLine").contains(QStringLiteral("States kept for steps")));

    const auto phi = makeFeatureMap<float>(spec.approximation, int(input->headDim()),
                                           spec.resolvedScale(input->headDim()), 0);
    const HeadTensors& head = input->heads.front();
    CausalStepper<float> stepper(*phi, head.q.cast<float>(), head.k.cast<float>(),
                                 head.v.cast<float>());
    auto* stateView = view.findChild<HeatmapView*>(QStringLiteral("stateView"));
    for (const int t : {int(length) - 1, 6, 0}) {
        view.setPosition(t);
        QCOMPARE(view.position(), t);
        QVERIFY(QTest::qWaitFor([&] { return !view.isBusy(); }, kWaitMs));
        QVERIFY(view.steps()->statesFrom <= t && t < view.steps()->statesTo);
        stepper.seek(t + 1);
        const MatrixD state = stepper.state();
        QVERIFY(showsState(*stateView, state));
        QVERIFY(closeAsDisplayed(parseNumber(labelText(view, "stateNorm")), state.norm()));
    }
}

// The current frame exports as a valid PNG (twice the frame's size), a valid SVG with text and
// drawing in it (vector, not one picture), and a PDF.
void TestStepperView::exportsFrameAsPngSvgPdf()
{
    QTemporaryDir folder;
    QVERIFY(folder.isValid());
    StepperView view;
    QVERIFY(showExposed(view));
    const ExperimentSpec spec = specFor(QStringLiteral("favor-positive"));
    view.setExperiment(spec, inputFor(spec));
    QVERIFY(waitShown(view));
    view.setPosition(5);
    const QSize frame = view.findChild<QWidget*>(QStringLiteral("stepperFrame"))->size();

    const QString png = folder.filePath(QStringLiteral("frame.png"));
    view.exportFrame(png, FigureFormat::Png);
    const QImage image(png);
    QVERIFY(!image.isNull());
    QCOMPARE(image.size(), frame * 2);

    const QString svg = folder.filePath(QStringLiteral("frame.svg"));
    view.exportFrame(svg, FigureFormat::Svg);
    QVERIFY(QSvgRenderer(svg).isValid());
    QFile svgFile(svg);
    QVERIFY(svgFile.open(QIODevice::ReadOnly));
    const QByteArray svgText = svgFile.readAll();
    QVERIFY(svgText.contains("<text"));
    QVERIFY(svgText.contains("agree to"));
    QVERIFY(svgText.contains("<path") || svgText.contains("<polyline"));

    const QString pdf = folder.filePath(QStringLiteral("frame.pdf"));
    view.exportFrame(pdf, FigureFormat::Pdf);
    QFile pdfFile(pdf);
    QVERIFY(pdfFile.open(QIODevice::ReadOnly));
    const QByteArray pdfBytes = pdfFile.readAll();
    QVERIFY(pdfBytes.startsWith("%PDF-"));
    QVERIFY(pdfBytes.right(64).contains("%%EOF"));
    QVERIFY(pdfBytes.size() > 10000);

    // A folder that cannot be made: OutputError naming the path, no file.
    const QString blocked = folder.filePath(QStringLiteral("file"));
    QFile blocker(blocked);
    QVERIFY(blocker.open(QIODevice::WriteOnly));
    blocker.close();
    bool thrown = false;
    try {
        view.exportFrame(blocked + QStringLiteral("/frame.png"), FigureFormat::Png);
    } catch (const OutputError& e) {
        thrown = e.message().contains(blocked);
    }
    QVERIFY(thrown);
}

// Exporting all frames writes L PNGs, frame_0001.png to frame_000L.png, each a full frame, and
// puts the position back where it was.
void TestStepperView::exportsAllFramesAsNumberedPngs()
{
    QTemporaryDir folder;
    QVERIFY(folder.isValid());
    StepperView view;
    view.resize(1024, 640);
    view.show();
    ExperimentSpec spec = specFor(QStringLiteral("elu"));
    spec.input.text = QStringLiteral("The cat sat on the mat.");
    view.setExperiment(spec, inputFor(spec));
    QVERIFY(waitShown(view));
    view.setPosition(2);
    const int length = view.length();
    QCOMPARE(view.exportAllFrames(folder.path()), length);
    QCOMPARE(view.position(), 2);
    const QStringList files = QDir(folder.path()).entryList(QDir::Files, QDir::Name);
    QCOMPARE(files.size(), length);
    const QSize frame = view.findChild<QWidget*>(QStringLiteral("stepperFrame"))->size();
    for (int i = 1; i <= length; ++i) {
        const QString name = QStringLiteral("frame_%1.png").arg(i, 4, 10, QLatin1Char('0'));
        QCOMPARE(files[i - 1], name);
        QCOMPARE(QImage(folder.filePath(name)).size(), frame);
    }
}

// state() and setState() carry the position, the speed and the head: a new page given the same
// experiment and the saved state shows the same step.
void TestStepperView::stateRoundTripRestoresPosition()
{
    const ExperimentSpec spec = specFor(QStringLiteral("favor-positive"));
    const auto input = inputFor(spec);
    StepperView view;
    view.setExperiment(spec, input);
    QVERIFY(waitShown(view));
    view.setPosition(7);
    view.setSpeed(7.5);
    const QJsonObject saved = view.state();

    StepperView restored;
    restored.setState(saved);  // before the computation: applied when it arrives
    restored.setExperiment(spec, input);
    QVERIFY(waitShown(restored));
    QCOMPARE(restored.position(), 7);
    QCOMPARE(restored.speed(), 7.5);
    QCOMPARE(restored.state(), saved);
    QCOMPARE(parseNumber(labelText(restored, "stateNorm")),
             parseNumber(labelText(view, "stateNorm")));
}

void TestStepperView::smallPlotsKeepTickLabelsApart_data()
{
    QTest::addColumn<QSize>("size");
    QTest::newRow("1280 x 720") << QSize(1280, 720);
    QTest::newRow("1280 x 800") << QSize(1280, 800);
    QTest::newRow("1600 x 1000") << QSize(1600, 1000);
    QTest::newRow("2560 x 1440") << QSize(2560, 1440);
}

// Property: in the page's small bar plots (phi(k_i) over v_i, the normalizer and the query, the
// output, the error by step), at the sizes a lecturer's screens give the page, no two tick labels
// of an axis overlap: the value axes of plots a hundred pixels tall stacked "0.5 0.4 0.3 0.2 0.1"
// into one another.
void TestStepperView::smallPlotsKeepTickLabelsApart()
{
    QFETCH(QSize, size);
    StepperView view;
    view.resize(size);
    view.show();
    QVERIFY(QTest::qWaitForWindowExposed(&view));
    ExperimentSpec spec = specFor(QStringLiteral("favor-positive"));
    spec.approximation.features = 64;
    view.setExperiment(spec, inputFor(spec));
    QVERIFY(waitShown(view));
    view.setPosition(5);
    QTest::qWait(50);
    int axes = 0;
    for (const char* name : {"inputPlot", "normalizerPlot", "outputPlot", "errorPlot"}) {
        auto* plot = view.findChild<QCustomPlot*>(QLatin1String(name));
        QVERIFY(plot);
        plot->replot();
        for (QCPAxisRect* rect : plot->axisRects()) {
            for (QCPAxis* axis : {rect->axis(QCPAxis::atBottom), rect->axis(QCPAxis::atLeft)}) {
                ++axes;
                QVERIFY2(test::crowdedTickLabels(axis).isEmpty(),
                         qPrintable(QStringLiteral("%1, %2 axis, %3 pixels: %4")
                                        .arg(QLatin1String(name), axis->label())
                                        .arg(rect->height())
                                        .arg(test::crowdedTickLabels(axis).join(", "))));
                QVERIFY2(
                    test::tickLabelSpans(axis).size() >= 2,
                    qPrintable(
                        QStringLiteral("%1, %2 axis").arg(QLatin1String(name), axis->label())));
            }
        }
    }
    QCOMPARE(axes, 14);  // two stacked rects in three plots, one in the error plot
}

QTEST_MAIN(TestStepperView)
#include "test_stepper_view.moc"
