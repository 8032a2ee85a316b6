// The Heads page: the grid of every head of a model (from hand-made survey entries: its layout,
// clicks, the ranked order, tooltips, marks, what it paints and exports), the page around it (its
// state in the session, its message for inputs without a model) and, when the built-in model is
// there, a real survey run on the worker thread.
#include "errors.h"
#include "ui/model/head_grid_panel.h"
#include "ui/model/head_grid_view.h"
#include "ui/model/head_norms_chart.h"
#include "inputs/model_input.h"
#include "test_support.h"
#include "widget_support.h"

#include <QApplication>
#include <QComboBox>
#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QHelpEvent>
#include <QImage>
#include <QJsonObject>
#include <QSignalSpy>
#include <QSpinBox>
#include <QSvgRenderer>
#include <QTemporaryDir>
#include <QTest>
#include <QToolTip>

#include <algorithm>
#include <cmath>
#include <set>

using namespace attnlab;
using namespace attnlab::ui;
using namespace attnlab::test;

namespace {

constexpr int kSurveyTimeoutMs = 180'000;

// Causal attention patterns of L positions, as trained heads show them.
enum class Pattern { Self, Sink, Uniform, Previous };

MatrixD pattern(Pattern kind, int length)
{
    MatrixD p = MatrixD::Zero(length, length);
    for (int i = 0; i < length; ++i) {
        switch (kind) {
            case Pattern::Self: p(i, i) = 1; break;
            case Pattern::Sink: p(i, 0) = 1; break;
            case Pattern::Uniform: p.row(i).head(i + 1).setConstant(1.0 / (i + 1)); break;
            case Pattern::Previous: p(i, std::max(0, i - 1)) = 1; break;
        }
    }
    return p;
}

// The error of (layer, head) in the hand-made survey: distinct for every head, largest at
// (layers - 1, 1).
double handMadeError(int layer, int head, int heads)
{
    return 0.01 * (1 + layer * heads + (head + 2) % heads);
}

// layers x heads entries: thumbnails of the four patterns (16 x 16), P^ a blend of P with
// uniform attention, errors from handMadeError, norms growing with the error.
std::vector<HeadSurveyEntry> handMadeEntries(int layers, int heads, int length = 16)
{
    std::vector<HeadSurveyEntry> entries;
    for (int layer = 0; layer < layers; ++layer) {
        for (int head = 0; head < heads; ++head) {
            HeadSurveyEntry entry;
            entry.layer = layer;
            entry.head = head;
            entry.thumbnailExact = pattern(Pattern((layer + head) % 4), length);
            entry.thumbnailApprox =
                0.6 * entry.thumbnailExact + 0.4 * pattern(Pattern::Uniform, length);
            const double error = handMadeError(layer, head, heads);
            entry.metrics.relFrobeniusAttention = error;
            entry.metrics.meanTotalVariation = 0.5 * error;
            entry.metrics.maxAbsError = 0.25;
            entry.metrics.meanKl = 0.001;
            entry.metrics.relFrobeniusOutput = 0.75 * error;
            entry.meanQueryNorm = 0.5 + 10 * error;
            entry.maxQueryNorm = 1.5 + 10 * error;
            entry.meanKeyNorm = 0.25 + 5 * error;
            entry.maxKeyNorm = 2.0 + 5 * error;
            entries.push_back(entry);
        }
    }
    // Any order in, the grid's layout out.
    std::reverse(entries.begin(), entries.end());
    return entries;
}

// The colour at the centre of `rect` in a grab of the widget (device pixel ratio 1).
QRgb pixelAt(const QImage& image, QPoint point)
{
    return image.pixel(point);
}

// Shows grid (a HeadGridView, or a HeadGridPanel with the entries' source) at size with entries;
// whether its window was exposed.
template <typename Grid, typename... Source>
bool showEntries(Grid& grid, QSize size, const std::vector<HeadSurveyEntry>& entries,
                 const Source&... source)
{
    grid.resize(size);
    grid.setEntries(entries, source...);
    grid.show();
    return QTest::qWaitForWindowExposed(&grid);
}

}  // namespace

class TestHeadGrid : public QObject {
    Q_OBJECT

private slots:
    void gridLaysOutLayersDownAndHeadsAcross();
    void cellsGrowWithTheWidgetAndStaySquare();
    void clickOnACellActivatesThatHead();
    void arrowKeysMoveTheSelection();
    void worstFirstOrderRanksByError();
    void tooltipsCarryTheMetricsAndNorms();
    void paintsThumbnailsFramedByError();
    void highlightAndApproximationChangeThePicture();
    void normsChartFollowsTheGridOrder();
    void exportWritesPngSvgAndPdf();
    void exportFailureNamesThePath();
    void stateRoundTrips();
    void malformedStateThrowsNamingTheField();
    void inputWithoutAModelShowsTheMessage();
    void panelScreenshot();
    void surveysAModelOnTheWorker();
    void latestRequestWinsAndOtherInputsCancel();
    void failedSurveyShowsItsError();
    void surveysTheBuiltinModel();
};

