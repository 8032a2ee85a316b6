#include "ui/window/spec_change.h"

#include "ui/window/main_window.h"

#include <QUndoStack>

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

std::optional<ExperimentSpec> withdrawStep(QUndoStack& undo, const ExperimentSpec& spec)
{
    if (undo.index() == 0)
        return std::nullopt;
    auto* step = dynamic_cast<const SpecChange*>(undo.command(undo.index() - 1));
    if (!step || step->after().toJson() != spec.toJson())
        return std::nullopt;
    const ExperimentSpec before = step->before();
    // An obsolete step leaves the stack when undone; whether its undo() runs then depends on Qt's
    // version, so the caller shows `before` itself.
    const_cast<SpecChange*>(step)->setObsolete(true);
    undo.undo();
    return before;
}

}  // namespace attnlab::ui
