#include "ui/window/lecture_controls.h"

#include "errors.h"
#include "ui/experiment/experiment_controller.h"
#include "ui/lecture/scenario_panel.h"
#include "ui/window/main_window.h"
#include "ui/window/window_session.h"

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
#include <QMenuBar>
#include <QMessageBox>
#include <QPlainTextEdit>
#include <QStatusBar>
#include <QToolBar>

#include <algorithm>

namespace attnlab::ui {

LectureControls::LectureControls(MainWindow& window, ScenarioPanel* panel, QMenu* view)
    : QObject(&window),
      m_window(window),
      m_panel(panel),
      m_presentation(new PresentationMode(&window))
{
    addPresentationActions(view);
    buildScenariosMenu();
    connect(m_panel, &ScenarioPanel::previousRequested, this, [this] { stepDeck(-1); });
    connect(m_panel, &ScenarioPanel::nextRequested, this, [this] { stepDeck(1); });
    connect(m_panel, &ScenarioPanel::closeRequested, this,
            [this] { m_explanationAction->setChecked(false); });
}

QAction* LectureControls::windowAction(QAction* action, const QKeySequence& keys)
{
    action->setShortcut(keys);
    m_window.addAction(action);
    return action;
}

void LectureControls::addPresentationActions(QMenu* view)
{
    view->addSeparator();
    m_presentationAction =
        windowAction(view->addAction(tr("&Presentation Mode"), this,
                                     [this](bool on) { setPresentationMode(on); }),
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
        QAction* action = theme->addAction(
            name, this, [this, choice = choice] { m_presentation->setTheme(choice); });
        action->setCheckable(true);
        action->setChecked(choice == m_presentation->theme());
        action->setObjectName(choice == ProjectorTheme::Light ? QStringLiteral("lightTheme")
                                                              : QStringLiteral("darkTheme"));
        themes->addAction(action);
    }
    QAction* laser = windowAction(
        view->addAction(tr("&Laser Pointer"), this,
                        [this](bool on) { m_presentation->setLaserPointerEnabled(on); }),
        QKeySequence(Qt::CTRL | Qt::Key_L));
    laser->setCheckable(true);
    laser->setToolTip(tr("A red dot follows the mouse in presentation mode"));
    m_controlsAction = windowAction(
        view->addAction(tr("&Controls While Presenting"), this,
                        [this](bool on) {
                            if (!m_presentation->isActive())
                                return;
                            for (const char* name : {"inputDock", "methodDock"})
                                if (auto* dock =
                                        m_window.findChild<QDockWidget*>(QLatin1String(name)))
                                    dock->setVisible(on);
                        }),
        QKeySequence(Qt::Key_F6));
    m_controlsAction->setCheckable(true);
    m_controlsAction->setToolTip(tr("Show the Input and Method docks in presentation mode, to "
                                    "change the experiment in front of the room"));
    connect(m_presentation, &PresentationMode::activeChanged, this,
            [this] { m_controlsAction->setChecked(false); });
    m_explanationAction =
        windowAction(view->addAction(tr("Scenario &Explanation")), QKeySequence(Qt::Key_F7));
    m_explanationAction->setCheckable(true);
    m_explanationAction->setChecked(true);
    connect(m_explanationAction, &QAction::toggled, this, &LectureControls::updateScenarioPanel);
}

void LectureControls::buildScenariosMenu()
{
    QMenu* scenarios = m_window.menuBar()->addMenu(tr("&Scenarios"));
    try {
        const Deck bundled = readDeck(QLatin1String(kBundledScenarioFolder));
        for (int i = 0; i < int(bundled.scenarios.size()); ++i)
            scenarios->addAction(QStringLiteral("&%1. %2").arg(i + 1).arg(
                                     QString(bundled.scenarios[std::size_t(i)].title)
                                         .replace(QLatin1Char('&'), QLatin1String("&&"))),
                                 this, [this, bundled, i] { openScenario(bundled, i); });
    } catch (const InputError& e) {
        scenarios->addAction(tr("(no bundled scenarios: %1)").arg(e.message()))->setEnabled(false);
    }
    scenarios->addSeparator();
    m_next = windowAction(scenarios->addAction(tr("&Next Scenario"), this, [this] { stepDeck(1); }),
                          QKeySequence(Qt::Key_PageDown));
    m_next->setIcon(QIcon::fromTheme(QStringLiteral("go-next")));
    m_previous =
        windowAction(scenarios->addAction(tr("&Previous Scenario"), this, [this] { stepDeck(-1); }),
                     QKeySequence(Qt::Key_PageUp));
    m_previous->setIcon(QIcon::fromTheme(QStringLiteral("go-previous")));
    scenarios->addSeparator();
    scenarios->addAction(tr("Open &Scenario..."), this, &LectureControls::openScenarioDialog);
    scenarios->addAction(tr("Open Scenario &Folder as Deck..."), this,
                         &LectureControls::openDeckDialog);
    scenarios->addAction(tr("Save Current State as Scenario..."), this,
                         &LectureControls::saveScenarioDialog);

    QToolBar* lecture = m_window.addToolBar(tr("Lecture"));
    lecture->setObjectName(QStringLiteral("lectureToolBar"));
    lecture->setToolButtonStyle(Qt::ToolButtonTextOnly);
    lecture->addAction(m_previous);
    lecture->addAction(m_next);
    lecture->addAction(m_presentationAction);
}

void LectureControls::setPresentationMode(bool on, PresentationMode::Placement placement)
{
    if (on)
        m_presentation->enter(placement);
    else
        m_presentation->leave();
    // The heatmaps measure their labels in their fonts when given them.
    m_window.refreshViews();
}

bool LectureControls::openScenario(const Deck& deck, int index)
{
    if (index < 0 || index >= int(deck.scenarios.size()))
        return false;
    const Scenario& scenario = deck.scenarios[std::size_t(index)];
    try {
        m_window.session().apply(scenario.session);
    } catch (const InputError& e) {
        m_window.showOpenError(QStringLiteral("%1: %2").arg(scenario.path, e.message()));
        return false;
    }
    // Save asks where: a bundled scenario cannot be overwritten.
    m_window.session().setPath(QString());
    m_window.setWindowTitle(tr("%1 - Attention Lab").arg(scenario.title));
    m_panel->setDeck(deck, index);
    updateScenarioPanel();
    return true;
}

bool LectureControls::openScenarioFile(const QString& path)
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
        m_window.showOpenError(e.message());
        return false;
    }
}