// Property: every (layer, head) has a cell; cells of one layer share a row ordered by head, cells
// of one head share a column ordered by layer, none overlap, all inside the widget.
void TestHeadGrid::gridLaysOutLayersDownAndHeadsAcross()
{
    HeadGridView view;
    QVERIFY(showEntries(view, QSize(800, 600), handMadeEntries(3, 4)));
    QCOMPARE(view.layerCount(), 3);
    QCOMPARE(view.headCount(), 4);
    QVERIFY(view.cellRect(3, 0).isEmpty());
    QVERIFY(view.cellRect(0, 4).isEmpty());
    std::vector<QRect> all;
    for (int layer = 0; layer < 3; ++layer) {
        for (int head = 0; head < 4; ++head) {
            const QRect cell = view.cellRect(layer, head);
            QVERIFY(!cell.isEmpty());
            QVERIFY(view.rect().contains(cell));
            if (head > 0) {
                QCOMPARE(cell.top(), view.cellRect(layer, head - 1).top());
                QVERIFY(cell.left() > view.cellRect(layer, head - 1).right());
            }
            if (layer > 0) {
                QCOMPARE(cell.left(), view.cellRect(layer - 1, head).left());
                QVERIFY(cell.top() > view.cellRect(layer - 1, head).bottom());
            }
            for (const QRect& other : all)
                QVERIFY(!cell.intersects(other));
            all.push_back(cell);
            QCOMPARE(view.headAt(cell.center()), std::make_pair(layer, head));
        }
    }
}

// Property: the cells are square and fill the widget: the bound dimension uses most of its
// length, and a larger widget gives larger cells.
void TestHeadGrid::cellsGrowWithTheWidgetAndStaySquare()
{
    HeadGridView view;
    view.setEntries(handMadeEntries(12, 12));
    view.resize(700, 500);
    view.show();
    QVERIFY(QTest::qWaitForWindowExposed(&view));
    const QRect small = view.cellRect(0, 0);
    QCOMPARE(small.width(), small.height());
    // Height binds: 12 rows use most of the height.
    const int span = view.cellRect(11, 0).bottom() - view.cellRect(0, 0).top();
    QVERIFY2(span > 0.7 * view.height(), qPrintable(QString::number(span)));
    view.resize(1400, 1000);
    QTest::qWait(20);
    const QRect large = view.cellRect(0, 0);
    QCOMPARE(large.width(), large.height());
    QVERIFY(large.width() > 1.6 * small.width());
    // Wide and low: width no longer binds, the cells stay square.
    view.resize(1600, 400);
    QTest::qWait(20);
    QCOMPARE(view.cellRect(5, 5).width(), view.cellRect(5, 5).height());
    QVERIFY(view.cellRect(11, 11).bottom() < view.height());
}

// Property: a click on cell (l, h) emits headActivated(l, h) once and selects it; a click between
// cells or setCurrentHead emits nothing.
void TestHeadGrid::clickOnACellActivatesThatHead()
{
    HeadGridView view;
    QVERIFY(showEntries(view, QSize(900, 700), handMadeEntries(3, 4)));
    QSignalSpy spy(&view, &HeadGridView::headActivated);
    QTest::mouseClick(&view, Qt::LeftButton, {}, view.cellRect(2, 1).center());
    QCOMPARE(spy.count(), 1);
    QCOMPARE(spy.at(0).at(0).toInt(), 2);
    QCOMPARE(spy.at(0).at(1).toInt(), 1);
    QCOMPARE(view.currentLayer(), 2);
    QCOMPARE(view.currentHead(), 1);
    QTest::mouseClick(&view, Qt::LeftButton, {}, view.cellRect(0, 3).topLeft() + QPoint(2, 2));
    QCOMPARE(spy.count(), 2);
    QCOMPARE(spy.at(1).at(0).toInt(), 0);
    QCOMPARE(spy.at(1).at(1).toInt(), 3);
    // Between two cells of a row, at the middle of the gap: nothing.
    const QRect a = view.cellRect(1, 1);
    const QRect b = view.cellRect(1, 2);
    QTest::mouseClick(&view, Qt::LeftButton, {},
                      QPoint((a.right() + b.left()) / 2, a.center().y()) + QPoint(0, 0));
    QTest::mouseClick(&view, Qt::LeftButton, {}, QPoint(2, 2));
    QCOMPARE(spy.count(), 2);
    view.setCurrentHead(1, 1);
    QCOMPARE(spy.count(), 2);
    QCOMPARE(view.currentLayer(), 1);
}

void TestHeadGrid::arrowKeysMoveTheSelection()
{
    HeadGridView view;
    QVERIFY(showEntries(view, QSize(900, 700), handMadeEntries(3, 4)));
    view.setCurrentHead(1, 1);
    QSignalSpy spy(&view, &HeadGridView::headActivated);
    QTest::keyClick(&view, Qt::Key_Right);
    QTest::keyClick(&view, Qt::Key_Down);
    QCOMPARE(spy.count(), 2);
    QCOMPARE(view.currentLayer(), 2);
    QCOMPARE(view.currentHead(), 2);
    QTest::keyClick(&view, Qt::Key_Down);  // past the last layer: stays
    QCOMPARE(view.currentLayer(), 2);
}

