#include "commands/output_options.h"

#include "errors.h"
#include "io/atomic_files.h"
#include "ui/plotting/figure_export.h"

#include <QDir>
#include <QFileInfo>
#include <QTextStream>

namespace attnlab {

namespace {

// The file (not a folder) at the absolute path `folder` or at the nearest of its parents that
// exists, where the folder would have to be created; empty when there is none.
QString fileInTheWay(const QString& folder)
{
    QFileInfo above(folder);
    while (!above.exists() && !above.isRoot())
        above = QFileInfo(above.absolutePath());
    return above.exists() && !above.isDir() ? above.absoluteFilePath() : QString();
}

}  // namespace

QCommandLineOption outFolderOption()
{
    return {QStringLiteral("out"), QStringLiteral("The folder to write into (created if needed)."),
            QStringLiteral("DIR")};
}

QString requiredOutFolder(const QCommandLineParser& parser)
{
    const QString out = parser.value(QStringLiteral("out"));
    if (out.isEmpty())
        throw InputError(QStringLiteral("--out DIR is required: the folder to write into"));
    const QString file = fileInTheWay(QDir::current().absoluteFilePath(out));
    if (!file.isEmpty())
        throw InputError(QStringLiteral("--out %1: the file %2 is in the way: --out names the "
                                        "folder to write into")
                             .arg(out, file));
    return out;
}

QList<QCommandLineOption> tableOutputOptions(const QString& plotHelp, const QString& sessionHelp)
{
    QList<QCommandLineOption> options{
        {QStringLiteral("out"),
         QStringLiteral("The CSV file to write (its folder is created if needed)."),
         QStringLiteral("FILE.csv")},
        {QStringLiteral("plot"), plotHelp, QStringLiteral("FILE.png|svg|pdf")},
    };
    if (!sessionHelp.isEmpty())
        options.append(
            {QStringLiteral("save-session"), sessionHelp, QStringLiteral("FILE.attnlab")});
    return options;
}

TableOutputs tableOutputs(const QCommandLineParser& parser, const char* csvExample,
                          const char* sessionExample)
{
    TableOutputs outputs;
    outputs.plot = plotOption(parser);
    if (parser.value(QStringLiteral("out")).isEmpty())
        throw InputError(QStringLiteral("--out FILE.csv is required: the CSV file to write"));
    outputs.csv = checkedOutPath("out", parser.value(QStringLiteral("out")), csvExample);
    // (Not "--session": QGuiApplication takes that one for X11 session management.)
    if (parser.optionNames().contains(QStringLiteral("save-session")))
        outputs.session = checkedOutPath(
            "save-session", parser.value(QStringLiteral("save-session")), sessionExample);
    refuseSameFile(
        {{"out", outputs.csv},
         {"plot", outputs.plot.isEmpty() ? QString() : QFileInfo(outputs.plot).absoluteFilePath()},
         {"save-session", outputs.session}});
    return outputs;
}

void writeTableOutputs(const TableOutputs& outputs, const QByteArray& csv,
                       const std::function<void(QTextStream&)>& printSummary,
                       const std::function<Session()>& session,
                       const std::function<void(const QString&)>& drawPlot)
{
    AtomicFileSet files(QFileInfo(outputs.csv).absolutePath());
    writeAll(files.open(QFileInfo(outputs.csv).fileName()), csv);
    files.commit();

    QTextStream stdOut(stdout);
    printSummary(stdOut);
    stdOut << "wrote " << outputs.csv << '\n';
    stdOut.flush();

    if (!outputs.session.isEmpty()) {
        writeSession(outputs.session, session());
        stdOut << "wrote " << outputs.session << '\n';
        stdOut.flush();
    }

    if (!outputs.plot.isEmpty()) {
        try {
            drawPlot(outputs.plot);
        } catch (const OutputError& e) {
            throw OutputError(QStringLiteral("--plot %1: %2 (the CSV was written: %3)")
                                  .arg(outputs.plot, e.message(), outputs.csv));
        }
        stdOut << "wrote " << QFileInfo(outputs.plot).absoluteFilePath() << '\n';
    }
}

void refusePositionalArguments(const QCommandLineParser& parser)
{
    if (!parser.positionalArguments().isEmpty())
        throw InputError(QStringLiteral("unexpected argument \"%1\" (options start with --)")
                             .arg(parser.positionalArguments().first()));
}

QString plotOption(const QCommandLineParser& parser)
{
    if (!parser.isSet(QStringLiteral("plot")))
        return QString();
    const QString path = parser.value(QStringLiteral("plot"));
    ui::FigureFormat format;
    if (!ui::figureFormatFromSuffix(path, &format))
        throw InputError(QStringLiteral("--plot: \"%1\" should end in .png, .svg or .pdf (the "
                                        "format follows the suffix)")
                             .arg(path));
    return path;
}

ui::FigureFormat plotFormat(const QString& path)
{
    ui::FigureFormat format = ui::FigureFormat::Png;
    ui::figureFormatFromSuffix(path, &format);
    return format;
}

void refuseSameFile(const QList<std::pair<const char*, QString>>& outputs)
{
    for (qsizetype i = 0; i < outputs.size(); ++i)
        for (qsizetype j = i + 1; j < outputs.size(); ++j)
            if (!outputs[i].second.isEmpty() && outputs[i].second == outputs[j].second)
                throw InputError(QStringLiteral("--%1, --%2: both name %3: each output needs a "
                                                "file of its own")
                                     .arg(QLatin1String(outputs[i].first),
                                          QLatin1String(outputs[j].first), outputs[i].second));
}

QString checkedOutPath(const char* name, const QString& out, const char* example)
{
    if (out.isEmpty())
        throw InputError(QStringLiteral("--%1: expected a file name such as %2, got an empty "
                                        "value")
                             .arg(QLatin1String(name), QLatin1String(example)));
    const QFileInfo info(QDir::current().absoluteFilePath(out));
    if (out.endsWith(QLatin1Char('/')) || info.fileName().isEmpty())
        throw InputError(QStringLiteral("--%1: expected a file name such as %2, got the folder "
                                        "\"%3\"")
                             .arg(QLatin1String(name), QLatin1String(example), out));
    if (info.isDir())
        throw OutputError(QStringLiteral("%1: cannot write: a directory is in the way")
                              .arg(info.absoluteFilePath()));
    const QString folder = info.absolutePath();
    const QString file = fileInTheWay(folder);
    if (!file.isEmpty())
        throw InputError(QStringLiteral("--%1 %2: the file %3 is in the way of its folder")
                             .arg(QLatin1String(name), out, file));
    if (!QDir().mkpath(folder))
        throw OutputError(QStringLiteral("%1: cannot create the directory").arg(folder));
    if (!QFileInfo(folder).isWritable())
        throw OutputError(QStringLiteral("%1: cannot write: the directory %2 is not writable")
                              .arg(info.absoluteFilePath(), folder));
    return info.absoluteFilePath();
}

}  // namespace attnlab
