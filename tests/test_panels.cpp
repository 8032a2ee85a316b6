// The row comparison, image overlay and metrics panels, driven as a user would (clicks, grabs),
// and the colour scale P and P^ share in the window.
#include "ui/experiment/image_overlay_view.h"
#include "ui/experiment/metrics_panel.h"
#include "ui/experiment/row_comparison_view.h"
#include "ui/plotting/color_maps.h"
#include "ui/plotting/heatmap_view.h"
#include "window_support.h"

#include <QCheckBox>
#include <QComboBox>
#include <QJsonObject>
#include <QLabel>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

#include <cmath>

using namespace attnlab;
using namespace attnlab::ui;
using namespace attnlab::test;

namespace {

// Draws the widget now and waits until it is on screen.
void showAndReplot(QWidget* widget)
{
    widget->show();
    QVERIFY(QTest::qWaitForWindowExposed(widget));
    if (auto* plot = qobject_cast<QCustomPlot*>(widget))
        plot->replot();
}

// The 1-D data (keys, values) a plottable draws.
QVector<QPointF> plottedData(QCPAbstractPlottable* plottable)
{
    QVector<QPointF> points;
    QCPPlottableInterface1D* data = plottable->interface1D();
    for (int i = 0; i < data->dataCount(); ++i)
        points.append(QPointF(data->dataMainKey(i), data->dataMainValue(i)));
    return points;
}

QStringList tokenLabels(int count)
{
    QStringList labels;
    for (int j = 0; j < count; ++j)
        labels.append(QStringLiteral("token%1").arg(j));
    return labels;
}

// A hand-made result: L = 8, one head, every metric set by hand.
ExperimentResult handMadeResult()
{
    ExperimentResult result;
    result.spec.approximation.kind = Method::FavorPositive;
    result.spec.approximation.features = 64;
    result.labels = tokenLabels(8);
    AttentionMetrics metrics;
    metrics.maxAbsError = 0.123456;
    metrics.meanAbsError = 1.23456e-5;
    metrics.relFrobeniusAttention = 0.5;
    metrics.relFrobeniusOutput = 12345.6;
    metrics.meanTotalVariation = 0.02;
    metrics.meanKl = AttentionMetrics::notApplicable;
    metrics.kernelMse = 3.0;
    metrics.nonPositiveRows = 2;
    metrics.kernelOverflow = 0;
    result.heads.resize(1);
    result.heads[0].metrics = metrics;
    result.metrics = metrics;
    result.secondsApprox = 0.0015;
    result.secondsExact = 0.012;
    return result;
}

// A test image: one dark colour, so that the white outline stands out.
QImage darkImage(int width, int height)
{
    QImage image(width, height, QImage::Format_RGB32);
    image.fill(QColor(30, 60, 90));
    return image;
}

// An attention row over 12 patches, peaked at patch 6, small at patch 5.
VectorD peakedRow()
{
    VectorD row = VectorD::Constant(12, 0.01);
    row[6] = 0.6;
    row[5] = 0.0;
    row /= row.sum();
    return row;
}

bool isWhite(QRgb pixel)
{
    return qRed(pixel) >= 235 && qGreen(pixel) >= 235 && qBlue(pixel) >= 235;
}

// The overlay the patch tests read, shown at 1200 x 420: a dark 64 x 48 image in a 3 x 4 grid with
// the attention peaked on patch 6 on every panel.
void showPeakedOverlay(ImageOverlayView& view)
{
    view.resize(1200, 420);
    view.setImage(darkImage(64, 48), 3, 4);
    view.setAttention(peakedRow(), peakedRow(), 6);
    showAndReplot(&view);
}

}  // namespace

class TestPanels : public QObject {
    Q_OBJECT

private slots:
    void rowViewPlotsTheRowsItIsGiven_data();
    void rowViewPlotsTheRowsItIsGiven();
    void rowViewShowsNegativeWeightsBelowZero();
    void rowViewLabelsEveryKeyWhenTheyFit();
    void rowViewThinnedLabelsDoNotOverlap_data();
    void rowViewThinnedLabelsDoNotOverlap();
    void rowViewClearShowsTheHint();

    void overlayClickOnAPatchEmitsItsIndex();
    void overlayOutlinesTheSelectedPatch();
    void overlayGrabShowsImageAndAttention();
    void overlayClearRemovesImageAndClicks();
    void overlayClicksStillHitAfterAnExport();

