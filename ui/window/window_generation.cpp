#include "ui/window/window_generation.h"

#include "ui/generation/generation_page.h"
#include "ui/stepper/stepper_view.h"
#include "ui/window/main_window.h"
#include "ui/window/window_session.h"

#include <QProxyStyle>
#include <QTabBar>
#include <QTabWidget>

namespace attnlab::ui {

namespace {

// The page tabs with less room beside their titles: eight titles then fit the page of a
// 1280-pixel window with both docks (about 710 pixels) whole.
class CompactTabStyle : public QProxyStyle {
public:
    using QProxyStyle::QProxyStyle;

    int pixelMetric(PixelMetric metric, const QStyleOption* option,
                    const QWidget* widget) const override
    {
        const int value = QProxyStyle::pixelMetric(metric, option, widget);
        return metric == PM_TabBarTabHSpace ? value / 2 : value;
    }
};

}  // namespace

WindowGeneration::WindowGeneration(MainWindow& window, QTabWidget* pages, StepperView* stepper)
    : QObject(&window), m_window(window), m_page(new GenerationPage)
{
    // Eight tabs: a little less room beside each title, and where the page is narrower still the
    // titles are shortened rather than some tabs hidden behind scroll arrows.
    auto* compact = new CompactTabStyle;
    compact->setParent(pages->tabBar());
    pages->tabBar()->setStyle(compact);
    pages->setElideMode(Qt::ElideRight);
    pages->setUsesScrollButtons(false);
    // The Stepper follows the head of the generation shown while it has one.
    connect(m_page, &GenerationPage::followedChanged, stepper,
            [this, stepper] { stepper->follow(m_page->followed()); });
    connect(m_page, &GenerationPage::stepperRequested, this,
            [this] { m_window.showPage(MainWindow::StepperPage); });
    for (const auto changed : {&GenerationPage::generationFinished, &GenerationPage::edited})
        connect(m_page, changed, this, [this] { m_window.session().markDirty(); });
}

}  // namespace attnlab::ui
