#pragma once

#include <QStringList>
#include <QWidget>

#include <vector>

namespace attnlab::ui {

// The input's tokens (or image patches, in raster order) side by side, each with its step number
// i = t + 1 under it: the current one filled dark, those already consumed by the recurrence
// tinted, those still to come plain. A click on a token reports it. Only the tokens in the
// exposed area are painted, so thousands of tokens cost no more than a screenful.
class StepperTokenStrip : public QWidget {
    Q_OBJECT

public:
    explicit StepperTokenStrip(QWidget* parent = nullptr);

    // Shows these tokens (cut to a readable length), none current; the strip's minimum width
    // becomes the width of all of them, so a scroll area around it scrolls.
    void setTokens(const QStringList& labels);
    // Makes token `position` (0-based) the current one and repaints.
    void setCurrent(int position);
    int current() const { return m_current; }
    int count() const { return int(m_texts.size()); }

    // The box of token `position` in the strip's coordinates.
    QRect tokenRect(int position) const;

    // All tokens side by side at their natural size.
    QSize sizeHint() const override;
    QSize minimumSizeHint() const override;

signals:
    // A left click on token `position`.
    void tokenClicked(int position);

protected:
    // Lays the tokens out again for a new font.
    void changeEvent(QEvent* event) override;
    // Paints the tokens that intersect the exposed rectangle.
    void paintEvent(QPaintEvent* event) override;
    // Reports a left click on a token as tokenClicked.
    void mousePressEvent(QMouseEvent* event) override;

private:
    // The boxes of m_labels for the current font.
    void layoutTokens();
    // The first token whose box ends after x (strip coordinates); count() when none does.
    int firstTokenFrom(int x) const;
    // The token whose box contains x, or -1.
    int tokenAt(int x) const;

    QStringList m_labels;
    QStringList m_texts;      // as drawn: simplified and cut
    std::vector<int> m_left;  // left edge of each box
    std::vector<int> m_width;
    int m_current = -1;
};

}  // namespace attnlab::ui
