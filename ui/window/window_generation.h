#pragma once

#include <QObject>

class QTabWidget;

namespace attnlab::ui {

class GenerationPage;
class MainWindow;
class StepperView;

// The Generate page in the window (the window adds it to its pages, after the Stepper): makes
// the tab bar fit its eight tabs, and connects the page with the window: the Stepper page follows
// the head it generates with (StepperView::follow, and its "Show in the Stepper" shows that page),
// and what it changes marks the session dirty. The window gives it the experiment of every result
// and the memory budget.
class WindowGeneration : public QObject {
    Q_OBJECT

public:
    WindowGeneration(MainWindow& window, QTabWidget* pages, StepperView* stepper);

    GenerationPage* page() const { return m_page; }

private:
    MainWindow& m_window;
    GenerationPage* m_page;
};

}  // namespace attnlab::ui
