#pragma once

#include "remedy.h"

#include <QString>

namespace attnlab::ui {

// A refusal's message with where the window changes the settings that get past it: the window's
// words for the engine's Remedies ("... or raise the memory budget. Settings: the Method dock's
// Features m; Edit > Memory Budget."; the command line names its options instead). Every message
// of the window that may carry remedies goes through here (workerErrorMessage for the pages'
// work).
QString windowMessage(const QString& message, const Remedies& remedies);

}  // namespace attnlab::ui
