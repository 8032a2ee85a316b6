#pragma once

#include "experiment.h"

#include <QWidget>

#include <utility>
#include <vector>

class QCheckBox;
class QComboBox;
class QDoubleSpinBox;
class QFormLayout;
class QLabel;
class QPushButton;
class QSlider;
class QSpinBox;

namespace attnlab::ui {

class CheckpointChoice;

// The Method dock: the approximation and its parameters (feature map, m, projection W and its
// seed, scale, query/key norm multiplier, causal mask, heads, precision). Every control's
// tooltip says what it does mathematically. Beside the methods, for a language model's input,
// "Second checkpoint of the model": the exact attention of another checkpoint of the same model
// (a CheckpointChoice: the built-in or a recent model, or Open...) in the approximation's place.
class MethodPanel : public QWidget {
    Q_OBJECT

public:
    explicit MethodPanel(QWidget* parent = nullptr);

    // Shows spec, without emitting edited().
    void setSpec(const ExperimentSpec& spec);

signals:
    // The user changed the method: spec is the previous spec with that change. Edits with the
    // same mergeKey >= 0 (one slider drag) form one undo step; -1 never merges.
    void edited(const ExperimentSpec& spec, const QString& description, int mergeKey);
    // The user asked to fit the feature maps of a method fitted to a model (hedgehog) to the
    // model on show (the window opens Fit to this model).
    void fitRequested();

private:
    // The controls, wired to edit the spec: the method and m; W's projection, row norms and seed
    // (the Redraw button returned); the scale, the norm multiplier, the mask, the heads and the
    // precision.
    void buildMethodControls();
    // The method list's "Second checkpoint" entry was chosen: the spec's checkpoint, else the
    // first the list offers, else one the user opens; back to the method when none is chosen.
    void chooseCheckpoint();
    QPushButton* buildDrawControls();
    void buildInputControls();
    template <typename Change>
    void edit(const QString& description, Change change, int mergeKey = -1);
    // Wires a slider and the number box beside it to one value of the spec: the slider's
    // position gives the value through fromSlider (a drag is one undo step), the box the value
    // itself; describe(value) says what the step does, apply(spec, value) sets the value.
    template <typename Box, typename FromSlider, typename Describe, typename Apply>
    void connectSlider(QSlider* slider, Box* box, FromSlider fromSlider, Describe describe,
                       Apply apply);
    void updateEnabled();
    // The control of a parameter (its kind's widget), wired to edit the spec.
    QWidget* parameterControl(const MethodParameter& parameter);

    ExperimentSpec m_spec;
    bool m_updating = false;
    int m_dragSerial = 0;

    QComboBox* m_map;  // the methods, then the second checkpoint
    CheckpointChoice* m_checkpoint;
    QString m_checkedModel;    // the model whose kind m_readsText holds
    bool m_readsText = false;  // the input is a language model's: it can be compared
    int m_modelHeads = 0;      // the heads of m_checkedModel (0: none, or unreadable)
    QSlider* m_featuresSlider;
    QSpinBox* m_features;
    QComboBox* m_projection;
    QComboBox* m_rowNorm;
    QSpinBox* m_seed;
    QDoubleSpinBox* m_scale;
    QSlider* m_normSlider;
    QDoubleSpinBox* m_norm;
    QCheckBox* m_causal;
    QSpinBox* m_heads;
    QComboBox* m_precision;
    QFormLayout* m_form;
    QLabel* m_role;  // what the method is to softmax, and what it lacks
    // For the methods fitted to a model: which maps the spec holds, and Fit to this model.
    QWidget* m_fitted;
    QLabel* m_fittedMaps;
    // The control of every parameter besides m: a check box, choice, or spin box.
    std::vector<std::pair<const MethodParameter*, QWidget*>> m_parameters;
};

}  // namespace attnlab::ui
