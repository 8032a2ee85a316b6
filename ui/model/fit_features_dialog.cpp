#include "ui/model/fit_features_dialog.h"

#include "errors.h"
#include "fitting/feature_map_file.h"
#include "fitting/feature_map_fit.h"
#include "inputs/model_input.h"
#include "ui/plotting/plot_style.h"

#include <QComboBox>
#include <QDialogButtonBox>
#include <QElapsedTimer>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QMessageBox>
#include <QProgressBar>
#include <QPushButton>
#include <QSpinBox>
#include <QStringDecoder>
#include <QVBoxLayout>
#include <qcustomplot.h>

#include <cmath>

namespace attnlab::ui {

namespace {

constexpr int kCurvePoints = 200;  // points of the loss curve over a whole fit, at most

// What a fit reads, copied for the worker.
struct FitRequest {
    QString modelPath;
    QString text;
    FeatureMapFitSpec spec;
    MemoryBudget budget;
};

QString readText(const QString& path)
{
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly))
        throw InputError(
            QStringLiteral("%1: cannot open the text file: %2").arg(path, file.errorString()));
    QStringDecoder decoder(QStringDecoder::Utf8);
    const QString text = decoder.decode(file.readAll());
    if (decoder.hasError())
        throw InputError(QStringLiteral("%1: the text file is not valid UTF-8").arg(path));
    return text;
}

}  // namespace

QString shippedTrainingText()
{
    return QStringLiteral(":/texts/kjv-fit.txt");
}

FitFeaturesDialog::FitFeaturesDialog(QWidget* parent)
    : QDialog(parent), m_job(new BackgroundJob(this))
{
    setWindowTitle(tr("Fit Feature Maps to This Model"));
    build();
    connect(m_job, &BackgroundJob::progressChanged, this, [this](int done, int total) {
        m_progress->setRange(0, total);
        m_progress->setValue(done);
    });
    connect(m_job, &BackgroundJob::failed, this, [this](const QString& message) {
        m_status->setText(tr("Not fitted: %1 The session keeps the maps it had.").arg(message));
    });
    connect(m_job, &BackgroundJob::cancelled, this, [this] {
        m_status->setText(tr("Cancelled: nothing was fitted; the session keeps the maps it had."));
    });
    connect(m_job, &BackgroundJob::runningChanged, this, &FitFeaturesDialog::updateButtons);
    updateButtons();
}

FitFeaturesDialog::~FitFeaturesDialog() = default;