// Property: worst first places the heads by decreasing relative Frobenius error: the worst head
// in the first cell (top left), the next to its right, ..., heads without an error last; each
// cell still answers clicks with its own head.
void TestHeadGrid::worstFirstOrderRanksByError()
{
    std::vector<HeadSurveyEntry> entries = handMadeEntries(3, 4);
    entries[5].metrics.relFrobeniusAttention = AttentionMetrics::notApplicable;
    const int noError = entries[5].layer * 4 + entries[5].head;
    HeadGridView view;
    view.resize(900, 700);
    view.setEntries(entries);
    view.setOrder(HeadOrder::WorstFirst);
    view.show();
    QVERIFY(QTest::qWaitForWindowExposed(&view));
    const std::vector<int>& order = view.displayOrder();
    QCOMPARE(int(order.size()), 12);
    for (std::size_t i = 1; i + 1 < order.size(); ++i)
        QVERIFY(view.entries()[std::size_t(order[i - 1])].metrics.relFrobeniusAttention >
                view.entries()[std::size_t(order[i])].metrics.relFrobeniusAttention);
    const HeadSurveyEntry& last = view.entries()[std::size_t(order.back())];
    QCOMPARE(last.layer * 4 + last.head, noError);
    QCOMPARE(view.errorRank(last.layer, last.head), 0);
    // The worst: (2, 1) by handMadeError ((h + 2) % 4 is largest for h = 1).
    QCOMPARE(view.errorRank(2, 1), 1);
    QCOMPARE(view.errorRank(2, 0), 2);
    const QRect worst = view.cellRect(2, 1);
    for (int layer = 0; layer < 3; ++layer)
        for (int head = 0; head < 4; ++head) {
            const QRect cell = view.cellRect(layer, head);
            QVERIFY(cell.top() >= worst.top());
            if (cell.top() == worst.top())
                QVERIFY(cell.left() >= worst.left());
        }
    // The second worst follows in reading order.
    const HeadSurveyEntry& second = view.entries()[std::size_t(order[1])];
    const QRect next = view.cellRect(second.layer, second.head);
    QVERIFY(next.top() > worst.top() || next.left() > worst.left());
    QSignalSpy spy(&view, &HeadGridView::headActivated);
    QTest::mouseClick(&view, Qt::LeftButton, {}, next.center());
    QCOMPARE(spy.count(), 1);
    QCOMPARE(spy.at(0).at(0).toInt(), second.layer);
    QCOMPARE(spy.at(0).at(1).toInt(), second.head);
    // Back to the model layout.
    view.setOrder(HeadOrder::Model);
    QVERIFY(view.cellRect(0, 0).top() < view.cellRect(2, 2).top());
    QVERIFY(view.cellRect(0, 0).left() < view.cellRect(0, 1).left());
}

// Property: the tooltip of a head names its layer and head and carries its error metrics and
// the mean and max norms of its queries and keys; the view shows it on a help event.
void TestHeadGrid::tooltipsCarryTheMetricsAndNorms()
{
    std::vector<HeadSurveyEntry> entries = handMadeEntries(2, 3);
    for (HeadSurveyEntry& entry : entries)
        if (entry.layer == 1 && entry.head == 2) {
            entry.metrics.relFrobeniusAttention = 0.123;
            entry.metrics.meanTotalVariation = 0.0456;
            entry.meanQueryNorm = 1.23;
            entry.maxQueryNorm = 2.34;
            entry.meanKeyNorm = 0.987;
            entry.maxKeyNorm = 3.21;
        }
    HeadGridView view;
    QVERIFY(showEntries(view, QSize(700, 500), entries));
    const QString text = view.headToolTip(1, 2);
    for (const char* part : {"Layer 1, head 2", "0.123", "0.0456", "1.23", "2.34", "0.987", "3.21",
                             "relative Frobenius", "|q'|", "|k'|"})
        QVERIFY2(text.contains(QLatin1String(part)), qPrintable(text));
    QVERIFY(view.headToolTip(5, 5).isEmpty());

    const QPoint pos = view.cellRect(1, 2).center();
    QHelpEvent help(QEvent::ToolTip, pos, view.mapToGlobal(pos));
    QApplication::sendEvent(&view, &help);
    QTRY_VERIFY(QToolTip::isVisible());
    QCOMPARE(QToolTip::text(), text);
    QToolTip::hideText();
}

