#include "ui/common/controls_column.h"

#include <QComboBox>
#include <QEvent>
#include <QMenu>
#include <QPushButton>
#include <QScrollArea>
#include <QScrollBar>
#include <QSpinBox>

namespace attnlab::ui {

namespace {

// A frameless area that scrolls vertically only, and refits its width whenever its contents'
// layout asks for a new size (their fonts or contents changed): to exactly their preferred width
// (a column of controls), or to at least their minimum width (a dock's panel).
class FittedScrollArea : public QScrollArea {
public:
    enum class Fit { Exact, AtLeast };

    FittedScrollArea(QWidget* contents, Fit fit) : m_fit(fit)
    {
        setWidget(contents);
        setWidgetResizable(true);
        setFrameShape(QFrame::NoFrame);
        setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
        contents->installEventFilter(this);
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
    // The contents' width plus room for the vertical scroll bar.
    void fitWidth()
    {
        const int scrollBar = verticalScrollBar()->sizeHint().width();
        if (m_fit == Fit::Exact) {
            const int width = widget()->sizeHint().width() + scrollBar;
            if (width != minimumWidth() || width != maximumWidth())
                setFixedWidth(width);
        } else {
            const int width = widget()->minimumSizeHint().width() + scrollBar;
            if (width != minimumWidth())
                setMinimumWidth(width);
        }
    }

    Fit m_fit;
};

}  // namespace

QScrollArea* controlsColumn(QWidget* controls)
{
    return new FittedScrollArea(controls, FittedScrollArea::Fit::Exact);
}

QScrollArea* dockContents(QWidget* panel)
{
    return new FittedScrollArea(panel, FittedScrollArea::Fit::AtLeast);
}

QSpinBox* dockSpinBox(int minimum, int maximum, const QString& toolTip)
{
    auto* box = new QSpinBox;
    box->setRange(minimum, maximum);
    box->setToolTip(toolTip);
    box->setKeyboardTracking(false);
    return box;
}

QDoubleSpinBox* dockDoubleSpinBox(double minimum, double maximum, int decimals, double step,
                                  const QString& toolTip)
{
    auto* box = new QDoubleSpinBox;
    box->setRange(minimum, maximum);
    box->setDecimals(decimals);
    box->setSingleStep(step);
    box->setToolTip(toolTip);
    box->setKeyboardTracking(false);
    return box;
}

void showValue(QSpinBox* box, int value)
{
    if (box->value() != value)
        box->setValue(value);
}

void showValue(QDoubleSpinBox* box, double value)
{
    // The box holds its values rounded to its decimals.
    if (box->value() != box->valueFromText(box->textFromValue(value)))
        box->setValue(value);
}

void showRange(QSpinBox* box, int minimum, int maximum)
{
    if (box->minimum() != minimum || box->maximum() != maximum)
        box->setRange(minimum, maximum);
}

void showValueInForce(QSpinBox* box, bool editable, std::optional<int> value)
{
    box->setEnabled(editable);
    // The special text stands for the minimum, which the box then holds.
    const QString special = value ? QString() : QStringLiteral("\u2014");
    if (box->specialValueText() != special)
        box->setSpecialValueText(special);
    showValue(box, value.value_or(box->minimum()));
}

void showChoiceInForce(QComboBox* box, bool editable, int index, const QString& inForce)
{
    box->setEnabled(editable);
    box->setPlaceholderText(inForce);  // shown while no item is chosen
    box->setCurrentIndex(editable ? index : -1);
}

QPushButton* menuButton(const QString& text, const QString& toolTip)
{
    auto* button = new QPushButton(text);
    button->setToolTip(toolTip);
    button->setMenu(new QMenu(button));
    return button;
}

}  // namespace attnlab::ui
