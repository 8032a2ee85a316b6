#pragma once

#include "ui/experiment/attention_figures.h"

#include <QWidget>

class QCheckBox;
class QComboBox;
class QSpinBox;

namespace attnlab::ui {

// The controls over the Attention matrices and Image pages: the head shown, the error map's kind
// (or the errors' histograms instead of the map), the error scale held from result to result or
// not, one colour scale for P and P^ or one each, and the colour map. They edit a ViewSettings
// (the other fields are the figures' own: the query, the rollout).
class ViewBar : public QWidget {
    Q_OBJECT

public:
    // errorMap: the error map whose colour range "Hold" takes.
    explicit ViewBar(const HeatmapView& errorMap, QWidget* parent = nullptr);

    // Shows settings for a result of `heads` heads (the head box is enabled when there are
    // several), without emitting changed.
    void setSettings(const ViewSettings& settings, int heads);
    // `settings` with the values of the controls.
    ViewSettings applied(ViewSettings settings) const;

signals:
    // The user changed a control.
    void changed();

private:
    QSpinBox* m_head;
    QComboBox* m_errorKind;
    QCheckBox* m_distribution;
    QCheckBox* m_holdErrorScale;
    QCheckBox* m_sharedScale;
    QComboBox* m_colorMap;
    const HeatmapView& m_errorMap;
};

}  // namespace attnlab::ui
