// Figures fill their space: the window fits a 1280 x 800 screen, the attention maps and the image
// overlay grow with their pages (in presentation mode too), and hints wrap instead of being cut
// off. Each test measures what the user sees: the pixels a map or an image gets.

#include "ui/common/reserved_height_label.h"
#include "ui/experiment/attention_maps_page.h"
#include "ui/plotting/heatmap_view.h"
#include "ui/plotting/log_ticker.h"
#include "ui/plotting/plot_style.h"
#include "ui/experiment/image_overlay_view.h"
#include "ui/experiment/experiment_controller.h"
#include "ui/window/lecture_controls.h"
#include "ui/window/main_window.h"
#include "ui/stepper/stepper_view.h"
#include "ui/lecture/presentation.h"
#include "ui/experiment/row_comparison_view.h"
#include "ui/experiment/view_bar.h"
#include "ui/model/head_grid_panel.h"
#include "test_support.h"
#include "window_support.h"

#include <QAbstractSpinBox>
#include <QFile>
#include <QFontMetrics>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QSignalSpy>
#include <QSpinBox>
#include <QStandardPaths>
#include <QTabBar>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QTest>
#include <QVBoxLayout>

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <utility>

using namespace attnlab;
using namespace attnlab::ui;
using namespace attnlab::test;

namespace {

// The text items of plot whose text, without line breaks, is `text`.
QCPItemText* hintOf(QCustomPlot& plot, const QString& text)
{
    for (int i = 0; i < plot.itemCount(); ++i) {
        auto* item = qobject_cast<QCPItemText*>(plot.item(i));
        if (item && item->text().simplified() == text)
            return item;
    }
    return nullptr;
}

// Counts the events of one type that reach the objects it filters.
class EventCounter : public QObject {
public:
    explicit EventCounter(QEvent::Type type) : m_type(type) {}
    int count() const { return m_count; }

protected:
    bool eventFilter(QObject*, QEvent* event) override
    {
        m_count += event->type() == m_type;
        return false;
    }

private:
    QEvent::Type m_type;
    int m_count = 0;
};

}  // namespace

class TestLayout : public QObject {
    Q_OBJECT

private slots:
    void initTestCase() { QStandardPaths::setTestModeEnabled(true); }

    // The window's docks and pages leave it no wider than a 1280 x 800 screen (it could not be
    // made narrower than 1395 pixels before).
    void windowFitsTwelveEightyByEightHundred()
    {
        MainWindow window(MainWindow::Start::DefaultExample);
        QVERIFY(showAndWait(window, QSize(1280, 800)));
        QTest::qWait(100);  // the docks follow their panels' layouts
        QCOMPARE(window.width(), 1280);
        QVERIFY(window.height() <= 800);
    }

    // The tab bar stays where it is from page to page: the view bar (head, error, colours) sits
    // at the top of the matrix page shown, under the tabs. It stood above the tabs on the matrix
    // pages only, and the tabs moved about 30 pixels at each change between those and the others.
    void theTabBarStaysPutFromPageToPage()
    {
        MainWindow window(MainWindow::Start::DefaultExample);
        QVERIFY(showAndWait(window, QSize(1280, 800)));
        auto* pages = window.findChild<QTabWidget*>(QStringLiteral("pages"));
        auto* head = window.findChild<QSpinBox*>(QStringLiteral("viewHead"));
        QVERIFY(pages && head);
        const auto tabsAt = [&window, pages] { return pages->tabBar()->mapTo(&window, QPoint()); };
        const QPoint onMatrices = tabsAt();
        QVERIFY(head->isVisible());
        for (const MainWindow::Page page :
             {MainWindow::TimingPage, MainWindow::ErrorsPage, MainWindow::MatricesPage}) {
            window.showPage(page);
            QTest::qWait(50);  // the layout requests a change of page posts
            QCOMPARE(tabsAt(), onMatrices);
            QTRY_COMPARE(head->isVisible(), page == MainWindow::MatricesPage);
        }
    }

    // A head chosen on the Heads page shows in the view bar's head box as in the maps (the box
    // kept the head shown before, when the layer was the one shown).
    void aHeadChosenOnTheHeadsPageShowsInTheViewBar()
    {
        MainWindow window(MainWindow::Start::DefaultExample);
        QVERIFY(showAndWait(window));
        const int heads = int(resultOf(window).heads.size());  // the built-in model's
        QVERIFY(heads > 1);
        auto* head = window.findChild<QSpinBox*>(QStringLiteral("viewHead"));
        QVERIFY(head);
        QCOMPARE(head->value(), window.viewSettings().head);
        const int other = (head->value() + 1) % heads;
        emit window.headGrid()->headActivated(window.controller().spec().input.layer, other);
        QCOMPARE(window.viewSettings().head, other);
        QCOMPARE(head->value(), other);
    }

