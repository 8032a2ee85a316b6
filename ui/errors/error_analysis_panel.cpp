#include "errors/error_analysis_panel.h"

#include "io/atomic_files.h"
#include "controls_column.h"
#include "errors/error_chart.h"
#include "errors.h"

#include <QCheckBox>
#include <QCloseEvent>
#include <QComboBox>
#include <QDir>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QJsonArray>
#include <QLabel>
#include <QLineEdit>
#include <QMenu>
#include <QMessageBox>
#include <QProgressBar>
#include <QPushButton>
#include <QSaveFile>
#include <QScrollArea>
#include <QSpinBox>
#include <QToolButton>
#include <QVBoxLayout>
#include <QtConcurrent/QtConcurrentRun>

#include <algorithm>
#include <atomic>
#include <cmath>

namespace attnlab::ui {

// What the GUI thread and the worker of one sweep share.
struct ErrorSweepJob {
    std::atomic<bool> cancel{false};
    // Written by the worker, read by finishSweep() once the watcher says the worker is done.
    ErrorSweepResult result;
    QString error;
};

namespace {

// Chart redraws while rows arrive, at most this often.
constexpr int kRefreshMs = 150;
constexpr int kMaxSeeds = 100'000;

const ErrorSweepKind kSweepKinds[] = {ErrorSweepKind::Features, ErrorSweepKind::Norm,
                                      ErrorSweepKind::Length};

QString defaultValues(ErrorSweepKind kind)
{
    switch (kind) {
        case ErrorSweepKind::Features: return QStringLiteral("8, 16, 32, 64, 128, 256");
        case ErrorSweepKind::Norm: return QStringLiteral("0.25, 0.5, 0.75, 1, 1.25, 1.5, 2");
        case ErrorSweepKind::Length: return QStringLiteral("8, 16, 32, 64, 128, 256");
    }
    return QString();
}

QString sweepKindText(ErrorSweepKind kind)
{
    switch (kind) {
        case ErrorSweepKind::Features: return ErrorAnalysisPanel::tr("features m");
        case ErrorSweepKind::Norm: return ErrorAnalysisPanel::tr("norm multiplier");
        case ErrorSweepKind::Length: return ErrorAnalysisPanel::tr("length L");
    }
    return QString();
}

QString metricText(ErrorMetric metric)
{
    switch (metric) {
        case ErrorMetric::RelFrobeniusAttention:
            return ErrorAnalysisPanel::tr("Relative Frobenius error of P");
        case ErrorMetric::MeanTotalVariation: return ErrorAnalysisPanel::tr("Mean row TV");
        case ErrorMetric::RelFrobeniusOutput:
            return ErrorAnalysisPanel::tr("Output relative error");
        case ErrorMetric::KernelMse: return ErrorAnalysisPanel::tr("Kernel MSE vs Lemma 2");
    }
    return QString();
}

// The numbers of a values text ("8, 16, 32"), sorted, duplicates dropped. Throws InputError
// naming the control when an item is not a number of the sweep's kind.
std::vector<double> parseValues(const QString& text, ErrorSweepKind kind)
{
    std::vector<double> values;
    for (const QString& item : text.split(QLatin1Char(','), Qt::SkipEmptyParts)) {
        bool ok = false;
        const double value = item.trimmed().toDouble(&ok);
        const bool integer = kind != ErrorSweepKind::Norm;
        if (!ok || !std::isfinite(value) || value <= 0 ||
            (integer && value != std::floor(value)))
            throw InputError(ErrorAnalysisPanel::tr("Values: \"%1\" is not %2")
                                 .arg(item.trimmed(),
                                      integer ? ErrorAnalysisPanel::tr("a whole number above 0")
                                              : ErrorAnalysisPanel::tr("a number above 0")));
        values.push_back(value);
    }
    if (values.empty())
        throw InputError(ErrorAnalysisPanel::tr("Values: enter the values to sweep, separated "
                                                "by commas"));
    std::sort(values.begin(), values.end());
    values.erase(std::unique(values.begin(), values.end()), values.end());
    return values;
}

// The integer `key` of `json` in [minimum, maximum]. Throws InputError naming it.
int boundedInteger(const QJsonObject& json, const char* key, int minimum, int maximum)
{
    const QJsonValue value = json.value(QLatin1String(key));
    const double number = value.toDouble(std::nan(""));
    if (!value.isDouble() || number != std::floor(number) || number < minimum || number > maximum)
        throw InputError(ErrorAnalysisPanel::tr("%1 must be an integer from %2 to %3")
                             .arg(QLatin1String(key))
                             .arg(minimum)
                             .arg(maximum));
    return int(number);
}

// The names of the array `key` of `json`, each accepted by parse. Throws InputError naming it.
template <typename Enum, typename Parser>
std::vector<Enum> namesField(const QJsonObject& json, const char* key, Parser parse)
{
    const QJsonValue value = json.value(QLatin1String(key));
    if (!value.isArray())
        throw InputError(ErrorAnalysisPanel::tr("%1 must be an array").arg(QLatin1String(key)));
    std::vector<Enum> names;
    for (const QJsonValue item : value.toArray()) {
        Enum parsed;
        if (!item.isString() || !parse(item.toString(), &parsed))
            throw InputError(ErrorAnalysisPanel::tr("%1: unknown name \"%2\"")
                                 .arg(QLatin1String(key), item.toVariant().toString()));
        names.push_back(parsed);
    }
    return names;
}

// "12 s", "2 min 5 s".
QString elapsedText(qint64 milliseconds)
{
    const qint64 seconds = (milliseconds + 500) / 1000;
    if (seconds < 60)
        return ErrorAnalysisPanel::tr("%1 s").arg(seconds);
    return ErrorAnalysisPanel::tr("%1 min %2 s").arg(seconds / 60).arg(seconds % 60);
}

QSpinBox* spinBox(int minimum, int maximum, int value, const QString& tip)
{
    auto* box = new QSpinBox;
    box->setRange(minimum, maximum);
    box->setValue(value);
    box->setGroupSeparatorShown(true);
    box->setToolTip(tip);
    return box;
}

}  // namespace

ErrorAnalysisPanel::ErrorAnalysisPanel(QWidget* parent) : QWidget(parent)
{
    m_pool.setMaxThreadCount(1);
    m_refresh.setSingleShot(true);
    m_refresh.setInterval(kRefreshMs);
    connect(&m_refresh, &QTimer::timeout, this, &ErrorAnalysisPanel::showResult);
    connect(&m_watcher, &QFutureWatcher<void>::finished, this, &ErrorAnalysisPanel::finishSweep);
    for (const ErrorSweepKind kind : kSweepKinds)
        m_valuesText[kind] = defaultValues(kind);
    buildControls();
    setRunning(false);
    updateInputLabel();
    showResult();
}

ErrorAnalysisPanel::~ErrorAnalysisPanel()
{
    if (m_job)
        m_job->cancel = true;
    m_watcher.waitForFinished();
}

void ErrorAnalysisPanel::buildControls()
{
    auto* methodsBox = new QGroupBox(tr("Methods"));
    auto* methodsLayout = new QVBoxLayout(methodsBox);
    for (const MethodInfo& info : approximationMethods()) {
        auto* box = new QCheckBox(info.title);
        box->setObjectName(QStringLiteral("errorsMethod-") + info.name);
        box->setToolTip(info.summary + QLatin1Char('\n') +
                        (info.drawsProjection
                             ? tr("Random: each seed draws a new W.")
                             : tr("Deterministic (no W): one row per value, whatever m and the "
                                  "seeds.")));
        box->setChecked(info.method == Method::FavorPositive ||
                        info.method == Method::FavorTrig);
        methodsLayout->addWidget(box);
        m_methods[info.method] = box;
    }
    m_orthogonal = new QCheckBox(tr("orthogonal"));
    m_orthogonal->setToolTip(tr("W in blocks of d orthogonal rows (Performer's default): lower "
                                "variance at m <= d. Solid curves."));
    m_orthogonal->setChecked(true);
    m_iid = new QCheckBox(tr("iid"));
    m_iid->setToolTip(tr("W with independent Gaussian rows, as Lemma 2 assumes. Dashed curves."));
    m_iid->setChecked(true);
    auto* projections = new QHBoxLayout;
    projections->addWidget(m_orthogonal);
    projections->addWidget(m_iid);
    projections->addStretch();
    methodsLayout->addLayout(projections);

    auto* sweepBox = new QGroupBox(tr("Sweep"));
    auto* sweepForm = new QFormLayout(sweepBox);
    m_sweepKind = new QComboBox;
    for (const ErrorSweepKind kind : kSweepKinds)
        m_sweepKind->addItem(sweepKindText(kind), errorSweepKindName(kind));
    m_sweepKind->setToolTip(tr("What varies: m, the query/key norm multiplier (at one m) or the "
                               "sequence length L (the first L positions, at one m)."));
    m_values = new QLineEdit(m_valuesText[ErrorSweepKind::Features]);
    m_values->setToolTip(tr("The values of the sweep, separated by commas."));
    m_features = spinBox(1, 65536, 64,
                         tr("m at every point of a norm or length sweep (a features sweep "
                            "takes m from its values)."));
    m_seeds = spinBox(1, kMaxSeeds, 8,
                      tr("Seeds of W per point: curves give the mean over the seeds, bands the "
                         "10th to 90th percentile, kernel MSE bars one standard error."));
    m_pairQuery = spinBox(0, 1 << 30, 0,
                          tr("The query q_a of the pair whose kernel exp(q'_a.k'_b) the kernel "
                             "MSE view estimates."));
    m_pairKey = spinBox(0, 1 << 30, 1, tr("The key k_b of the pair of the kernel MSE view."));
    auto* pair = new QHBoxLayout;
    pair->addWidget(m_pairQuery);
    pair->addWidget(m_pairKey);
    sweepForm->addRow(tr("Sweep"), m_sweepKind);
    sweepForm->addRow(tr("Values"), m_values);
    sweepForm->addRow(tr("m"), m_features);
    sweepForm->addRow(tr("Seeds"), m_seeds);
    sweepForm->addRow(tr("Pair (q, k)"), pair);
    connect(m_sweepKind, &QComboBox::currentIndexChanged, this,
            &ErrorAnalysisPanel::sweepKindChanged);

    m_metric = new QComboBox;
    for (const ErrorMetric metric : errorMetrics())
        m_metric->addItem(metricText(metric), errorMetricName(metric));
    m_metric->setToolTip(tr("What the chart shows; changing it needs no new run."));
    connect(m_metric, &QComboBox::currentIndexChanged, this, &ErrorAnalysisPanel::showResult);
    auto* metricForm = new QFormLayout;
    metricForm->addRow(tr("Show"), m_metric);

    m_inputLabel = new QLabel;
    m_inputLabel->setWordWrap(true);
    m_inputLabel->setToolTip(tr("Sweeps run on the main window's current input."));

    m_runButton = new QPushButton(tr("Run"));
    m_runButton->setToolTip(tr("Compute the sweep on a worker thread; the curves grow as rows "
                               "finish."));
    m_cancelButton = new QPushButton(tr("Cancel"));
    m_cancelButton->setToolTip(tr("Stop the sweep; the rows finished are kept."));
    connect(m_runButton, &QPushButton::clicked, this, &ErrorAnalysisPanel::run);
    connect(m_cancelButton, &QPushButton::clicked, this, &ErrorAnalysisPanel::cancel);
    auto* buttons = new QHBoxLayout;
    buttons->addWidget(m_runButton);
    buttons->addWidget(m_cancelButton);

    m_progress = new QProgressBar;
    m_progress->setToolTip(tr("Rows computed out of every method, projection, value and seed."));
    m_progress->setFormat(tr("%v of %m rows"));
    m_status = new QLabel;
    m_status->setWordWrap(true);
    m_status->setTextInteractionFlags(Qt::TextSelectableByMouse);

    m_exportButton = new QToolButton;
    m_exportButton->setText(tr("Export"));
    m_exportButton->setToolTip(tr("Save the chart as shown (PNG, SVG or PDF) or the rows (CSV, "
                                  "one per method, projection, value and seed)."));
    m_exportButton->setPopupMode(QToolButton::InstantPopup);
    auto* exportMenu = new QMenu(m_exportButton);
    for (const FigureFormat format : {FigureFormat::Png, FigureFormat::Svg, FigureFormat::Pdf})
        exportMenu->addAction(tr("Chart as %1...").arg(figureFormatName(format).toUpper()), this,
                              [this, format] { exportChartDialog(format); });
    exportMenu->addSeparator();
    exportMenu->addAction(tr("Data as CSV..."), this, &ErrorAnalysisPanel::exportCsvDialog);
    m_exportButton->setMenu(exportMenu);

    auto* controls = new QWidget;
    auto* controlsLayout = new QVBoxLayout(controls);
    controlsLayout->addWidget(m_inputLabel);
    controlsLayout->addWidget(methodsBox);
    controlsLayout->addWidget(sweepBox);
    controlsLayout->addLayout(metricForm);
    controlsLayout->addLayout(buttons);
    controlsLayout->addWidget(m_progress);
    controlsLayout->addWidget(m_status);
    controlsLayout->addWidget(m_exportButton, 0, Qt::AlignLeft);
    controlsLayout->addStretch();
    QScrollArea* scroll = controlsColumn(controls);

    m_chart = new ErrorChart;
    m_chart->setMinimumSize(300, 300);
    auto* layout = new QHBoxLayout(this);
    layout->addWidget(scroll);
    layout->addWidget(m_chart, 1);

    // Object names: for tests and accessibility tools.
    m_orthogonal->setObjectName(QStringLiteral("errorsOrthogonal"));
    m_iid->setObjectName(QStringLiteral("errorsIid"));
    m_sweepKind->setObjectName(QStringLiteral("errorsSweepKind"));
    m_values->setObjectName(QStringLiteral("errorsValues"));
    m_features->setObjectName(QStringLiteral("errorsFeatures"));
    m_seeds->setObjectName(QStringLiteral("errorsSeeds"));
    m_pairQuery->setObjectName(QStringLiteral("errorsPairQuery"));
    m_pairKey->setObjectName(QStringLiteral("errorsPairKey"));
    m_metric->setObjectName(QStringLiteral("errorsMetric"));
    m_inputLabel->setObjectName(QStringLiteral("errorsInput"));
    m_runButton->setObjectName(QStringLiteral("errorsRun"));
    m_cancelButton->setObjectName(QStringLiteral("errorsCancel"));
    m_exportButton->setObjectName(QStringLiteral("errorsExport"));
    m_progress->setObjectName(QStringLiteral("errorsProgress"));
    m_status->setObjectName(QStringLiteral("errorsStatus"));
    m_chart->setObjectName(QStringLiteral("errorChart"));
    sweepKindChanged();
}

void ErrorAnalysisPanel::setInput(const ExperimentSpec& spec,
                                  std::shared_ptr<const AttentionInput> input)
{
    m_inputSpec = spec;
    m_input = std::move(input);
    updateInputLabel();
}

ErrorSweepSpec ErrorAnalysisPanel::spec() const
{
    ErrorSweepSpec sweep;
    sweep.experiment = m_inputSpec;
    for (const MethodInfo& info : approximationMethods())
        if (m_methods.at(info.method)->isChecked())
            sweep.methods.push_back(info.method);
    sweep.projections.clear();
    if (m_orthogonal->isChecked())
        sweep.projections.push_back(ProjectionKind::Orthogonal);
    if (m_iid->isChecked())
        sweep.projections.push_back(ProjectionKind::Iid);
    parseErrorSweepKind(m_sweepKind->currentData().toString(), &sweep.sweep);
    sweep.values = parseValues(m_values->text(), sweep.sweep);
    sweep.features = m_features->value();
    sweep.seeds = m_seeds->value();
    sweep.pairQuery = m_pairQuery->value();
    sweep.pairKey = m_pairKey->value();
    sweep.budget = m_budget;
    return sweep;
}

ErrorMetric ErrorAnalysisPanel::metric() const
{
    ErrorMetric metric = ErrorMetric::RelFrobeniusAttention;
    parseErrorMetric(m_metric->currentData().toString(), &metric);
    return metric;
}

void ErrorAnalysisPanel::setMetric(ErrorMetric metric)
{
    m_metric->setCurrentIndex(m_metric->findData(errorMetricName(metric)));
}

QJsonObject ErrorAnalysisPanel::state() const
{
    QJsonArray methods;
    for (const MethodInfo& info : approximationMethods())
        if (m_methods.at(info.method)->isChecked())
            methods.append(info.name);
    QJsonArray projections;
    if (m_orthogonal->isChecked())
        projections.append(projectionKindName(ProjectionKind::Orthogonal));
    if (m_iid->isChecked())
        projections.append(projectionKindName(ProjectionKind::Iid));
    QJsonObject values;
    for (const ErrorSweepKind kind : kSweepKinds)
        values[errorSweepKindName(kind)] =
            kind == m_shownKind ? m_values->text() : m_valuesText.value(kind);
    QJsonObject state;
    state[QLatin1String("methods")] = methods;
    state[QLatin1String("projections")] = projections;
    state[QLatin1String("sweep")] = m_sweepKind->currentData().toString();
    state[QLatin1String("values")] = values;
    state[QLatin1String("features")] = m_features->value();
    state[QLatin1String("seeds")] = m_seeds->value();
    state[QLatin1String("pair_query")] = m_pairQuery->value();
    state[QLatin1String("pair_key")] = m_pairKey->value();
    state[QLatin1String("metric")] = errorMetricName(metric());
    if (!m_result.rows.empty())
        state[QLatin1String("result")] = m_result.toJson();
    return state;
}

QJsonObject ErrorAnalysisPanel::stateOf(const ErrorSweepResult& result, ErrorMetric metric)
{
    const ErrorSweepSpec& spec = result.spec;
    QJsonArray methods;
    for (const Method method : spec.methods)
        methods.append(methodInfo(method).name);
    QJsonArray projections;
    for (const ProjectionKind projection : spec.projections)
        projections.append(projectionKindName(projection));
    QStringList swept;
    for (const double value : spec.values)
        swept.append(QString::number(value, 'g', 6));
    QJsonObject values;
    for (const ErrorSweepKind kind : kSweepKinds)
        values[errorSweepKindName(kind)] =
            kind == spec.sweep ? swept.join(QStringLiteral(", ")) : defaultValues(kind);
    QJsonObject state;
    state[QLatin1String("methods")] = methods;
    state[QLatin1String("projections")] = projections;
    state[QLatin1String("sweep")] = errorSweepKindName(spec.sweep);
    state[QLatin1String("values")] = values;
    state[QLatin1String("features")] = spec.features;
    state[QLatin1String("seeds")] = spec.seeds;
    state[QLatin1String("pair_query")] = spec.pairQuery;
    state[QLatin1String("pair_key")] = spec.pairKey;
    state[QLatin1String("metric")] = errorMetricName(metric);
    if (!result.rows.empty())
        state[QLatin1String("result")] = result.toJson();
    return state;
}

void ErrorAnalysisPanel::setState(const QJsonObject& state)
{
    // Read everything first, so that a malformed state changes nothing.
    const std::vector<Method> methods =
        namesField<Method>(state, "methods", parseApproximation);
    const std::vector<ProjectionKind> projections =
        namesField<ProjectionKind>(state, "projections", parseProjectionKind);
    ErrorSweepKind kind;
    if (!parseErrorSweepKind(state.value(QLatin1String("sweep")).toString(), &kind))
        throw InputError(tr("sweep must be features, norm or length"));
    ErrorMetric shown;
    if (!parseErrorMetric(state.value(QLatin1String("metric")).toString(), &shown))
        throw InputError(tr("metric: unknown metric"));
    const QJsonValue valuesValue = state.value(QLatin1String("values"));
    if (!valuesValue.isObject())
        throw InputError(tr("values must be an object"));
    QMap<ErrorSweepKind, QString> valuesText;
    for (const ErrorSweepKind each : kSweepKinds) {
        const QJsonValue text = valuesValue.toObject().value(errorSweepKindName(each));
        if (!text.isString())
            throw InputError(tr("values.%1 must be a string").arg(errorSweepKindName(each)));
        valuesText[each] = text.toString();
    }
    const int features = boundedInteger(state, "features", 1, m_features->maximum());
    const int seeds = boundedInteger(state, "seeds", 1, kMaxSeeds);
    const int pairQuery = boundedInteger(state, "pair_query", 0, m_pairQuery->maximum());
    const int pairKey = boundedInteger(state, "pair_key", 0, m_pairKey->maximum());
    ErrorSweepResult result;
    if (state.contains(QLatin1String("result"))) {
        if (!state.value(QLatin1String("result")).isObject())
            throw InputError(tr("result must be an object"));
        try {
            result = ErrorSweepResult::fromJson(state.value(QLatin1String("result")).toObject());
        } catch (const InputError& e) {
            throw InputError(QStringLiteral("result.") + e.message());
        }
    }

    stopAndWait();
    for (const auto& [method, box] : m_methods)
        box->setChecked(std::find(methods.begin(), methods.end(), method) != methods.end());
    m_orthogonal->setChecked(std::find(projections.begin(), projections.end(),
                                       ProjectionKind::Orthogonal) != projections.end());
    m_iid->setChecked(std::find(projections.begin(), projections.end(), ProjectionKind::Iid) !=
                      projections.end());
    m_valuesText = valuesText;
    m_shownKind = kind;
    {
        const QSignalBlocker blocker(m_sweepKind);
        m_sweepKind->setCurrentIndex(m_sweepKind->findData(errorSweepKindName(kind)));
    }
    m_values->setText(m_valuesText.value(kind));
    sweepKindChanged();
    m_features->setValue(features);
    m_seeds->setValue(seeds);
    m_pairQuery->setValue(pairQuery);
    m_pairKey->setValue(pairKey);

    ++m_serial;
    m_result = result;
    m_progress->setRange(0, std::max(1, int(m_result.rows.size())));
    m_progress->setValue(int(m_result.rows.size()));
    m_status->setText(m_result.rows.empty()
                          ? QString()
                          : tr("Restored from the session, not computed again: %1 rows.")
                                .arg(m_result.rows.size()));
    {
        const QSignalBlocker blocker(m_metric);
        setMetric(shown);
    }
    showResult();
}

void ErrorAnalysisPanel::exportChart(const QString& path, FigureFormat format)
{
    exportFigure(*m_chart, path, format);
}

void ErrorAnalysisPanel::exportCsv(const QString& path) const
{
    QSaveFile file(path);
    if (!file.open(QIODevice::WriteOnly))
        throw OutputError(
            tr("Cannot write %1: %2").arg(QDir::toNativeSeparators(path), file.errorString()));
    writeAll(file, errorSweepCsv(m_result));
    if (!file.commit())
        throw OutputError(
            tr("Cannot write %1: %2").arg(QDir::toNativeSeparators(path), file.errorString()));
}

QString ErrorAnalysisPanel::statusText() const
{
    return m_status->text();
}

void ErrorAnalysisPanel::run()
{
    if (m_running)
        return;
    if (!m_input) {
        m_status->setText(tr("No input yet: the sweep runs on the main window's input."));
        return;
    }
    ErrorSweepSpec sweep;
    try {
        sweep = spec();
    } catch (const InputError& e) {
        m_status->setText(e.message());
        return;
    }
    if (sweep.methods.empty()) {
        m_status->setText(tr("Choose at least one method."));
        return;
    }
    if (sweep.projections.empty()) {
        m_status->setText(tr("Choose at least one projection (orthogonal, iid)."));
        return;
    }

    const int serial = ++m_serial;
    m_result = ErrorSweepResult();
    m_result.spec = sweep;
    const int total = sweep.rowCount();
    m_progress->setRange(0, total);
    m_progress->setValue(0);
    m_status->setText(tr("Computing %1 rows...").arg(total));
    m_job = std::make_shared<ErrorSweepJob>();
    m_clock.start();
    // The worker hands each row to the GUI thread through a queued call; it never touches a
    // widget. The destructor waits for it, and calls still queued die with the panel.
    m_watcher.setFuture(QtConcurrent::run(
        &m_pool, [this, serial, sweep, input = m_input, job = m_job] {
            const auto progress = [&](const ErrorSweepResult& sofar, int total) {
                ErrorSweepResult header;
                if (sofar.rows.size() == 1) {  // the fields besides the rows, once
                    header = sofar;
                    header.rows.clear();
                }
                QMetaObject::invokeMethod(
                    this,
                    [this, serial, header, row = sofar.rows.back(), total] {
                        addRow(serial, header, row, total);
                    },
                    Qt::QueuedConnection);
            };
            try {
                job->result = runErrorSweep(sweep, *input, progress, [&] { return job->cancel.load(); });
            } catch (const InputError& e) {
                job->error = e.message();
            } catch (const ResourceError& e) {
                job->error = e.message();
            } catch (const std::bad_alloc&) {
                job->error = tr("Out of memory: lower the memory budget, so that sweeps this "
                                "large are refused before they are allocated.");
            } catch (const std::exception& e) {
                job->error = QString::fromLocal8Bit(e.what());
            }
        }));
    setRunning(true);
    showResult();
}

void ErrorAnalysisPanel::cancel()
{
    if (!m_running)
        return;
    m_job->cancel = true;
    m_status->setText(tr("Cancelling..."));
}

void ErrorAnalysisPanel::closeEvent(QCloseEvent* event)
{
    stopAndWait();
    QWidget::closeEvent(event);
}

void ErrorAnalysisPanel::addRow(int serial, const ErrorSweepResult& header, const ErrorRow& row,
                                int total)
{
    if (serial != m_serial || !m_running)
        return;
    if (m_result.rows.empty()) {
        m_result = header;
        m_result.rows.clear();
    }
    m_result.rows.push_back(row);
    m_progress->setRange(0, total);
    m_progress->setValue(int(m_result.rows.size()));
    if (!m_job->cancel)
        m_status->setText(tr("Computing: %1 of %2 rows (last: %3).")
                              .arg(m_result.rows.size())
                              .arg(total)
                              .arg(row.curveLabel()));
    if (!m_refresh.isActive())
        m_refresh.start();
}

void ErrorAnalysisPanel::finishSweep()
{
    // Also called by stopAndWait, before the watcher's signal arrives.
    if (!m_running || !m_watcher.isFinished())
        return;
    const std::shared_ptr<ErrorSweepJob> job = m_job;
    ++m_serial;  // drops rows still queued: the worker's result has them all
    m_refresh.stop();
    if (job->error.isEmpty()) {
        m_result = job->result;
        const int total = m_result.spec.rowCount();
        m_progress->setRange(0, std::max(1, total));
        m_progress->setValue(int(m_result.rows.size()));
        m_status->setText(m_result.cancelled
                              ? tr("Cancelled after %1 of %2 rows; they are kept.")
                                    .arg(m_result.rows.size())
                                    .arg(total)
                              : tr("Finished: %1 rows in %2.")
                                    .arg(m_result.rows.size())
                                    .arg(elapsedText(m_clock.elapsed())));
    } else {
        m_result.cancelled = true;
        m_status->setText(tr("The sweep failed: %1").arg(job->error));
    }
    showResult();
    setRunning(false);
    emit sweepFinished();
}

void ErrorAnalysisPanel::stopAndWait()
{
    if (!m_running)
        return;
    m_job->cancel = true;
    m_watcher.waitForFinished();
    finishSweep();
}

void ErrorAnalysisPanel::showResult()
{
    if (m_result.rows.empty())
        m_chart->clear();
    else
        m_chart->setResult(m_result, metric());
    m_exportButton->setEnabled(!m_result.rows.empty());
}

void ErrorAnalysisPanel::sweepKindChanged()
{
    ErrorSweepKind kind = ErrorSweepKind::Features;
    parseErrorSweepKind(m_sweepKind->currentData().toString(), &kind);
    if (kind != m_shownKind) {
        m_valuesText[m_shownKind] = m_values->text();
        m_values->setText(m_valuesText.value(kind));
        m_shownKind = kind;
    }
    m_features->setEnabled(kind != ErrorSweepKind::Features);
}

void ErrorAnalysisPanel::setRunning(bool running)
{
    const bool changed = running != m_running;
    m_running = running;
    m_runButton->setEnabled(!running);
    m_cancelButton->setEnabled(running);
    if (changed)
        emit runningChanged(running);
}

void ErrorAnalysisPanel::updateInputLabel()
{
    if (!m_input || m_input->heads.empty()) {
        m_inputLabel->setText(tr("No input yet: sweeps run on the main window's input."));
        return;
    }
    const InputSpec& input = m_inputSpec.input;
    m_inputLabel->setText(tr("Input: %1, L = %2, d = %3%4, norm multiplier %5%6.")
                              .arg(inputKindName(input.kind))
                              .arg(m_input->length())
                              .arg(m_input->headDim())
                              .arg(m_input->heads.size() > 1
                                       ? tr(", %1 heads").arg(m_input->heads.size())
                                       : QString())
                              .arg(input.normMultiplier)
                              .arg(m_inputSpec.causal ? tr(", causal") : QString()));
}

void ErrorAnalysisPanel::exportChartDialog(FigureFormat format)
{
    const QString path =
        askSavePath(this, tr("Export chart"), QStringLiteral("errors"), figureFormatName(format));
    if (path.isEmpty())
        return;
    try {
        exportChart(path, format);
    } catch (const OutputError& e) {
        QMessageBox::warning(this, tr("Export chart"), e.message());
    }
}

void ErrorAnalysisPanel::exportCsvDialog()
{
    const QString path =
        askSavePath(this, tr("Export data"), QStringLiteral("errors"), QStringLiteral("csv"));
    if (path.isEmpty())
        return;
    try {
        exportCsv(path);
    } catch (const OutputError& e) {
        QMessageBox::warning(this, tr("Export data"), e.message());
    }
}

}  // namespace attnlab::ui
