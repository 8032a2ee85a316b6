// Fitted feature maps in the window: Fit to this model (FitFeaturesDialog on its BackgroundJob:
// progress, the loss curve, cancel, a failure that hands nothing over), the maps merged into the
// session, the Method dock's Fit button, the Heads page ordered by entropy and monotonicity, the
// Metrics dock's rows for them, and the methods side by side (every ticked method's maps and
// numbers, exported as one picture; opened from the window on the result it shows).

#include "attention/fitted_feature_maps.h"
#include "experiment.h"
#include "inputs/inputs.h"
#include "ui/experiment/method_panel.h"
#include "ui/experiment/methods_side_by_side.h"
#include "ui/model/fit_features_dialog.h"
#include "ui/model/head_grid_view.h"
#include "ui/plotting/heatmap_view.h"
#include "ui/window/feature_map_controls.h"

#include "fitted_maps_support.h"
#include "widget_support.h"
#include "window_support.h"

#include <QCheckBox>
#include <QComboBox>
#include <QFile>
#include <QImage>
#include <QLabel>
#include <QPushButton>
#include <QSpinBox>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

#include <algorithm>
#include <functional>
#include <limits>
#include <vector>

using namespace attnlab;
using namespace attnlab::test;
using namespace attnlab::ui;

namespace {

const QString kTinyLlama = QStringLiteral(ATTNLAB_TEST_DATA "/models/tiny-llama-gqa-f32");

// The tiny Llama's text of `sentences` sentences, written to a file in folder.
QString trainingText(const QTemporaryDir& folder, int sentences)
{
    const QString path = folder.filePath(QStringLiteral("text-%1.txt").arg(sentences));
    QFile file(path);
    if (!file.open(QIODevice::WriteOnly))
        qFatal("cannot write %s", qPrintable(path));
    for (int i = 0; i < sentences; ++i)
        file.write("In the beginning God created the heaven and the earth. ");
    return path;
}

}  // namespace

class TestFitWindow : public QObject {
    Q_OBJECT

private slots:
    void fitHandsTheMapsOverWithItsCurve();
    void aFailedOrCancelledFitHandsNothingOver();
    void methodDockOffersTheFit();
    void headsOrderByEntropyAndMonotonicity();
    void methodsSideBySideShowsEveryTickedMethod();
    void windowOpensTheSideBySideOnItsResult();
};

void TestFitWindow::fitHandsTheMapsOverWithItsCurve()
{
    // One head of the tiny Llama, fitted on a file: the maps come with that head, merged with the
    // maps the session held for the model (another head kept); the progress bar reaches its end,
    // the loss curve has points, the status says how well.
    QTemporaryDir folder;
    auto held = std::make_shared<FittedFeatureMaps>(*randomFittedMaps(12, 2, 4));
    held->model = QStringLiteral("tiny-llama-gqa-f32");
    held->fitted.erase({1, 2});
    FitFeaturesDialog dialog;
    dialog.setContext(kTinyLlama, 1, 2, held, MemoryBudget());
    dialog.setScope(FitFeaturesDialog::Scope::Head);
    dialog.setSteps(30);
    dialog.setTrainingText(trainingText(folder, 20));
    QSignalSpy fitted(&dialog, &FitFeaturesDialog::fitted);
    dialog.show();
    dialog.fit();
    QVERIFY(dialog.isFitting());
    QVERIFY2(fitted.wait(60000), qPrintable(dialog.status()));
    const auto maps = fitted.front().front().value<std::shared_ptr<const FittedFeatureMaps>>();
    QVERIFY(maps);
    QCOMPARE(maps->fitted.size(), std::size_t(8));  // the 7 held and the one fitted
    QCOMPARE(maps->fitted.at({0, 0}).queryWeight, held->fitted.at({0, 0}).queryWeight);
    QVERIFY(maps->file.isEmpty());
    QVERIFY2(dialog.status().contains(QStringLiteral("1 head fitted")),
             qPrintable(dialog.status()));
    QVERIFY(dialog.curvePoints() > 0);
    const auto* progress = child<QWidget>(dialog, "fitProgress");
    QVERIFY(progress);
    QVERIFY(child<QPushButton>(dialog, "fitSave")->isEnabled());
    QImage grab = dialog.grab().toImage();
    keepGrab(grab, QStringLiteral("fit-dialog.png"));
    QVERIFY(colourCount(grab) > 20);
}

