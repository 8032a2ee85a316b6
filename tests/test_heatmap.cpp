// Tests of the heatmap view, its colour maps and figure export, on the offscreen platform.
#include "ui/plotting/color_maps.h"
#include "errors.h"
#include "ui/plotting/figure_export.h"
#include "ui/plotting/heatmap_view.h"
#include "test_support.h"

#include <QClipboard>
#include <QDir>
#include <QFile>
#include <QFontMetricsF>
#include <QGuiApplication>
#include <QImage>
#include <QRegularExpression>
#include <QSet>
#include <QSignalSpy>
#include <QSvgRenderer>
#include <QTemporaryDir>
#include <QTest>

#include <algorithm>
#include <cmath>
#include <memory>
#include <random>
#include <vector>

using namespace attnlab;
using namespace attnlab::ui;
using attnlab::test::readBytes;
using attnlab::test::uniformMatrix;

namespace {

// Relative luminance Y of an sRGB colour (WCAG 2 / ITU-R BT.709 weights on linear light).
double luminance(const QColor& color)
{
    const auto linear = [](double v) {
        return v <= 0.04045 ? v / 12.92 : std::pow((v + 0.055) / 1.055, 2.4);
    };
    return 0.2126 * linear(color.redF()) + 0.7152 * linear(color.greenF()) +
           0.0722 * linear(color.blueF());
}

// The colour `map` gives to `value` on the colour range `range`.
QColor colorOf(ColorMap map, double value, const QCPRange& range = QCPRange(0, 1))
{
    QCPColorGradient gradient = colorGradient(map);
    return QColor::fromRgb(gradient.color(value, range));
}

// The number of different colours in `image`.
int distinctColors(const QImage& image)
{
    QSet<QRgb> colors;
    const QImage argb = image.convertToFormat(QImage::Format_ARGB32);
    for (int y = 0; y < argb.height(); ++y) {
        const auto* line = reinterpret_cast<const QRgb*>(argb.constScanLine(y));
        colors.unite(QSet<QRgb>(line, line + argb.width()));
    }
    return int(colors.size());
}

// A view of `matrix` (with `labels` on both axes, when given) shown at `size` and replotted, so
// that its layout is current. The test fails when the window is not exposed.
std::unique_ptr<HeatmapView> shownView(const MatrixD& matrix, QSize size,
                                       const QStringList& labels = {})
{
    auto view = std::make_unique<HeatmapView>();
    if (!labels.isEmpty())
        view->setAxisLabels(labels, labels);
    view->resize(size);
    view->setMatrix(matrix);
    view->show();
    if (!QTest::qWaitForWindowExposed(view.get()))
        QTest::qFail("the heatmap window was not exposed", __FILE__, __LINE__);
    view->replot();
    return view;
}

// count tokens named prefix0, prefix1, ...
QStringList numberedTokens(const char* prefix, int count)
{
    QStringList tokens;
    for (int i = 0; i < count; ++i)
        tokens << QLatin1String(prefix) + QString::number(i);
    return tokens;
}

// A drag with the left button from `from` to `to`, holding `modifiers`: press, moves on the way
// (carrying the button, as a real drag does), release.
void dragWithLeftButton(QWidget* widget, Qt::KeyboardModifiers modifiers, QPoint from, QPoint to)
{
    QTest::mousePress(widget, Qt::LeftButton, modifiers, from);
    for (int step = 1; step <= 4; ++step) {
        const QPointF position = from + (to - from) * (step / 4.0);
        QMouseEvent move(QEvent::MouseMove, position, widget->mapToGlobal(position), Qt::NoButton,
                         Qt::LeftButton, modifiers);
        QCoreApplication::sendEvent(widget, &move);
    }
    QTest::mouseRelease(widget, Qt::LeftButton, modifiers, to);
}

// Whether `color` is the bright (yellow) end of viridis rather than its dark (purple) end.
bool isBright(const QColor& color)
{
    return color.red() > 180 && color.green() > 180 && color.blue() < 120;
}

// Tokens for the hand-made example.
const QStringList kSentence = {"The", "cat",  "sat", "on",  "the", "mat", "because", "it",
                               "was", "warm", "and", "the", "sun", "was", "out",     "."};

}  // namespace

