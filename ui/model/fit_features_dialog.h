#pragma once

#include "attention/fitted_feature_maps.h"
#include "memory_budget.h"
#include "ui/common/background_job.h"

#include <QDialog>

#include <memory>

class QComboBox;
class QCustomPlot;
class QLabel;
class QProgressBar;
class QPushButton;
class QSpinBox;

namespace attnlab::ui {

// Fit to this model: Hedgehog's feature maps fitted to the shown model's heads (core/fitting,
// docs/design.md section 2.12) in the window. The dialog chooses what to fit (every layer, the
// shown layer, or the shown head), the training text (the text the built-in models ship,
// resources/texts/kjv-fit.txt, or a file), Adam's steps and the feature count C = 2 d_f; Fit runs
// fitFeatureMaps on a BackgroundJob with a progress bar, Cancel, and the loss curve (the mean row
// KL of the heads' latest batches against the fraction of the steps done). When it finishes, the
// maps are merged with those the session holds for the same model (mergedFeatureMaps) and handed
// over (fitted); the session keeps them. Load Maps... and Save Maps... read and write a
// feature-map file (fit-features' format). A fit that fails (a text too short, a loss that is not
// a number) or is cancelled says so and hands nothing over: what the session holds is untouched.
class FitFeaturesDialog : public QDialog {
    Q_OBJECT

public:
    explicit FitFeaturesDialog(QWidget* parent = nullptr);
    ~FitFeaturesDialog() override;

    // The model the maps are for (as the spec names it: a folder, a .gguf file, builtin), its
    // layer and head on show, the maps the session holds (null: none) and the memory budget.
    void setContext(const QString& modelPath, int layer, int head,
                    std::shared_ptr<const FittedFeatureMaps> current, const MemoryBudget& budget);

    // What to fit: every layer, the shown layer, or the shown head.
    enum class Scope { AllLayers, Layer, Head };
    void setScope(Scope scope);
    void setSteps(int steps);
    // A training text file instead of the shipped one (empty: the shipped one).
    void setTrainingText(const QString& path);

    // Starts the fit (the Fit button); the outcome comes as fitted(), or as a message.
    void fit();
    void cancel();
    bool isFitting() const { return m_job->isRunning(); }
    // The status line: what was fitted and how well, or why not.
    QString status() const;
    // The loss curve's points so far (steps done as a fraction of all, mean KL).
    int curvePoints() const;

signals:
    // New maps for the session (fitted here, merged with its own, or loaded from a file).
    void fitted(std::shared_ptr<const FittedFeatureMaps> maps);

private:
    void build();
    void updateButtons();
    void loadMaps();
    void saveMaps();
    void addCurvePoint(double fraction, double kl);

    BackgroundJob* m_job;
    QString m_modelPath;
    int m_layer = 0;
    int m_head = 0;
    std::shared_ptr<const FittedFeatureMaps> m_current;
    MemoryBudget m_budget;
    QString m_textPath;  // empty: the shipped text

    QComboBox* m_scope;
    QComboBox* m_text;
    QSpinBox* m_steps;
    QSpinBox* m_features;
    QSpinBox* m_window;
    QProgressBar* m_progress;
    QCustomPlot* m_curve;
    QLabel* m_status;
    QPushButton* m_fit;
    QPushButton* m_cancel;
    QPushButton* m_save;
};

// The training text the built-in models ship (resources/texts/kjv-fit.txt, a Qt resource).
QString shippedTrainingText();

}  // namespace attnlab::ui