    void metricsPanelShowsEveryMetric_data();
    void metricsPanelShowsEveryMetric();
    void metricsPanelShowsHeadBesideAllHeads();
    void metricsPanelShowsSummary();
    void metricsPanelShowsWarnings();
    void metricsPanelShowsTheHeadsOwnWarnings();
    void metricsPanelNamesTheKeptExactSidesTime();
    void metricsPanelKeepsItsWidthWhateverTheNumbers();
    void metricsPanelClearEmptiesEverything();

    void aSharedScaleShowsNegativeWeightsAroundZero();
    void aHeldErrorScaleStaysFromResultToResult();
};

void TestPanels::rowViewPlotsTheRowsItIsGiven_data()
{
    QTest::addColumn<int>("keys");
    QTest::addColumn<bool>("bars");
    QTest::newRow("16 keys: grouped bars") << 16 << true;
    QTest::newRow("2000 keys: step lines") << 2000 << false;
}

// Property: the plottables hold exactly P_i and P^_i, key j at x = j, drawn as bars for short
// rows and as graphs for long ones.
void TestPanels::rowViewPlotsTheRowsItIsGiven()
{
    QFETCH(int, keys);
    QFETCH(bool, bars);
    VectorD exact(keys);
    VectorD approx(keys);
    for (int j = 0; j < keys; ++j) {
        exact[j] = 1.0 / (j + 2);
        approx[j] = 1.0 / (j + 2) + (j % 3 - 1) * 0.01;
    }
    RowComparisonView view;
    view.resize(900, 350);
    view.setRows(exact, approx, tokenLabels(keys), QStringLiteral("Query 3: token3"));
    QCOMPARE(qobject_cast<QCPBars*>(view.exactPlottable()) != nullptr, bars);
    QCOMPARE(qobject_cast<QCPGraph*>(view.approxPlottable()) != nullptr, !bars);
    const QVector<QPointF> exactPoints = plottedData(view.exactPlottable());
    const QVector<QPointF> approxPoints = plottedData(view.approxPlottable());
    QCOMPARE(exactPoints.size(), keys);
    QCOMPARE(approxPoints.size(), keys);
    for (int j = 0; j < keys; ++j) {
        QCOMPARE(exactPoints[j], QPointF(j, 1.0 / (j + 2)));
        QCOMPARE(approxPoints[j], QPointF(j, 1.0 / (j + 2) + (j % 3 - 1) * 0.01));
    }
    QCOMPARE(view.exactPlottable()->name(), QStringLiteral("exact P"));
    QCOMPARE(view.approxPlottable()->name(), QStringLiteral(u"approximation P\u0302"));
    QVERIFY(view.exactPlottable()->visible() && view.approxPlottable()->visible());
}

// Property: a negative approximate weight is inside the y range, below the zero line.
void TestPanels::rowViewShowsNegativeWeightsBelowZero()
{
    VectorD exact = VectorD::Constant(16, 1.0 / 16);
    VectorD approx = exact;
    approx[3] = -0.12;
    approx[4] = 0.3;
    RowComparisonView view;
    view.resize(900, 350);
    view.setRows(exact, approx, tokenLabels(16), QStringLiteral("Query 0: token0"));
    showAndReplot(&view);
    const QCPRange range = view.yAxis->range();
    QVERIFY2(range.lower < -0.12, qPrintable(QString::number(range.lower)));
    QVERIFY(range.upper > 0.3);
    // On screen the bar of key 3 ends below the zero line, inside the axis rect.
    const double zero = view.yAxis->coordToPixel(0);
    const double tip = view.yAxis->coordToPixel(-0.12);
    QVERIFY(tip > zero + 10);
    QVERIFY(tip < view.axisRect()->bottom());
    QCOMPARE(plottedData(view.approxPlottable())[3].y(), -0.12);
}

// Property: 16 short tokens at 900 px are all written, each under its own key.
void TestPanels::rowViewLabelsEveryKeyWhenTheyFit()
{
    const QStringList words =
        QStringLiteral("The cat sat on the mat because the mat was warm and the cat was tired")
            .split(' ');
    QCOMPARE(words.size(), 16);
    RowComparisonView view;
    view.resize(900, 350);
    view.setRows(VectorD::Constant(16, 1.0 / 16), VectorD::Constant(16, 1.0 / 16), words,
                 QStringLiteral("Query 1: cat"));
    showAndReplot(&view);
    QCOMPARE(view.labelStride(), 1);
    const auto ticker = qSharedPointerDynamicCast<QCPAxisTickerText>(view.xAxis->ticker());
    QVERIFY(ticker);
    QCOMPARE(ticker->ticks().size(), 16);
    for (int j = 0; j < 16; ++j)
        QCOMPARE(ticker->ticks().value(j), words[j]);
}