class TestHeatmap : public QObject {
    Q_OBJECT

private slots:
    // Viridis and magma are sequential: the relative luminance of the colours along the gradient
    // rises strictly from the low end to the high end.
    void sequentialMapsRiseInLuminance_data()
    {
        QTest::addColumn<ColorMap>("map");
        QTest::newRow("viridis") << ColorMap::Viridis;
        QTest::newRow("magma") << ColorMap::Magma;
    }
    void sequentialMapsRiseInLuminance()
    {
        QFETCH(ColorMap, map);
        double previous = -1;
        for (int i = 0; i <= 64; ++i) {
            const double y = luminance(colorOf(map, i / 64.0));
            QVERIFY2(y > previous, qPrintable(QStringLiteral("at %1/64").arg(i)));
            previous = y;
        }
        QVERIFY(previous - luminance(colorOf(map, 0.0)) > 0.5);
    }

    // The diverging map is balanced: 0 (the centre of a symmetric range) is a light, nearly
    // unsaturated colour; the low end is blue, the high end red; values +-t have about the same
    // luminance, lower than the centre's.
    void divergingMapIsBalanced()
    {
        const QCPRange range(-1, 1);
        const QColor centre = colorOf(ColorMap::Diverging, 0.0, range);
        QVERIFY2(centre.hsvSaturationF() < 0.05, qPrintable(centre.name()));
        QVERIFY(centre.valueF() > 0.8);
        const QColor low = colorOf(ColorMap::Diverging, -1.0, range);
        const QColor high = colorOf(ColorMap::Diverging, 1.0, range);
        QVERIFY(low.blue() > low.red() + 60 && low.blue() > low.green() + 60);
        QVERIFY(high.red() > high.blue() + 60 && high.red() > high.green() + 60);
        for (double t : {0.25, 0.5, 0.75, 1.0}) {
            const double negative = luminance(colorOf(ColorMap::Diverging, -t, range));
            const double positive = luminance(colorOf(ColorMap::Diverging, t, range));
            QVERIFY2(std::abs(negative - positive) < 0.05, qPrintable(QString::number(t)));
            QVERIFY(negative < luminance(centre) && positive < luminance(centre));
        }
    }

    // Every map draws NaN in a set neutral grey; 256 or more levels; not periodic.
    void nanColourIsSet_data()
    {
        sequentialMapsRiseInLuminance_data();
        QTest::newRow("diverging") << ColorMap::Diverging;
    }
    void nanColourIsSet()
    {
        QFETCH(ColorMap, map);
        QCPColorGradient gradient = colorGradient(map);
        QCOMPARE(gradient.nanHandling(), QCPColorGradient::nhNanColor);
        const QColor nan = gradient.nanColor();
        QVERIFY(nan.red() == nan.green() && nan.green() == nan.blue());
        const double value = std::nan("");
        QRgb rgb = 0;
        gradient.colorize(&value, QCPRange(0, 1), &rgb, 1);
        QCOMPARE(QColor::fromRgb(rgb), nan);
        QVERIFY(gradient.levelCount() >= 256);
        QVERIFY(!gradient.periodic());
    }

    // colorMapName and parseColorMap are inverse; unknown names are refused.
    void colorMapNamesRoundTrip()
    {
        for (ColorMap map : {ColorMap::Viridis, ColorMap::Magma, ColorMap::Diverging}) {
            ColorMap parsed = ColorMap::Viridis;
            QVERIFY(parseColorMap(colorMapName(map).toUpper(), &parsed));
            QCOMPARE(parsed, map);
        }
        ColorMap untouched = ColorMap::Magma;
        QVERIFY(!parseColorMap(QStringLiteral("jet"), &untouched));
        QCOMPARE(untouched, ColorMap::Magma);
    }

    // value(r, c) returns the matrix entries exactly, whichever overload of setMatrix was used.
    void valueReturnsTheMatrixEntries()
    {
        HeatmapView view;
        const MatrixD matrix = uniformMatrix(37, 23, 1);
        view.setMatrix(matrix);
        QCOMPARE(view.rowCount(), 37);
        QCOMPARE(view.columnCount(), 23);
        for (int r = 0; r < 37; ++r)
            for (int c = 0; c < 23; ++c)
                QCOMPARE(view.value(r, c), matrix(r, c));
        MatrixD moved = uniformMatrix(5, 300, 2);
        const MatrixD copy = moved;
        view.setMatrix(std::move(moved));
        QCOMPARE(view.rowCount(), 5);
        QCOMPARE(view.value(4, 299), copy(4, 299));
    }

