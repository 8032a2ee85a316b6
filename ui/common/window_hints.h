#pragma once

#include "remedy.h"

#include <QString>

namespace attnlab::ui {

// A refusal's message with, when a setting gets past it, where the window changes that setting:
// the window's words for the engine's Remedy ("The memory budget is set in Edit > Memory
// Budget."; the command line names its options instead). Every message of the window that may
// carry a remedy goes through here (workerErrorMessage for the pages' work).
QString windowMessage(const QString& message, Remedy remedy);

}  // namespace attnlab::ui