void TestPanels::rowViewThinnedLabelsDoNotOverlap_data()
{
    QTest::addColumn<QStringList>("labels");
    QStringList words;
    QStringList indices;
    for (int j = 0; j < 2000; ++j) {
        words.append(j % 2 ? QStringLiteral("representation") : QStringLiteral("of"));
        indices.append(QString::number(j));
    }
    QTest::newRow("long and short words") << words;
    QTest::newRow("indices") << indices;
}

// Property: with 2000 keys the labels are thinned so that no two of them overlap: upright
// neighbours are at least their half widths apart; rotated labels are parallel strips, which
// clear each other when the distance between baselines, dx * |sin(angle)|, is at least the text
// height.
void TestPanels::rowViewThinnedLabelsDoNotOverlap()
{
    QFETCH(QStringList, labels);
    const int keys = 2000;
    RowComparisonView view;
    view.resize(900, 350);
    view.setRows(VectorD::Constant(keys, 1.0 / keys), VectorD::Constant(keys, 1.0 / keys), labels,
                 QStringLiteral("Query 0: of"));
    showAndReplot(&view);
    const auto ticker = qSharedPointerDynamicCast<QCPAxisTickerText>(view.xAxis->ticker());
    QVERIFY(ticker);
    const QMap<double, QString> ticks = ticker->ticks();
    QVERIFY2(ticks.size() >= 4 && ticks.size() < 100, qPrintable(QString::number(ticks.size())));
    QVERIFY(view.labelStride() > 1);
    QVERIFY(view.xAxis->label().contains(QString::number(view.labelStride())));

    const QFontMetricsF metrics(view.xAxis->tickLabelFont());
    const double angle = qDegreesToRadians(view.xAxis->tickLabelRotation());
    const QList<double> keysShown = ticks.keys();
    for (int t = 0; t + 1 < keysShown.size(); ++t) {
        QCOMPARE(keysShown[t + 1] - keysShown[t], double(view.labelStride()));
        // Each label is a token of its own key (shortened at most with an ellipsis).
        const QString text = ticks.value(keysShown[t]);
        const QString token = labels[int(keysShown[t])];
        QVERIFY2(token.startsWith(text.chopped(text.endsWith(QChar(0x2026)) ? 1 : 0)),
                 qPrintable(text));
        const double dx =
            view.xAxis->coordToPixel(keysShown[t + 1]) - view.xAxis->coordToPixel(keysShown[t]);
        if (qFuzzyIsNull(angle)) {
            const double halfWidths = (metrics.horizontalAdvance(text) +
                                       metrics.horizontalAdvance(ticks.value(keysShown[t + 1]))) /
                                      2;
            QVERIFY(dx >= halfWidths);
        } else {
            QVERIFY2(dx * std::abs(std::sin(angle)) >= metrics.height(),
                     qPrintable(QStringLiteral("dx %1 angle %2").arg(dx).arg(angle)));
        }
    }
}

// Property: clear() removes the rows and shows the hint in their place.
void TestPanels::rowViewClearShowsTheHint()
{
    RowComparisonView view;
    view.resize(900, 350);
    view.setRows(VectorD::Constant(4, 0.25), VectorD::Constant(4, 0.25), tokenLabels(4),
                 QStringLiteral("Query 0: token0"));
    view.clear();
    showAndReplot(&view);
    QCOMPARE(view.exactPlottable()->interface1D()->dataCount(), 0);
    QCOMPARE(view.approxPlottable()->interface1D()->dataCount(), 0);
    bool hintShown = false;
    for (int i = 0; i < view.itemCount(); ++i) {
        const auto* text = qobject_cast<QCPItemText*>(view.item(i));
        hintShown |=
            text && text->visible() &&
            text->text() == QStringLiteral("Click a query row in a heatmap to compare its rows");
    }
    QVERIFY(hintShown);
    QVERIFY(!view.legend->visible());
}

