#pragma once

#include "sessions/scenario.h"

#include <QFrame>

class QLabel;
class QScrollArea;
class QToolButton;

namespace attnlab::ui {

// The explanation of the scenario on screen, under the live view: its title, a few sentences and
// the key formula (Qt rich text, in a large readable font; scrolling where the window is too
// short for all of it), and the deck's navigation: previous
// and next, and where the scenario stands in the deck ("3 / 10"). The panel only shows; the
// window opens scenarios (it connects previousRequested and nextRequested to its deck stepping)
// and hides the panel when closeRequested comes.
class ScenarioPanel : public QFrame {
    Q_OBJECT

public:
    explicit ScenarioPanel(QWidget* parent = nullptr);

    // Shows scenario `index` of deck (clamped to the deck); an empty deck clears the panel.
    void setDeck(const Deck& deck, int index);
    const Deck& deck() const { return m_deck; }
    // The index of the scenario shown in the deck, -1 when the deck is empty.
    int index() const { return m_index; }
    // The scenario shown; nullptr when none is.
    const Scenario* scenario() const;

    QString titleText() const;
    QString explanationText() const;
    // "3 / 10", empty when no deck is shown.
    QString positionText() const;

signals:
    void previousRequested();
    void nextRequested();
    // The close button: the window hides the panel (its View action follows).
    void closeRequested();

private:
    Deck m_deck;
    int m_index = -1;
    QLabel* m_title;
    QLabel* m_explanation;
    QScrollArea* m_explanationArea;  // holds m_explanation, scrolling it where the window is short
    QLabel* m_position;
    QToolButton* m_previous;
    QToolButton* m_next;
};

}  // namespace attnlab::ui