    // Presentation mode at 1920 x 1080 with scenario 5 (a wide, short page above the
    // explanation): each attention map gets more than a quarter of the screen's height (two by
    // two, as before, they got about 200 of its 1080 pixels).
    void presentationMapsFillTheirPanels()
    {
        MainWindow window(MainWindow::Start::DefaultExample);
        QVERIFY(showAndWait(window, QSize(1920, 1080)));
        QSignalSpy shown(&window, &MainWindow::resultShown);
        QVERIFY(window.lecture().openScenarioFile(QStringLiteral(
            ATTNLAB_TEST_DATA "/../../resources/scenarios/05-norms-matter.attnlab")));
        QVERIFY(shown.wait(kResultTimeoutMs));
        window.presentation().enter(PresentationMode::Placement::KeepGeometry);
        // The page rearranges itself after a replot (queued), which takes longer on a loaded
        // machine: wait for the arrangement to settle rather than a fixed time.
        const auto shownMap = [&window] {
            window.exactView()->replot();
            return window.exactView()->axisRect()->rect();
        };
        QRect map;
        QTRY_VERIFY2_WITH_TIMEOUT(
            (map = shownMap()).height() > 1080 / 4,
            qPrintable(QStringLiteral("the map is %1 x %2").arg(map.width()).arg(map.height())),
            kResultTimeoutMs);
        QCOMPARE(map.width(), map.height());  // square cells: the same tokens on both axes
    }

    // A wide image on a page of the window's default proportions: the panels are laid out in
    // two rows when that draws the image larger, so each image is more than 40% as wide as the
    // figure (side by side, the three took about 27% each).
    void imageOverlayFillsItsPage()
    {
        ImageOverlayView view;
        view.resize(860, 740);
        QImage image(224, 144, QImage::Format_RGB32);
        image.fill(Qt::gray);
        view.setImage(image, 9, 14);
        view.setAttention(VectorD::Constant(126, 1.0 / 126), VectorD::Constant(126, 1.0 / 126), 60);
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        view.replot();
        const QPoint first = view.patchCenter(ImageOverlayView::ExactPanel, 0);
        const QPoint last = view.patchCenter(ImageOverlayView::ExactPanel, 13);
        const double imageWidth = (last.x() - first.x()) * 14.0 / 13.0;
        QVERIFY2(imageWidth > 0.4 * view.width(),
                 qPrintable(QStringLiteral("the image is %1 pixels wide").arg(imageWidth)));
    }

    // Titles longer than their panel is wide (a ViT's at 1280 x 800) wrap (wrappedText) until
    // every line fits its panel, and the figure's title (the row shown) until it fits the
    // figure; at a width where they fit they keep their lines, and no break falls inside
    // parentheses ("patch (1, 3)") or an equation ("m = 64").
    void imageOverlayTitlesFitTheirPanels()
    {
        ImageOverlayView view;
        QImage image(28, 28, QImage::Format_RGB32);
        image.fill(Qt::gray);
        view.setImage(image, 7, 7);
        view.setAttention(VectorD::Constant(49, 1.0 / 49), VectorD::Constant(49, 1.0 / 49), 10);
        const QString figure = QStringLiteral("rollout over 12 layers, patch (1, 3) (head 3)");
        const QStringList titles{QStringLiteral("exact\n0.01 on [CLS]"),
                                 QStringLiteral("FAVOR+ positive, m = 64\n0.01 on [CLS]"),
                                 QStringLiteral("error")};
        view.setTitles(figure, titles[0], titles[1], titles[2]);
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        const QCPLayoutElement* figureTitle = view.plotLayout()->element(0, 0);
        for (const int width : {300, 760, 2400}) {
            view.resize(width, 420);
            QTest::qWait(50);
            view.replot();
            QStringList shown;
            for (QCPLayoutElement* element : view.plotLayout()->elements(true)) {
                auto* title = qobject_cast<QCPTextElement*>(element);
                // At 300 pixels a panel is narrower than a word: only the figure's title is read.
                if (!title || !title->visible() || (width == 300 && title != figureTitle))
                    continue;
                const QFontMetrics metrics(title->font());
                // A panel's width, from its patches' centres (7 columns), and the spacing; the
                // figure's title has the figure's width inside its margins (8 pixels each side).
                const int room = title == figureTitle
                                     ? width - 16
                                     : (view.patchCenter(ImageOverlayView::ExactPanel, 6).x() -
                                        view.patchCenter(ImageOverlayView::ExactPanel, 0).x()) *
                                               7 / 6 +
                                           10 + 1;
                if (title != figureTitle)
                    shown.append(title->text());
                for (const QString& line : title->text().split('\n')) {
                    QVERIFY2(metrics.horizontalAdvance(line) <= room,
                             qPrintable(QStringLiteral("\"%1\" in %2 pixels").arg(line).arg(room)));
                    QVERIFY2(line.count('(') == line.count(')'), qPrintable(line));
                }
            }
            const QString figureShown = static_cast<const QCPTextElement*>(figureTitle)->text();
            if (width == 300) {
                QVERIFY2(figureShown.contains('\n'), qPrintable(figureShown));
            } else if (width == 760) {
                QVERIFY2(shown.join('\n').contains(QStringLiteral("FAVOR+ positive,\nm = 64")),
                         qPrintable(shown.join(" | ")));
            } else {
                QCOMPARE(figureShown, figure);
                QCOMPARE(shown, titles);
            }
        }
    }