    // A map whose axis rect is narrower than its margins (QCustomPlot then gives it a negative
    // width, which maps pixels to cells backwards: a page in the middle of a layout change, on a
    // loaded machine) draws nothing and does not throw. Before, its image was cut from a band of
    // a negative number of cells and std::vector threw length_error out of the replot.
    void aMapNarrowerThanItsMarginsDrawsNothing()
    {
        const auto view = shownView(uniformMatrix(48, 48, 5), QSize(300, 300));
        view->axisRect()->setAutoMargins(QCP::msNone);
        view->axisRect()->setMargins(QMargins(250, 250, 250, 250));
        view->replot();
        QVERIFY(view->axisRect()->width() < 0);  // the case this test is about
        QVERIFY(!view->grab().toImage().isNull());
    }

    // Row 0 is drawn at the top, column 0 at the left: a single bright cell at (0, 0) shows in
    // the top-left corner of the grabbed map, nowhere else.
    void rowZeroIsAtTheTop()
    {
        MatrixD matrix = MatrixD::Zero(8, 8);
        matrix(0, 0) = 1.0;
        const auto view = shownView(matrix, QSize(420, 400));
        const QImage image = view->grab().toImage();
        const double ratio = image.devicePixelRatio();
        const QRect map = view->axisRect()->rect();
        QRect bright;
        for (int y = map.top(); y <= map.bottom(); ++y)
            for (int x = map.left(); x <= map.right(); ++x)
                if (isBright(image.pixelColor(int(x * ratio), int(y * ratio))))
                    bright |= QRect(x, y, 1, 1);
        QVERIFY(!bright.isEmpty());
        QVERIFY(bright.right() < map.left() + map.width() / 6);
        QVERIFY(bright.bottom() < map.top() + map.height() / 6);
        const QPoint bottomLeft = view->cellCenter(7, 0);
        QVERIFY(!isBright(image.pixelColor(bottomLeft * ratio)));
    }

    // Level of detail keeps thin structure: the one-cell-wide diagonal of a 4096 x 4096 identity
    // drawn on about 500 pixels (8 cells per pixel) is bright in every pixel row of the map.
    void diagonalSurvivesLevelOfDetail()
    {
        const auto view = shownView(MatrixD::Identity(4096, 4096), QSize(600, 560));
        const QImage image = view->grab().toImage();
        const double ratio = image.devicePixelRatio();
        const QRect map = view->axisRect()->rect().adjusted(2, 2, -2, -2);
        QVERIFY(map.height() < 4096 / 4);
        for (int y = map.top(); y <= map.bottom(); ++y) {
            bool bright = false;
            for (int x = map.left(); x <= map.right() && !bright; ++x)
                bright = isBright(image.pixelColor(int(x * ratio), int(y * ratio)));
            QVERIFY2(bright, qPrintable(QStringLiteral("pixel row %1").arg(y)));
        }
    }

    // The error view draws the error map from P, P^ and the pyramid of P^ - P without forming
    // the map (the absolute error as the magnitudes of the signed extremes, the relative error
    // from a pyramid of its own): pixel for pixel what the formed map draws, with the same
    // colour range and the same values under the mouse, for every kind of error.
    void errorMapFromTheSignedPyramidIsTheFormedMap_data()
    {
        QTest::addColumn<int>("kind");
        QTest::newRow("signed") << int(ErrorKind::Signed);
        QTest::newRow("absolute") << int(ErrorKind::Absolute);
        QTest::newRow("relative") << int(ErrorKind::Relative);
    }

    void errorMapFromTheSignedPyramidIsTheFormedMap()
    {
        QFETCH(int, kind);
        const ErrorKind errorKind = ErrorKind(kind);
        std::mt19937 random(11);
        std::uniform_real_distribution<float> uniform(0.0f, 1.0f);
        Matrix<float> exact(1000, 1000), approx(1000, 1000);
        for (float& value : exact.reshaped())
            value = uniform(random);
        for (float& value : approx.reshaped())
            value = uniform(random);
        exact.row(7).setZero();  // the relative error is 0 there
        const MatrixD formed =
            attentionError(exact.cast<double>(), approx.cast<double>(), errorKind);
        const auto signedPyramid = std::make_shared<const DetailPyramid>(DetailPyramid::of(
            attentionError(exact.cast<double>(), approx.cast<double>(), ErrorKind::Signed)));

        HeatmapView fromPyramid, fromMatrix;
        for (HeatmapView* view : {&fromPyramid, &fromMatrix}) {
            view->resize(420, 400);
            view->setColorMap(errorKind == ErrorKind::Signed ? ColorMap::Diverging
                                                             : ColorMap::Magma);
        }
        fromPyramid.setErrorMatrix(ResultMatrix(Matrix<float>(exact)),
                                   ResultMatrix(Matrix<float>(approx)), errorKind, signedPyramid);
        fromMatrix.setMatrix(formed);
        QCOMPARE(fromPyramid.dataRange().lower, fromMatrix.dataRange().lower);
        QCOMPARE(fromPyramid.dataRange().upper, fromMatrix.dataRange().upper);
        for (const auto& [row, col] : {std::pair(0, 0), std::pair(7, 3), std::pair(999, 500)})
            QCOMPARE(fromPyramid.value(row, col), formed(row, col));
        QCOMPARE(fromPyramid.grab().toImage(), fromMatrix.grab().toImage());
    }

