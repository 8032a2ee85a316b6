#pragma once

#include "ui/lecture/presentation.h"
#include "sessions/scenario.h"

#include <QObject>

class QAction;
class QMenu;

namespace attnlab::ui {

class MainWindow;
class ScenarioPanel;

// Teaching with the main window: presentation mode (F5, the projector theme, the laser pointer,
// the docks while presenting) in the View menu, the Scenarios menu (the bundled scenarios, the
// next and previous scenario of the deck, opening a scenario or a folder of them, saving the
// current state as one), the Lecture tool bar, and the scenario panel under the page, which shows
// the open scenario's explanation.
class LectureControls : public QObject {
    Q_OBJECT

public:
    // Adds the lecture actions to `view` and the Scenarios menu and Lecture tool bar to the
    // window; `panel` is the window's scenario panel.
    LectureControls(MainWindow& window, ScenarioPanel* panel, QMenu* view);

    PresentationMode& presentation() { return *m_presentation; }
    // Enters (with `placement`) or leaves presentation mode; the View menu and F5 come here.
    void setPresentationMode(
        bool on, PresentationMode::Placement placement = PresentationMode::Placement::FullScreen);

    // Opens scenario `index` of deck as a session opens (spec, view, page; the state stays live
    // and editable), shows its explanation and makes the deck the one PageDown and PageUp step
    // through. On failure the window keeps what it showed, shows the message and returns false.
    bool openScenario(const Deck& deck, int index);
    // Opens the scenario file at path, its folder as the deck. False (and a message) on failure.
    bool openScenarioFile(const QString& path);
    // Opens the scenarios of folder as a deck, at its first scenario. False (and a message) on
    // failure; the files of the folder that cannot be read are named in the status bar.
    bool openDeck(const QString& folder);
    // Saves the current spec and view as a scenario with this title and explanation. On failure
    // (no title, a file that cannot be written) returns false and sets *problem to the message.
    bool saveScenario(const QString& path, const QString& title, const QString& explanation,
                      QString* problem = nullptr);
    // Opens the scenario `delta` places on in the deck (1 next, -1 previous), staying at the
    // ends; without a deck, the first bundled scenario.
    void stepDeck(int delta);
    // A plain session opened: no scenario, no deck.
    void closeDeck();

private:
    void addPresentationActions(QMenu* view);
    void buildScenariosMenu();
    // Shows the scenario panel when a scenario is open and View > Scenario Explanation is on.
    void updateScenarioPanel();
    void openScenarioDialog();
    void openDeckDialog();
    void saveScenarioDialog();
    // Makes `action` the window's too, with `keys`: its keys work while presentation mode hides
    // the menu bar.
    QAction* windowAction(QAction* action, const QKeySequence& keys);

    MainWindow& m_window;
    ScenarioPanel* m_panel;
    PresentationMode* m_presentation;
    QAction* m_presentationAction;
    QAction* m_explanationAction;
    QAction* m_controlsAction;  // the Input and Method docks while presenting
    QAction* m_next;
    QAction* m_previous;
};

}  // namespace attnlab::ui