    // A log axis labelled with plain numbers reads each tick's value at every magnitude: grouped
    // integers ("65,536") where they are exact, three significant digits past 10^15. A tick of
    // 10^20 (a memory axis laid out on a page a few pixels high) was converted to a 64-bit
    // integer, which cannot hold it.
    void plainLogTickLabelsReadTheirValues()
    {
        LogTicker ticker(LogTicker::Labels::Plain);
        ticker.setTickCount(40);
        QVector<double> ticks;
        QVector<QString> labels;
        ticker.generate(QCPRange(1, 1e20), QLocale(), 'g', 6, ticks, nullptr, &labels);
        QCOMPARE(ticks.size(), labels.size());
        QVERIFY(ticks.last() >= 1e20);
        for (int i = 0; i < ticks.size(); ++i) {
            const double read = QString(labels[i]).remove(QLatin1Char(',')).toDouble();
            QVERIFY2(std::abs(read - ticks[i]) <= 5e-3 * ticks[i],
                     qPrintable(QStringLiteral("%1 reads %2").arg(ticks[i]).arg(labels[i])));
        }
    }

    // A label broken onto more lines (wrappedText) keeps a norm, an absolute value, a ratio, a
    // parenthesis and an equation whole at every width they fit: the Error analysis chart's y
    // label broke as "relative Frobenius error ‖P̂ −" over "P‖ / ‖P‖ (ratio)". A bar inside
    // parentheses ("KL(p ‖ q)") opens no norm.
    void wrappedTextKeepsFormulasWhole()
    {
        const QFont font;
        const QFontMetrics metrics(font);
        const int ratio = metrics.horizontalAdvance(
            QStringLiteral("\u2016P\u0302 \u2212 P\u2016 / \u2016P\u2016"));
        for (const QString& label :
             {QStringLiteral("relative Frobenius error \u2016P\u0302 \u2212 P\u2016 / "
                             "\u2016P\u2016 (ratio) at m = 64"),
              QStringLiteral("mean KL(p \u2016 q) (nats) beside the absolute error |P\u0302 "
                             "\u2212 P| of each entry (probability)")}) {
            for (int width = ratio; width < 2 * metrics.horizontalAdvance(label); width += 7) {
                const QString wrapped = wrappedText(label, font, width);
                QCOMPARE(wrapped.simplified(), label);
                for (const QString& line : wrapped.split('\n')) {
                    const QString where = QStringLiteral("%1 pixels: \"%2\"").arg(width).arg(line);
                    QVERIFY2(metrics.horizontalAdvance(line) <= width, qPrintable(where));
                    QVERIFY2(line.count('|') % 2 == 0 && line.count('(') == line.count(')'),
                             qPrintable(where));
                    if (!line.contains(QStringLiteral("KL(")))
                        QVERIFY2(line.count(QChar(0x2016)) % 2 == 0, qPrintable(where));
                    for (const QString& end : {QStringLiteral("/"), QStringLiteral("=")})
                        QVERIFY2(!line.startsWith(end) && !line.endsWith(end), qPrintable(where));
                }
            }
        }
    }

    // A legend entry's gap of two spaces before its slope breaks first and, where the line goes
    // on, stays two spaces, at every width: a wrapped entry read "orthogonal rows slope -0.64"
    // beside "iid rows  slope -0.45".
    void wrappedTextKeepsTheGapBeforeTheSlope()
    {
        const QFont font;
        const QFontMetrics metrics(font);
        const QString name = QStringLiteral("Trigonometric (random Fourier), orthogonal rows");
        const QString slope = QStringLiteral("slope\u00a0-0.64");
        const QString entry = name + QStringLiteral("  ") + slope;
        for (int width = metrics.horizontalAdvance(QStringLiteral("(random Fourier),"));
             width <= metrics.horizontalAdvance(entry) + 7; width += 7) {
            const QString wrapped = wrappedText(entry, font, width);
            const QString where = QStringLiteral("%1 pixels: \"%2\"").arg(width).arg(wrapped);
            QStringList lines = wrapped.split(QLatin1Char('\n'));
            QVERIFY2(lines.back().endsWith(slope), qPrintable(where));
            if (lines.back() == slope)
                lines.removeLast();
            else
                QVERIFY2(lines.back().endsWith(QStringLiteral("s  ") + slope), qPrintable(where));
            // The name breaks as it does alone, the slope after it on the last line or its own.
            QCOMPARE(lines.join(QLatin1Char('\n')).remove(QStringLiteral("  ") + slope),
                     wrappedText(name, font, width));
        }
    }