void FitFeaturesDialog::build()
{
    m_scope = new QComboBox;
    m_scope->setObjectName(QStringLiteral("fitScope"));
    m_scope->addItems({tr("every head of every layer"), tr("every head of the shown layer"),
                       tr("the shown head")});
    m_text = new QComboBox;
    m_text->setObjectName(QStringLiteral("fitText"));
    m_text->addItem(tr("KJV training text (shipped; not the evaluation chapters)"));
    m_text->addItem(tr("Choose a file..."));
    connect(m_text, &QComboBox::activated, this, [this](int index) {
        if (index != 1)
            return setTrainingText({});
        const QString path = QFileDialog::getOpenFileName(this, tr("Training text"), QString(),
                                                          tr("Text files (*.txt);;All files (*)"));
        setTrainingText(path);
    });
    const DistillationSettings defaults;
    m_steps = new QSpinBox;
    m_steps->setObjectName(QStringLiteral("fitSteps"));
    m_steps->setRange(1, 100000);
    m_steps->setValue(defaults.steps);
    m_steps->setToolTip(tr("Adam steps per head, each on %1 windows of the text; the step size "
                           "%2 decays by a cosine to a tenth of it.")
                            .arg(defaults.batchWindows)
                            .arg(defaults.learningRate));
    m_features = new QSpinBox;
    m_features->setObjectName(QStringLiteral("fitFeatures"));
    m_features->setRange(0, 8192);
    m_features->setSingleStep(2);
    m_features->setSpecialValueText(tr("2d (W starts at the identity)"));
    m_features->setToolTip(tr("C = 2 d_f features per map: [exp(W x' + b), exp(-(W x' + b))] "
                              "with W of d_f x d."));
    m_window = new QSpinBox;
    m_window->setObjectName(QStringLiteral("fitWindow"));
    m_window->setRange(1, 1 << 20);
    m_window->setValue(32);
    m_window->setToolTip(tr("hedgehog-window: the window w whose weight gamma is fitted."));

    auto* form = new QFormLayout;
    form->addRow(tr("Fit"), m_scope);
    form->addRow(tr("Training text"), m_text);
    form->addRow(tr("Steps"), m_steps);
    form->addRow(tr("Features C"), m_features);
    form->addRow(tr("Window w (gamma)"), m_window);

    m_progress = new QProgressBar;
    m_progress->setObjectName(QStringLiteral("fitProgress"));
    m_progress->setValue(0);
    m_curve = new QCustomPlot;
    paintWithTheWindow(m_curve);
    m_curve->setObjectName(QStringLiteral("fitCurve"));
    m_curve->setMinimumSize(360, 200);
    m_curve->addGraph();
    m_curve->graph(0)->setPen(QPen(QColor::fromRgb(QRgb(methodInfo(Method::Hedgehog).color)), 2));
    m_curve->xAxis->setLabel(tr("fraction of the steps"));
    m_curve->yAxis->setLabel(tr("mean row KL(P || P\u0302), nats"));
    m_curve->yAxis->setScaleType(QCPAxis::stLogarithmic);
    m_curve->yAxis->setTicker(QSharedPointer<QCPAxisTickerLog>(new QCPAxisTickerLog));
    m_curve->xAxis->setRange(0, 1);
    m_curve->yAxis->setRange(0.01, 10);
    m_status = new QLabel(tr("Fits Hedgehog's query and key maps of each head so that linear "
                             "attention's rows match the model's softmax rows."));
    m_status->setObjectName(QStringLiteral("fitStatus"));
    m_status->setWordWrap(true);
    // Room for the longest status (three lines) whatever the dialog's width.
    m_status->setMinimumHeight(4 * m_status->fontMetrics().lineSpacing());
    m_status->setAlignment(Qt::AlignLeft | Qt::AlignTop);

    m_fit = new QPushButton(tr("Fit"));
    m_fit->setObjectName(QStringLiteral("fitButton"));
    m_cancel = new QPushButton(tr("Cancel Fit"));
    m_cancel->setObjectName(QStringLiteral("fitCancel"));
    auto* load = new QPushButton(tr("Load Maps..."));
    m_save = new QPushButton(tr("Save Maps..."));
    m_save->setObjectName(QStringLiteral("fitSave"));
    auto* close = new QDialogButtonBox(QDialogButtonBox::Close);
    connect(m_fit, &QPushButton::clicked, this, &FitFeaturesDialog::fit);
    connect(m_cancel, &QPushButton::clicked, this, &FitFeaturesDialog::cancel);
    connect(load, &QPushButton::clicked, this, &FitFeaturesDialog::loadMaps);
    connect(m_save, &QPushButton::clicked, this, &FitFeaturesDialog::saveMaps);
    connect(close, &QDialogButtonBox::rejected, this, &QDialog::reject);
    auto* buttons = new QHBoxLayout;
    for (QPushButton* button : {m_fit, m_cancel, load, m_save})
        buttons->addWidget(button);
    buttons->addStretch();
    buttons->addWidget(close);

    auto* layout = new QVBoxLayout(this);
    layout->addLayout(form);
    layout->addWidget(m_progress);
    layout->addWidget(m_curve, 1);
    layout->addWidget(m_status);
    layout->addLayout(buttons);
    resize(640, 620);
}

void FitFeaturesDialog::setContext(const QString& modelPath, int layer, int head,
                                   std::shared_ptr<const FittedFeatureMaps> current,
                                   const MemoryBudget& budget)
{
    m_modelPath = modelPath;
    m_layer = layer;
    m_head = head;
    m_current = std::move(current);
    m_budget = budget;
    m_scope->setItemText(1, tr("every head of layer %1").arg(layer));
    m_scope->setItemText(2, tr("layer %1, head %2").arg(layer).arg(head));
    updateButtons();
}

void FitFeaturesDialog::setScope(Scope scope)
{
    m_scope->setCurrentIndex(int(scope));
}

void FitFeaturesDialog::setSteps(int steps)
{
    m_steps->setValue(steps);
}

void FitFeaturesDialog::setTrainingText(const QString& path)
{
    m_textPath = path;
    if (path.isEmpty()) {
        m_text->setCurrentIndex(0);
        return;
    }
    if (m_text->count() > 2)
        m_text->removeItem(2);
    m_text->addItem(QFileInfo(path).fileName());
    m_text->setCurrentIndex(2);
}