    // An empty title takes no room: removing it gives a square map in a wide view more height.
    void emptyTitleTakesNoSpace()
    {
        const auto view = shownView(uniformMatrix(20, 20, 13), QSize(600, 400));
        view->setTitle(QStringLiteral("A title"));
        view->replot();
        const int withTitle = view->axisRect()->rect().height();
        view->setTitle(QString());
        view->replot();
        QVERIFY(view->axisRect()->rect().height() > withTitle);
        QCOMPARE(view->title(), QString());
    }

    // Hovering and clicking report the cell under the mouse, corners included; leaving the map
    // reports (-1, -1).
    void hoverAndClickReportCells()
    {
        const auto view = shownView(uniformMatrix(10, 14, 3), QSize(520, 420));
        QSignalSpy hovered(view.get(), &HeatmapView::cellHovered);
        QSignalSpy clicked(view.get(), &HeatmapView::cellClicked);
        const QList<QPair<int, int>> cells = {{0, 0}, {0, 13}, {9, 0}, {9, 13}, {4, 7}};
        const auto last = [](const QSignalSpy& spy) {
            return spy.isEmpty() ? QList<QVariant>() : spy.last();
        };
        for (const auto& [row, col] : cells) {
            const QPoint centre = view->cellCenter(row, col);
            QTest::mouseMove(view.get(), centre);
            QTRY_COMPARE(last(hovered), (QList<QVariant>{row, col}));
            QTest::mouseClick(view.get(), Qt::LeftButton, {}, centre);
            QTRY_COMPARE(last(clicked), (QList<QVariant>{row, col}));
        }
        QCOMPARE(clicked.size(), cells.size());
        QTest::mouseMove(view.get(), QPoint(2, 2));
        QTRY_COMPARE(last(hovered), (QList<QVariant>{-1, -1}));
    }

    // Shift+drag zooms to the rectangle dragged over: from the centre of cell (20, 30) to that of
    // cell (59, 79) of a 100 x 100 map, the axes then show about rows 20 to 59 and columns 30 to
    // 79. A Shift+drag of two pixels is a click: it selects the cell and leaves the zoom alone. A
    // plain drag still pans: the same number of cells, moved.
    void shiftDragZoomsToTheRectangle()
    {
        const auto view = shownView(uniformMatrix(100, 100, 5), QSize(600, 560));
        QSignalSpy clicked(view.get(), &HeatmapView::cellClicked);
        const QPoint from = view->cellCenter(20, 30);
        dragWithLeftButton(view.get(), Qt::ShiftModifier, from, view->cellCenter(59, 79));
        view->replot();
        const QCPRange columns = view->xAxis->range();
        const QCPRange rows = view->yAxis->range();
        const auto shown = [](const QCPRange& range) {
            return QStringLiteral("%1 to %2").arg(range.lower).arg(range.upper);
        };
        QVERIFY2(std::abs(columns.lower - 30) <= 1 && std::abs(columns.upper - 79) <= 1,
                 qPrintable(shown(columns)));
        QVERIFY2(std::abs(rows.lower - 20) <= 1 && std::abs(rows.upper - 59) <= 1,
                 qPrintable(shown(rows)));
        QVERIFY(clicked.isEmpty());

        const QPoint cell = view->cellCenter(40, 50);
        dragWithLeftButton(view.get(), Qt::ShiftModifier, cell, cell + QPoint(2, 0));
        QCOMPARE(clicked.size(), 1);
        QCOMPARE(clicked.first(), (QList<QVariant>{40, 50}));
        QCOMPARE(view->xAxis->range(), columns);
        QCOMPARE(view->yAxis->range(), rows);

        dragWithLeftButton(view.get(), Qt::NoModifier, cell, cell + QPoint(60, 0));
        QVERIFY(view->xAxis->range().lower < columns.lower - 1);
        QCOMPARE(view->xAxis->range().size(), columns.size());
    }