    // The Metrics dock widens when a value needs more room (the trained head's kernel MSE,
    // 1.484 x 10^6, in the session of the README's screenshot) instead of cutting the right
    // column off: the panel is never narrower than its layout needs.
    void metricsDockFitsWideValues()
    {
        MainWindow window(MainWindow::Start::DefaultExample);
        QVERIFY(showAndWait(window, QSize(1600, 1000)));
        QSignalSpy shown(&window, &MainWindow::resultShown);
        QVERIFY(window.openSession(
            QStringLiteral(ATTNLAB_TEST_DATA "/../../docs/screenshots/inside.attnlab")));
        QVERIFY(shown.wait(kResultTimeoutMs));
        QTest::qWait(100);  // the dock's layout follows the panel's
        auto* panel = window.findChild<QWidget*>(QStringLiteral("metricsPanel"));
        QVERIFY(panel);
        // The dock's scroll area lays the panel out at least as wide as its layout needs; the
        // part beyond the area's viewport (its parent) would be cut off.
        const QWidget* viewport = panel->parentWidget();
        QVERIFY2(panel->width() <= viewport->width(),
                 qPrintable(QStringLiteral("the panel is %1 pixels wide, the dock shows %2")
                                .arg(panel->width())
                                .arg(viewport->width())));
    }

    // At 1280 x 800 with every dock open, on the Error analysis page (whose controls leave the
    // docks the least room), the Metrics panel is laid out no wider than its dock shows, before
    // and after presentation mode. Its section titles set only their weight: presenting scaled
    // them twice and left them at the presentation size, which pushed the panel 84 pixels past
    // the window's edge.
    void metricsDockFitsTheSmallestWindowAfterPresenting()
    {
        MainWindow window(MainWindow::Start::DefaultExample);
        QVERIFY(showAndWait(window, QSize(1280, 800)));
        window.showPage(MainWindow::ErrorsPage);
        QTest::qWait(100);  // the docks follow their panels' layouts
        auto* panel = window.findChild<QWidget*>(QStringLiteral("metricsPanel"));
        QVERIFY(panel && panel->isVisible());
        QLabel* section = nullptr;
        for (QLabel* label : panel->findChildren<QLabel*>())
            if (label->text() == QLatin1String("Warnings"))
                section = label;
        QVERIFY(section);
        const double size = section->font().pointSizeF();
        const auto fits = [&] {
            const QWidget* viewport = panel->parentWidget();
            return panel->width() <= viewport->width() &&
                   viewport->mapTo(&window, QPoint(viewport->width(), 0)).x() <= window.width();
        };
        QVERIFY(fits());
        window.setPresentationMode(true, PresentationMode::Placement::KeepGeometry);
        QVERIFY(window.presentation().fontScale() > 1);
        QCOMPARE(section->font().pointSizeF(), size * window.presentation().fontScale());
        window.setPresentationMode(false);
        QCOMPARE(section->font().pointSizeF(), size);
        QTRY_VERIFY2(fits(), qPrintable(QStringLiteral("the panel is %1 pixels wide, the dock "
                                                       "shows %2")
                                            .arg(panel->width())
                                            .arg(panel->parentWidget()->width())));
    }

    // At 1280 x 800, a method's own parameter is in view in the Method dock as soon as the
    // method is chosen: local attention's window w, Nystrom's pseudo-inverse iterations. They
    // were the dock's last rows, below its visible part.
    void methodParametersShowWhereTheMethodIsChosen_data()
    {
        QTest::addColumn<QString>("method");
        QTest::addColumn<QString>("control");
        QTest::newRow("local") << QStringLiteral("local") << QStringLiteral("window");
        QTest::newRow("scatterbrain") << QStringLiteral("scatterbrain") << QStringLiteral("window");
        QTest::newRow("nystrom") << QStringLiteral("nystrom") << QStringLiteral("pinvIterations");
    }

