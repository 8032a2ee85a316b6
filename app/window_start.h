#pragma once

#include <QCommandLineOption>
#include <QList>

namespace attnlab {

// The window's own options (--session, --scenario, --presentation, --theme, --screenshot,
// --size, --help, --version), for its parser and for the top-level usage.
QList<QCommandLineOption> windowOptions();

// Starts the window: `attention-lab [SESSION.attnlab]`, or, with --screenshot OUT.png, opens it
// offscreen (with --session FILE, or the default example), waits for the result, saves a
// screenshot of the whole window and exits. Returns the exit status.
int runWindow(int& argc, char** argv);

}  // namespace attnlab
