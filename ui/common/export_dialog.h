#pragma once

// The export dialogs of every page: ask where to write, write, and say what went wrong. A page's
// export function writes the file all-or-nothing (AtomicFileSet, QSaveFile) and throws
// OutputError naming the file when it cannot; these functions show that message in a warning
// box, so that no page writes its own catch.
//
// Usage (a page's "Data as CSV..." action; exportCsv(path) throws OutputError):
//
//     runExportDialog(this, tr("Export data"), QStringLiteral("timing"), QStringLiteral("csv"),
//                     [this](const QString& path) { exportCsv(path); });
//
// A figure in a format the user picks: runFigureExportDialog (ui/plotting/figure_export.h).

#include <QString>

#include <functional>

class QWidget;

namespace attnlab::ui {

// Asks with a save dialog titled `title` where to write a file of type `suffix` ("png", "csv"),
// suggesting `baseName`.suffix; adds .suffix when the chosen name has another suffix or none.
// Empty when the user cancels.
QString askSavePath(QWidget* parent, const QString& title, const QString& baseName,
                    const QString& suffix);

// Runs write() and, when it throws OutputError, shows its message in a warning box titled
// `title`. True when write() returned.
bool writeOrWarn(QWidget* parent, const QString& title, const std::function<void()>& write);

// askSavePath, then write(path) through writeOrWarn. The path written; empty when the user
// cancelled or writing failed (the warning box has said why).
QString runExportDialog(QWidget* parent, const QString& title, const QString& baseName,
                        const QString& suffix, const std::function<void(const QString&)>& write);

}  // namespace attnlab::ui
