#include "sessions/scenario.h"

#include "io/atomic_files.h"
#include "errors.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryFile>

namespace attnlab {

namespace {

// Why readScenario would refuse this title and explanation; empty when it would not. A title
// must be one line of at most kLongestScenarioTitle characters (emptiness is the caller's call).
QString textProblem(const QString& title, const QString& explanation)
{
    if (title.size() > kLongestScenarioTitle)
        return QStringLiteral("\"title\" is %1 characters long, more than %2")
            .arg(title.size())
            .arg(kLongestScenarioTitle);
    if (title.contains(QLatin1Char('\n')) || title.contains(QLatin1Char('\r')))
        return QStringLiteral("\"title\" must be one line");
    if (explanation.size() > kLongestScenarioExplanation)
        return QStringLiteral("\"explanation\" is %1 characters long, more than %2 (a scenario's "
                              "explanation is a short panel)")
            .arg(explanation.size())
            .arg(kLongestScenarioExplanation);
    return QString();
}

// The string field `name` of root, empty when absent; refused when it is anything but a string.
QString optionalString(const QString& path, const QJsonObject& root, const char* name)
{
    const QJsonValue value = root.value(QLatin1String(name));
    if (value.isUndefined())
        return QString();
    if (!value.isString())
        refuse(
            path,
            QStringLiteral("\"%1\" must be a string (the scenario's %1)").arg(QLatin1String(name)));
    return value.toString();
}

// The string array field `name` of root, empty when absent; refused when it is anything else.
QStringList optionalStrings(const QString& path, const QJsonObject& root, const char* name)
{
    const QJsonValue value = root.value(QLatin1String(name));
    if (value.isUndefined())
        return {};
    const auto refused = [&] {
        refuse(path, QStringLiteral("\"%1\" must be an array of strings (warning codes such as "
                                    "\"nonpositive-denominator\")")
                         .arg(QLatin1String(name)));
    };
    if (!value.isArray())
        refused();
    QStringList strings;
    for (const QJsonValue& item : value.toArray()) {
        if (!item.isString())
            refused();
        strings.append(item.toString());
    }
    return strings;
}

// The JSON object of a file that readSession has just accepted (so it is one).
QJsonObject rootObject(const QString& path)
{
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly))
        refuse(path, QStringLiteral("cannot read the file: %1").arg(file.errorString()));
    return QJsonDocument::fromJson(file.read(kLargestSessionBytes + 1)).object();
}

}  // namespace

Scenario readScenario(const QString& path)
{
    Scenario scenario;
    scenario.path = path;
    scenario.session = readSession(path);  // every session check, with its messages
    const QJsonObject root = rootObject(path);
    scenario.title = optionalString(path, root, "title").trimmed();
    scenario.explanation = optionalString(path, root, "explanation").trimmed();
    scenario.explainedWarnings = optionalStrings(path, root, "explained_warnings");
    const QString problem = textProblem(scenario.title, scenario.explanation);
    if (!problem.isEmpty())
        refuse(path, problem);
    if (scenario.title.isEmpty())
        scenario.title = QFileInfo(path).completeBaseName();
    return scenario;
}

void writeScenario(const QString& path, const Scenario& scenario)
{
    const QString title = scenario.title.trimmed();
    if (title.isEmpty())
        throw InputError(QStringLiteral("%1: the scenario needs a title").arg(path));
    const QString problem = textProblem(title, scenario.explanation);
    if (!problem.isEmpty())
        throw InputError(QStringLiteral("%1: %2").arg(path, problem));

    // writeSession writes the session as it must be in this folder (relative paths, checked to
    // read back); a temporary file beside the target takes it, then the title and explanation
    // are added and the whole is committed atomically.
    const QFileInfo target(path);
    if (path.isEmpty() || target.fileName().isEmpty())
        throw OutputError(QStringLiteral("%1: not a file name for a scenario").arg(path));
    const QString folder = QDir::cleanPath(target.absolutePath());
    if (!QDir().mkpath(folder))
        throw OutputError(QStringLiteral("%1: cannot create the folder %2").arg(path, folder));
    QTemporaryFile staging(folder + QStringLiteral("/.scenario-XXXXXX.attnlab"));
    if (!staging.open())
        throw OutputError(QStringLiteral("%1: cannot write into the folder: %2")
                              .arg(path, staging.errorString()));
    staging.close();
    try {
        writeSession(staging.fileName(), scenario.session);
    } catch (const OutputError& error) {
        // Name the scenario, not the staging file, and keep the reason.
        QString reason = error.message();
        reason.replace(staging.fileName(), path);
        throw OutputError(reason);
    }
    QJsonObject root = rootObject(staging.fileName());
    root[QLatin1String("title")] = title;
    root[QLatin1String("explanation")] = scenario.explanation.trimmed();
    if (!scenario.explainedWarnings.isEmpty())
        root[QLatin1String("explained_warnings")] =
            QJsonArray::fromStringList(scenario.explainedWarnings);

    AtomicFileSet files(folder);
    writeAll(files.open(target.fileName()), QJsonDocument(root).toJson(QJsonDocument::Indented));
    files.commit();
}

QStringList scenarioFiles(const QString& folder)
{
    // Hidden files (a save in progress, ".scenario-XXXXXX.attnlab") are not listed.
    const QDir dir(folder);
    QStringList paths;
    for (const QString& name :
         dir.entryList({QStringLiteral("*.attnlab")}, QDir::Files | QDir::Readable, QDir::Name))
        paths.append(dir.filePath(name));
    return paths;
}

Deck readDeck(const QString& folder)
{
    const QFileInfo info(folder);
    if (!info.exists())
        refuse(folder, QStringLiteral("no such folder"));
    if (!info.isDir())
        refuse(folder, QStringLiteral("not a folder (a deck is a folder of scenario files)"));
    Deck deck;
    deck.folder = folder;
    const QStringList files = scenarioFiles(folder);
    if (files.isEmpty())
        refuse(folder, QStringLiteral("holds no scenario (.attnlab) file"));
    for (const QString& file : files) {
        try {
            deck.scenarios.push_back(readScenario(file));
        } catch (const InputError& error) {
            deck.problems.append(error.message());
        }
    }
    if (deck.scenarios.empty())
        refuse(folder, QStringLiteral("none of its %1 scenario files can be read; %2")
                           .arg(files.size())
                           .arg(deck.problems.first()));
    return deck;
}

}  // namespace attnlab
