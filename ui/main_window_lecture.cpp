// MainWindow's lecture mode: the Lecture menu, presentation mode, scenarios and decks of them.

#include "main_window.h"

#include "autosave.h"
#include "controls_column.h"
#include "io/csv.h"
#include "model/downstream_panel.h"
#include "errors.h"
#include "experiment/experiment_controller.h"
#include "errors/error_analysis_panel.h"
#include "errors/error_chart.h"
#include "experiment/error_distribution_view.h"
#include "plotting/figure_export.h"
#include "model/head_grid_view.h"
#include "plotting/heatmap_view.h"
#include "experiment/image_overlay_view.h"
#include "experiment/input_panel.h"
#include "experiment/attention_maps_page.h"
#include "experiment/method_panel.h"
#include "experiment/metrics_panel.h"
#include "inputs/model_input.h"
#include "io/npy.h"
#include "experiment/row_comparison_view.h"
#include "lecture/scenario_panel.h"
#include "sessions/session.h"
#include "stepper/stepper_view.h"
#include "timing/timing_chart.h"
#include "timing/timing_panel.h"
#include <QAction>
#include <QActionGroup>
#include <QDialog>
#include <QDialogButtonBox>
#include <QDir>
#include <QDockWidget>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QLineEdit>
#include <QMessageBox>
#include <QPlainTextEdit>
#include <QToolBar>
#include <QtConcurrent/QtConcurrentRun>