    // A rectangle dragged past the map's edge zooms to the part of it over the matrix; a small
    // one zooms no closer than the wheel can: two cells.
    void shiftDragZoomStaysInsideTheMatrix()
    {
        const auto view = shownView(uniformMatrix(100, 100, 6), QSize(600, 560));
        const QRect map = view->axisRect()->rect();
        dragWithLeftButton(view.get(), Qt::ShiftModifier, view->cellCenter(90, 90),
                           map.bottomRight() + QPoint(30, 30));
        for (const QCPAxis* axis : {view->xAxis, view->yAxis}) {
            QVERIFY(axis->range().upper <= 99.5);
            QVERIFY2(axis->range().lower >= 89, qPrintable(QString::number(axis->range().lower)));
        }
        view->resetView();
        view->replot();
        const QPoint cell = view->cellCenter(50, 50);
        dragWithLeftButton(view.get(), Qt::ShiftModifier, cell, cell + QPoint(5, 5));
        QVERIFY(view->xAxis->range().size() >= 2.0);
        QVERIFY(view->yAxis->range().size() >= 2.0);
    }

    // With room for every label (20 tokens on 600 pixels) all are shown, as the tokens.
    void everyLabelShownWhenTheyFit()
    {
        const QStringList tokens = numberedTokens("w", 20);
        const auto view = shownView(uniformMatrix(20, 20, 4), QSize(600, 600), tokens);
        QCOMPARE(view->xAxis->tickVector().size(), 20);
        QCOMPARE(view->yAxis->tickVector().size(), 20);
        QCOMPARE(view->yAxis->tickVectorLabels().toList(), tokens);
    }

    // With 2000 labels on 600 pixels the labels are thinned so that they cannot overlap: the
    // visible labels, each a line of text high (or as wide as the widest, side by side), fit the
    // axis length; and they are tokens at their own cells.
    void labelsThinnedWhenTheyDoNotFit()
    {
        const QStringList tokens = numberedTokens("t", 2000);
        const auto view = shownView(uniformMatrix(2000, 2000, 5), QSize(600, 600), tokens);
        const QFontMetricsF metrics(view->yAxis->tickLabelFont());
        const QRect map = view->axisRect()->rect();
        const auto yTicks = view->yAxis->tickVector();
        QVERIFY(yTicks.size() >= 3);
        QVERIFY(yTicks.size() * metrics.height() <= map.height());
        const auto xTicks = view->xAxis->tickVector();
        QVERIFY(xTicks.size() >= 3);
        double textLength = 0;
        for (const QString& label : view->xAxis->tickVectorLabels())
            textLength += view->xAxis->tickLabelRotation() == 0 ? metrics.horizontalAdvance(label)
                                                                : metrics.height();
        QVERIFY(textLength <= map.width());
        for (int i = 0; i < yTicks.size(); ++i)
            QCOMPARE(view->yAxis->tickVectorLabels().at(i), tokens.at(int(yTicks.at(i))));
    }

    // Labels follow the size: a larger view shows more numeric labels, still without overlap.
    void labelsFollowResize()
    {
        const auto view = shownView(uniformMatrix(200, 200, 6), QSize(300, 300));
        const int small = int(view->yAxis->tickVector().size());
        view->resize(900, 900);
        view->replot();
        const int large = int(view->yAxis->tickVector().size());
        QVERIFY2(large > small, qPrintable(QStringLiteral("%1 -> %2").arg(small).arg(large)));
        const QFontMetricsF metrics(view->yAxis->tickLabelFont());
        QVERIFY(large * metrics.height() <= view->axisRect()->rect().height());
    }