// Property: the grab shows the thumbnails in viridis (many colours), each inside a frame of its
// error's colour: the worst head's frame is the dark red end, the best head's the light end.
void TestHeadGrid::paintsThumbnailsFramedByError()
{
    HeadGridView view;
    QVERIFY(showEntries(view, QSize(900, 700), handMadeEntries(3, 4)));
    const QImage image = view.grab().toImage();
    QCOMPARE(image.size(), view.size());
    QVERIFY2(colourCount(image) > 40, qPrintable(QString::number(colourCount(image))));
    keepGrab(image, "head_grid_view.png");
    // A Self-pattern head: its diagonal is the top of viridis (yellow), off the diagonal the
    // bottom (dark purple). (0, 0) has pattern Self.
    const QRect cell = view.cellRect(0, 0);
    const QColor top = QColor(pixelAt(image, cell.topLeft() + QPoint(1, 1)));
    const QColor offDiagonal = QColor(pixelAt(image, QPoint(cell.right() - 1, cell.top() + 1)));
    QVERIFY2(top.red() > 200 && top.green() > 200 && top.blue() < 100, qPrintable(top.name()));
    QVERIFY2(offDiagonal.red() < 100 && offDiagonal.green() < 30 && offDiagonal.blue() > 60,
             qPrintable(offDiagonal.name()));
    // Frames: just outside the cell, at the middle of its left edge.
    const auto frameColour = [&](int layer, int head) {
        const QRect c = view.cellRect(layer, head);
        return QColor(pixelAt(image, QPoint(c.left() - 1, c.center().y())));
    };
    const QColor worst = frameColour(2, 1);
    const QColor best = frameColour(0, 2);  // handMadeError(0, 2) = 0.01, the least
    QCOMPARE(worst.rgb(), view.errorScale().color(handMadeError(2, 1, 4)).rgb());
    QCOMPARE(best.rgb(), view.errorScale().color(handMadeError(0, 2, 4)).rgb());
    QVERIFY2(worst.lightness() < 90 && worst.red() > worst.green() + 60, qPrintable(worst.name()));
    QVERIFY2(best.lightness() > 180, qPrintable(best.name()));
}

// Property: marking the N worst changes exactly the picture of those cells (a white badge at the
// top left), and switching to P^ changes the cells (P^ differs from P).
void TestHeadGrid::highlightAndApproximationChangeThePicture()
{
    HeadGridView view;
    QVERIFY(showEntries(view, QSize(900, 700), handMadeEntries(3, 4)));
    const QImage before = view.grab().toImage();
    view.setHighlightCount(2);
    const QImage marked = view.grab().toImage();
    const QRect worst = view.cellRect(2, 1);
    const QRect third = view.cellRect(2, 3);  // rank 3
    QCOMPARE(view.errorRank(2, 3), 3);
    const QPoint badge = worst.topLeft() + QPoint(3, 6);
    QVERIFY(before.pixel(badge) != marked.pixel(badge));
    QCOMPARE(QColor(marked.pixel(badge)), QColor(Qt::white));
    QCOMPARE(marked.copy(third), before.copy(third));

    view.setShowApproximation(true);
    QVERIFY(view.showsApproximation());
    const QImage approx = view.grab().toImage();
    const QRect cell = view.cellRect(1, 0);  // a sink head: P^ spreads weight
    QVERIFY(approx.copy(cell) != marked.copy(cell));
    // P^ of (0, 0) = 0.6 I + 0.4 uniform: the off-diagonal of the last row is no longer zero.
    const QRect first = view.cellRect(0, 0);
    const QPoint lowerLeft(first.left() + 1, first.bottom() - 1);
    QVERIFY(approx.pixel(lowerLeft) != marked.pixel(lowerLeft));
}

// Property: the norms chart has one bar per head in the grid's order, as tall as the head's mean
// |q'| and coloured by its error; a click on a bar activates that head.
void TestHeadGrid::normsChartFollowsTheGridOrder()
{
    HeadGridPanel panel;
    QVERIFY(
        showEntries(panel, QSize(1280, 800), handMadeEntries(3, 4), QStringLiteral("hand-made")));
    HeadNormsChart* chart = panel.normsChart();
    HeadGridView* view = panel.view();
    const auto heightOf = [&](int i) { return chart->barRect(i).height(); };
    // Model order: (0, 0), (0, 1), ...; the mean |q'| grows with the error.
    const HeadSurveyEntry& a = view->entries()[std::size_t(view->displayOrder()[0])];
    QCOMPARE(std::make_pair(a.layer, a.head), std::make_pair(0, 0));
    QVERIFY(heightOf(11) > heightOf(0));
    QVERIFY(chart->barRect(12).isEmpty());
    view->setOrder(HeadOrder::WorstFirst);
    for (int i = 1; i < 12; ++i)
        QVERIFY(heightOf(i) <= heightOf(i - 1));
    QSignalSpy spy(&panel, &HeadGridPanel::headActivated);
    QTest::mouseClick(chart, Qt::LeftButton, {}, chart->barRect(0).center());
    QCOMPARE(spy.count(), 1);
    QCOMPARE(spy.at(0).at(0).toInt(), 2);
    QCOMPARE(spy.at(0).at(1).toInt(), 1);
    QCOMPARE(view->currentLayer(), 2);
    QCOMPARE(view->currentHead(), 1);
    const QImage image = chart->grab().toImage();
    const QColor bar(image.pixel(chart->barRect(3).center()));
    const HeadSurveyEntry& fourth = view->entries()[std::size_t(view->displayOrder()[3])];
    QCOMPARE(bar.rgb(), view->errorScale().color(fourth.metrics.relFrobeniusAttention).rgb());
}

