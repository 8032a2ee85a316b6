#pragma once

#include <QWidget>

class QCheckBox;

namespace attnlab::ui {

class ImageOverlayView;

// The Over the image page: the selected patch's attention over the image (an ImageOverlayView)
// under a bar that a Vision Transformer's input shows: back to the [CLS] row, and the attention
// rollout over every layer instead of the head's row.
class ImagePage : public QWidget {
    Q_OBJECT

public:
    explicit ImagePage(ImageOverlayView* view, QWidget* parent = nullptr);

    // Shows the bar (for input with a class token: a ViT's).
    void setClassTokenBar(bool shown);
    // Ticks the rollout box without emitting rolloutToggled.
    void setRollout(bool on);

signals:
    void classRowRequested();
    void rolloutToggled(bool on);

private:
    QWidget* m_imageBar;
    QCheckBox* m_rolloutBox;
};

}  // namespace attnlab::ui
