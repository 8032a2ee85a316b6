// The sizes the house keeps (docs/design.md section 1.8): no source file over 800 lines, and no
// function over 120 lines except the data tables named below. A function is read as the code
// formatted by .clang-format writes it: its body opens with a "{" alone at the start of a line
// (BraceWrapping AfterFunction) and closes at the next line that starts with "}". Functions
// written inside a class body are not seen; they are short by the style's own rule.

#include <QDir>
#include <QDirIterator>
#include <QFile>
#include <QRegularExpression>
#include <QTest>

#include <set>

namespace {

const QString kRoot = QDir::cleanPath(QStringLiteral(ATTNLAB_TEST_DATA "/../.."));
constexpr int kMaxFileLines = 800;
constexpr int kMaxFunctionLines = 120;

// Functions that are one data table each, by file and name: the method registry, the
// command-line options every computing subcommand shares, and the bad-input catalogue.
const std::set<QString>& dataTables()
{
    static const std::set<QString> tables{
        QStringLiteral("core/attention/methods.cpp methodRegistry"),
        QStringLiteral("app/commands/spec_options.cpp addSpecOptions"),
        QStringLiteral("tests/test_bad_inputs.cpp catalogue"),
    };
    return tables;
}

// The sources of the project's own code, as paths relative to the root.
QStringList projectSources()
{
    QStringList sources;
    for (const QString& tree : {QStringLiteral("core"), QStringLiteral("ui"), QStringLiteral("app"),
                                QStringLiteral("tests"), QStringLiteral("bench"),
                                QStringLiteral("fuzz"), QStringLiteral("training")}) {
        QDirIterator it(kRoot + QLatin1Char('/') + tree,
                        {QStringLiteral("*.h"), QStringLiteral("*.cpp"), QStringLiteral("*.py")},
                        QDir::Files, QDirIterator::Subdirectories);
        while (it.hasNext())
            sources.append(QDir(kRoot).relativeFilePath(it.next()));
    }
    sources.sort();
    return sources;
}

QStringList linesOf(const QString& source)
{
    QFile file(kRoot + QLatin1Char('/') + source);
    if (!file.open(QIODevice::ReadOnly))
        return {};
    QStringList lines = QString::fromUtf8(file.readAll()).split(QLatin1Char('\n'));
    if (!lines.isEmpty() && lines.last().isEmpty())
        lines.removeLast();  // the file's final newline
    return lines;
}

struct FunctionBody {
    QString name;   // the identifier before the first "(" of its declaration
    int firstLine;  // of the declaration, from 1
    int lines;      // between the braces
};

// The functions of a C++ source whose braces stand alone at the start of a line (see the top).
std::vector<FunctionBody> functionBodies(const QStringList& lines)
{
    static const QRegularExpression name(QStringLiteral("([A-Za-z_~][A-Za-z0-9_:~]*)\\s*\\("));
    std::vector<FunctionBody> bodies;
    for (int open = 1; open < lines.size(); ++open) {
        if (lines[open] != QLatin1String("{"))
            continue;
        // The declaration starts at the last line before the brace that starts in column 0.
        int declaration = open - 1;
        while (declaration > 0 && lines[declaration].startsWith(QLatin1Char(' ')))
            --declaration;
        int close = open + 1;
        while (close < lines.size() && !lines[close].startsWith(QLatin1Char('}')))
            ++close;
        const QString identifier = name.match(lines[declaration]).captured(1);
        bodies.push_back(
            {identifier.section(QStringLiteral("::"), -1), declaration + 1, close - open - 1});
        open = close;
    }
    return bodies;
}

}  // namespace

class TestSourceSizes : public QObject {
    Q_OBJECT

private slots:
    void noFileIsOverItsLimit()
    {
        const QStringList sources = projectSources();
        QVERIFY2(sources.size() > 400,
                 qPrintable(QStringLiteral("only %1 sources found").arg(sources.size())));
        QStringList violations;
        for (const QString& source : sources) {
            const qsizetype count = linesOf(source).size();
            if (count > kMaxFileLines)
                violations.append(QStringLiteral("%1: %2 lines").arg(source).arg(count));
        }
        QVERIFY2(violations.isEmpty(), qPrintable(violations.join(QLatin1Char('\n'))));
    }

    void noFunctionIsOverItsLimit()
    {
        QStringList violations;
        std::set<QString> tablesSeen;
        int functions = 0;
        for (const QString& source : projectSources()) {
            if (source.endsWith(QLatin1String(".py")))
                continue;
            for (const FunctionBody& body : functionBodies(linesOf(source))) {
                ++functions;
                const QString key = source + QLatin1Char(' ') + body.name;
                if (dataTables().count(key)) {
                    tablesSeen.insert(key);
                    continue;
                }
                if (body.lines > kMaxFunctionLines)
                    violations.append(QStringLiteral("%1:%2: %3 is %4 lines")
                                          .arg(source)
                                          .arg(body.firstLine)
                                          .arg(body.name)
                                          .arg(body.lines));
            }
        }
        QVERIFY2(functions > 2000,
                 qPrintable(QStringLiteral("only %1 functions found").arg(functions)));
        // A table renamed or removed must leave the list too, or the list would excuse a stranger.
        for (const QString& table : dataTables())
            if (!tablesSeen.count(table))
                violations.append(QStringLiteral("%1: no such function").arg(table));
        QVERIFY2(violations.isEmpty(), qPrintable(violations.join(QLatin1Char('\n'))));
    }

    // The reading of functions above, on a made-up source: a multi-line declaration, a body
    // with braces of its own, and a class with an inline function (not seen).
    void functionsAreReadFromTheirBraces()
    {
        const QStringList source{
            QStringLiteral("class A {"),
            QStringLiteral("    void inlined() { }"),
            QStringLiteral("};"),
            QStringLiteral("std::vector<int> Space::makeTable(int a,"),
            QStringLiteral("                                  int b)"),
            QStringLiteral("{"),
            QStringLiteral("    if (a) {"),
            QStringLiteral("        return {};"),
            QStringLiteral("    }"),
            QStringLiteral("}"),
            QStringLiteral("int f()"),
            QStringLiteral("{"),
            QStringLiteral("}"),
        };
        const std::vector<FunctionBody> bodies = functionBodies(source);
        QCOMPARE(bodies.size(), size_t(2));
        QCOMPARE(bodies[0].name, QStringLiteral("makeTable"));
        QCOMPARE(bodies[0].firstLine, 4);
        QCOMPARE(bodies[0].lines, 3);
        QCOMPARE(bodies[1].name, QStringLiteral("f"));
        QCOMPARE(bodies[1].lines, 0);
    }
};

QTEST_GUILESS_MAIN(TestSourceSizes)
#include "test_source_sizes.moc"
