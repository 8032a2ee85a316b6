#pragma once

// What the tests that drive the main window share: waiting for its result and reading it.

#include "ui/experiment/experiment_controller.h"
#include "ui/window/main_window.h"

#include <QSignalSpy>

namespace attnlab::test {

// A computation of a short text takes milliseconds; this bounds a broken one.
constexpr int kResultTimeoutMs = 30'000;

// Waits for the window to show a new result; false on timeout.
inline bool waitForResult(ui::MainWindow& window)
{
    QSignalSpy shown(&window, &ui::MainWindow::resultShown);
    return shown.wait(kResultTimeoutMs);
}

// The result the window shows.
inline const ExperimentResult& resultOf(ui::MainWindow& window)
{
    return *window.controller().current().result;
}

}  // namespace attnlab::test
