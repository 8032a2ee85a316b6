#include "ui/experiment/image_page.h"

#include "ui/experiment/image_overlay_view.h"

#include <QCheckBox>
#include <QHBoxLayout>
#include <QPushButton>
#include <QVBoxLayout>

namespace attnlab::ui {

ImagePage::ImagePage(ImageOverlayView* view, QWidget* parent) : QWidget(parent)
{
    // A Vision Transformer's page: back to the [CLS] row, and the rollout over every layer.
    auto* classRow = new QPushButton(tr("[CLS] row"));
    classRow->setToolTip(tr("Show the class token's attention over the patches (clicking a patch "
                            "shows that patch's row)."));
    classRow->setObjectName(QStringLiteral("classRow"));
    connect(classRow, &QPushButton::clicked, this, &ImagePage::classRowRequested);
    m_rolloutBox = new QCheckBox(tr("Attention rollout over every layer"));
    m_rolloutBox->setToolTip(
        tr("Abnar and Zuidema's rollout: each layer's attention averaged over its heads, with "
           "the residual connection as half of it, (A + I) / 2, multiplied through the layers: "
           "how much the query draws on each patch through the whole model. The approximation's "
           "rollout uses its P^ of every layer on that layer's own queries and keys."));
    m_rolloutBox->setObjectName(QStringLiteral("rollout"));
    connect(m_rolloutBox, &QCheckBox::toggled, this, &ImagePage::rolloutToggled);
    m_imageBar = new QWidget;
    auto* bar = new QHBoxLayout(m_imageBar);
    bar->setContentsMargins(4, 2, 4, 2);
    bar->addWidget(classRow);
    bar->addWidget(m_rolloutBox);
    bar->addStretch();
    m_imageBar->setVisible(false);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(0);
    layout->addWidget(m_imageBar);
    layout->addWidget(view, 1);
}

void ImagePage::setClassTokenBar(bool shown)
{
    m_imageBar->setVisible(shown);
}

void ImagePage::setRollout(bool on)
{
    const QSignalBlocker block(m_rolloutBox);
    m_rolloutBox->setChecked(on);
}

}  // namespace attnlab::ui
