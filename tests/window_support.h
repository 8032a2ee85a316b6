#pragma once

// What the tests that drive the main window share: waiting for its result and reading it.

#include "ui/experiment/experiment_controller.h"
#include "ui/window/main_window.h"

#include <QApplication>
#include <QDir>
#include <QFileDialog>
#include <QLineEdit>
#include <QSettings>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTest>
#include <QTimer>

namespace attnlab::test {

// A computation of a short text takes milliseconds; this bounds a broken one.
constexpr int kResultTimeoutMs = 30'000;

// A page's sweep times every method at several lengths: seconds, and minutes under the
// sanitizers beside other suites; this bounds a broken one.
constexpr int kPageSweepTimeoutMs = 180'000;

// Waits for the window to show a new result; false on timeout.
inline bool waitForResult(ui::MainWindow& window)
{
    QSignalSpy shown(&window, &ui::MainWindow::resultShown);
    return shown.wait(kResultTimeoutMs);
}

// Resizes the window (unless size is empty), shows it and waits until it shows its first result;
// false on timeout. The spy is made first: showing the window runs the event loop, which can
// deliver the result.
inline bool showAndWait(ui::MainWindow& window, QSize size = QSize())
{
    QSignalSpy shown(&window, &ui::MainWindow::resultShown);
    if (!size.isEmpty())
        window.resize(size);
    window.show();
    return QTest::qWaitForWindowExposed(&window) &&
           (shown.count() > 0 || shown.wait(kResultTimeoutMs));
}

// Settings and the last session go to the test locations, emptied: the window starts as at a
// first start.
inline void startAsFirstRun()
{
    QStandardPaths::setTestModeEnabled(true);
    QSettings().clear();
    QDir(QStandardPaths::writableLocation(QStandardPaths::AppDataLocation)).removeRecursively();
}

// The result the window shows.
inline const ExperimentResult& resultOf(ui::MainWindow& window)
{
    return *window.controller().current().result;
}

// Accepts the next file dialog with path selected (the dialog Open... shows), as a user who
// picks the file: polled for from the dialog's own event loop.
inline void acceptFileDialogWith(const QString& path)
{
    auto* poll = new QTimer;
    QObject::connect(poll, &QTimer::timeout, poll, [poll, path] {
        for (QWidget* widget : QApplication::topLevelWidgets()) {
            auto* dialog = qobject_cast<QFileDialog*>(widget);
            if (!dialog || !dialog->isVisible())
                continue;
            // Typed into its file name box, as a user would (selectFile leaves the box alone
            // while it has the focus); the file counts as chosen once the dialog says so.
            if (auto* name = dialog->findChild<QLineEdit*>(QStringLiteral("fileNameEdit")))
                name->setText(path);
            if (dialog->selectedFiles().value(0) != path)
                return;
            poll->stop();
            poll->deleteLater();
            static_cast<QDialog*>(dialog)->done(QDialog::Accepted);  // its own is protected
            return;
        }
    });
    poll->start(20);
}

}  // namespace attnlab::test