void TestFitWindow::aFailedOrCancelledFitHandsNothingOver()
{
    QTemporaryDir folder;
    FitFeaturesDialog dialog;
    dialog.setContext(kTinyLlama, 0, 0, nullptr, MemoryBudget());
    QSignalSpy fitted(&dialog, &FitFeaturesDialog::fitted);
    // A text under 512 tokens: refused, the reason shown.
    dialog.setTrainingText(trainingText(folder, 3));
    dialog.fit();
    QTRY_VERIFY_WITH_TIMEOUT(!dialog.isFitting(), 60000);
    QVERIFY2(dialog.status().contains(QStringLiteral("512")), qPrintable(dialog.status()));
    // A long fit, cancelled.
    dialog.setTrainingText(trainingText(folder, 20));
    dialog.setSteps(100000);
    dialog.fit();
    QTRY_VERIFY_WITH_TIMEOUT(dialog.curvePoints() > 0, 60000);
    dialog.cancel();
    QTRY_VERIFY_WITH_TIMEOUT(!dialog.isFitting(), 60000);
    QVERIFY2(dialog.status().contains(QStringLiteral("Cancelled")), qPrintable(dialog.status()));
    QCOMPARE(fitted.count(), 0);
}

void TestFitWindow::methodDockOffersTheFit()
{
    // hedgehog shows which maps the spec holds and the Fit button, which asks the window to fit;
    // other methods do not show it.
    MethodPanel panel;
    panel.show();
    QSignalSpy asked(&panel, &MethodPanel::fitRequested);
    ExperimentSpec spec;
    spec.approximation.kind = Method::Hedgehog;
    panel.setSpec(spec);
    auto* button = child<QPushButton>(panel, "fitToModel");
    QVERIFY(button->isVisible());
    QVERIFY(child<QLabel>(panel, "fittedMaps")->text().contains(QStringLiteral("No maps")));
    QTest::mouseClick(button, Qt::LeftButton);
    QCOMPARE(asked.count(), 1);
    spec.approximation.fittedMaps = randomFittedMaps(8, 2, 2);
    panel.setSpec(spec);
    QVERIFY(child<QLabel>(panel, "fittedMaps")->text().contains(QStringLiteral("test-model")));
    spec.approximation.kind = Method::FavorPositive;
    panel.setSpec(spec);
    QVERIFY(!button->isVisible());
}

void TestFitWindow::headsOrderByEntropyAndMonotonicity()
{
    // Four heads with known entropies and monotonicity: each order ranks them by its key.
    std::vector<HeadSurveyEntry> entries;
    const double entropy[] = {2.0, 0.5, 1.0, 3.0};
    const double monotonicity[] = {0.9, 0.2, 0.6, 0.4};
    const double error[] = {0.1, 0.4, 0.3, 0.2};
    for (int h = 0; h < 4; ++h) {
        HeadSurveyEntry entry;
        entry.head = h;
        entry.thumbnailExact = MatrixD::Identity(8, 8);
        entry.thumbnailApprox = MatrixD::Constant(8, 8, 0.125);
        entry.metrics.relFrobeniusAttention = error[h];
        entry.metrics.properties.entropyExact = entropy[h];
        entry.metrics.properties.monotonicity = monotonicity[h];
        entries.push_back(entry);
    }
    HeadGridView view;
    view.setEntries(entries);
    view.setOrder(HeadOrder::WorstFirst);
    QCOMPARE(view.displayOrder(), (std::vector<int>{1, 2, 3, 0}));
    view.setOrder(HeadOrder::LowestEntropyFirst);
    QCOMPARE(view.displayOrder(), (std::vector<int>{1, 2, 0, 3}));
    view.setOrder(HeadOrder::LeastMonotonicFirst);
    QCOMPARE(view.displayOrder(), (std::vector<int>{1, 3, 2, 0}));
    HeadOrder parsed = HeadOrder::Model;
    QVERIFY(parseHeadOrder(QStringLiteral("least-monotonic-first"), &parsed));
    QCOMPARE(parsed, HeadOrder::LeastMonotonicFirst);
    QVERIFY(view.headToolTip(0, 1).contains(QStringLiteral("monotonicity")));
}