void FitFeaturesDialog::fit()
{
    FitRequest request;
    request.modelPath = m_modelPath;
    request.budget = m_budget;
    try {
        request.text = readText(m_textPath.isEmpty() ? shippedTrainingText() : m_textPath);
    } catch (const InputError& error) {
        m_status->setText(tr("Not fitted: %1").arg(error.message()));
        return;
    }
    FeatureMapFitSpec& spec = request.spec;
    spec.distillation.steps = m_steps->value();
    spec.featureDim = m_features->value() / 2;
    spec.window = m_window->value();
    spec.trainingText =
        m_textPath.isEmpty() ? QStringLiteral("kjv-fit.txt") : QFileInfo(m_textPath).fileName();
    const Scope scope = Scope(m_scope->currentIndex());
    if (scope != Scope::AllLayers)
        spec.layers = {m_layer};
    if (scope == Scope::Head)
        spec.heads = {HeadSite{m_layer, m_head}};
    m_curve->graph(0)->data()->clear();
    m_curve->replot();
    m_status->setText(tr("Reading the training text..."));
    m_job->start(
        [this, request](JobContext& context) {
            const std::shared_ptr<const LanguageModel> model =
                loadModel(request.modelPath, request.budget);
            const std::vector<int> ids = model->tokenizer().encode(request.text);
            // A point of the curve every 1/kCurvePoints of the steps, or every 0.2 s.
            qint64 posted = -1;
            QElapsedTimer sincePosted;
            sincePosted.start();
            return fitFeatureMaps(
                *model, ids, request.spec, request.budget,
                [&](const FeatureMapFitProgress& progress) {
                    context.setProgress(int(progress.done), int(progress.total));
                    if (progress.done - posted <
                            std::max<qint64>(1, progress.total / kCurvePoints) &&
                        sincePosted.elapsed() < 200)
                        return;
                    posted = progress.done;
                    sincePosted.restart();
                    const double fraction = double(progress.done) / double(progress.total);
                    const double kl = progress.meanKl;
                    context.post([this, fraction, kl] { addCurvePoint(fraction, kl); });
                },
                context.cancelledCheck());
        },
        [this](const FeatureMapFit& fit) {
            double before = 0, after = 0;
            for (const HeadFitRecord& head : fit.heads) {
                before += head.initialKl / double(fit.heads.size());
                after += head.finalKl / double(fit.heads.size());
            }
            m_current = mergedFeatureMaps(m_current.get(), *fit.maps);
            m_status->setText(tr("%1 fitted on %2 (%3 tokens) in %4 s: mean row KL on the "
                                 "training text %5 \u2192 %6. The session keeps the maps "
                                 "(Save Maps... writes them to a file).")
                                  .arg(fit.heads.size() == 1 ? tr("1 head")
                                                             : tr("%1 heads").arg(fit.heads.size()))
                                  .arg(fit.maps->trainingText)
                                  .arg(fit.tokens)
                                  .arg(fit.seconds, 0, 'f', 1)
                                  .arg(before, 0, 'f', 3)
                                  .arg(after, 0, 'f', 3));
            updateButtons();
            emit fitted(m_current);
        });
    updateButtons();
}

void FitFeaturesDialog::cancel()
{
    m_job->cancel();
}

QString FitFeaturesDialog::status() const
{
    return m_status->text();
}

int FitFeaturesDialog::curvePoints() const
{
    return m_curve->graph(0)->dataCount();
}

void FitFeaturesDialog::addCurvePoint(double fraction, double kl)
{
    if (!(kl > 0) || !std::isfinite(kl))
        return;
    m_curve->graph(0)->addData(fraction, kl);
    bool found = false;
    const QCPRange range = m_curve->graph(0)->data()->valueRange(found);
    if (found)
        m_curve->yAxis->setRange(range.lower / 1.5, range.upper * 1.5);
    m_curve->replot(QCustomPlot::rpQueuedReplot);
}

void FitFeaturesDialog::updateButtons()
{
    const bool running = m_job->isRunning();
    m_fit->setEnabled(!running && !m_modelPath.isEmpty());
    m_cancel->setEnabled(running);
    m_save->setEnabled(!running && m_current != nullptr);
}

void FitFeaturesDialog::loadMaps()
{
    const QString path = QFileDialog::getOpenFileName(this, tr("Load feature maps"), QString(),
                                                      tr("Feature maps (*.safetensors)"));
    if (path.isEmpty())
        return;
    try {
        const QString folder = modelFolder(m_modelPath);
        m_current = readFeatureMapsFor(path, folder, languageModelInfo(folder));
    } catch (const InputError& error) {
        m_status->setText(tr("Not loaded: %1").arg(error.message()));
        return;
    }
    m_status->setText(
        tr("Loaded %1: %2.").arg(QFileInfo(path).fileName(), m_current->description()));
    updateButtons();
    emit fitted(m_current);
}

void FitFeaturesDialog::saveMaps()
{
    if (!m_current)
        return;
    const QString path = QFileDialog::getSaveFileName(
        this, tr("Save feature maps"), m_current->model + QStringLiteral(".safetensors"),
        tr("Feature maps (*.safetensors)"));
    if (path.isEmpty())
        return;
    try {
        writeFeatureMaps(*m_current, path);
    } catch (const OutputError& error) {
        QMessageBox::warning(this, tr("Save feature maps"), error.message());
        return;
    }
    auto saved = std::make_shared<FittedFeatureMaps>(*m_current);
    saved->file = path;
    m_current = saved;
    m_status->setText(tr("Saved %1.").arg(QFileInfo(path).fileName()));
    emit fitted(m_current);
}

}  // namespace attnlab::ui