    // The rows' label step after a change of size, whatever size came before: the labels never
    // overlap (a step s leaves s * pitch >= a line and its 2 pixels of gap), and the step is the
    // finest that does so with 15% room (the next finer step of 1, 2, 5 times ten leaves less).
    // Sizes are visited from a tiny map (step 10 for 18 rows) straight to each size, as a page
    // first laid out small does, then growing and shrinking in small steps.
    void labelStepIsTheFinestWithRoomAfterAnyResize()
    {
        const auto view = shownView(uniformMatrix(18, 18, 7), QSize(120, 120));
        const QFontMetricsF metrics(view->yAxis->tickLabelFont());
        const double needed = metrics.height() + 2;
        const auto finer = [](int step) {
            const int decade = int(std::pow(10, std::floor(std::log10(step))));
            return step / decade == 1 ? decade / 2 : step / decade == 2 ? decade : 2 * decade;
        };
        const auto check = [&](int height) {
            view->resize(height, height);
            view->replot();
            const auto ticks = view->yAxis->tickVector();
            QVERIFY2(ticks.size() >= 2, qPrintable(QString::number(height)));
            const int step = int(ticks.at(1) - ticks.at(0));
            const double pitch = view->axisRect()->rect().height() / 18.0;
            const QString where = QStringLiteral("height %1: step %2 at %3 px a row, %4 needed")
                                      .arg(height)
                                      .arg(step)
                                      .arg(pitch)
                                      .arg(needed);
            QVERIFY2(step * pitch >= needed, qPrintable(where));
            QVERIFY2(finer(step) == 0 || finer(step) * pitch < 1.15 * needed, qPrintable(where));
        };
        QVERIFY(int(view->yAxis->tickVector().size()) <= 2);
        for (int height = 160; height <= 700; height += 20) {
            view->resize(120, 120);
            view->replot();
            check(height);
        }
        for (int height = 160; height <= 700; height += 7)
            check(height);
        for (int height = 700; height >= 160; height -= 7)
            check(height);
    }

    // labelMapsAlike: a small map and a large one of the same tokens both label every
    // coarsest-step row, each at least its own step; a map zoomed in keeps its own finer step,
    // and a map hidden no longer sets the others' step.
    void mapsShownTogetherLabelAlike()
    {
        const MatrixD matrix = uniformMatrix(60, 60, 9);
        const auto small = shownView(matrix, QSize(250, 250));
        const auto large = shownView(matrix, QSize(800, 800));
        const auto rowStep = [](const HeatmapView& view) {
            const auto ticks = view.yAxis->tickVector();
            return ticks.size() > 1 ? int(ticks[1] - ticks[0]) : 0;
        };
        const int smallOwn = rowStep(*small), largeOwn = rowStep(*large);
        QVERIFY2(smallOwn > largeOwn,
                 qPrintable(QStringLiteral("%1, %2").arg(smallOwn).arg(largeOwn)));
        labelMapsAlike({small.get(), large.get()});
        large->replot();
        QCOMPARE(rowStep(*large), smallOwn);
        QCOMPARE(large->ownLabelSteps().y(), largeOwn);

        large->yAxis->setRange(9.5, 39.5);
        large->replot();
        QVERIFY(!large->showsWholeMatrix());
        labelMapsAlike({small.get(), large.get()});
        large->replot();
        QVERIFY(rowStep(*large) < smallOwn);

        large->resetView();
        small->hide();
        labelMapsAlike({small.get(), large.get()});
        large->replot();
        QCOMPARE(rowStep(*large), largeOwn);
    }

    // dataRange is [min, max] with NaN ignored; with the diverging map it is [-a, a] for
    // a = max |value|. The automatic colour range follows it; a fixed range survives setMatrix.
    void dataRangeIsMinMaxOrSymmetric()
    {
        HeatmapView view;
        MatrixD matrix(2, 3);
        matrix << -0.5, 2.0, std::nan(""), 1.0, 0.25, 0.0;
        view.setMatrix(matrix);
        QCOMPARE(view.dataRange().lower, -0.5);
        QCOMPARE(view.dataRange().upper, 2.0);
        QCOMPARE(view.colorRange().lower, -0.5);
        view.setColorMap(ColorMap::Diverging);
        QCOMPARE(view.dataRange().lower, -2.0);
        QCOMPARE(view.dataRange().upper, 2.0);
        QCOMPARE(view.colorRange().upper, 2.0);
        view.setColorRange(QCPRange(-1, 1));
        view.setMatrix(3 * matrix);
        QCOMPARE(view.colorRange().upper, 1.0);
        view.setAutoColorRange();
        QCOMPARE(view.colorRange().upper, 6.0);
    }