void TestFitWindow::methodsSideBySideShowsEveryTickedMethod()
{
    // A random head with fitted maps: FAVOR+, elu+1 and hedgehog ticked at first, each with its
    // maps and numbers; ticking another adds it; the figure exports as one PNG and one SVG.
    ExperimentSpec spec;
    spec.input.kind = InputKind::Random;
    spec.input.length = 40;
    spec.input.headDim = 8;
    spec.approximation.fittedMaps = randomFittedMaps(8, 1, 1);
    auto input = std::make_shared<const AttentionInput>(buildInput(spec.input));
    MethodsSideBySide view;
    view.resize(1400, 800);
    view.show();
    QSignalSpy shown(&view, &MethodsSideBySide::shown);
    view.setExperiment(spec, input, 0);
    QVERIFY(shown.wait(60000));
    const std::vector<Method> first = view.methods();
    QVERIFY(std::find(first.begin(), first.end(), Method::Hedgehog) != first.end());
    QVERIFY(std::find(first.begin(), first.end(), Method::FavorPositive) != first.end());
    QVERIFY(std::find(first.begin(), first.end(), Method::Elu) != first.end());
    QCOMPARE(view.results().size(), first.size());
    for (int i = 0; i < int(first.size()); ++i)
        QVERIFY2(view.numbers(i).contains(QStringLiteral("monotonicity")),
                 qPrintable(view.numbers(i)));
    // The error maps share one scale, [-a, a] with a the largest error of any of them; the
    // methods' errors differ, so each map's own scale would differ too.
    double largest = 0, smallest = std::numeric_limits<double>::infinity();
    for (int i = 0; i < int(first.size()); ++i) {
        const auto* error =
            view.findChild<HeatmapView*>(QStringLiteral("sideBySideError%1").arg(i));
        QVERIFY(error);
        const double own = std::max(-error->dataRange().lower, error->dataRange().upper);
        largest = std::max(largest, own);
        smallest = std::min(smallest, own);
    }
    QVERIFY(smallest < 0.9 * largest);
    for (int i = 0; i < int(first.size()); ++i) {
        const auto* error =
            view.findChild<HeatmapView*>(QStringLiteral("sideBySideError%1").arg(i));
        QCOMPARE(error->colorRange().lower, -largest);
        QCOMPARE(error->colorRange().upper, largest);
    }
    view.setMethods({Method::FavorPositive, Method::HedgehogWindow, Method::Local});
    QVERIFY(shown.wait(60000));
    QCOMPARE(view.results().size(), std::size_t(3));
    QVERIFY(view.errorMessage().isEmpty());
    QTemporaryDir folder;
    for (const FigureFormat format : {FigureFormat::Png, FigureFormat::Svg}) {
        const QString path = folder.filePath(QStringLiteral("side.") + figureFormatName(format));
        view.exportFigure(path, format);
        QVERIFY2(QFile(path).size() > 1000,
                 qPrintable(QStringLiteral("%1: %2 bytes").arg(path).arg(QFile(path).size())));
    }
    // The maps of a row stand at one height (their decorations differ: some stood 12 pixels
    // lower than the others).
    for (const QString& row :
         {QStringLiteral("sideBySideApprox%1"), QStringLiteral("sideBySideError%1")}) {
        std::vector<int> tops;
        for (int i = 0; i < 3; ++i) {
            const auto* map = view.findChild<HeatmapView*>(row.arg(i));
            QVERIFY(map);
            tops.push_back(map->mapTo(&view, map->axisRect()->rect().topLeft()).y());
        }
        QVERIFY2(std::adjacent_find(tops.begin(), tops.end(), std::not_equal_to<>()) == tops.end(),
                 qPrintable(QStringLiteral("%1: tops %2, %3, %4")
                                .arg(row.arg(QStringLiteral("i")))
                                .arg(tops[0])
                                .arg(tops[1])
                                .arg(tops[2])));
    }
    const QImage picture(folder.filePath(QStringLiteral("side.png")));
    keepGrab(picture, QStringLiteral("side-by-side.png"));
    QVERIFY(colourCount(picture) > 50);
}

