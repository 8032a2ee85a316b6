#pragma once

#include <QString>

class QTextStream;

namespace attnlab {

// Exit statuses (docs/design.md section 4.4).
enum ExitStatus {
    ExitSuccess = 0,
    ExitFailure = 1,    // anything else: an output that could not be written, ...
    ExitBadInput = 2,   // bad usage or bad input; one line on stderr names it
    ExitResources = 3,  // refused for resources, with the way around it
};

// Prints the top-level usage: how to start the window, its options, and the commands.
void printUsage(QTextStream& out);

// True when the first argument names a subcommand (or asks for the command-line help).
bool isCommandLineRequest(const QString& firstArgument);

// Runs `attention-lab <subcommand> [options]` headless (argv[1] is the subcommand), creating the
// application object the subcommand needs. Errors are reported on stderr and turned into the exit
// status.
int runCommandLine(int& argc, char** argv);

}  // namespace attnlab
