#include "ui/common/reserved_height_label.h"

#include <algorithm>

namespace attnlab::ui {

ReservedHeightLabel::ReservedHeightLabel(QWidget* parent) : QLabel(parent)
{
    setWordWrap(true);
    m_reserved.setWordWrap(true);
}

void ReservedHeightLabel::setReservedText(const QString& text)
{
    if (text == m_reserved.text())
        return;
    m_reserved.setText(text);
    updateGeometry();
}

QLabel& ReservedHeightLabel::measure() const
{
    if (m_reserved.font() != font())
        m_reserved.setFont(font());
    if (m_reserved.textFormat() != textFormat())
        m_reserved.setTextFormat(textFormat());
    if (m_reserved.contentsMargins() != contentsMargins())
        m_reserved.setContentsMargins(contentsMargins());
    if (m_reserved.margin() != margin())
        m_reserved.setMargin(margin());
    return m_reserved;
}

int ReservedHeightLabel::heightForWidth(int width) const
{
    const int own = QLabel::heightForWidth(width);
    if (m_reserved.text().isEmpty())
        return own;
    return std::max(own, measure().heightForWidth(width));
}

QSize ReservedHeightLabel::sizeHint() const
{
    QSize hint = QLabel::sizeHint();
    if (!m_reserved.text().isEmpty())
        hint.setHeight(std::max(hint.height(), heightForWidth(hint.width())));
    return hint;
}

QSize ReservedHeightLabel::minimumSizeHint() const
{
    QSize hint = QLabel::minimumSizeHint();
    if (!m_reserved.text().isEmpty())
        hint.setHeight(std::max(hint.height(), measure().minimumSizeHint().height()));
    return hint;
}

}  // namespace attnlab::ui