// Property: clicking the centre of patch (row 1, col 2) of a 3 x 4 grid on any of the three
// panels emits patchClicked(1 * 4 + 2 = 6); points 0.4 patch from the centre still hit it,
// 0.6 patch to the right hits patch 7. Patches are square on screen.
void TestPanels::overlayClickOnAPatchEmitsItsIndex()
{
    ImageOverlayView view;
    showPeakedOverlay(view);
    for (int panel = 0; panel < ImageOverlayView::kPanels; ++panel) {
        const QPoint centre = view.patchCenter(panel, 6);
        const double pitchX = view.patchCenter(panel, 7).x() - centre.x();
        const double pitchY = view.patchCenter(panel, 10).y() - centre.y();
        QVERIFY(pitchX > 20);
        QVERIFY2(std::abs(pitchX - pitchY) <= 1.0, qPrintable(QString::number(pitchY)));
        QSignalSpy spy(&view, &ImageOverlayView::patchClicked);
        const QList<QPair<QPointF, int>> clicks{
            {{0, 0}, 6}, {{-0.4, -0.4}, 6}, {{0.4, 0.4}, 6}, {{0.6, 0}, 7}, {{0, -0.6}, 2}};
        for (const auto& [offset, patch] : clicks) {
            const QPoint at = centre + QPointF(offset.x() * pitchX, offset.y() * pitchY).toPoint();
            QTest::mouseClick(&view, Qt::LeftButton, {}, at);
            QCOMPARE(spy.size(), 1);
            QCOMPARE(spy.takeFirst().at(0).toInt(), patch);
        }
    }
    // Outside the image nothing is emitted.
    QSignalSpy spy(&view, &ImageOverlayView::patchClicked);
    QTest::mouseClick(&view, Qt::LeftButton, {}, QPoint(2, 2));
    QCOMPARE(spy.size(), 0);
}

// Property: on every panel the outline of the selected patch 6 is the cell (col 2, row 1) to
// (col 3, row 2), and on screen its white line runs along the patch's left edge.
void TestPanels::overlayOutlinesTheSelectedPatch()
{
    ImageOverlayView view;
    showPeakedOverlay(view);
    const QImage grab = view.grab().toImage();
    const qreal ratio = grab.devicePixelRatio();
    for (int panel = 0; panel < ImageOverlayView::kPanels; ++panel) {
        const QCPItemRect* outline = view.selectionOutline(panel);
        QVERIFY(outline->visible());
        QCOMPARE(outline->topLeft->coords(), QPointF(2, 1));
        QCOMPARE(outline->bottomRight->coords(), QPointF(3, 2));

        const QPoint centre = view.patchCenter(panel, 6);
        const double pitch = view.patchCenter(panel, 7).x() - centre.x();
        const int edge = int(std::lround(centre.x() - pitch / 2));
        bool whiteOnEdge = false;
        for (int x = edge - 1; x <= edge + 1; ++x)
            whiteOnEdge |= isWhite(grab.pixel(QPoint(x, centre.y()) * ratio));
        QVERIFY2(whiteOnEdge, qPrintable(QStringLiteral("panel %1").arg(panel)));
        // Inside patch 5, away from the edge, no white line.
        QVERIFY(!isWhite(grab.pixel(QPoint(edge - int(pitch / 3), centre.y()) * ratio)));
    }
}

// Property: the grabbed figure is not blank: the image is drawn (its dark grey inside every
// panel) and the attention colour makes the peaked patch differ from a patch with no attention.
void TestPanels::overlayGrabShowsImageAndAttention()
{
    ImageOverlayView view;
    showPeakedOverlay(view);
    const QImage grab = view.grab().toImage();
    const qreal ratio = grab.devicePixelRatio();
    const auto pixelAt = [&](const QPoint& point) { return QColor(grab.pixel(point * ratio)); };
    for (int panel = 0; panel < ImageOverlayView::kPanels; ++panel) {
        const QColor quiet = pixelAt(view.patchCenter(panel, 5));  // attention 0: image only
        QVERIFY2(quiet.value() < 150, qPrintable(quiet.name()));
        QCOMPARE(quiet.saturation(), 0);  // the image is shown in grey
        const QColor peak = pixelAt(view.patchCenter(panel, 6) + QPoint(0, 5));
        if (panel != ImageOverlayView::ErrorPanel) {
            QVERIFY2(peak.saturation() > 30 && peak.value() > quiet.value() + 60,
                     qPrintable(peak.name()));
        }
    }
    QSet<QRgb> colours;
    for (int y = 0; y < grab.height(); y += 3)
        for (int x = 0; x < grab.width(); x += 3)
            colours.insert(grab.pixel(x, y));
    QVERIFY2(colours.size() > 30, qPrintable(QString::number(colours.size())));
}