namespace attnlab::ui {

void MainWindow::buildLectureMenus(QMenu* view)
{
    m_presentation = new PresentationMode(this);
    // The lecture actions are the window's too: their keys work while presentation mode hides
    // the menu bar.
    const auto windowAction = [this](QAction* action, const QKeySequence& keys) {
        action->setShortcut(keys);
        addAction(action);
        return action;
    };

    view->addSeparator();
    m_presentationAction = windowAction(
        view->addAction(tr("&Presentation Mode"), this, [this](bool on) {
            setPresentationMode(on);
        }),
        QKeySequence(Qt::Key_F5));
    m_presentationAction->setCheckable(true);
    m_presentationAction->setIcon(QIcon::fromTheme(QStringLiteral("view-presentation")));
    m_presentationAction->setToolTip(tr("Full screen, large fonts and thick lines for a "
                                        "projector (F5); Esc leaves"));
    QAction* leave = windowAction(new QAction(tr("Leave Presentation Mode"), this),
                                  QKeySequence(Qt::Key_Escape));
    leave->setEnabled(false);
    connect(leave, &QAction::triggered, this, [this] { setPresentationMode(false); });
    connect(m_presentation, &PresentationMode::activeChanged, this, [this, leave](bool active) {
        leave->setEnabled(active);
        const QSignalBlocker block(m_presentationAction);
        m_presentationAction->setChecked(active);
    });

    QMenu* theme = view->addMenu(tr("Projector &Theme"));
    auto* themes = new QActionGroup(this);
    for (const auto& [choice, name] : {std::pair{ProjectorTheme::Light, tr("&Light")},
                                       std::pair{ProjectorTheme::Dark, tr("&Dark")}}) {
        QAction* action = theme->addAction(name, this, [this, choice = choice] {
            m_presentation->setTheme(choice);
        });
        action->setCheckable(true);
        action->setChecked(choice == m_presentation->theme());
        action->setObjectName(choice == ProjectorTheme::Light ? QStringLiteral("lightTheme")
                                                              : QStringLiteral("darkTheme"));
        themes->addAction(action);
    }
    QAction* laser = windowAction(view->addAction(tr("&Laser Pointer"), this, [this](bool on) {
        m_presentation->setLaserPointerEnabled(on);
    }),
                                  QKeySequence(Qt::CTRL | Qt::Key_L));
    laser->setCheckable(true);
    laser->setToolTip(tr("A red dot follows the mouse in presentation mode"));
    m_controlsAction = windowAction(
        view->addAction(tr("&Controls While Presenting"), this,
                        [this](bool on) {
                            if (!m_presentation->isActive())
                                return;
                            for (const char* name : {"inputDock", "methodDock"})
                                if (auto* dock = findChild<QDockWidget*>(QLatin1String(name)))
                                    dock->setVisible(on);
                        }),
        QKeySequence(Qt::Key_F6));
    m_controlsAction->setCheckable(true);
    m_controlsAction->setToolTip(tr("Show the Input and Method docks in presentation mode, to "
                                    "change the experiment in front of the room"));
    connect(m_presentation, &PresentationMode::activeChanged, this,
            [this] { m_controlsAction->setChecked(false); });
    m_explanationAction = windowAction(view->addAction(tr("Scenario &Explanation")),
                                       QKeySequence(Qt::Key_F7));
    m_explanationAction->setCheckable(true);
    m_explanationAction->setChecked(true);
    connect(m_explanationAction, &QAction::toggled, this, &MainWindow::updateScenarioPanel);

    QMenu* scenarios = menuBar()->addMenu(tr("&Scenarios"));
    try {
        const Deck bundled = readDeck(QLatin1String(kBundledScenarioFolder));
        for (int i = 0; i < int(bundled.scenarios.size()); ++i)
            scenarios->addAction(
                QStringLiteral("&%1. %2")
                    .arg(i + 1)
                    .arg(QString(bundled.scenarios[std::size_t(i)].title)
                             .replace(QLatin1Char('&'), QLatin1String("&&"))),
                this, [this, bundled, i] { openScenario(bundled, i); });
    } catch (const InputError& e) {
        scenarios->addAction(tr("(no bundled scenarios: %1)").arg(e.message()))->setEnabled(false);
    }
    scenarios->addSeparator();
    QAction* next = windowAction(
        scenarios->addAction(tr("&Next Scenario"), this, [this] { stepDeck(1); }),
        QKeySequence(Qt::Key_PageDown));
    next->setIcon(QIcon::fromTheme(QStringLiteral("go-next")));
    QAction* previous = windowAction(
        scenarios->addAction(tr("&Previous Scenario"), this, [this] { stepDeck(-1); }),
        QKeySequence(Qt::Key_PageUp));
    previous->setIcon(QIcon::fromTheme(QStringLiteral("go-previous")));
    scenarios->addSeparator();
    scenarios->addAction(tr("Open &Scenario..."), this, &MainWindow::openScenarioDialog);
    scenarios->addAction(tr("Open Scenario &Folder as Deck..."), this,
                         &MainWindow::openDeckDialog);
    scenarios->addAction(tr("Save Current State as Scenario..."), this,
                         &MainWindow::saveScenarioDialog);

    QToolBar* lecture = addToolBar(tr("Lecture"));
    lecture->setObjectName(QStringLiteral("lectureToolBar"));
    lecture->setToolButtonStyle(Qt::ToolButtonTextOnly);
    lecture->addAction(previous);
    lecture->addAction(next);
    lecture->addAction(m_presentationAction);
}

void MainWindow::setPresentationMode(bool on, PresentationMode::Placement placement)
{
    if (on)
        m_presentation->enter(placement);
    else
        m_presentation->leave();
    // The heatmaps measure their labels in their fonts when given them.
    refreshViews();
}

bool MainWindow::openScenario(const Deck& deck, int index)
{
    if (index < 0 || index >= int(deck.scenarios.size()))
        return false;
    const Scenario& scenario = deck.scenarios[std::size_t(index)];
    try {
        applySession(scenario.session);
    } catch (const InputError& e) {
        showError(QStringLiteral("%1: %2").arg(scenario.path, e.message()));
        return false;
    }
    setSessionPath(QString());  // Save asks where: a bundled scenario cannot be overwritten
    setWindowTitle(tr("%1 - Attention Lab").arg(scenario.title));
    m_scenarioPanel->setDeck(deck, index);
    updateScenarioPanel();
    return true;
}

bool MainWindow::openScenarioFile(const QString& path)
{
    try {
        const Scenario scenario = readScenario(path);
        // The folder as the deck, so that PageDown goes on from this scenario.
        Deck deck = readDeck(QFileInfo(path).absolutePath());
        const QString absolute = QFileInfo(path).absoluteFilePath();
        for (int i = 0; i < int(deck.scenarios.size()); ++i)
            if (QFileInfo(deck.scenarios[std::size_t(i)].path).absoluteFilePath() == absolute)
                return openScenario(deck, i);
        return openScenario(Deck{QFileInfo(path).absolutePath(), {scenario}, {}}, 0);
    } catch (const InputError& e) {
        showError(e.message());
        return false;
    }
}

bool MainWindow::openDeck(const QString& folder)
{
    try {
        const Deck deck = readDeck(folder);
        if (!openScenario(deck, 0))
            return false;
        if (!deck.problems.isEmpty())
            statusBar()->showMessage(tr("Left out of the deck: %1")
                                         .arg(deck.problems.join(QStringLiteral("; "))));
        return true;
    } catch (const InputError& e) {
        showError(e.message());
        return false;
    }
}

bool MainWindow::saveScenario(const QString& path, const QString& title,
                              const QString& explanation, QString* problem)
{
    Scenario scenario;
    scenario.title = title;
    scenario.explanation = explanation;
    scenario.session = Session{m_controller->spec(), sessionView()};
    if (const Scenario* open = m_scenarioPanel->scenario())
        scenario.explainedWarnings = open->explainedWarnings;
    QString message;
    try {
        writeScenario(path, scenario);
        statusBar()->showMessage(tr("Saved %1").arg(QDir::toNativeSeparators(path)), 3000);
        return true;
    } catch (const InputError& e) {
        message = e.message();
    } catch (const OutputError& e) {
        message = e.message();
    }
    if (problem)
        *problem = message;
    return false;
}

void MainWindow::stepDeck(int delta)
{
    const Deck& deck = m_scenarioPanel->deck();
    if (deck.scenarios.empty()) {
        openDeck(QLatin1String(kBundledScenarioFolder));
        return;
    }
    const int index = std::clamp(m_scenarioPanel->index() + delta, 0,
                                 int(deck.scenarios.size()) - 1);
    if (index != m_scenarioPanel->index())
        openScenario(Deck(deck), index);  // a copy: the panel's deck is replaced on the way
}

void MainWindow::updateScenarioPanel()
{
    m_scenarioPanel->setVisible(m_explanationAction->isChecked() &&
                                m_scenarioPanel->scenario() != nullptr);
}

void MainWindow::openScenarioDialog()
{
    const QString path = QFileDialog::getOpenFileName(
        this, tr("Open scenario"), QString(), tr("Attention Lab scenarios (*.attnlab)"));
    if (!path.isEmpty())
        openScenarioFile(path);
}

void MainWindow::openDeckDialog()
{
    const QString folder =
        QFileDialog::getExistingDirectory(this, tr("Open a folder of scenarios as a deck"));
    if (!folder.isEmpty())
        openDeck(folder);
}

void MainWindow::saveScenarioDialog()
{
    QDialog dialog(this);
    dialog.setWindowTitle(tr("Save current state as scenario"));
    auto* title = new QLineEdit;
    title->setObjectName(QStringLiteral("scenarioTitleEdit"));
    title->setMaxLength(kLongestScenarioTitle);
    auto* explanation = new QPlainTextEdit;
    explanation->setObjectName(QStringLiteral("scenarioExplanationEdit"));
    explanation->setToolTip(tr("A few sentences and the key formula. Qt rich text: <b>, <i>, "
                               "<sub>, <sup> and Unicode (\u221a, \u1d40, \u03c6) read well."));
    if (const Scenario* open = m_scenarioPanel->scenario()) {
        title->setText(open->title);
        explanation->setPlainText(open->explanation);
    }
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Save | QDialogButtonBox::Cancel);
    connect(buttons, &QDialogButtonBox::accepted, &dialog, &QDialog::accept);
    connect(buttons, &QDialogButtonBox::rejected, &dialog, &QDialog::reject);
    auto* form = new QFormLayout(&dialog);
    form->addRow(tr("Title"), title);
    form->addRow(tr("Explanation"), explanation);
    form->addRow(buttons);
    while (dialog.exec() == QDialog::Accepted) {
        if (title->text().trimmed().isEmpty()) {
            QMessageBox::information(this, tr("Save scenario"), tr("The scenario needs a title."));
            continue;
        }
        QString path = QFileDialog::getSaveFileName(this, tr("Save scenario"), QString(),
                                                    tr("Attention Lab scenarios (*.attnlab)"));
        if (path.isEmpty())
            return;
        if (QFileInfo(path).suffix().isEmpty())
            path += QStringLiteral(".attnlab");
        QString problem;
        if (!saveScenario(path, title->text(), explanation->toPlainText(), &problem))
            QMessageBox::warning(this, tr("Save scenario"), problem);
        return;
    }
}

}  // namespace attnlab::ui
