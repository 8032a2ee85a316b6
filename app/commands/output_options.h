#pragma once

#include "ui/plotting/figure_export.h"
#include "sessions/session.h"

#include <QCommandLineParser>
#include <QList>
#include <QString>

#include <functional>
#include <utility>

class QTextStream;

namespace attnlab {

// The options every subcommand shares for what it writes, and the checks around them.

// --out DIR: the folder compute, render and steps write into.
QCommandLineOption outFolderOption();

// The value of --out DIR. Throws InputError when it is missing or empty, or names a file.
QString requiredOutFolder(const QCommandLineParser& parser);

// --out FILE.csv, --plot FILE.png|svg|pdf and, when sessionHelp is not empty, --save-session
// FILE.attnlab: the options of the subcommands that write a table (bench, errors, model-eval).
// plotHelp and sessionHelp say what the plot draws and what the session opens.
QList<QCommandLineOption> tableOutputOptions(const QString& plotHelp,
                                             const QString& sessionHelp = QString());

// The checked values of the table options: the CSV (required), the plot and the session (empty
// when not given). `csvExample` and `sessionExample` ("sweep.csv") show a file name in the
// message for a folder. Throws InputError and OutputError as plotOption and checkedOutPath do.
struct TableOutputs {
    QString csv;
    QString plot;
    QString session;
};
TableOutputs tableOutputs(const QCommandLineParser& parser, const char* csvExample,
                          const char* sessionExample = "session.attnlab");

// Writes what a table subcommand produces, saying "wrote PATH" for each on stdout: the CSV
// (atomically: all or nothing), after printSummary(stdout); the session (from session(), when
// --save-session was given); the plot (drawPlot(path), when --plot was given). An OutputError
// of drawPlot is thrown again naming --plot and saying the CSV was written.
void writeTableOutputs(const TableOutputs& outputs, const QByteArray& csv,
                       const std::function<void(QTextStream&)>& printSummary,
                       const std::function<Session()>& session,
                       const std::function<void(const QString&)>& drawPlot);

// Throws InputError naming the first positional argument, if there is one: every option starts
// with --.
void refusePositionalArguments(const QCommandLineParser& parser);

// The value of --plot (empty when it is not given). Throws InputError when its suffix is not
// png, svg or pdf (the format follows the suffix).
QString plotOption(const QCommandLineParser& parser);
// The format of a --plot path plotOption has accepted: its suffix's.
ui::FigureFormat plotFormat(const QString& path);

// Checks before a long run that option --name (--out, --save-session) names a file that can be
// written, so that the run does not end in a write error: its folder exists (it is created) and
// is writable, and no directory is in the way. Returns the absolute path. Throws InputError for
// an empty value, a folder name (`example` shows a file name instead) or a file in the way of its
// folder, OutputError for a path that cannot be written.
QString checkedOutPath(const char* name, const QString& out, const char* example);

// Throws InputError naming the two options when two of `outputs` (an option's name, the absolute
// path checkedOutPath gave it; empty when not given) name the same file.
void refuseSameFile(const QList<std::pair<const char*, QString>>& outputs);

}  // namespace attnlab