bool LectureControls::openDeck(const QString& folder)
{
    try {
        const Deck deck = readDeck(folder);
        if (!openScenario(deck, 0))
            return false;
        if (!deck.problems.isEmpty())
            m_window.statusBar()->showMessage(
                tr("Left out of the deck: %1").arg(deck.problems.join(QStringLiteral("; "))));
        return true;
    } catch (const InputError& e) {
        m_window.showOpenError(e.message());
        return false;
    }
}

bool LectureControls::saveScenario(const QString& path, const QString& title,
                                   const QString& explanation, QString* problem)
{
    Scenario scenario;
    scenario.title = title;
    scenario.explanation = explanation;
    scenario.session = Session{m_window.controller().spec(), m_window.session().view()};
    if (const Scenario* open = m_panel->scenario())
        scenario.explainedWarnings = open->explainedWarnings;
    QString message;
    try {
        writeScenario(path, scenario);
        m_window.statusBar()->showMessage(tr("Saved %1").arg(QDir::toNativeSeparators(path)), 3000);
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

void LectureControls::stepDeck(int delta)
{
    const Deck& deck = m_panel->deck();
    if (deck.scenarios.empty()) {
        openDeck(QLatin1String(kBundledScenarioFolder));
        return;
    }
    const int index = std::clamp(m_panel->index() + delta, 0, int(deck.scenarios.size()) - 1);
    if (index != m_panel->index())
        openScenario(Deck(deck), index);  // a copy: the panel's deck is replaced on the way
}

void LectureControls::closeDeck()
{
    m_panel->setDeck(Deck(), -1);
    updateScenarioPanel();
}

void LectureControls::updateScenarioPanel()
{
    m_panel->setVisible(m_explanationAction->isChecked() && m_panel->scenario() != nullptr);
}

void LectureControls::openScenarioDialog()
{
    const QString path = QFileDialog::getOpenFileName(&m_window, tr("Open scenario"), QString(),
                                                      tr("Attention Lab scenarios (*.attnlab)"));
    if (!path.isEmpty())
        openScenarioFile(path);
}

void LectureControls::openDeckDialog()
{
    const QString folder =
        QFileDialog::getExistingDirectory(&m_window, tr("Open a folder of scenarios as a deck"));
    if (!folder.isEmpty())
        openDeck(folder);
}

void LectureControls::saveScenarioDialog()
{
    QDialog dialog(&m_window);
    dialog.setWindowTitle(tr("Save current state as scenario"));
    auto* title = new QLineEdit;
    title->setObjectName(QStringLiteral("scenarioTitleEdit"));
    title->setMaxLength(kLongestScenarioTitle);
    auto* explanation = new QPlainTextEdit;
    explanation->setObjectName(QStringLiteral("scenarioExplanationEdit"));
    explanation->setToolTip(tr("A few sentences and the key formula. Qt rich text: <b>, <i>, "
                               "<sub>, <sup> and Unicode (\u221a, \u1d40, \u03c6) read well."));
    if (const Scenario* open = m_panel->scenario()) {
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
            QMessageBox::information(&m_window, tr("Save scenario"),
                                     tr("The scenario needs a title."));
            continue;
        }
        QString path = QFileDialog::getSaveFileName(&m_window, tr("Save scenario"), QString(),
                                                    tr("Attention Lab scenarios (*.attnlab)"));
        if (path.isEmpty())
            return;
        if (QFileInfo(path).suffix().isEmpty())
            path += QStringLiteral(".attnlab");
        QString problem;
        if (!saveScenario(path, title->text(), explanation->toPlainText(), &problem))
            QMessageBox::warning(&m_window, tr("Save scenario"), problem);
        return;
    }
}

}  // namespace attnlab::ui