    // setHighlightedCell draws an outline around that cell and changes nothing away from it;
    // (-1, -1) removes it again.
    void highlightOutlinesTheCell()
    {
        const auto view = shownView(uniformMatrix(12, 12, 7), QSize(480, 440));
        const QImage before = view->grab().toImage();
        view->setHighlightedCell(3, 5);
        const QImage after = view->grab().toImage();
        const double ratio = after.devicePixelRatio();
        const QPoint centre = view->cellCenter(3, 5);
        const double cell = view->axisRect()->rect().width() / 12.0;
        int changed = 0;
        for (int y = 0; y < after.height(); ++y) {
            for (int x = 0; x < after.width(); ++x) {
                if (before.pixel(x, y) == after.pixel(x, y))
                    continue;
                ++changed;
                QVERIFY(std::abs(x / ratio - centre.x()) <= cell / 2 + 3);
                QVERIFY(std::abs(y / ratio - centre.y()) <= cell / 2 + 3);
            }
        }
        QVERIFY(changed > cell * 2);
        view->setHighlightedCell(-1, -1);
        QCOMPARE(view->grab().toImage(), before);
    }

    // PNG export: an image QImage reads, at twice the requested size, with many colours.
    void exportWritesPng()
    {
        QTemporaryDir dir;
        const auto view = exampleView();
        const QString path = dir.filePath(QStringLiteral("figure.png"));
        exportFigure(*view, path, FigureFormat::Png, QSize(500, 460));
        const QImage image(path);
        QVERIFY(!image.isNull());
        QCOMPARE(image.size(), QSize(1000, 920));
        QVERIFY(distinctColors(image) > 100);
    }

    // A map in a wide window (cells kept square) is exported without the white bands beside it:
    // the figure's outer columns hold its labels and colour scale, not a quarter of white each.
    void exportOfAWideViewHasNoWhiteBands()
    {
        QTemporaryDir dir;
        const auto view = exampleView();
        view->resize(1200, 480);
        view->show();
        QVERIFY(QTest::qWaitForWindowExposed(view.get()));
        view->replot();
        const QString path = dir.filePath(QStringLiteral("wide.png"));
        exportFigure(*view, path, FigureFormat::Png);
        const QImage image(path);
        QVERIFY(!image.isNull());
        const auto whiteColumn = [&](int x) {
            for (int y = 0; y < image.height(); ++y)
                if (qGray(image.pixel(x, y)) < 250)
                    return false;
            return true;
        };
        int left = 0;
        while (left < image.width() && whiteColumn(left))
            ++left;
        int right = 0;
        while (right < image.width() && whiteColumn(image.width() - 1 - right))
            ++right;
        QVERIFY2(left + right < image.width() / 20,
                 qPrintable(QStringLiteral("%1 + %2 white columns of %3")
                                .arg(left)
                                .arg(right)
                                .arg(image.width())));
    }

    // SVG export: valid for QSvgRenderer, and the title is there as text.
    void exportWritesSvg()
    {
        QTemporaryDir dir;
        const auto view = exampleView();
        const QString path = dir.filePath(QStringLiteral("figure.svg"));
        exportFigure(*view, path, FigureFormat::Svg);
        QSvgRenderer renderer(path);
        QVERIFY(renderer.isValid());
        const QString svg = QString::fromUtf8(readBytes(path));
        const QRegularExpression titleText(QStringLiteral("<text[^>]*>\\s*Exact attention P"));
        QVERIFY(svg.contains(titleText));
        QVERIFY(svg.contains(QStringLiteral("<title>Exact attention P</title>")));
    }

    // PDF export: a complete PDF file (header and end-of-file marker).
    void exportWritesPdf()
    {
        QTemporaryDir dir;
        const auto view = exampleView();
        const QString path = dir.filePath(QStringLiteral("figure.pdf"));
        exportFigure(*view, path, FigureFormat::Pdf);
        const QByteArray pdf = readBytes(path);
        QVERIFY(pdf.startsWith("%PDF-"));
        QVERIFY(pdf.trimmed().endsWith("%%EOF"));
        QVERIFY(pdf.size() > 2000);
    }