// Property: after clear() nothing is drawn over the panels, a hint is shown, and clicks where a
// patch was emit nothing.
void TestPanels::overlayClearRemovesImageAndClicks()
{
    ImageOverlayView view;
    showPeakedOverlay(view);
    const QPoint centre = view.patchCenter(ImageOverlayView::ExactPanel, 6);
    view.clear();
    view.replot();
    QSignalSpy spy(&view, &ImageOverlayView::patchClicked);
    QTest::mouseClick(&view, Qt::LeftButton, {}, centre);
    QCOMPARE(spy.size(), 0);
    QCOMPARE(view.patchAt(centre), -1);
    bool hintShown = false;
    for (int i = 0; i < view.itemCount(); ++i) {
        const auto* text = qobject_cast<QCPItemText*>(view.item(i));
        hintShown |= text && text->visible() && !text->text().isEmpty();
        if (const auto* pixmap = qobject_cast<QCPItemPixmap*>(view.item(i)))
            QVERIFY(!pixmap->visible());
        if (const auto* rect = qobject_cast<QCPItemRect*>(view.item(i)))
            QVERIFY(!rect->visible());
    }
    QVERIFY(hintShown);
    for (int i = 0; i < view.plottableCount(); ++i)
        QVERIFY(!view.plottable(i)->visible());
}

// Property: exporting the figure at another size (which lays it out at that size) does not move
// the patches under the mouse: a click at patch 6's centre on screen still picks patch 6.
void TestPanels::overlayClicksStillHitAfterAnExport()
{
    ImageOverlayView view;
    showPeakedOverlay(view);
    const QPoint centre = view.patchCenter(ImageOverlayView::ApproxPanel, 6);
    QTemporaryDir dir;
    QVERIFY(view.savePng(dir.filePath(QStringLiteral("figure.png")), 1800, 700));
    QSignalSpy spy(&view, &ImageOverlayView::patchClicked);
    QTest::mouseClick(&view, Qt::LeftButton, {}, centre);
    QCOMPARE(spy.size(), 1);
    QCOMPARE(spy.takeFirst().at(0).toInt(), 6);
    QCOMPARE(view.patchCenter(ImageOverlayView::ApproxPanel, 6), centre);
}

void TestPanels::metricsPanelShowsEveryMetric_data()
{
    QTest::addColumn<QString>("key");
    QTest::addColumn<QString>("text");
    QTest::newRow("0.123456: 4 significant digits") << "max_abs"
                                                    << "0.1235";
    QTest::newRow("1.23456e-5: power of ten")
        << "mean_abs" << QStringLiteral("1.235 \u00d7 10\u207b\u2075");
    QTest::newRow("0.5") << "rel_frobenius_attention"
                         << "0.5";
    QTest::newRow("12345.6: power of ten")
        << "rel_frobenius_output" << QStringLiteral("1.235 \u00d7 10\u2074");
    QTest::newRow("0.02") << "mean_tv"
                          << "0.02";
    QTest::newRow("NaN: n/a") << "mean_kl"
                              << "n/a";
    QTest::newRow("3") << "kernel_mse"
                       << "3";
    QTest::newRow("2 of L = 8 rows") << "nonpositive_rows"
                                     << "2 of 8";
    QTest::newRow("no overflow") << "kernel_overflow"
                                 << "0";
}

// Property: each metric of a hand-made result is shown with 4 significant digits, powers of ten
// for tiny and huge values, and NaN as "n/a" (never "nan" anywhere in the panel).
void TestPanels::metricsPanelShowsEveryMetric()
{
    QFETCH(QString, key);
    QFETCH(QString, text);
    MetricsPanel panel;
    panel.resize(360, 500);
    panel.setResult(handMadeResult(), 0);
    QCOMPARE(panel.metricText(key), text);
    QCOMPARE(panel.metricText(key, MetricScope::AllHeads), text);
    for (const QLabel* label : panel.findChildren<QLabel*>())
        QVERIFY2(!label->text().contains(QStringLiteral("nan"), Qt::CaseInsensitive),
                 qPrintable(label->text()));
}

