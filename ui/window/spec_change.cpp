#include "ui/window/spec_change.h"

#include "ui/window/main_window.h"

namespace attnlab::ui {

SpecChange::SpecChange(MainWindow* window, const ExperimentSpec& before,
                       const ExperimentSpec& after, const QString& text, int mergeKey)
    : QUndoCommand(text), m_window(window), m_before(before), m_after(after), m_mergeKey(mergeKey)
{
}

bool SpecChange::mergeWith(const QUndoCommand* other)
{
    m_after = static_cast<const SpecChange*>(other)->m_after;
    setText(other->text());
    return true;
}

void SpecChange::undo()
{
    m_window->applySpec(m_before);
}

void SpecChange::redo()
{
    m_window->applySpec(m_after);
}

}  // namespace attnlab::ui
