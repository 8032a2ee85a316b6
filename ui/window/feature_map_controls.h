#pragma once

#include "attention/fitted_feature_maps.h"

#include <QObject>

#include <memory>

class QMenuBar;

namespace attnlab {
struct ExperimentResult;
}

namespace attnlab::ui {

class FitFeaturesDialog;
class MainWindow;
class MethodsSideBySide;

// The window's feature maps fitted to a model and the comparison of methods: the Model menu's Fit
// Feature Maps to This Model... (also the Method dock's Fit to This Model button), which opens
// FitFeaturesDialog for the spec's model, layer and shown head; and Methods Side by Side..., which
// shows the shown head under several methods at once (MethodsSideBySide, following the window's
// input, head and method parameters: each new result, each other head shown). Maps the dialog
// hands over become the spec's, as one undoable step, with the method switched to hedgehog when
// it was one without them; the session keeps them (saved beside the session file when they have
// no file of their own).
class FeatureMapControls : public QObject {
    Q_OBJECT

public:
    // Adds the Model menu to bar.
    FeatureMapControls(MainWindow& window, QMenuBar* bar);

    // Opens Fit to this model for the spec's model (a language model's input; else a message).
    void openFitDialog();
    void openSideBySide();
    // Made on first use; null before.
    FitFeaturesDialog* fitDialog() const { return m_fit; }
    MethodsSideBySide* sideBySide() const { return m_sideBySide; }

private:
    void applyMaps(std::shared_ptr<const FittedFeatureMaps> maps);
    void updateSideBySide();

    MainWindow& m_window;
    FitFeaturesDialog* m_fit = nullptr;
    MethodsSideBySide* m_sideBySide = nullptr;
    // The result and head the comparison was last handed (the result not kept alive).
    std::weak_ptr<const ExperimentResult> m_sideBySideResult;
    int m_sideBySideHead = -1;
};

}  // namespace attnlab::ui