// Property: the three formats are written and readable: the PNG at twice the view's size, an
// SVG that Qt's renderer accepts, a PDF; the grid's pictures in the PNG.
void TestHeadGrid::exportWritesPngSvgAndPdf()
{
    HeadGridPanel panel;
    QVERIFY(showEntries(panel, QSize(1100, 800), handMadeEntries(4, 6),
                        QStringLiteral("hand-made \u00b7 16 tokens")));
    const QSize shown = panel.view()->size();
    QTemporaryDir dir;
    const QString png = dir.filePath(QStringLiteral("figures/heads.png"));
    const QString svg = dir.filePath(QStringLiteral("heads.svg"));
    const QString pdf = dir.filePath(QStringLiteral("heads.pdf"));
    panel.exportFigure(png, FigureFormat::Png);
    panel.exportFigure(svg, FigureFormat::Svg);
    panel.exportFigure(pdf, FigureFormat::Pdf);
    const QImage image(png);
    QCOMPARE(image.size(), shown * 2);
    QVERIFY(colourCount(image) > 40);
    keepGrab(image, "head_grid_export.png");
    QSvgRenderer renderer(svg);
    QVERIFY(renderer.isValid());
    QCOMPARE(renderer.viewBox().size(), shown);
    QFile svgFile(svg);
    QVERIFY(svgFile.open(QIODevice::ReadOnly));
    const QByteArray svgText = svgFile.readAll();
    QVERIFY(svgText.contains("layer 3"));
    QVERIFY(svgText.contains("<image"));
    // The frames' error written as the Error analysis chart writes it: the legend read
    // "\u2016P\u0302 \u2212 P\u2016_F / \u2016P\u2016_F", a subscript that plain text cannot draw.
    QVERIFY(svgText.contains(
        QStringLiteral("\u2016P\u0302 \u2212 P\u2016 / \u2016P\u2016").toHtmlEscaped().toUtf8()));
    QFile pdfFile(pdf);
    QVERIFY(pdfFile.open(QIODevice::ReadOnly));
    QVERIFY(pdfFile.size() > 1000);
    QVERIFY(pdfFile.read(5) == "%PDF-");
    // Nothing besides the three figures (no temporary files left).
    QCOMPARE(QDir(dir.path()).entryList(QDir::Files).size(), 2);
    QCOMPARE(QDir(dir.filePath(QStringLiteral("figures"))).entryList(QDir::Files).size(), 1);
}

// Property: a path that cannot be written, or a grid with nothing surveyed, throws OutputError
// naming the path and leaves no file.
void TestHeadGrid::exportFailureNamesThePath()
{
    HeadGridPanel panel;
    panel.resize(800, 600);
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("empty.png"));
    const QString empty =
        test::thrownMessage<OutputError>([&] { panel.exportFigure(path, FigureFormat::Png); });
    QVERIFY2(empty.contains(path), qPrintable(empty));
    QVERIFY(!QFile::exists(path));

    panel.setEntries(handMadeEntries(2, 2), QStringLiteral("hand-made"));
    test::writeBytes(dir.filePath(QStringLiteral("file")), "not a folder");
    const QString blocked = dir.filePath(QStringLiteral("file/heads.svg"));
    const QString message =
        test::thrownMessage<OutputError>([&] { panel.exportFigure(blocked, FigureFormat::Svg); });
    QVERIFY2(message.contains(blocked), qPrintable(message));
}

void TestHeadGrid::stateRoundTrips()
{
    HeadGridPanel panel;
    panel.setEntries(handMadeEntries(3, 4), QStringLiteral("hand-made"));
    const QJsonObject defaults = panel.state();
    QCOMPARE(defaults.value(QLatin1String("show")).toString(), QStringLiteral("exact"));
    QCOMPARE(defaults.value(QLatin1String("order")).toString(), QStringLiteral("model"));
    QCOMPARE(defaults.value(QLatin1String("highlight_worst")).toInt(), 0);

    QJsonObject state;
    state[QLatin1String("show")] = QStringLiteral("approximation");
    state[QLatin1String("order")] = QStringLiteral("worst-first");
    state[QLatin1String("highlight_worst")] = 5;
    panel.setState(state);
    QCOMPARE(panel.state(), state);
    QVERIFY(panel.view()->showsApproximation());
    QCOMPARE(panel.view()->order(), HeadOrder::WorstFirst);
    QCOMPARE(panel.view()->highlightCount(), 5);

    HeadGridPanel other;
    other.setState(panel.state());
    QCOMPARE(other.state(), state);
    other.setState(defaults);
    QCOMPARE(other.state(), defaults);
    QVERIFY(!other.view()->showsApproximation());
    // Missing fields keep their values.
    other.setState(QJsonObject{{QStringLiteral("highlight_worst"), 3}});
    QCOMPARE(other.state().value(QLatin1String("order")).toString(), QStringLiteral("model"));
    QCOMPARE(other.view()->highlightCount(), 3);
}

