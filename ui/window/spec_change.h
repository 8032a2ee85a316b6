#pragma once

#include "experiment.h"

#include <QUndoCommand>

#include <optional>

class QUndoStack;

namespace attnlab::ui {

class MainWindow;

// One undoable change of the main window's spec. Consecutive changes with the same merge key
// (one slider drag) merge into one step.
class SpecChange : public QUndoCommand {
public:
    SpecChange(MainWindow* window, const ExperimentSpec& before, const ExperimentSpec& after,
               const QString& text, int mergeKey);

    int id() const override { return m_mergeKey; }
    const ExperimentSpec& before() const { return m_before; }
    const ExperimentSpec& after() const { return m_after; }
    bool mergeWith(const QUndoCommand* other) override;
    void undo() override;
    void redo() override;

private:
    MainWindow* m_window;
    ExperimentSpec m_before;
    ExperimentSpec m_after;
    int m_mergeKey;
};

// Takes back the last step of `undo` when it made `spec` (which failed to compute), leaving no
// step to redo: returns the spec before it, which the window shows again; none when the last step
// made another spec (or there is none).
std::optional<ExperimentSpec> withdrawStep(QUndoStack& undo, const ExperimentSpec& spec);

}  // namespace attnlab::ui