    void methodParametersShowWhereTheMethodIsChosen()
    {
        QFETCH(QString, method);
        QFETCH(QString, control);
        MainWindow window(MainWindow::Start::DefaultExample);
        QVERIFY(showAndWait(window, QSize(1280, 800)));
        ExperimentSpec spec = window.controller().spec();
        spec.causal = method == QLatin1String("nystrom") ? false : spec.causal;
        spec.input.kind = method == QLatin1String("nystrom") ? InputKind::Text : spec.input.kind;
        QVERIFY(spec.setMethod(method));
        QSignalSpy shown(&window, &MainWindow::resultShown);
        window.setSpec(spec);
        QVERIFY(shown.wait(kResultTimeoutMs));
        QTest::qWait(100);  // the dock's layout follows the panel's
        auto* panel = window.findChild<QWidget*>(QStringLiteral("methodPanel"));
        QVERIFY(panel);
        auto* widget = panel->findChild<QWidget*>(control);
        QVERIFY(widget && widget->isVisibleTo(panel));
        const QWidget* viewport = panel->parentWidget();
        const QRect shownPart = viewport->rect();
        const QRect where(widget->mapTo(viewport, QPoint(0, 0)), widget->size());
        QVERIFY2(shownPart.contains(where),
                 qPrintable(QStringLiteral("%1 at y %2 to %3; the dock shows 0 to %4")
                                .arg(control)
                                .arg(where.top())
                                .arg(where.bottom())
                                .arg(shownPart.bottom())));
    }

    // The Stepper page with a trained model (the built-in model, layer 3, FAVOR+ m = 8) at
    // 1600 x 1000 and 1280 x 800: stepping through every token moves nothing (the lower row of
    // panels kept moving down, below the page by the last steps), and every panel, its title and
    // colour bar included, is in view without scrolling sideways (the right column was cut off);
    // at 1600 x 1000 without scrolling at all (at 1280 x 800 with both docks open, the page
    // scrolls down to its last row). Panels fill the width beside the formula panel (at 1280 x
    // 800 a third of the first screen, right of it, was blank).
    void stepperPanelsStayPutAndInView_data()
    {
        QTest::addColumn<QSize>("size");
        QTest::addColumn<bool>("whole");
        QTest::newRow("1600x1000") << QSize(1600, 1000) << true;
        QTest::newRow("1280x800") << QSize(1280, 800) << false;
    }

    void stepperPanelsStayPutAndInView()
    {
        QFETCH(QSize, size);
        QFETCH(bool, whole);
        MainWindow window(MainWindow::Start::DefaultExample);
        QVERIFY(showAndWait(window, size));
        ExperimentSpec spec = window.controller().spec();
        QCOMPARE(spec.input.kind, InputKind::Model);
        spec.input.layer = 3;
        spec.input.text = QStringLiteral("And God said, Let there be light: and there was light. "
                                         "And God saw the light, that it was good.");
        QVERIFY(spec.setMethod(QStringLiteral("favor-positive")));
        spec.approximation.features = 8;
        window.setSpec(spec);
        window.showPage(MainWindow::StepperPage);
        StepperView* stepper = window.stepperView();
        QSignalSpy shown(stepper, &StepperView::experimentShown);
        QVERIFY(shown.wait(kResultTimeoutMs));
        QTRY_VERIFY_WITH_TIMEOUT(!stepper->isBusy(), kResultTimeoutMs);
        QVERIFY(stepper->length() > 20);

        auto* body = stepper->findChild<QWidget*>(QStringLiteral("stepperBody"));
        QVERIFY(body);
        const QWidget* viewport = body->parentWidget();
        // Every panel (title, plot and colour bar) of the body, in the viewport's coordinates.
        const auto panels = [&] {
            std::vector<QRect> rects;
            for (QWidget* child : body->findChildren<QWidget*>(Qt::FindDirectChildrenOnly))
                if (child->isVisible())
                    rects.emplace_back(child->mapTo(viewport, QPoint(0, 0)), child->size());
            return rects;
        };
        // The first position's layout settles in rounds of events, slower on a loaded machine
        // (under the sanitizers beside another build, 100 ms were too few): until it holds still
        // for 100 ms.
        const auto settled = [&panels] {
            for (int round = 0; round < 100; ++round) {
                const std::vector<QRect> before = panels();
                QTest::qWait(100);
                if (panels() == before)
                    return true;
            }
            return false;
        };
        // From the formula panel's right edge to the page's, a quarter of the way down it, one
        // panel follows another with no more than a spacing or two between them.
        const auto besideFormulaFilled = [&](const std::vector<QRect>& rects) {
            const auto* formula = body->findChild<QWidget*>(QStringLiteral("formulaPanel"));
            const QRect shown(formula->mapTo(viewport, QPoint(0, 0)), formula->size());
            const int y = shown.top() + shown.height() / 4;
            std::vector<QRect> beside;
            for (const QRect& rect : rects)
                if (rect.left() > shown.right() && rect.top() <= y && rect.bottom() >= y)
                    beside.push_back(rect);
            std::sort(beside.begin(), beside.end(),
                      [](const QRect& a, const QRect& b) { return a.left() < b.left(); });
            const int gap = 12;
            int reached = shown.right();
            for (const QRect& rect : beside) {
                if (rect.left() > reached + gap)
                    break;
                reached = std::max(reached, rect.right());
            }
            if (reached + gap >= viewport->width())
                return true;
            qWarning("beside the formula panel, panels reach x %d of %d", reached,
                     viewport->width());
            return false;
        };
        std::vector<QRect> first;
        for (int t = 0; t < stepper->length(); ++t) {
            stepper->setPosition(t);
            if (t == 0)
                QVERIFY(settled());
            else
                QTest::qWait(5);
            const std::vector<QRect> now = panels();
            const QRect page(0, whole ? 0 : -body->height(), viewport->width(),
                             whole ? viewport->height() : 3 * body->height());
            for (const QRect& rect : now)
                QVERIFY2(page.contains(rect),
                         qPrintable(QStringLiteral("step %1: a panel at (%2, %3) %4 x %5 is not "
                                                   "all in the page's %6 x %7")
                                        .arg(t + 1)
                                        .arg(rect.x())
                                        .arg(rect.y())
                                        .arg(rect.width())
                                        .arg(rect.height())
                                        .arg(viewport->width())
                                        .arg(viewport->height())));
            if (t == 0) {
                first = now;
                QVERIFY(besideFormulaFilled(now));
            } else
                for (std::size_t i = 0; i < now.size(); ++i)
                    QVERIFY2(now[i] == first[i],
                             qPrintable(QStringLiteral("step %1 moved panel %2 from (%3, %4) "
                                                       "%5 x %6 to (%7, %8) %9 x %10")
                                            .arg(t + 1)
                                            .arg(i)
                                            .arg(first[i].x())
                                            .arg(first[i].y())
                                            .arg(first[i].width())
                                            .arg(first[i].height())
                                            .arg(now[i].x())
                                            .arg(now[i].y())
                                            .arg(now[i].width())
                                            .arg(now[i].height())));
        }
    }