    // Export into a folder that cannot be created (a file stands where it should be) throws
    // OutputError naming the path, and leaves no file behind, for every format.
    void exportFailureLeavesNoFile_data()
    {
        QTest::addColumn<FigureFormat>("format");
        QTest::newRow("png") << FigureFormat::Png;
        QTest::newRow("svg") << FigureFormat::Svg;
        QTest::newRow("pdf") << FigureFormat::Pdf;
    }
    void exportFailureLeavesNoFile()
    {
        QFETCH(FigureFormat, format);
        QTemporaryDir dir;
        QFile blocker(dir.filePath(QStringLiteral("blocker")));
        QVERIFY(blocker.open(QIODevice::WriteOnly));
        blocker.close();
        const QString path =
            dir.filePath(QStringLiteral("blocker/figures/figure.") + figureFormatName(format));
        const auto view = exampleView();
        try {
            exportFigure(*view, path, format);
            QFAIL("no OutputError");
        } catch (const OutputError& error) {
            QVERIFY2(error.message().contains(path), qPrintable(error.message()));
        }
        QVERIFY(!QFileInfo::exists(path));
        QCOMPARE(QDir(dir.path()).entryList(QDir::NoDotAndDotDot | QDir::AllEntries),
                 QStringList{QStringLiteral("blocker")});
    }

    // copyFigureToClipboard puts the figure on the clipboard as an image at twice its size.
    void copyPutsTheFigureOnTheClipboard()
    {
        const auto view = exampleView();
        copyFigureToClipboard(*view);
        const QImage image = QGuiApplication::clipboard()->image();
        QCOMPARE(image.size(), view->size() * 2);
        QVERIFY(distinctColors(image) > 100);
    }

    // The figure format follows the file suffix; other suffixes are refused.
    void figureFormatFollowsTheSuffix()
    {
        FigureFormat format = FigureFormat::Png;
        QVERIFY(figureFormatFromSuffix(QStringLiteral("/a/b.SVG"), &format));
        QCOMPARE(format, FigureFormat::Svg);
        QVERIFY(figureFormatFromSuffix(QStringLiteral("c.pdf"), &format));
        QCOMPARE(format, FigureFormat::Pdf);
        QVERIFY(!figureFormatFromSuffix(QStringLiteral("c.jpg"), &format));
        QCOMPARE(format, FigureFormat::Pdf);
    }

    // A 4096 x 4096 matrix exports to a PNG with its structure: many colours.
    void exportOfALargeMatrix()
    {
        QTemporaryDir dir;
        HeatmapView view;
        view.setMatrix(uniformMatrix(4096, 4096, 8));
        const QString path = dir.filePath(QStringLiteral("large.png"));
        exportFigure(view, path, FigureFormat::Png, QSize(600, 560));
        const QImage image(path);
        QCOMPARE(image.size(), QSize(1200, 1120));
        QVERIFY(distinctColors(image) > 100);
    }

    // Panning a map zoomed in 2x stops at the matrix's edge: the range keeps its size and its
    // upper end stays at the last column. (Its time, and setMatrix's and hover's at 4096 x 4096,
    // are measured by bench/bench_heatmap.)
    void panStopsAtTheLastColumn()
    {
        const auto view = shownView(uniformMatrix(256, 256, 12), QSize(600, 560));
        view->xAxis->setRange(-0.5, 127.5);
        view->yAxis->setRange(-0.5, 127.5);
        view->replot(QCustomPlot::rpImmediateRefresh);
        for (int i = 0; i < 10; ++i) {
            view->xAxis->moveRange(32);
            view->yAxis->moveRange(16);
            view->replot(QCustomPlot::rpImmediateRefresh);
        }
        QCOMPARE(view->xAxis->range().upper, 255.5);  // clamped at the last column
        QCOMPARE(view->xAxis->range().size(), 128.0);
        QCOMPARE(view->yAxis->range().size(), 128.0);
    }

private:
    // The hand-made example: 16 tokens of a sentence, row-stochastic attention with a strong
    // diagonal, titled "Exact attention P".
    static std::unique_ptr<HeatmapView> exampleView()
    {
        const int n = int(kSentence.size());
        MatrixD attention(n, n);
        for (int i = 0; i < n; ++i) {
            for (int j = 0; j < n; ++j)
                attention(i, j) = std::exp(-std::abs(i - j) * 0.9) + (j == 0 ? 0.6 : 0.0);
            attention.row(i) /= attention.row(i).sum();
        }
        auto view = std::make_unique<HeatmapView>();
        view->resize(520, 480);
        view->setMatrix(attention);
        view->setAxisLabels(kSentence, kSentence);
        view->setTitle(QStringLiteral("Exact attention P"));
        view->setColorScaleLabel(QStringLiteral("attention weight"));
        return view;
    }
};

QTEST_MAIN(TestHeatmap)
#include "test_heatmap.moc"
