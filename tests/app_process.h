#pragma once

// Running the built attention-lab (ATTNLAB_APP) as a process with a time bound, whether it refused
// what it was given, and what the reliability tests check around it: that a folder is left
// exactly as it was, and that every non-finite number in a run's output files is explained by a
// warning in its metrics.json.

#include "io/npy.h"

#include <QDir>
#include <QDirIterator>
#include <QElapsedTimer>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QString>
#include <QStringList>
#include <QTemporaryDir>

#include <cmath>
#include <functional>
#include <map>

#ifndef ATTNLAB_APP
#error "a test that runs attention-lab is registered with RUNS_APP (tests/CMakeLists.txt)"
#endif

namespace attnlab::test {

// The built program's path, and a check that fails the running test (naming the path) when it is
// not there: a test that runs the program never passes or skips without it.
inline const QString kAppPath = QStringLiteral(ATTNLAB_APP);
#define REQUIRE_ATTENTION_LAB()                                                               \
    QVERIFY2(QFileInfo(attnlab::test::kAppPath).isExecutable(),                               \
             qPrintable(QStringLiteral("the program is missing (not an executable file): ") + \
                        attnlab::test::kAppPath))

// One run of the application: how it ended and what it printed.
struct AppRun {
    bool finished = false;  // exited by itself within the time bound
    bool crashed = false;   // ended by a signal
    int exitCode = -1;      // -1 when it crashed or did not finish
    qint64 milliseconds = 0;
    QByteArray out;
    QByteArray err;