// Property: a malformed field throws InputError naming it, and the panel keeps its state.
void TestHeadGrid::malformedStateThrowsNamingTheField()
{
    HeadGridPanel panel;
    QJsonObject good;
    good[QLatin1String("show")] = QStringLiteral("approximation");
    good[QLatin1String("order")] = QStringLiteral("worst-first");
    good[QLatin1String("highlight_worst")] = 2;
    panel.setState(good);
    const std::vector<std::pair<QJsonObject, QString>> cases = {
        {QJsonObject{{"show", "sideways"}}, "show"},
        {QJsonObject{{"show", 1}}, "show"},
        {QJsonObject{{"order", "alphabetical"}}, "order"},
        {QJsonObject{{"order", QJsonValue::Null}}, "order"},
        {QJsonObject{{"highlight_worst", -1}}, "highlight_worst"},
        {QJsonObject{{"highlight_worst", 2.5}}, "highlight_worst"},
        {QJsonObject{{"highlight_worst", "3"}}, "highlight_worst"},
        {QJsonObject{{"show", "exact"}, {"highlight_worst", 1e9}}, "highlight_worst"},
    };
    for (const auto& [state, field] : cases) {
        const QString message =
            test::thrownMessage<InputError>([&, &state = state] { panel.setState(state); });
        QVERIFY2(message.contains(field), qPrintable(field + QLatin1String(": ") + message));
        QCOMPARE(panel.state(), good);
    }
}

void TestHeadGrid::inputWithoutAModelShowsTheMessage()
{
    HeadGridPanel panel;
    panel.resize(800, 600);
    panel.setEntries(handMadeEntries(2, 2), QStringLiteral("hand-made"));
    QVERIFY(panel.message().isEmpty());
    ExperimentSpec spec;
    spec.input.kind = InputKind::Text;
    QSignalSpy finished(&panel, &HeadGridPanel::surveyFinished);
    panel.setExperiment(spec);
    QVERIFY(!panel.isBusy());
    QVERIFY2(panel.message().contains(QLatin1String("Open Model...")), qPrintable(panel.message()));
    QVERIFY(panel.view()->entries().empty());
    QTest::qWait(200);
    QCOMPARE(finished.count(), 0);
}

// The page at 1280 x 800 with a GPT-2 small shaped survey (12 layers x 12 heads), to look at:
// /tmp/head_grid_panel.png (and $ATTNLAB_GRAB_DIR).
void TestHeadGrid::panelScreenshot()
{
    std::vector<HeadSurveyEntry> entries = handMadeEntries(12, 12, 48);
    HeadGridPanel panel;
    panel.resize(1280, 800);
    panel.setEntries(std::move(entries),
                     QStringLiteral("built-in KJV GPT-2 \u00b7 48 tokens \u00b7 FAVOR+ positive, "
                                    "m = 64"));
    panel.setCurrentHead(4, 7);
    QJsonObject state;
    state[QLatin1String("highlight_worst")] = 5;
    panel.setState(state);
    QCOMPARE(panel.view()->highlightCount(), 5);
    panel.show();
    QVERIFY(QTest::qWaitForWindowExposed(&panel));
    const QImage image = panel.grab().toImage();
    QVERIFY(colourCount(image) > 100);
    QVERIFY(image.save(QStringLiteral("/tmp/head_grid_panel.png")));
    keepGrab(image, "head_grid_panel.png");
    state[QLatin1String("order")] = QStringLiteral("worst-first");
    panel.setState(state);
    const QImage ranked = panel.grab().toImage();
    QVERIFY(ranked.save(QStringLiteral("/tmp/head_grid_panel_ranked.png")));
    keepGrab(ranked, "head_grid_panel_ranked.png");
    // 144 heads paint at once: ten repaints of the grid, in either order, well under a second.
    for (const HeadOrder order : {HeadOrder::Model, HeadOrder::WorstFirst}) {
        panel.view()->setOrder(order);
        QElapsedTimer clock;
        clock.start();
        for (int i = 0; i < 10; ++i)
            panel.view()->grab();
        QVERIFY2(clock.elapsed() < 1000, qPrintable(QString::number(clock.elapsed())));
    }
}

// The tiny GPT-2 checkpoint of tests/data/models (2 layers, 2 heads, 32 positions), as a spec of
// model input with FAVOR+ positive.
ExperimentSpec tinyModelSpec(const QString& text)
{
    ExperimentSpec spec;
    spec.input.kind = InputKind::Model;
    spec.input.modelPath = QStringLiteral(ATTNLAB_TEST_DATA "/models/tiny-gpt2-prefixed-f32");
    spec.input.text = text;
    spec.causal = true;
    spec.approximation.features = 16;
    return spec;
}