// Property: with two heads, head 1's metrics are shown beside those over all heads.
void TestPanels::metricsPanelShowsHeadBesideAllHeads()
{
    ExperimentResult result = handMadeResult();
    result.heads.resize(2);
    result.heads[1].metrics.maxAbsError = 0.25;
    result.heads[1].metrics.nonPositiveRows = 1;
    result.metrics.nonPositiveRows = 3;
    MetricsPanel panel;
    panel.setResult(result, 1);
    QCOMPARE(panel.metricText(QStringLiteral("max_abs")), QStringLiteral("0.25"));
    QCOMPARE(panel.metricText(QStringLiteral("max_abs"), MetricScope::AllHeads),
             QStringLiteral("0.1235"));
    QCOMPARE(panel.metricText(QStringLiteral("nonpositive_rows")), QStringLiteral("1 of 8"));
    QCOMPARE(panel.metricText(QStringLiteral("nonpositive_rows"), MetricScope::AllHeads),
             QStringLiteral("3 of 16"));
}

// Property: L, the method's title and role, m and both timings (in ms) are shown; a replacement
// kernel says that its error is not an estimator's, and local attention shows its window.
void TestPanels::metricsPanelShowsSummary()
{
    MetricsPanel panel;
    panel.setResult(handMadeResult(), 0);
    QStringList texts;
    for (const QLabel* label : panel.findChildren<QLabel*>())
        texts.append(label->text());
    for (const QString& expected :
         {QStringLiteral("FAVOR+ positive"), QStringLiteral("Sequence length L"),
          QStringLiteral("8"), QStringLiteral("Features m"), QStringLiteral("64"),
          QStringLiteral("1.50 ms"), QStringLiteral("12.0 ms")})
        QVERIFY2(texts.contains(expected), qPrintable(expected));
    const auto* role = panel.findChild<QLabel*>(QStringLiteral("metricsRole"));
    QVERIFY(role && role->text().startsWith(QStringLiteral("Estimates softmax")));

    ExperimentResult replacement = handMadeResult();
    replacement.spec.approximation.kind = Method::Elu;
    panel.setResult(replacement, 0);
    QVERIFY(role->text().contains(QStringLiteral("different kernel")));

    ExperimentResult local = handMadeResult();
    local.spec.approximation.kind = Method::Local;
    local.spec.approximation.setValue(windowParameter(), 12);
    panel.setResult(local, 0);
    texts.clear();
    for (const QLabel* label : panel.findChildren<QLabel*>())
        texts.append(label->text());
    QVERIFY(texts.contains(QStringLiteral("Window w")));
    QVERIFY(texts.contains(QStringLiteral("12")));
}

// Property: every warning is listed with its message; none shows "No warnings".
void TestPanels::metricsPanelShowsWarnings()
{
    ExperimentResult result = handMadeResult();
    result.warnings = {{QStringLiteral("nonpositive-denominator"),
                        QStringLiteral("2 of 8 rows have a non-positive denominator.")},
                       {QStringLiteral("kl-undefined"), QStringLiteral("KL is undefined.")}};
    MetricsPanel panel;
    panel.resize(360, 500);
    panel.setResult(result, 0);
    showAndReplot(&panel);
    const QStringList warnings = panel.warningTexts();
    QCOMPARE(warnings.size(), 2);
    QVERIFY(warnings[0].endsWith(QStringLiteral("2 of 8 rows have a non-positive denominator.")));
    QVERIFY(warnings[1].endsWith(QStringLiteral("KL is undefined.")));
    const auto noWarningsShown = [&] {
        for (const QLabel* label : panel.findChildren<QLabel*>())
            if (label->text() == QStringLiteral("No warnings") && label->isVisible())
                return true;
        return false;
    };
    QVERIFY(!noWarningsShown());

    result.warnings.clear();
    panel.setResult(result, 0);
    QVERIFY(panel.warningTexts().isEmpty());
    QVERIFY(noWarningsShown());
}

// Property: with one head of several shown, the warnings are that head's and the whole result's;
// the other heads' are named in one line, so that a count read beside the head's metrics is that
// head's (the dock listed head 0's "22 of 48 rows" beside head 1's 23). Every warning has a
// heading in words, not its code.
void TestPanels::metricsPanelShowsTheHeadsOwnWarnings()
{
    ExperimentResult result = handMadeResult();
    result.heads.resize(3, result.heads.front());
    result.warnings = {{QStringLiteral("nonpositive-denominator"), QStringLiteral("in head 0."), 0},
                       {QStringLiteral("nonpositive-denominator"), QStringLiteral("in head 1."), 1},
                       {QStringLiteral("overflow"), QStringLiteral("kernel in head 2."), 2},
                       {QStringLiteral("window-covers-every-pair"), QStringLiteral("exact.")}};
    MetricsPanel panel;
    panel.setResult(result, 1);
    const QStringList warnings = panel.warningTexts();
    QCOMPARE(warnings.size(), 3);
    QCOMPARE(warnings[0], QStringLiteral("Non-positive denominators: in head 1."));
    QCOMPARE(warnings[1], QStringLiteral("The window holds every key: exact."));
    QVERIFY2(warnings[2].startsWith(QStringLiteral("Other heads: Heads 0, 2 have warnings")),
             qPrintable(warnings[2]));
    panel.setResult(result, -1);  // every head together: every warning
    QCOMPARE(panel.warningTexts().size(), 4);
    for (const char* code : {"size-past-length", "output-zero", "input", "causal-form"}) {
        result.warnings = {{QString::fromLatin1(code), QStringLiteral("message.")}};
        panel.setResult(result, 0);
        QVERIFY2(!panel.warningTexts().front().startsWith(QLatin1String(code)),
                 qPrintable(panel.warningTexts().front()));
    }
}

