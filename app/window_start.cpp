#include "window_start.h"

#include "command_line.h"
#include "ui/generation/generation_page.h"
#include "ui/model/downstream_panel.h"
#include "ui/experiment/experiment_controller.h"
#include "ui/model/head_grid_panel.h"
#include "ui/window/lecture_controls.h"
#include "ui/window/main_window.h"
#include "ui/stepper/stepper_view.h"

#include <QApplication>
#include <QCommandLineParser>
#include <QFileInfo>
#include <QRegularExpression>
#include <QSaveFile>
#include <QTextStream>
#include <QTimer>

#include <cstring>
#include <vector>

namespace attnlab {

namespace {

// Rounds of event processing between the result and the grab, for replots and layouts to settle.
constexpr int kSettleRounds = 6;
// A screenshot waits at most this long for the result.
constexpr int kScreenshotTimeoutMs = 120'000;

bool asksForScreenshot(int argc, char** argv)
{
    for (int i = 1; i < argc; ++i)
        if (std::strncmp(argv[i], "--screenshot", 12) == 0)
            return true;
    return false;
}

// "1600x1000" as a size; an invalid size when the text is not WxH.
QSize parseSize(const QString& text)
{
    static const QRegularExpression pattern(QStringLiteral("^(\\d{2,5})x(\\d{2,5})$"));
    const QRegularExpressionMatch match = pattern.match(text);
    return match.hasMatch() ? QSize(match.captured(1).toInt(), match.captured(2).toInt()) : QSize();
}

// Shows the window (resized to `size` already), waits for its first result and saves it as an
// image. The exit status.
int saveScreenshot(ui::MainWindow& window, const QString& path, const QSize& size)
{
    QTextStream err(stderr);
    window.show();
    int status = ExitFailure;
    QString problem = QStringLiteral("no result within %1 s").arg(kScreenshotTimeoutMs / 1000);
    QEventLoop loop;
    QObject::connect(&window, &ui::MainWindow::resultShown, &loop, [&] {
        status = ExitSuccess;
        loop.quit();
    });
    QObject::connect(&window.controller(), &ui::ExperimentController::failed, &loop,
                     [&](const QString& message) {
                         status = ExitBadInput;
                         problem = message;
                         loop.quit();
                     });
    QTimer::singleShot(kScreenshotTimeoutMs, &loop, &QEventLoop::quit);
    loop.exec();
    if (status != ExitSuccess) {
        err << "attention-lab: " << problem << '\n';
        return status;
    }
    // The Stepper page computes on its own worker after the window's result.
    ui::StepperView* stepper = window.stepperView();
    if (window.currentPage() == ui::MainWindow::StepperPage && stepper->isBusy()) {
        QEventLoop stepperLoop;
        QObject::connect(stepper, &ui::StepperView::busyChanged, &stepperLoop, [&](bool busy) {
            if (!busy)
                stepperLoop.quit();
        });
        QTimer::singleShot(kScreenshotTimeoutMs, &stepperLoop, &QEventLoop::quit);
        stepperLoop.exec();
    }
    // The Heads page surveys every head, and the Inside the model page compares the model's
    // predictions, on their own workers after the window's result.
    const auto waitFor = [](auto* sender, auto finished) {
        QEventLoop pageLoop;
        QObject::connect(sender, finished, &pageLoop, &QEventLoop::quit);
        QTimer::singleShot(kScreenshotTimeoutMs, &pageLoop, &QEventLoop::quit);
        pageLoop.exec();
    };
    if (window.currentPage() == ui::MainWindow::HeadsPage && window.headGrid()->isBusy())
        waitFor(window.headGrid(), &ui::HeadGridPanel::surveyFinished);
    if (window.currentPage() == ui::MainWindow::ModelPage && window.downstreamPanel()->isBusy())
        waitFor(window.downstreamPanel(), &ui::DownstreamPanel::comparisonFinished);
    // The Generate page runs a session's generation again.
    if (window.currentPage() == ui::MainWindow::GeneratePage && window.generationPage()->isBusy())
        waitFor(window.generationPage(), &ui::GenerationPage::generationFinished);
    // The error histograms are binned on a worker after the result.
    if (window.viewSettings().errorDistribution) {
        QEventLoop binLoop;
        QObject::connect(&window, &ui::MainWindow::distributionShown, &binLoop, &QEventLoop::quit);
        QTimer::singleShot(kScreenshotTimeoutMs, &binLoop, &QEventLoop::quit);
        binLoop.exec();
    }
    // Let the queued replots and layouts run before the window is grabbed: a replot can change
    // a page's arrangement, which lays the page out and replots again (a few rounds).
    for (int round = 0; round < kSettleRounds; ++round)
        QApplication::processEvents();
    if (window.size() != size)
        err << "attention-lab --screenshot: the window cannot be " << size.width() << "x"
            << size.height() << "; the screenshot is " << window.width() << "x" << window.height()
            << '\n';
    QSaveFile file(path);
    if (!file.open(QIODevice::WriteOnly) || !window.grab().save(&file, "PNG") || !file.commit()) {
        err << "attention-lab --screenshot: " << path
            << ": cannot write the screenshot: " << file.errorString() << '\n';
        return ExitFailure;
    }
    return ExitSuccess;
}

// Whether a window can be shown: a platform was chosen (offscreen, for one), or an X11 or
// Wayland display is there. Without one Qt's xcb plugin aborts the program.
bool hasDisplay()
{
#if defined(Q_OS_UNIX) && !defined(Q_OS_MACOS)
    return !qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM") ||
           !qEnvironmentVariableIsEmpty("DISPLAY") ||
           !qEnvironmentVariableIsEmpty("WAYLAND_DISPLAY");
#else
    return true;
#endif
}

}  // namespace

QList<QCommandLineOption> windowOptions()
{
    return {
        {{QStringLiteral("h"), QStringLiteral("help")},
         QStringLiteral("Print this help and exit.")},
        {{QStringLiteral("v"), QStringLiteral("version")},
         QStringLiteral("Print the version and exit.")},
        {QStringLiteral("session"), QStringLiteral("The session to open."), QStringLiteral("FILE")},
        {QStringLiteral("scenario"),
         QStringLiteral("A lecture scenario to open (its folder is "
                        "the deck PageDown and PageUp step through)."),
         QStringLiteral("FILE")},
        {QStringLiteral("presentation"), QStringLiteral("Start in presentation mode (full "
                                                        "screen; with --screenshot, at --size).")},
        {QStringLiteral("theme"),
         QStringLiteral("The projector theme of presentation mode: "
                        "light (default) or dark."),
         QStringLiteral("light|dark")},
        {QStringLiteral("screenshot"),
         QStringLiteral("Open the window offscreen, wait for the result, save a screenshot of "
                        "the whole window as PNG, and exit."),
         QStringLiteral("OUT.png")},
        {QStringLiteral("size"),
         QStringLiteral("The window size for --screenshot (default "
                        "1600x1000)."),
         QStringLiteral("WxH")},
    };
}

int runWindow(int& argc, char** argv)
{
    const bool screenshot = asksForScreenshot(argc, argv);
    if (screenshot && qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM"))
        qputenv("QT_QPA_PLATFORM", "offscreen");
    // QGuiApplication takes "-session ID" (and "--session ID") for X11 session management and
    // removes it from argv: read the arguments first, and keep --session FILE away from Qt.
    QStringList arguments;
    std::vector<char*> qtArgv;
    for (int i = 0; i < argc; ++i) {
        arguments.append(QString::fromLocal8Bit(argv[i]));
        if (std::strcmp(argv[i], "--session") == 0 || std::strcmp(argv[i], "-session") == 0) {
            if (i + 1 < argc)
                arguments.append(QString::fromLocal8Bit(argv[++i]));
            continue;
        }
        if (std::strncmp(argv[i], "--session=", 10) != 0)
            qtArgv.push_back(argv[i]);
    }

    // The options are read before the QApplication exists: --help, --version and bad usage need
    // no display, and Qt aborts when it finds none.
    QCommandLineParser parser;
    parser.addOptions(windowOptions());
    parser.addPositionalArgument(QStringLiteral("session"),
                                 QStringLiteral("A session (.attnlab) to open."),
                                 QStringLiteral("[SESSION.attnlab]"));
    QTextStream out(stdout);
    QTextStream err(stderr);
    if (!parser.parse(arguments)) {
        err << "attention-lab: " << parser.errorText() << '\n';
        printUsage(err);
        return ExitBadInput;
    }
    if (parser.isSet(QStringLiteral("help"))) {
        printUsage(out);
        return ExitSuccess;
    }
    if (parser.isSet(QStringLiteral("version"))) {
        out << QCoreApplication::applicationName() << ' ' << QCoreApplication::applicationVersion()
            << '\n';
        return ExitSuccess;
    }
    QString session = parser.value(QStringLiteral("session"));
    const QStringList positional = parser.positionalArguments();
    if (positional.size() > 1 || (!positional.isEmpty() && !session.isEmpty())) {
        err << "attention-lab: give one session at most\n";
        return ExitBadInput;
    }
    if (!positional.isEmpty()) {
        session = positional.first();
        // A word that is no file and no session's name is a command mistyped ("help", "benhc"):
        // refused here, rather than opening the window on a session that cannot be.
        if (!session.endsWith(QLatin1String(".attnlab")) && !QFileInfo::exists(session)) {
            err << "attention-lab: \"" << session
                << "\" is not a command, nor a session file (.attnlab)\n";
            printUsage(err);
            return ExitBadInput;
        }
    }
    const QSize size = parser.isSet(QStringLiteral("size"))
                           ? parseSize(parser.value(QStringLiteral("size")))
                           : QSize(1600, 1000);
    if (!size.isValid()) {
        err << "attention-lab: --size: expected WIDTHxHEIGHT such as 1600x1000, got \""
            << parser.value(QStringLiteral("size")) << "\"\n";
        return ExitBadInput;
    }

    const QString scenario = parser.value(QStringLiteral("scenario"));
    if (!scenario.isEmpty() && !session.isEmpty()) {
        err << "attention-lab: give a session or a scenario, not both\n";
        return ExitBadInput;
    }
    const QString theme = parser.value(QStringLiteral("theme"));
    if (!theme.isEmpty() && theme != QLatin1String("light") && theme != QLatin1String("dark")) {
        err << "attention-lab: --theme: expected light or dark, got \"" << theme << "\"\n";
        return ExitBadInput;
    }
    if (!hasDisplay()) {
        err << "attention-lab: no display to open the window on (neither DISPLAY nor "
               "WAYLAND_DISPLAY is set); run a command instead (attention-lab --help lists "
               "them), or set QT_QPA_PLATFORM=offscreen\n";
        return ExitFailure;
    }

    int qtArgc = int(qtArgv.size());
    qtArgv.push_back(nullptr);
    QApplication app(qtArgc, qtArgv.data());

    // A screenshot shows the window as built, whatever this machine's settings hold.
    ui::MainWindow window(screenshot ? ui::MainWindow::Start::DefaultExample
                          : !session.isEmpty() || !scenario.isEmpty()
                              ? ui::MainWindow::Start::OpenFile
                              : ui::MainWindow::Start::LastSession);
    // A session or scenario that cannot be opened: said in the window (it shows the example) and
    // on stderr; a screenshot of it is refused.
    if ((!session.isEmpty() && !window.openSession(session)) ||
        (!scenario.isEmpty() && !window.lecture().openScenarioFile(scenario))) {
        err << "attention-lab: " << window.errorMessage() << '\n';
        err.flush();
        if (screenshot)
            return ExitBadInput;
    }
    // A screenshot's size first: presentation mode sizes its fonts for the window's height.
    if (screenshot)
        window.resize(size);
    if (theme == QLatin1String("dark"))
        window.presentation().setTheme(ui::ProjectorTheme::Dark);
    if (parser.isSet(QStringLiteral("presentation")))
        window.setPresentationMode(true, screenshot ? ui::PresentationMode::Placement::KeepGeometry
                                                    : ui::PresentationMode::Placement::FullScreen);
    if (screenshot)
        return saveScreenshot(window, parser.value(QStringLiteral("screenshot")), size);
    window.startAutosave();
    window.show();
    return app.exec();
}

}  // namespace attnlab
