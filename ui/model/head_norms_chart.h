#pragma once

#include <QWidget>

namespace attnlab::ui {

class HeadGridView;

// The mean |q'| of every head as a bar, in the order of a HeadGridView (layer by layer, or worst
// error first), coloured by the head's error on the view's HeadErrorScale: tall bars are red when
// error grows with the norms. The view's selected head is outlined; hover gives the view's
// tooltip and a click selects the head (headActivated).
class HeadNormsChart : public QWidget {
    Q_OBJECT

public:
    explicit HeadNormsChart(const HeadGridView* view, QWidget* parent = nullptr);

    // The bar of the head at position i of the view's display order, in widget coordinates.
    QRect barRect(int i) const;

    QSize sizeHint() const override { return QSize(600, 150); }
    QSize minimumSizeHint() const override { return QSize(200, 110); }

signals:
    void headActivated(int layer, int head);

protected:
    void paintEvent(QPaintEvent* event) override;
    void mousePressEvent(QMouseEvent* event) override;
    bool event(QEvent* event) override;

private:
    // The plot area (bars) and the largest value of the y axis.
    QRectF plotArea() const;
    double axisMaximum() const;
    int barAt(const QPoint& pos) const;  // position in the display order, or -1

    const HeadGridView* m_view;
};

}  // namespace attnlab::ui
