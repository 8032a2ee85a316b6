#include "command_line.h"
#include "memory_budget.h"
#include "window_start.h"

#include <QCoreApplication>
#include <QLoggingCategory>

int main(int argc, char* argv[])
{
    attnlab::reuseFreedWorkingMemory();
    QCoreApplication::setApplicationName(QStringLiteral("Attention Lab"));
    QCoreApplication::setOrganizationName(QStringLiteral("Attention Lab"));
    QCoreApplication::setApplicationVersion(QStringLiteral(ATTNLAB_VERSION));
    // Qt's image reader logs to stderr ("Rejecting image as it exceeds the allocation limit",
    // libpng's "iCCP: known incorrect sRGB profile"); Attention Lab reports the file and the
    // problem itself, in one line.
    QLoggingCategory::setFilterRules(QStringLiteral("qt.gui.imageio=false"));
    if (argc > 1 && attnlab::isCommandLineRequest(QString::fromLocal8Bit(argv[1])))
        return attnlab::runCommandLine(argc, argv);
    return attnlab::runWindow(argc, argv);
}