void TestFitWindow::windowOpensTheSideBySideOnItsResult()
{
    // Model > Methods Side by Side... compares the result the window shows as soon as it opens
    // (it used to wait for the window's next result: blank, its export white): exact P and each
    // ticked method's P^ and error drawn, on screen and exported; it follows the head the window
    // shows. The methods without a causal form are greyed out while the attention is causal,
    // saying why (the default example reads a text with a language model; then a random input
    // under the causal mask, then without it). Nothing ticked says to tick.
    startAsFirstRun();
    MainWindow window(MainWindow::Start::DefaultExample);
    QVERIFY(showAndWait(window));
    window.featureMaps().openSideBySide();
    MethodsSideBySide& view = *window.featureMaps().sideBySide();
    QSignalSpy shown(&view, &MethodsSideBySide::shown);
    QVERIFY(shown.count() > 0 || shown.wait(kResultTimeoutMs));
    QCOMPARE(view.methods(), (std::vector<Method>{Method::FavorPositive, Method::Elu}));
    QCOMPARE(view.results().size(), std::size_t(2));
    QVERIFY(view.errorMessage().isEmpty());
    const int length = int(resultOf(window).heads.front().attentionExact.rows());
    for (const char* name : {"sideBySideExact", "sideBySideApprox0", "sideBySideError0",
                             "sideBySideApprox1", "sideBySideError1"})
        QCOMPARE(child<HeatmapView>(view, name)->rowCount(), length);
    QWidget& figure = *child<QWidget>(view, "sideBySideFigure");
    QTRY_VERIFY_WITH_TIMEOUT(colourCount(figure.grab().toImage()) > 50, 5000);
    keepGrab(view.grab().toImage(), QStringLiteral("window-side-by-side-screen.png"));
    QTemporaryDir folder;
    const QString path = folder.filePath(QStringLiteral("side.png"));
    view.exportFigure(path, FigureFormat::Png);
    const QImage picture(path);
    keepGrab(picture, QStringLiteral("window-side-by-side.png"));
    QVERIFY(colourCount(picture) > 50);
    // Another head in the window's view bar: the comparison follows.
    const int head = window.viewSettings().head == 0 ? 1 : 0;
    child<QSpinBox>(window, "viewHead")->setValue(head);
    QVERIFY(shown.wait(kResultTimeoutMs));
    QVERIFY2(child<HeatmapView>(view, "sideBySideExact")
                 ->title()
                 .contains(QStringLiteral("(head %1)").arg(head)),
             qPrintable(child<HeatmapView>(view, "sideBySideExact")->title()));

    const auto nystrom = child<QCheckBox>(view, "sideBySide-nystrom");
    const auto greyedOutSaying = [&](const QString& why) {
        for (const MethodInfo& info : methodsWithoutCausalForm()) {
            const auto* box =
                child<QCheckBox>(view, qPrintable(QStringLiteral("sideBySide-") + info.name));
            if (box->isEnabled() || !box->toolTip().contains(why))
                return false;
        }
        return true;
    };
    QVERIFY2(greyedOutSaying(QStringLiteral("language model")), qPrintable(nystrom->toolTip()));
    ExperimentSpec random;
    random.causal = true;
    window.setSpec(random);
    QVERIFY(shown.wait(kResultTimeoutMs));
    QVERIFY2(greyedOutSaying(QStringLiteral("causal mask")), qPrintable(nystrom->toolTip()));
    view.setMethods({Method::FavorPositive, Method::Nystrom});
    QVERIFY(shown.wait(kResultTimeoutMs));
    QCOMPARE(view.results().size(), std::size_t(1));
    random.causal = false;
    window.setSpec(random);
    QVERIFY(shown.wait(kResultTimeoutMs));
    QVERIFY(nystrom->isEnabled());
    QCOMPARE(nystrom->toolTip(), methodInfo(Method::Nystrom).summary);
    QCOMPARE(view.results().size(), std::size_t(2));

    view.setMethods({});
    QVERIFY(shown.wait(kResultTimeoutMs));
    QVERIFY(view.results().empty());
    QVERIFY2(view.errorMessage().contains(QStringLiteral("Tick")), qPrintable(view.errorMessage()));
}

QTEST_MAIN(TestFitWindow)
#include "test_fit_window.moc"