    // Scenario 9 (the Stepper) presented: the panels' body is as tall as the viewport, or as its
    // panels need at their minimum sizes for its width where that is more, never taller. At
    // 1280 x 800 they fit, and the page does not scroll; it did (the body took its preferred
    // height, 539 pixels for a viewport of 460). At 1280 x 720 they do not, and it scrolls.
    void stepperScrollsOnlyWhenItsPanelsCannotFit_data()
    {
        QTest::addColumn<QSize>("size");
        QTest::addColumn<bool>("fits");
        QTest::newRow("1280x800") << QSize(1280, 800) << true;
        QTest::newRow("1280x720") << QSize(1280, 720) << false;
    }

    void stepperScrollsOnlyWhenItsPanelsCannotFit()
    {
        QFETCH(QSize, size);
        QFETCH(bool, fits);
        MainWindow window(MainWindow::Start::DefaultExample);
        window.resize(size);
        QVERIFY(window.lecture().openScenarioFile(
            QStringLiteral(ATTNLAB_TEST_DATA "/../../resources/scenarios/09-causal-rnn.attnlab")));
        window.setPresentationMode(true, PresentationMode::Placement::KeepGeometry);
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        StepperView* stepper = window.stepperView();
        QTRY_VERIFY_WITH_TIMEOUT(
            stepper->isVisible() && stepper->length() > 0 && !stepper->isBusy(), kResultTimeoutMs);
        QTest::qWait(300);  // the panels' replots and the layout after them
        auto* body = stepper->findChild<QWidget*>(QStringLiteral("stepperBody"));
        QVERIFY(body);
        const QWidget* viewport = body->parentWidget();
        const int least = body->layout()->totalMinimumHeightForWidth(body->width());
        const QString sizes = QStringLiteral("body %1, viewport %2, panels' least %3")
                                  .arg(body->height())
                                  .arg(viewport->height())
                                  .arg(least);
        QVERIFY2(body->height() == std::max(viewport->height(), least), qPrintable(sizes));
        QVERIFY2((body->height() <= viewport->height()) == fits, qPrintable(sizes));
    }

    // The three maps of the Attention matrices page label their tokens at one step, rows and
    // columns. The text session with its error scale held (the error map's colour scale is
    // labelled "error, scale held") at 1280 x 800 labelled every fifth row of P and P^ and every
    // second of the error map: each map keeps the step it laid out last while that still fits.
    void mapsOfOnePageLabelTheirTokensAlike()
    {
        QJsonObject session =
            QJsonDocument::fromJson(test::readBytes(QStringLiteral(
                                        ATTNLAB_TEST_DATA "/../../docs/screenshots/text.attnlab")))
                .object();
        QJsonObject view = session.value(QLatin1String("view")).toObject();
        view.insert(QLatin1String("error_scale"), 0.8);
        session.insert(QLatin1String("view"), view);
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("held.attnlab"));
        QFile file(path);
        QVERIFY(file.open(QIODevice::WriteOnly));
        file.write(QJsonDocument(session).toJson());
        file.close();

