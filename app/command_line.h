#pragma once

#include <QStringList>

class QCommandLineParser;
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

// Runs a subcommand: parses arguments (arguments[0] is the subcommand's name) with the options
// addOptions gives a parser and returns run(parser). After --help, prints the help with a usage
// line that names the program and the subcommand, "Usage: attention-lab compute [options]", and
// returns ExitSuccess. Throws InputError with the parser's message for an unknown option or a
// missing value.
int runSubcommand(const QStringList& arguments, void (*addOptions)(QCommandLineParser&),
                  int (*run)(const QCommandLineParser&));

// Runs `attention-lab <subcommand> [options]` headless (argv[1] is the subcommand), creating the
// application object the subcommand needs. Errors are reported on stderr and turned into the exit
// status.
int runCommandLine(int& argc, char** argv);

}  // namespace attnlab
