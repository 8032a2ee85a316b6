#include "ui/window/page_docks.h"

#include "ui/lecture/presentation.h"

#include <QDockWidget>
#include <QMainWindow>
#include <QTabWidget>

namespace attnlab::ui {

PageDocks::PageDocks(QMainWindow& window, PresentationMode& presentation, QTabWidget& pages,
                     int unused)
    : QObject(&window),
      m_window(window),
      m_presentation(presentation),
      m_pages(pages),
      m_unused(unused)
{
    connect(&m_pages, &QTabWidget::currentChanged, this, &PageDocks::apply);
    // Presentation mode hides every dock while it is on and then restores the layout it found,
    // which may show the docks this page hid or hide those another page needs.
    connect(&m_presentation, &PresentationMode::activeChanged, this, [this](bool active) {
        if (!active)
            apply();
    });
}

void PageDocks::showHidden()
{
    for (QDockWidget* dock : std::as_const(m_hidden))
        dock->show();
    m_hidden.clear();
}

void PageDocks::apply()
{
    if (m_presentation.isActive())
        return;  // its own layout: the docks it hid stay hidden; this page's follow when it ends
    if (m_pages.currentIndex() != m_unused) {
        showHidden();
        return;
    }
    for (QDockWidget* dock : m_window.findChildren<QDockWidget*>()) {
        if (dock->parentWidget() == &m_window && !dock->isHidden() &&
            m_window.dockWidgetArea(dock) == Qt::RightDockWidgetArea) {
            dock->hide();
            m_hidden.append(dock);
        }
    }
}

}  // namespace attnlab::ui
