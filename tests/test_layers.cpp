// The layers of docs/design.md section 1, read from the sources' #include lines: each folder of
// core and of ui includes only the folders its table allows (so core's folders form no cycle,
// and ui's pages keep to their own folders, on the bottom folders, under the window); an include
// of a ui header says "ui/", and no other include names a path that is also a ui header, so that
// "model/..." can only mean core/model.

#include <QDir>
#include <QDirIterator>
#include <QFile>
#include <QRegularExpression>
#include <QTest>

#include <map>
#include <set>

namespace {

const QString kRoot = QDir::cleanPath(QStringLiteral(ATTNLAB_TEST_DATA "/../.."));

// What each folder may include besides itself: core's folders (docs/design.md section 1.3;
// core's own files every folder may use, except the experiment's), and ui's folders, which may all
// include core besides the ui folders listed (section 1.4).
const std::map<QString, std::set<QString>>& allowedFolders()
{
    static const std::map<QString, std::set<QString>> allowed{
        {"core/attention", {}},
        {"core/io", {}},
        {"core/model", {"io", "attention"}},
        {"core/inputs", {"attention", "io", "model"}},
        {"core", {"attention", "inputs", "io", "experiment.h"}},
        {"core/sweeps",
         {"experiment.h", "experiment_spec.h", "attention", "inputs", "model", "io"}},
        {"core/sessions",
         {"experiment.h", "experiment_spec.h", "inputs", "sweeps", "io", "generation", "fitting"}},
        {"core/generation", {"attention", "model", "inputs", "io", "sweeps"}},
        {"core/fitting", {"attention", "model", "io"}},
        {"ui/images", {}},
        {"ui/common", {}},
        {"ui/plotting", {"ui/common"}},
        {"ui/sweeps", {"ui/common", "ui/plotting"}},
        {"ui/experiment", {"ui/common", "ui/plotting", "ui/images"}},
        {"ui/timing", {"ui/common", "ui/plotting", "ui/sweeps"}},
        {"ui/errors", {"ui/common", "ui/plotting", "ui/sweeps"}},
        {"ui/stepper", {"ui/common", "ui/plotting"}},
        {"ui/model", {"ui/common", "ui/plotting", "ui/images"}},
        {"ui/lecture", {"ui/common", "ui/plotting"}},
        {"ui/generation", {"ui/common", "ui/plotting"}},
        {"ui/window",
         {"ui/images", "ui/common", "ui/plotting", "ui/sweeps", "ui/experiment", "ui/timing",
          "ui/errors", "ui/stepper", "ui/model", "ui/lecture", "ui/generation"}},
    };
    return allowed;
}

// The #include "..." lines of a source file.
QStringList quotedIncludes(const QString& path)
{
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly))
        return {};
    static const QRegularExpression include(QStringLiteral("^\\s*#\\s*include\\s+\"([^\"]+)\""),
                                            QRegularExpression::MultilineOption);
    QStringList includes;
    auto matches = include.globalMatch(QString::fromUtf8(file.readAll()));
    while (matches.hasNext())
        includes.append(matches.next().captured(1));
    return includes;
}

// The C++ sources under `folder` (relative to the root), as paths relative to the root.
QStringList sourcesUnder(const QString& folder)
{
    QStringList sources;
    QDirIterator it(kRoot + QLatin1Char('/') + folder,
                    {QStringLiteral("*.h"), QStringLiteral("*.cpp")}, QDir::Files,
                    QDirIterator::Subdirectories);
    while (it.hasNext())
        sources.append(QDir(kRoot).relativeFilePath(it.next()));
    sources.sort();
    return sources;
}

// What an include names in the table's terms: "ui/plotting", "core/attention" (a core folder),
// "experiment.h" or "experiment_spec.h", or empty for another of core's own files, which every
// folder may use.
QString includedFolder(const QString& include)
{
    const QStringList parts = include.split(QLatin1Char('/'));
    if (parts.first() == QLatin1String("ui") && parts.size() > 2)
        return QStringLiteral("ui/") + parts[1];
    if (parts.size() > 1)
        return QStringLiteral("core/") + parts.first();
    return include == QLatin1String("experiment.h") || include == QLatin1String("experiment_spec.h")
               ? include
               : QString();
}

}  // namespace

class TestLayers : public QObject {
    Q_OBJECT

private slots:
    void eachFolderIncludesOnlyWhatItsLayerAllows()
    {
        QStringList violations;
        int checked = 0;
        for (const QString& tree : {QStringLiteral("core"), QStringLiteral("ui")}) {
            for (const QString& source : sourcesUnder(tree)) {
                // Its row: "core" for core's own files, else the first folder under the layer
                // (core/attention/maps is core/attention's).
                const QStringList parts = source.split(QLatin1Char('/'));
                const QString folder =
                    parts.size() > 2 ? parts[0] + QLatin1Char('/') + parts[1] : parts[0];
                const auto row = allowedFolders().find(folder);
                if (row == allowedFolders().end()) {
                    violations.append(QStringLiteral("%1: no row for its folder in the table of "
                                                     "docs/design.md section 1")
                                          .arg(source));
                    continue;
                }
                ++checked;
                for (const QString& include : quotedIncludes(kRoot + QLatin1Char('/') + source)) {
                    const QString named = includedFolder(include);
                    const bool fromUi = folder.startsWith(QLatin1String("ui/"));
                    if (include.endsWith(QLatin1String(".moc")) || named.isEmpty() ||
                        named == folder || (folder == QLatin1String("core") && named == include) ||
                        (fromUi && !named.startsWith(QLatin1String("ui/"))))
                        continue;  // its own folder, one of core's own files, or core from ui
                    const QString name =
                        named.startsWith(QLatin1String("core/")) ? named.mid(5) : named;
                    if (!row->second.count(name))
                        violations.append(QStringLiteral("%1 includes %2").arg(source, include));
                }
            }
        }
        QVERIFY2(checked > 200, qPrintable(QStringLiteral("only %1 sources found").arg(checked)));
        QVERIFY2(violations.isEmpty(), qPrintable(violations.join(QLatin1Char('\n'))));
    }

    // "model/..." is core/model wherever it is included: a ui header is always included as
    // "ui/...", and no core path is also a ui path.
    void includesSayWhichLayerTheyMean()
    {
        QStringList violations;
        for (const QString& tree : {QStringLiteral("ui"), QStringLiteral("app"),
                                    QStringLiteral("tests"), QStringLiteral("bench")}) {
            for (const QString& source : sourcesUnder(tree)) {
                for (const QString& include : quotedIncludes(kRoot + QLatin1Char('/') + source)) {
                    if (!include.startsWith(QLatin1String("ui/")) &&
                        QFileInfo::exists(kRoot + QStringLiteral("/ui/") + include))
                        violations.append(QStringLiteral("%1 includes %2, a ui header, without "
                                                         "\"ui/\"")
                                              .arg(source, include));
                }
            }
        }
        QVERIFY2(violations.isEmpty(), qPrintable(violations.join(QLatin1Char('\n'))));
    }
};

QTEST_GUILESS_MAIN(TestLayers)
#include "test_layers.moc"