// Fails the test when the committed fixture tests/data/models/tiny-gpt2-prefixed-f32 is missing.
#define REQUIRE_TINY_MODEL()                                                                      \
    QVERIFY2(QFile::exists(                                                                       \
                 QStringLiteral(ATTNLAB_TEST_DATA "/models/tiny-gpt2-prefixed-f32/config.json")), \
             ATTNLAB_TEST_DATA "/models/tiny-gpt2-prefixed-f32/config.json is missing "           \
                               "(a committed fixture; tests/data/models/make_fixtures.py)")

// Property: setExperiment on model input surveys every (layer, head) of the model on the worker
// (the panel stays responsive: busy until surveyFinished), shows them with the model, the text
// length in tokens and the method, and matches surveyHeads run here on the same spec.
void TestHeadGrid::surveysAModelOnTheWorker()
{
    REQUIRE_TINY_MODEL();
    const ExperimentSpec spec = tinyModelSpec(QStringLiteral("the cat sat on the mat"));
    HeadGridPanel panel;
    panel.resize(1000, 700);
    panel.show();
    QVERIFY(QTest::qWaitForWindowExposed(&panel));
    QSignalSpy finished(&panel, &HeadGridPanel::surveyFinished);
    QSignalSpy busy(&panel, &HeadGridPanel::busyChanged);
    panel.setExperiment(spec);
    QVERIFY(panel.isBusy());
    QVERIFY(finished.wait(kSurveyTimeoutMs));
    QVERIFY(!panel.isBusy());
    QCOMPARE(busy.count(), 2);  // true, then false
    QVERIFY2(panel.message().isEmpty(), qPrintable(panel.message()));
    const std::shared_ptr<const LanguageModel> model = loadModel(spec.input.modelPath);
    const int tokens = int(modelTokens(*model, spec.input.text, false).ids.size());
    QCOMPARE(panel.view()->layerCount(), model->layers());
    QCOMPARE(panel.view()->headCount(), model->heads());
    QCOMPARE(int(panel.view()->entries().size()), model->layers() * model->heads());
    QVERIFY2(panel.surveyText().contains(QStringLiteral("%1\u00a0tokens").arg(tokens)) &&
                 panel.surveyText().contains(QLatin1String("m = 16")),
             qPrintable(panel.surveyText()));
    const std::vector<HeadSurveyEntry> direct = surveyHeads(spec, ComputeOptions(), 48);
    for (const HeadSurveyEntry& expected : direct) {
        const HeadSurveyEntry* shown = panel.view()->entry(expected.layer, expected.head);
        QVERIFY(shown);
        QCOMPARE(shown->thumbnailExact, expected.thumbnailExact);
        QCOMPARE(shown->metrics.relFrobeniusAttention, expected.metrics.relFrobeniusAttention);
        QCOMPARE(shown->meanQueryNorm, expected.meanQueryNorm);
        QVERIFY(!panel.view()->cellRect(expected.layer, expected.head).isEmpty());
    }
    // The same experiment at another layer: the survey covers every layer, nothing runs.
    ExperimentSpec otherLayer = spec;
    otherLayer.input.layer = 1;
    panel.setExperiment(otherLayer);
    QVERIFY(!panel.isBusy());
    // A new m: surveyed again.
    ExperimentSpec otherM = spec;
    otherM.approximation.features = 32;
    panel.setExperiment(otherM);
    QVERIFY(panel.isBusy());
    QVERIFY(finished.wait(kSurveyTimeoutMs));
    QVERIFY(panel.surveyText().contains(QLatin1String("m = 32")));
    keepGrab(panel.grab().toImage(), "head_grid_panel_tiny.png");
}

// Property: of a burst of requests only the last is surveyed and shown; a request for another
// input kind cancels a pending or running survey and nothing is shown of it.
void TestHeadGrid::latestRequestWinsAndOtherInputsCancel()
{
    REQUIRE_TINY_MODEL();
    const QString shortText = QStringLiteral("the cat");
    const QString longText = QStringLiteral("the cat sat on the mat and the dog sat too");
    const std::shared_ptr<const LanguageModel> model =
        loadModel(tinyModelSpec(shortText).input.modelPath);
    const int longTokens = int(modelTokens(*model, longText, false).ids.size());
    QVERIFY(longTokens != int(modelTokens(*model, shortText, false).ids.size()));
    HeadGridPanel panel;
    QSignalSpy finished(&panel, &HeadGridPanel::surveyFinished);
    panel.setExperiment(tinyModelSpec(shortText));
    panel.setExperiment(tinyModelSpec(QStringLiteral("a third text")));
    panel.setExperiment(tinyModelSpec(longText));
    QVERIFY(finished.wait(kSurveyTimeoutMs));
    QTest::qWait(300);
    QCOMPARE(finished.count(), 1);
    QVERIFY2(panel.surveyText().contains(QStringLiteral("%1\u00a0tokens").arg(longTokens)),
             qPrintable(panel.surveyText()));
    // A newer model request then random input, within the debounce: nothing is surveyed, the
    // message replaces the grid.
    panel.setExperiment(tinyModelSpec(shortText));
    ExperimentSpec random;
    random.input.kind = InputKind::Random;
    panel.setExperiment(random);
    QTest::qWait(400);
    QCOMPARE(finished.count(), 1);
    QVERIFY(!panel.isBusy());
    QVERIFY(panel.message().contains(QLatin1String("trained model")));
    QVERIFY(panel.view()->entries().empty());
    // Once running: cancelled, and its result is not shown.
    panel.setExperiment(tinyModelSpec(longText));
    QTRY_VERIFY_WITH_TIMEOUT(!panel.surveyText().isEmpty(), 5000);  // started
    panel.setExperiment(random);
    QTRY_VERIFY_WITH_TIMEOUT(!panel.isBusy(), kSurveyTimeoutMs);
    QTest::qWait(100);
    QVERIFY(panel.view()->entries().empty());
    QVERIFY(!panel.message().isEmpty());
}