// Property: the second time is named for what it measured: "Time, exact", or, when the result
// kept the previous exact side, "Time, rows and metrics" (it read "Time, exact" and jumped from
// 3.5 to 132 ms).
void TestPanels::metricsPanelNamesTheKeptExactSidesTime()
{
    ExperimentResult result = handMadeResult();
    MetricsPanel panel;
    const auto shows = [&](const QString& text) {
        for (const QLabel* label : panel.findChildren<QLabel*>())
            if (label->text() == text)
                return true;
        return false;
    };
    panel.setResult(result, 0);
    QVERIFY(shows(QStringLiteral("Time, exact")));
    result.exactKept = true;
    panel.setResult(result, 0);
    QVERIFY(shows(QStringLiteral("Time, rows and metrics")));
    QVERIFY(!shows(QStringLiteral("Time, exact")));
}

// Property: the panel asks for the same least width (the dock's) whatever the numbers of a result,
// values from 0.1234 to 0.001234 and times from under 1 ms to seconds, with the summary's longest
// name ("Time, rows and metrics") and a head's column beside all heads', where the numbers' columns
// decide the panel's width: a time crossing 1 ms (0.988 ms, then 1.23 ms) or a value with a digit
// more
// ("0.009005" after "0.04772") widened the dock by a digit, and the maps beside it moved and drew
// again (a busy machine's times crossed 1 ms).
void TestPanels::metricsPanelKeepsItsWidthWhateverTheNumbers()
{
    ExperimentResult result = handMadeResult();
    result.exactKept = true;
    result.heads.resize(2, result.heads[0]);
    MetricsPanel panel;
    panel.setResult(result, 0);
    panel.show();  // a hidden label's new text leaves its layout's size as it was
    QVERIFY(QTest::qWaitForWindowExposed(&panel));
    const int least = panel.minimumSizeHint().width();
    const std::pair<double, double> numbers[] = {
        {0.1234, 0.0009876}, {0.04772, 0.00123}, {0.009005, 0.0123}, {0.001234, 9.876}};
    for (const auto& [value, seconds] : numbers) {
        for (AttentionMetrics* metrics :
             {&result.metrics, &result.heads[0].metrics, &result.heads[1].metrics})
            metrics->maxAbsError = metrics->meanAbsError = metrics->relFrobeniusAttention =
                metrics->relFrobeniusOutput = metrics->meanTotalVariation = metrics->kernelMse =
                    value;
        result.secondsApprox = result.secondsExact = seconds;
        panel.setResult(result, 0);
        panel.layout()->activate();  // as the event loop does: the nested layouts measure again
        QCOMPARE(panel.minimumSizeHint().width(), least);
    }
}

// Property: clear() leaves no metric, summary value or warning behind.
void TestPanels::metricsPanelClearEmptiesEverything()
{
    ExperimentResult result = handMadeResult();
    result.warnings = {{QStringLiteral("overflow"), QStringLiteral("Too large.")}};
    MetricsPanel panel;
    panel.setResult(result, 0);
    panel.clear();
    for (const char* key :
         {"max_abs", "mean_abs", "rel_frobenius_attention", "rel_frobenius_output", "mean_tv",
          "mean_kl", "kernel_mse", "nonpositive_rows", "kernel_overflow"})
        QVERIFY2(panel.metricText(key).isEmpty(), qPrintable(key));
    QVERIFY(panel.warningTexts().isEmpty());
    for (const QLabel* label : panel.findChildren<QLabel*>()) {
        QVERIFY(!label->text().contains(QStringLiteral("ms")));
        QVERIFY(!label->text().contains(QStringLiteral("Too large")));
    }
}