    // Everything about the run, for a failure message.
    QString describe() const
    {
        return QStringLiteral(
                   "finished %1, crashed %2, exit %3 after %4 ms\nstdout: %5\nstderr: %6")
            .arg(finished)
            .arg(crashed)
            .arg(exitCode)
            .arg(milliseconds)
            .arg(QString::fromUtf8(out.left(4000)), QString::fromUtf8(err.left(4000)));
    }
};

// Whether `run` refused what it was given, naming `named`: the program ended by itself with exit
// code 2 (bad usage or an input it cannot use) and its stderr contains `named`.
inline bool refusedNaming(const AppRun& run, const QString& named)
{
    return run.exitCode == 2 && QString::fromUtf8(run.err).contains(named);
}

// Whether `text` is one line: text and the newline that ends it, nothing after.
inline bool isOneLine(const QByteArray& text)
{
    return text.endsWith('\n') && text.count('\n') == 1;
}

// Where a run of the program may show a window: offscreen (QT_QPA_PLATFORM=offscreen), or nowhere
// (no platform chosen and no X11 or Wayland display, as on a server or over ssh).
enum class AppDisplay { Offscreen, None };

// Runs attention-lab with `arguments` in `workingDirectory` (the current one when empty), for at
// most `timeoutMs`: a run still going then is killed and reported as not finished (a hang).
// childSetup, when given, runs in the child before the program starts (Unix only: resource
// limits, for example).
inline AppRun runAttentionLab(const QStringList& arguments, const QString& workingDirectory,
                              int timeoutMs, const std::function<void()>& childSetup = {},
                              AppDisplay display = AppDisplay::Offscreen)
{
    QProcess process;
    if (!workingDirectory.isEmpty())
        process.setWorkingDirectory(workingDirectory);
#ifdef Q_OS_UNIX
    if (childSetup)
        process.setChildProcessModifier(childSetup);
#else
    Q_UNUSED(childSetup);
#endif
    QProcessEnvironment environment = QProcessEnvironment::systemEnvironment();
    if (display == AppDisplay::Offscreen) {
        environment.insert(QStringLiteral("QT_QPA_PLATFORM"), QStringLiteral("offscreen"));
    } else {
        for (const char* name : {"QT_QPA_PLATFORM", "DISPLAY", "WAYLAND_DISPLAY"})
            environment.remove(QString::fromLatin1(name));
    }
    // Without a desktop session Qt warns on stderr that XDG_RUNTIME_DIR is unset: give it one
    // (QTemporaryDir makes it private, as Qt requires), so that stderr holds only the program's.
    static const QTemporaryDir runtime;
    environment.insert(QStringLiteral("XDG_RUNTIME_DIR"), runtime.path());
    process.setProcessEnvironment(environment);
    QElapsedTimer clock;
    clock.start();
    process.start(QStringLiteral(ATTNLAB_APP), arguments);
    AppRun run;
    if (!process.waitForStarted(timeoutMs)) {
        run.err = QStringLiteral("cannot start %1: %2")
                      .arg(QStringLiteral(ATTNLAB_APP), process.errorString())
                      .toUtf8();
        return run;
    }
    run.finished = process.waitForFinished(timeoutMs);
    run.milliseconds = clock.elapsed();
    if (!run.finished) {
        process.kill();
        process.waitForFinished(10000);
        return run;
    }
    run.crashed = process.exitStatus() != QProcess::NormalExit;
    run.exitCode = run.crashed ? -1 : process.exitCode();
    run.out = process.readAllStandardOutput();
    run.err = process.readAllStandardError();
    return run;
}

// Every file and folder under `directory` (relative path -> contents; folders map to "/"), so
// that a test can check that a run created, changed or removed nothing there.
inline std::map<QString, QByteArray> folderSnapshot(const QString& directory)
{
    std::map<QString, QByteArray> entries;
    const QDir root(directory);
    QDirIterator it(directory,
                    QDir::AllEntries | QDir::Hidden | QDir::NoDotAndDotDot | QDir::System,
                    QDirIterator::Subdirectories);
    while (it.hasNext()) {
        const QString path = it.next();
        const QFileInfo info = it.fileInfo();
        QByteArray contents("/");
        if (info.isFile()) {
            QFile file(path);
            contents = file.open(QIODevice::ReadOnly) ? file.readAll() : QByteArray("?");
        }
        entries[root.relativeFilePath(path)] = contents;
    }
    return entries;
}

// The names in `before` and `after` that differ (created, removed or changed), for a message.
inline QStringList changedEntries(const std::map<QString, QByteArray>& before,
                                  const std::map<QString, QByteArray>& after)
{
    QStringList changed;
    for (const auto& [name, contents] : after) {
        const auto old = before.find(name);
        if (old == before.end())
            changed.append(name + QStringLiteral(" (created)"));
        else if (old->second != contents)
            changed.append(name + QStringLiteral(" (modified)"));
    }
    for (const auto& [name, contents] : before)
        if (after.find(name) == after.end())
            changed.append(name + QStringLiteral(" (removed)"));
    return changed;
}

// Which warning codes of metrics.json explain a non-finite value in each output file: the
// kernels A, A^ may overflow ("overflow"), the features phi(Q), phi(K) too ("feature-overflow").
// Attention matrices, outputs and W must always be finite.
inline QStringList explainingWarnings(const QString& fileName)
{
    if (fileName.startsWith(QLatin1String("kernel_")))
        return {QStringLiteral("overflow")};
    if (fileName.startsWith(QLatin1String("features_")))
        return {QStringLiteral("feature-overflow")};
    return {};
}

// Checks the files a successful `compute --out outDir` wrote: metrics.json exists and parses, and
// every NaN or infinity in a .npy file or a metric (written as null) comes with a warning in
// metrics.json saying why: "kl-undefined" for mean_kl, "overflow" for kernel_mse, "output-zero"
// for rel_frobenius_output; or does not apply (the exact method has no P^). Returns the problems
// found (empty: none).
inline QStringList unexplainedNonFinite(const QString& outDir)
{
    QStringList problems;
    QFile metricsFile(outDir + QStringLiteral("/metrics.json"));
    if (!metricsFile.open(QIODevice::ReadOnly))
        return {QStringLiteral("metrics.json was not written")};
    const QJsonObject json = QJsonDocument::fromJson(metricsFile.readAll()).object();
    if (json.isEmpty())
        return {QStringLiteral("metrics.json is not a JSON object")};
    QStringList warnings;
    for (const QJsonValue& warning : json.value(QLatin1String("warnings")).toArray())
        warnings.append(warning.toObject().value(QLatin1String("code")).toString());

    // The exact method has no P^ or A^: only the output's error (streaming against materialised)
    // applies to it, and the others are null by definition.
    const bool exactMethod =
        json.value(QLatin1String("spec")).toObject().value(QLatin1String("method")) ==
        QLatin1String("exact");
    const QJsonObject metrics = json.value(QLatin1String("metrics")).toObject();
    for (auto it = metrics.begin(); it != metrics.end(); ++it) {
        if (!it.value().isNull())
            continue;
        const QString& key = it.key();
        const bool explained =
            (exactMethod && key != QLatin1String("rel_frobenius_output")) ||
            (key == QLatin1String("mean_kl") &&
             warnings.contains(QStringLiteral("kl-undefined"))) ||
            (key == QLatin1String("kernel_mse") && warnings.contains(QStringLiteral("overflow"))) ||
            (key == QLatin1String("entropy_approx") &&
             warnings.contains(QStringLiteral("entropy-undefined"))) ||
            (key == QLatin1String("monotonicity") &&
             warnings.contains(QStringLiteral("monotonicity-undefined"))) ||
            (key == QLatin1String("rel_frobenius_output") &&
             warnings.contains(QStringLiteral("output-zero")));
        if (!explained)
            problems.append(
                QStringLiteral("metric %1 is null (NaN or inf) without a warning").arg(it.key()));
    }

    const QStringList arrays = QDir(outDir).entryList({QStringLiteral("*.npy")}, QDir::Files);
    for (const QString& name : arrays) {
        NpyReadOptions options;
        options.requireFinite = false;
        const NpyArray array = readNpy(outDir + QLatin1Char('/') + name, options);
        qint64 nonFinite = 0;
        for (const double value : array.values)
            nonFinite += std::isfinite(value) ? 0 : 1;
        if (nonFinite == 0)
            continue;
        bool explained = false;
        for (const QString& code : explainingWarnings(name))
            explained = explained || warnings.contains(code);
        if (!explained)
            problems.append(QStringLiteral("%1 holds %2 NaN or inf values without a warning "
                                           "(warnings: %3)")
                                .arg(name)
                                .arg(nonFinite)
                                .arg(warnings.join(QStringLiteral(", "))));
    }
    return problems;
}

}  // namespace attnlab::test