        MainWindow window(MainWindow::Start::DefaultExample);
        window.resize(1280, 800);
        QSignalSpy shown(&window, &MainWindow::resultShown);
        QVERIFY(window.openSession(path));
        window.show();
        QVERIFY(shown.wait(kResultTimeoutMs));
        QTest::qWait(500);  // the maps' replots and their lining up
        const auto steps = [](HeatmapView* map) {
            const auto rows = map->yAxis->tickVector(), columns = map->xAxis->tickVector();
            return QPoint(columns.size() > 1 ? int(columns[1] - columns[0]) : 0,
                          rows.size() > 1 ? int(rows[1] - rows[0]) : 0);
        };
        const QPoint exact = steps(window.exactView());
        QVERIFY(exact.y() > 1);  // the case: not every row labelled
        for (HeatmapView* map : {window.approxView(), window.errorView()})
            QVERIFY2(steps(map) == exact,
                     qPrintable(QStringLiteral("%1 labels every %2 columns and %3 rows, P every "
                                               "%4 and %5")
                                    .arg(map->objectName())
                                    .arg(steps(map).x())
                                    .arg(steps(map).y())
                                    .arg(exact.x())
                                    .arg(exact.y())));
    }

    // A reserved line (the Stepper's agreement and memory lines) keeps, at every width and font,
    // the height of its reserved text, so that what is below it stays put when its text grows.
    // The memory line used to keep a minimum height measured once, at the width and font it had
    // when a step was shown, until the next step measured it again.
    void aReservedLineKeepsItsHeightAtEveryWidth()
    {
        QWidget page;
        auto* layout = new QVBoxLayout(&page);
        auto* line = new ReservedHeightLabel;
        auto* below = new QLabel(QStringLiteral("below"));
        layout->addWidget(line);
        layout->addWidget(below);
        layout->addStretch(1);
        const QString shortest = QStringLiteral("agree to 0");
        const QString longest = QStringLiteral("agree to 4.8e-07, ").repeated(12);
        line->setText(shortest);
        line->setReservedText(longest);
        page.show();
        QVERIFY(QTest::qWaitForWindowExposed(&page));
        // A line of the given text wrapped at the reserved line's width, in its font.
        const auto wrappedHeight = [line](const QString& text) {
            QLabel wrapped(text);
            wrapped.setWordWrap(true);
            wrapped.setFont(line->font());
            return wrapped.heightForWidth(line->width());
        };
        const double points = line->font().pointSizeF();
        // At two widths, then in a larger font (the Stepper scales its text with the window).
        for (const auto& [width, scale] : {std::pair{700, 1.0}, {260, 1.0}, {260, 1.6}}) {
            QFont font = line->font();
            font.setPointSizeF(points * scale);
            line->setFont(font);
            page.resize(width, 600);
            QCoreApplication::sendPostedEvents(nullptr, QEvent::LayoutRequest);
            const int shortAt = below->y();
            line->setText(longest);
            QCoreApplication::sendPostedEvents(nullptr, QEvent::LayoutRequest);
            QCOMPARE(below->y(), shortAt);
            QCOMPARE(line->height(), wrappedHeight(longest));
            QVERIFY(line->height() > wrappedHeight(shortest));
            line->setText(shortest);
        }
        line->setReservedText(QString());
        QCoreApplication::sendPostedEvents(nullptr, QEvent::LayoutRequest);
        QCOMPARE(line->height(), wrappedHeight(shortest));
    }

    // Maps side by side start at one height whatever their titles' lines, two by two and in a
    // row of three: at 1280 x 800 the approximate map's title ("FAVOR+ positive, m = 64, causal:
    // P̂ (head 1)") took two lines beside the exact map's one, and the maps stood about 10 pixels
    // apart.
    void mapsSideBySideLineUp()
    {
        auto* exact = new HeatmapView;
        auto* approx = new HeatmapView;
        auto* error = new HeatmapView;
        auto* rows = new RowComparisonView;
        AttentionMapsPage page(exact, approx, error, rows);
        for (QCustomPlot* figure : std::initializer_list<QCustomPlot*>{exact, approx, error, rows})
            figure->setMinimumSize(200, 200);  // as the window has them
        for (HeatmapView* map : {exact, approx, error})
            map->setMatrix(MatrixD::Constant(12, 12, 1.0 / 12));
        exact->setTitle(QStringLiteral("Exact softmax attention P"));
        approx->setTitle(QStringLiteral("FAVOR+ positive, m = 64, causal: P\u0302 (head 1 of the "
                                        "built-in KJV Llama)"));
        error->setTitle(QStringLiteral("Error"));
        const auto top = [](HeatmapView* map) {
            map->replot();
            return map->axisRect()->rect().top();
        };
        for (const QSize size : {QSize(560, 600), QSize(960, 380)}) {
            page.resize(size);
            page.show();
            QVERIFY(QTest::qWaitForWindowExposed(&page));
            const bool inARow = size.width() > size.height() * 2;
            QTRY_COMPARE(page.arrangement() == AttentionMapsPage::Arrangement::TwoByTwo, !inARow);
            QTRY_COMPARE(top(approx), top(exact));
            QVERIFY2(approx->shownTitle().contains(QLatin1Char('\n')) &&
                         !exact->shownTitle().contains(QLatin1Char('\n')),
                     qPrintable(approx->shownTitle()));
            if (inARow)
                QCOMPARE(top(error), top(exact));
        }
    }

    // A new result of the same input (a new seed) draws each map once, leaves the overlay of an
    // image alone when the input is not one, redraws no number box of the docks but the seed's,
    // and does not lay the view bar out again. Each map drew about one and a half times: the
    // colour scales' numbers change width with the range, which moved the maps' centred tops by a
    // few pixels, and the maps were lined up again after they were drawn, a second replot each;
    // text input cleared the hidden overlay, and drew it, with every result; and the docks set
    // every box, the view bar its head box's range and the window the image tab's state again,
    // which redrew the boxes and laid the window out again (the maps with it: ten replots for eight
    // results). Every plot paints with the window's next paint rather than each at once.
    void aNewSeedRedrawsOnlyWhatItChanges()
    {
        MainWindow window(MainWindow::Start::DefaultExample);
        // Maps as wide as their figures allow: the colour scales' numbers move their centred tops.
        QVERIFY(showAndWait(window, QSize(1280, 1000)));
        ExperimentSpec spec;
        spec.input.kind = InputKind::Random;
        spec.input.length = 512;
        // The random input, then a first new seed: the docks and the maps settle to the numbers
        // shown.
        for (const std::uint64_t seed : {0, 100}) {
            spec.approximation.seed = seed;
            window.setSpec(spec);
            QVERIFY(waitForResult(window));
            QTest::qWait(100);
        }
        std::map<QCustomPlot*, int> replots;
        for (QCustomPlot* plot : window.findChildren<QCustomPlot*>()) {
            QVERIFY2(!plot->plottingHints().testFlag(QCP::phImmediateRefresh),
                     qPrintable(plot->objectName()));
            connect(plot, &QCustomPlot::afterReplot, this, [&replots, plot] { ++replots[plot]; });
        }
        EventCounter boxPaints(QEvent::Paint), viewBarLayouts(QEvent::LayoutRequest);
        for (const char* dock : {"inputDock", "methodDock"})
            for (QAbstractSpinBox* box :
                 window.findChild<QWidget*>(QLatin1String(dock))->findChildren<QAbstractSpinBox*>())
                if (box->objectName() != QLatin1String("seed"))
                    box->installEventFilter(&boxPaints);
        window.findChild<ViewBar*>()->installEventFilter(&viewBarLayouts);
        constexpr int kResults = 8;
        for (int seed = 1; seed <= kResults; ++seed) {
            spec.approximation.seed = std::uint64_t(seed);
            window.setSpec(spec);
            QVERIFY(waitForResult(window));
            QTest::qWait(50);
        }
        const std::array<HeatmapView*, 3> maps{window.exactView(), window.approxView(),
                                               window.errorView()};
        for (HeatmapView* map : maps)
            QCOMPARE(replots[map], kResults);
        QCOMPARE(replots[window.imageView()], 0);
        // Side by side in every arrangement.
        QCOMPARE(maps[1]->axisRect()->rect().top(), maps[0]->axisRect()->rect().top());
        QCOMPARE(boxPaints.count(), 0);
        QCOMPARE(viewBarLayouts.count(), 0);
    }

    // The hint of the empty query-rows figure wraps to a narrow figure's width instead of being
    // cut off at both ends.
    void hintWrapsInANarrowFigure()
    {
        RowComparisonView view;
        view.resize(300, 300);
        view.clear();
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        view.replot();
        const QString text = QStringLiteral("Click a query row in a heatmap to compare its rows");
        QCPItemText* hint = hintOf(view, text);
        QVERIFY(hint);
        QVERIFY(hint->visible());
        const QFontMetrics metrics(hint->font());
        const QStringList lines = hint->text().split(QLatin1Char('\n'));
        QVERIFY(lines.size() > 1);
        for (const QString& line : lines)
            QVERIFY2(metrics.horizontalAdvance(line) < view.width(), qPrintable(line));
    }
};

QTEST_MAIN(TestLayout)
#include "test_layout.moc"
