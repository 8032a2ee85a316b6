#pragma once

#include <QLabel>

namespace attnlab::ui {

// A word-wrapped label as tall, at every width w, as the taller of its own text and a reserved
// text (the longest it will show):
//   heightForWidth(w) = max(QLabel::heightForWidth(w), height of the reserved text at w).
// Stepping through a sequence changes the numbers a line shows; with the reserved text, the line
// keeps its height and what is below it stays put, whatever width the page gives it.
class ReservedHeightLabel : public QLabel {
public:
    explicit ReservedHeightLabel(QWidget* parent = nullptr);

    // The text whose height the label keeps; empty reserves nothing.
    void setReservedText(const QString& text);
    int heightForWidth(int width) const override;
    QSize sizeHint() const override;
    QSize minimumSizeHint() const override;

private:
    // The reserved text laid out as this label would lay it out (font, format and margins set
    // before each measure); never shown.
    QLabel& measure() const;

    mutable QLabel m_reserved;
};

}  // namespace attnlab::ui
