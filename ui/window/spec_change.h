#pragma once

#include "experiment.h"

#include <QUndoCommand>

namespace attnlab::ui {

class MainWindow;

// One undoable change of the main window's spec. Consecutive changes with the same merge key
// (one slider drag) merge into one step.
class SpecChange : public QUndoCommand {
public:
    SpecChange(MainWindow* window, const ExperimentSpec& before, const ExperimentSpec& after,
               const QString& text, int mergeKey);

    int id() const override { return m_mergeKey; }
    bool mergeWith(const QUndoCommand* other) override;
    void undo() override;
    void redo() override;

private:
    MainWindow* m_window;
    ExperimentSpec m_before;
    ExperimentSpec m_after;
    int m_mergeKey;
};

}  // namespace attnlab::ui