// Property: with "Same scale for P and P^" and a P^ with negative weights (Linformer), both maps
// take the diverging map over [-a, a], a the largest |weight| of P and P^, so that 0 has one
// colour in both and P's colours are not squashed above P^'s minimum.
void TestPanels::aSharedScaleShowsNegativeWeightsAroundZero()
{
    startAsFirstRun();
    MainWindow window(MainWindow::Start::DefaultExample);
    QVERIFY(showAndWait(window));
    ExperimentSpec spec;
    spec.approximation.kind = Method::Linformer;
    window.setSpec(spec);
    QVERIFY(waitForResult(window));
    auto* shared = window.findChild<QCheckBox*>(QStringLiteral("sharedScale"));
    QVERIFY(shared);
    shared->setChecked(true);
    QVERIFY(window.viewSettings().sharedScale);
    const HeadResult& head = resultOf(window).heads.at(std::size_t(window.viewSettings().head));
    const MatrixD exact = head.attentionExact.toDouble(), approx = head.attentionApprox.toDouble();
    QVERIFY2(approx.minCoeff() < 0, "Linformer's P^ should have negative weights here");
    const double extent = std::max(exact.cwiseAbs().maxCoeff(), approx.cwiseAbs().maxCoeff());
    for (HeatmapView* view : {window.exactView(), window.approxView()}) {
        QCOMPARE(view->colorMap(), ColorMap::Diverging);
        QCOMPARE(view->colorRange().lower, -extent);
        QCOMPARE(view->colorRange().upper, extent);
    }
    // Without negative weights the sequential map spans [min, max] of both, as before.
    spec.approximation.kind = Method::FavorPositive;
    window.setSpec(spec);
    QVERIFY(waitForResult(window));
    QCOMPARE(window.exactView()->colorMap(), window.viewSettings().colorMap);
    QVERIFY(window.exactView()->colorRange().lower >= 0);
}

// Property: "Hold error scale" keeps the error map's colour range at what it was when the box was
// checked, [-a, a], while a new result (more features, so smaller errors) comes in; the box's
// tooltip names a, and sessions keep it. Choosing another kind of error lets it go: the range
// follows the data again. Unchecked, each result has its own range.
void TestPanels::aHeldErrorScaleStaysFromResultToResult()
{
    startAsFirstRun();
    MainWindow window(MainWindow::Start::DefaultExample);
    QVERIFY(showAndWait(window));
    ExperimentSpec spec = window.controller().spec();
    QVERIFY(spec.setMethod(QStringLiteral("favor-positive")));
    spec.approximation.features = 4;
    window.setSpec(spec);
    QVERIFY(waitForResult(window));
    HeatmapView* error = window.errorView();
    const QCPRange own = error->colorRange();
    QCOMPARE(own.lower, error->dataRange().lower);
    auto* hold = window.findChild<QCheckBox*>(QStringLiteral("holdErrorScale"));
    QVERIFY(hold);
    hold->setChecked(true);
    const double a = window.viewSettings().errorScale;
    QCOMPARE(a, own.upper);
    QVERIFY2(hold->toolTip().contains(QString::number(a, 'g', 3)), qPrintable(hold->toolTip()));
    QCOMPARE(ViewSettings::fromJson(window.viewSettings().toJson()).errorScale, a);

    spec.approximation.features = 256;
    window.setSpec(spec);
    QVERIFY(waitForResult(window));
    QVERIFY2(error->dataRange().upper < a, "256 features should err less than 4");
    QCOMPARE(error->colorRange().lower, -a);
    QCOMPARE(error->colorRange().upper, a);
    QVERIFY(hold->isChecked());

    auto* kind = window.findChild<QComboBox*>(QStringLiteral("errorKind"));
    QVERIFY(kind);
    kind->setCurrentIndex(int(ErrorKind::Absolute));
    QCOMPARE(window.viewSettings().errorScale, 0.0);
    QVERIFY(!hold->isChecked());
    QCOMPARE(error->colorRange().upper, error->dataRange().upper);

    // Malformed values in a session hold nothing.
    for (const QJsonValue& bad :
         {QJsonValue(-1), QJsonValue(QStringLiteral("wide")), QJsonValue(1e300)})
        QCOMPARE(
            ViewSettings::fromJson(QJsonObject{{QLatin1String("error_scale"), bad}}).errorScale,
            0.0);
}

QTEST_MAIN(TestPanels)
#include "test_panels.moc"
