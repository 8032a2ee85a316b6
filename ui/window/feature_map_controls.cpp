#include "ui/window/feature_map_controls.h"

#include "inputs/model_input.h"
#include "ui/experiment/experiment_controller.h"
#include "ui/experiment/methods_side_by_side.h"
#include "ui/model/fit_features_dialog.h"
#include "ui/window/main_window.h"

#include <QMenu>
#include <QMenuBar>
#include <QMessageBox>

namespace attnlab::ui {

FeatureMapControls::FeatureMapControls(MainWindow& window, QMenuBar* bar)
    : QObject(&window), m_window(window)
{
    QMenu* model = bar->addMenu(tr("&Model"));
    QAction* fit = model->addAction(tr("&Fit Feature Maps to This Model..."), this,
                                    &FeatureMapControls::openFitDialog);
    fit->setObjectName(QStringLiteral("fitFeatureMapsAction"));
    fit->setToolTip(tr("Hedgehog: fit a query map and a key map to each head so that linear "
                       "attention mimics the model's softmax"));
    QAction* side =
        model->addAction(tr("Methods &Side by Side..."), this, &FeatureMapControls::openSideBySide);
    side->setObjectName(QStringLiteral("sideBySideAction"));
    connect(&window.controller(), &ExperimentController::resultReady, this,
            &FeatureMapControls::updateSideBySide);
    connect(&window, &MainWindow::viewChanged, this, &FeatureMapControls::updateSideBySide);
}

void FeatureMapControls::openFitDialog()
{
    const ExperimentSpec& spec = m_window.controller().spec();
    if (spec.input.kind != InputKind::Model ||
        modelArchitectureOf(spec.input.modelPath) == ModelArchitecture::Vit) {
        QMessageBox::information(&m_window, tr("Fit feature maps"),
                                 tr("Feature maps are fitted to a language model's heads: read "
                                    "the text with a model first (Input dock, Read by)."));
        return;
    }
    if (!m_fit) {
        m_fit = new FitFeaturesDialog(&m_window);
        connect(m_fit, &FitFeaturesDialog::fitted, this, &FeatureMapControls::applyMaps);
    }
    m_fit->setContext(spec.input.modelPath, spec.input.layer, m_window.viewSettings().head,
                      spec.approximation.fittedMaps, m_window.memoryBudget());
    m_fit->show();
    m_fit->raise();
}

void FeatureMapControls::applyMaps(std::shared_ptr<const FittedFeatureMaps> maps)
{
    ExperimentSpec spec = m_window.controller().spec();
    spec.approximation.fittedMaps = maps;
    spec.featureMapFile = maps ? maps->file : QString();
    if (!methodInfo(spec.approximation.kind).needsFittedMaps) {
        spec.exactMethod = false;
        spec.approximation.kind = Method::Hedgehog;
    }
    m_window.setSpec(spec, tr("Fit feature maps"));
}

void FeatureMapControls::openSideBySide()
{
    if (!m_sideBySide) {
        m_sideBySide = new MethodsSideBySide(&m_window);
        m_sideBySide->setWindowFlag(Qt::Window);
    }
    // Shown first: updateSideBySide serves only a visible comparison.
    m_sideBySide->show();
    m_sideBySide->raise();
    updateSideBySide();
}

void FeatureMapControls::updateSideBySide()
{
    const Computation& current = m_window.controller().current();
    if (!m_sideBySide || !m_sideBySide->isVisible() || !current.result || !current.input)
        return;
    // Another error kind or colour map of the same head computes nothing again.
    const int head = m_window.viewSettings().head;
    if (m_sideBySideResult.lock() == current.result && m_sideBySideHead == head)
        return;
    m_sideBySideResult = current.result;
    m_sideBySideHead = head;
    m_sideBySide->setExperiment(current.result->spec, current.input, head);
}

}  // namespace attnlab::ui
