#include "controls_column.h"

#include <QEvent>
#include <QScrollArea>
#include <QScrollBar>

namespace attnlab::ui {

namespace {

// Refits the column's width whenever the controls' layout asks for a new size (their fonts or
// contents changed).
class ControlsColumn : public QScrollArea {
public:
    explicit ControlsColumn(QWidget* controls)
    {
        setWidget(controls);
        setWidgetResizable(true);
        setFrameShape(QFrame::NoFrame);
        setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
        controls->installEventFilter(this);
        fitWidth();
    }

protected:
    bool eventFilter(QObject* watched, QEvent* event) override
    {
        if (watched == widget() &&
            (event->type() == QEvent::LayoutRequest || event->type() == QEvent::FontChange))
            fitWidth();
        return QScrollArea::eventFilter(watched, event);
    }

private:
    // The controls' width plus room for the vertical scroll bar.
    void fitWidth()
    {
        const int width = widget()->sizeHint().width() + verticalScrollBar()->sizeHint().width();
        if (width != minimumWidth() || width != maximumWidth())
            setFixedWidth(width);
    }
};

}  // namespace

QScrollArea* controlsColumn(QWidget* controls)
{
    return new ControlsColumn(controls);
}

}  // namespace attnlab::ui