// Property: a survey that fails (a model folder that does not exist) shows the error naming the
// folder, and surveyFinished still follows.
void TestHeadGrid::failedSurveyShowsItsError()
{
    ExperimentSpec spec = tinyModelSpec(QStringLiteral("the cat"));
    QTemporaryDir dir;
    spec.input.modelPath = dir.filePath(QStringLiteral("no-such-model"));
    HeadGridPanel panel;
    QSignalSpy finished(&panel, &HeadGridPanel::surveyFinished);
    panel.setExperiment(spec);
    QVERIFY(finished.wait(kSurveyTimeoutMs));
    QVERIFY2(panel.message().contains(QLatin1String("no-such-model")), qPrintable(panel.message()));
    QVERIFY(!panel.isBusy());
}

// Property: on the built-in model, setExperiment surveys every layer and head on the worker
// (layers x heads entries, P and P^ thumbnails, finite errors), with the latest of a burst of
// requests winning.
void TestHeadGrid::surveysTheBuiltinModel()
{
    QVERIFY2(!builtinModelFolder().isEmpty(),
             "the built-in model is missing: no kjv-gpt2 folder with config.json under "
             "$ATTNLAB_MODELS, the installed share/attention-lab/models or the source tree's "
             "resources/models (committed)");
    const std::shared_ptr<const LanguageModel> model =
        loadModel(QString::fromLatin1(kBuiltinKjvGpt2));
    HeadGridPanel panel;
    panel.resize(1280, 800);
    panel.show();
    QVERIFY(QTest::qWaitForWindowExposed(&panel));
    QSignalSpy finished(&panel, &HeadGridPanel::surveyFinished);
    ExperimentSpec spec;
    spec.input.kind = InputKind::Model;
    spec.input.modelPath = QString::fromLatin1(kBuiltinKjvGpt2);
    spec.causal = true;
    spec.input.text = QStringLiteral("In the beginning God created the heaven and the earth.");
    panel.setExperiment(spec);
    QVERIFY(panel.isBusy());
    // A second request in the same burst: only its survey is shown.
    spec.input.text = QStringLiteral("And God said, Let there be light: and there was light.");
    panel.setExperiment(spec);
    QVERIFY(finished.wait(kSurveyTimeoutMs));
    QTest::qWait(300);
    QCOMPARE(finished.count(), 1);
    QVERIFY(!panel.isBusy());
    QVERIFY2(panel.message().isEmpty(), qPrintable(panel.message()));
    const int layers = model->layers();
    const int heads = model->heads();
    QCOMPARE(panel.view()->layerCount(), layers);
    QCOMPARE(panel.view()->headCount(), heads);
    QCOMPARE(int(panel.view()->entries().size()), layers * heads);
    const int tokens = int(modelTokens(*model, spec.input.text, false).ids.size());
    QVERIFY2(panel.surveyText().contains(QStringLiteral("%1\u00a0tokens").arg(tokens)),
             qPrintable(panel.surveyText()));
    for (const HeadSurveyEntry& entry : panel.view()->entries()) {
        QCOMPARE(entry.thumbnailExact.rows(), Eigen::Index(std::min(tokens, 48)));
        QVERIFY(entry.thumbnailApprox.size() > 0);
        QVERIFY(std::isfinite(entry.metrics.relFrobeniusAttention));
        QVERIFY(entry.maxQueryNorm >= entry.meanQueryNorm);
        QVERIFY(!panel.view()->cellRect(entry.layer, entry.head).isEmpty());
    }
    const QImage image = panel.grab().toImage();
    QVERIFY(colourCount(image) > 100);
    image.save(QStringLiteral("/tmp/head_grid_panel_model.png"));
    keepGrab(image, "head_grid_panel_model.png");

    // Another layer of the same experiment: nothing to survey.
    spec.input.layer = 1;
    panel.setExperiment(spec);
    QVERIFY(!panel.isBusy());
    // Random input: the message, and the survey is gone.
    spec.input.kind = InputKind::Random;
    panel.setExperiment(spec);
    QVERIFY(!panel.message().isEmpty());
}

QTEST_MAIN(TestHeadGrid)
#include "test_head_grid.moc"
