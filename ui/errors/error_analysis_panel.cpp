#include "ui/errors/error_analysis_panel.h"

#include "ui/common/controls_column.h"
#include "ui/common/number_text.h"
#include "ui/errors/error_chart.h"
#include "sessions/error_page_state.h"
#include "errors.h"

#include <QCheckBox>
#include <QComboBox>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QScrollArea>
#include <QSpinBox>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>

namespace attnlab::ui {

namespace {

// Chart redraws while rows arrive, at most this often.
constexpr int kRefreshMs = 150;
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
        if (!ok || !std::isfinite(value) || value <= 0 || (integer && value != std::floor(value)))
            throw InputError(
                ErrorAnalysisPanel::tr("Values: \"%1\" is not %2")
                    .arg(item.trimmed(), integer ? ErrorAnalysisPanel::tr("a whole number above 0")
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

// The kind that the data of combo's current item names (as parse reads it); fallback when it
// names none.
template <typename Kind, typename Parse>
Kind chosenKind(const QComboBox* combo, Parse parse, Kind fallback)
{
    parse(combo->currentData().toString(), &fallback);
    return fallback;
}

// Makes the item of combo whose data is name the current one.
void chooseData(QComboBox* combo, const QString& name)
{
    combo->setCurrentIndex(combo->findData(name));
}

}  // namespace

ErrorAnalysisPanel::ErrorAnalysisPanel(QWidget* parent)
    : SweepPage({tr("Compute the sweep on a worker thread; the curves grow as rows finish."),
                 tr("Stop the sweep; the rows finished are kept."), tr("Cancelling..."),
                 tr("Rows computed out of every method, projection, value and seed."),
                 tr("%v of %m rows"),
                 tr("Save the chart as shown (PNG, SVG or PDF) or the rows (CSV, one per "
                    "method, projection, value and seed)."),
                 QStringLiteral("errors"), QStringLiteral("errors")},
                parent)
{
    m_refresh.setSingleShot(true);
    m_refresh.setInterval(kRefreshMs);
    connect(&m_refresh, &QTimer::timeout, this, &ErrorAnalysisPanel::showResult);
    for (const ErrorSweepKind kind : errorSweepKinds())
        m_valuesText[kind] = ErrorPageState::defaultValues(kind);
    buildControls();
    setRunning(false);
    updateInputLabel();
    showResult();
}

QWidget* ErrorAnalysisPanel::buildMethodsBox()
{
    auto* methodsBox = new QGroupBox(tr("Methods"));
    auto* methodsLayout = new QVBoxLayout(methodsBox);
    for (const MethodInfo& info : approximationMethods()) {
        auto* box = new QCheckBox(info.title);
        box->setObjectName(QStringLiteral("errorsMethod-") + info.name);
        m_methodTips[info.method] =
            info.summary + QLatin1Char('\n') +
            (info.isRandom ? tr("Random: each seed draws anew.")
                           : tr("Deterministic: one row per value, whatever the seeds.")) +
            QLatin1Char(' ') + methodRoleText(info.role) + QLatin1Char('.');
        box->setToolTip(m_methodTips[info.method]);
        box->setChecked(info.method == Method::FavorPositive || info.method == Method::FavorTrig);
        methodsLayout->addWidget(box);
        m_methods[info.method] = box;
    }
    const std::map<ProjectionKind, QString> projectionTips{
        {ProjectionKind::Orthogonal, tr("W in blocks of d orthogonal rows (Performer's default): "
                                        "lower variance at m <= d. Solid curves.")},
        {ProjectionKind::Iid,
         tr("W with independent Gaussian rows, as Lemma 2 assumes. Dashed curves.")},
        {ProjectionKind::Simplex, tr("W in blocks of d rows along the vertices of a randomly "
                                     "rotated simplex (SimRFs). Dash-dotted curves.")}};
    auto* projections = new QHBoxLayout;
    for (const ProjectionKind kind : projectionKinds()) {
        auto* box = new QCheckBox(projectionKindName(kind));
        box->setToolTip(projectionTips.at(kind));
        box->setChecked(kind != ProjectionKind::Simplex);
        // Object names: "errorsOrthogonal", "errorsIid", "errorsSimplex".
        const QString name = projectionKindName(kind);
        box->setObjectName(QStringLiteral("errors") + name.front().toUpper() + name.mid(1));
        projections->addWidget(box);
        m_projections[kind] = box;
    }
    projections->addStretch();
    methodsLayout->addLayout(projections);
    return methodsBox;
}

QWidget* ErrorAnalysisPanel::buildSweepBox()
{
    auto* sweepBox = new QGroupBox(tr("Sweep"));
    auto* sweepForm = new QFormLayout(sweepBox);
    m_sweepKind = new QComboBox;
    for (const ErrorSweepKind kind : errorSweepKinds())
        m_sweepKind->addItem(sweepKindText(kind), errorSweepKindName(kind));
    m_sweepKind->setToolTip(tr("What varies: m, the query/key norm multiplier (at one m) or the "
                               "sequence length L (the first L positions, at one m)."));
    m_values = new QLineEdit(m_valuesText[ErrorSweepKind::Features]);
    m_values->setToolTip(tr("The values of the sweep, separated by commas."));
    m_features = sweepSpinBox(1, ErrorPageState::maxFeatures, 64,
                              tr("m at every point of a norm or length sweep (a features sweep "
                                 "takes m from its values)."));
    m_seeds =
        sweepSpinBox(1, ErrorPageState::maxSeeds, 8,
                     tr("Seeds of W per point: curves give the mean over the seeds, bands the "
                        "10th to 90th percentile, kernel MSE bars one standard error."));
    m_pairQuery =
        sweepSpinBox(0, ErrorPageState::maxPairIndex, 0,
                     tr("The query q_a of the pair whose kernel exp(q'_a.k'_b) the kernel "
                        "MSE view estimates."));
    m_pairKey = sweepSpinBox(0, ErrorPageState::maxPairIndex, 1,
                             tr("The key k_b of the pair of the kernel MSE view."));
    sweepForm->addRow(tr("Sweep"), m_sweepKind);
    sweepForm->addRow(tr("Values"), m_values);
    sweepForm->addRow(tr("m"), m_features);
    sweepForm->addRow(tr("Seeds"), m_seeds);
    // A row each: side by side, the two boxes (sized for 2³⁰) held the controls 90 pixels wider
    // than the methods, pixels the chart lacks in a 1280-pixel window.
    sweepForm->addRow(tr("Pair q"), m_pairQuery);
    sweepForm->addRow(tr("Pair k"), m_pairKey);
    connect(m_sweepKind, &QComboBox::currentIndexChanged, this,
            &ErrorAnalysisPanel::sweepKindChanged);
    m_sweepKind->setObjectName(QStringLiteral("errorsSweepKind"));
    m_values->setObjectName(QStringLiteral("errorsValues"));
    m_features->setObjectName(QStringLiteral("errorsFeatures"));
    m_seeds->setObjectName(QStringLiteral("errorsSeeds"));
    m_pairQuery->setObjectName(QStringLiteral("errorsPairQuery"));
    m_pairKey->setObjectName(QStringLiteral("errorsPairKey"));
    return sweepBox;
}

void ErrorAnalysisPanel::buildControls()
{
    QWidget* methodsBox = buildMethodsBox();
    QWidget* sweepBox = buildSweepBox();
    m_metric = new QComboBox;
    for (const ErrorMetric metric : errorMetrics())
        m_metric->addItem(metricText(metric), errorMetricName(metric));
    m_metric->setToolTip(tr("What the chart shows; changing it needs no new run."));
    connect(m_metric, &QComboBox::currentIndexChanged, this, &ErrorAnalysisPanel::showResult);
    m_axis = new QComboBox;
    m_axis->addItem(tr("the swept value"), errorAxisName(ErrorAxis::Value));
    m_axis->addItem(tr("measured time (equal cost)"), errorAxisName(ErrorAxis::Seconds));
    m_axis->addItem(tr("flop count (equal cost)"), errorAxisName(ErrorAxis::Flops));
    m_axis->setToolTip(tr("The chart's x axis: the swept value, or the cost of each point's "
                          "approximate output, measured or counted, so that methods whose work "
                          "per feature differs compare at equal cost, with the Pareto front of "
                          "error against cost. Changing it needs no new run."));
    connect(m_axis, &QComboBox::currentIndexChanged, this, &ErrorAnalysisPanel::showResult);
    auto* metricForm = new QFormLayout;
    metricForm->addRow(tr("Show"), m_metric);
    metricForm->addRow(tr("Against"), m_axis);

    m_inputLabel = new QLabel;
    m_inputLabel->setWordWrap(true);
    m_inputLabel->setToolTip(tr("Sweeps run on the main window's current input."));

    auto* controls = new QWidget;
    auto* controlsLayout = new QVBoxLayout(controls);
    controlsLayout->addWidget(m_inputLabel);
    controlsLayout->addWidget(methodsBox);
    controlsLayout->addWidget(sweepBox);
    controlsLayout->addLayout(metricForm);
    controlsLayout->addWidget(sweepControls());
    controlsLayout->addStretch();
    QScrollArea* scroll = controlsColumn(controls);

    m_chart = new ErrorChart;
    m_chart->setMinimumSize(300, 300);
    setChart(m_chart);
    auto* layout = new QHBoxLayout(this);
    layout->addWidget(scroll);
    layout->addWidget(m_chart, 1);

    // Object names: for tests and accessibility tools.
    m_metric->setObjectName(QStringLiteral("errorsMetric"));
    m_axis->setObjectName(QStringLiteral("errorsAxis"));
    m_inputLabel->setObjectName(QStringLiteral("errorsInput"));
    m_chart->setObjectName(QStringLiteral("errorChart"));
    sweepKindChanged();
}

void ErrorAnalysisPanel::setInput(const ExperimentSpec& spec,
                                  std::shared_ptr<const AttentionInput> input)
{
    m_inputSpec = spec;
    m_input = std::move(input);
    updateInputLabel();
    if (resultOfAnEarlierInput() != m_notedEarlier)
        showResult();  // the chart notes a sweep of an earlier input, or no longer
    // A method without a causal form cannot serve causal attention: greyed out, and left out of
    // the sweep, while the input is causal (its tick is kept for another input).
    for (const MethodInfo& info : approximationMethods()) {
        QCheckBox* box = m_methods.at(info.method);
        const bool serves = info.hasCausalForm || !spec.causal;
        box->setEnabled(serves);
        box->setToolTip(
            m_methodTips.at(info.method) +
            (serves ? QString()
                    : QLatin1Char('\n') + (causalReason(spec.input) == CausalBecause::LanguageModel
                                               ? tr("No causal form: not swept, since a language "
                                                    "model's attention is causal.")
                                               : tr("No causal form: not swept while the causal "
                                                    "mask is on."))));
    }
}

ErrorSweepSpec ErrorAnalysisPanel::spec() const
{
    ErrorSweepSpec sweep;
    sweep.experiment = m_inputSpec;
    for (const MethodInfo& info : approximationMethods())
        if (m_methods.at(info.method)->isChecked() && m_methods.at(info.method)->isEnabled())
            sweep.methods.push_back(info.method);
    sweep.projections.clear();
    for (const ProjectionKind kind : projectionKinds())
        if (m_projections.at(kind)->isChecked())
            sweep.projections.push_back(kind);
    sweep.sweep = chosenKind(m_sweepKind, parseErrorSweepKind, sweep.sweep);
    sweep.values = parseValues(m_values->text(), sweep.sweep);
    sweep.features = m_features->value();
    sweep.seeds = m_seeds->value();
    sweep.pairQuery = m_pairQuery->value();
    sweep.pairKey = m_pairKey->value();
    sweep.budget = m_budget;
    return sweep;
}

ErrorMetric ErrorAnalysisPanel::errorMetric() const
{
    return chosenKind(m_metric, parseErrorMetric, ErrorMetric::RelFrobeniusAttention);
}

void ErrorAnalysisPanel::setErrorMetric(ErrorMetric metric)
{
    chooseData(m_metric, errorMetricName(metric));
}

ErrorAxis ErrorAnalysisPanel::axis() const
{
    return chosenKind(m_axis, parseErrorAxis, ErrorAxis::Value);
}

void ErrorAnalysisPanel::setAxis(ErrorAxis axis)
{
    chooseData(m_axis, errorAxisName(axis));
}

QJsonObject ErrorAnalysisPanel::state() const
{
    ErrorPageState state;
    for (const MethodInfo& info : approximationMethods())
        if (m_methods.at(info.method)->isChecked())
            state.methods.push_back(info.method);
    for (const ProjectionKind kind : projectionKinds())
        if (m_projections.at(kind)->isChecked())
            state.projections.push_back(kind);
    state.sweep = chosenKind(m_sweepKind, parseErrorSweepKind, state.sweep);
    for (const ErrorSweepKind kind : errorSweepKinds())
        state.values[kind] = kind == m_shownKind ? m_values->text() : m_valuesText.value(kind);
    state.features = m_features->value();
    state.seeds = m_seeds->value();
    state.pairQuery = m_pairQuery->value();
    state.pairKey = m_pairKey->value();
    state.metric = errorMetric();
    state.axis = axis();
    state.result = m_result;
    return state.toJson();
}

void ErrorAnalysisPanel::setState(const QJsonObject& json)
{
    // Read everything first, so that a malformed state changes nothing.
    const ErrorPageState state = ErrorPageState::fromJson(json);
    abandonSweep();
    const auto has = [](const auto& list, auto item) {
        return std::find(list.begin(), list.end(), item) != list.end();
    };
    for (const auto& [method, box] : m_methods)
        box->setChecked(has(state.methods, method));
    for (const auto& [kind, box] : m_projections)
        box->setChecked(has(state.projections, kind));
    m_valuesText.clear();
    for (const auto& [kind, text] : state.values)
        m_valuesText[kind] = text;
    m_shownKind = state.sweep;
    {
        const QSignalBlocker blocker(m_sweepKind);
        chooseData(m_sweepKind, errorSweepKindName(state.sweep));
    }
    m_values->setText(m_valuesText.value(state.sweep));
    sweepKindChanged();
    m_features->setValue(state.features);
    m_seeds->setValue(state.seeds);
    m_pairQuery->setValue(state.pairQuery);
    m_pairKey->setValue(state.pairKey);

    m_result = state.result;
    setProgress(int(m_result.rows.size()), int(m_result.rows.size()));
    statusLabel()->setText(m_result.rows.empty()
                               ? QString()
                               : tr("Restored from the session, not computed again: %1 rows.")
                                     .arg(m_result.rows.size()));
    {
        const QSignalBlocker metricBlocker(m_metric);
        const QSignalBlocker axisBlocker(m_axis);
        setErrorMetric(state.metric);
        setAxis(state.axis);
    }
    showResult();
}

QByteArray ErrorAnalysisPanel::csv() const
{
    return errorSweepCsv(m_result);
}

void ErrorAnalysisPanel::run()
{
    if (isRunning())
        return;
    if (!m_input) {
        statusLabel()->setText(tr("No input yet: the sweep runs on the main window's input."));
        return;
    }
    ErrorSweepSpec sweep;
    try {
        sweep = spec();
    } catch (const InputError& e) {
        statusLabel()->setText(e.message());
        return;
    }
    if (sweep.methods.empty()) {
        const bool greyedOnly = std::any_of(m_methods.begin(), m_methods.end(),
                                            [](auto& entry) { return entry.second->isChecked(); });
        statusLabel()->setText(greyedOnly ? tr("The methods ticked have no causal form, and the "
                                               "input is causal: tick one that has.")
                                          : tr("Choose at least one method."));
        return;
    }
    if (sweep.projections.empty()) {
        statusLabel()->setText(tr("Choose at least one projection (orthogonal, iid, simplex)."));
        return;
    }

    m_result = ErrorSweepResult();
    m_result.spec = sweep;
    const int total = sweep.rowCount();
    setProgress(0, total);
    statusLabel()->setText(tr("Computing %1 rows...").arg(total));
    // The worker hands each row to the GUI thread (JobContext::post) and never touches a widget;
    // the rows still queued when the sweep ends are dropped (its result has them all).
    startSweep(
        [this, sweep, input = m_input](JobContext& context) {
            const auto progress = [&](const ErrorSweepResult& sofar, int total) {
                ErrorSweepResult header;
                if (sofar.rows.size() == 1) {  // the fields besides the rows, once
                    header = sofar;
                    header.rows.clear();
                }
                context.post(
                    [this, header, row = sofar.rows.back(), total] { addRow(header, row, total); });
            };
            return runErrorSweep(sweep, *input, progress, context.cancelledCheck());
        },
        [this](ErrorSweepResult result) { finishSweep(std::move(result)); });
    showResult();
}

void ErrorAnalysisPanel::addRow(const ErrorSweepResult& header, const ErrorRow& row, int total)
{
    if (m_result.rows.empty()) {
        m_result = header;
        m_result.rows.clear();
    }
    m_result.rows.push_back(row);
    setProgress(int(m_result.rows.size()), total);
    if (!isCancelling())
        statusLabel()->setText(tr("Computing: %1 of %2 rows (last: %3).")
                                   .arg(m_result.rows.size())
                                   .arg(total)
                                   .arg(curveLabel(row.method, row.projection)));
    if (!m_refresh.isActive())
        m_refresh.start();
}

void ErrorAnalysisPanel::finishSweep(ErrorSweepResult result)
{
    m_refresh.stop();
    m_result = std::move(result);
    const int total = m_result.spec.rowCount();
    setProgress(int(m_result.rows.size()), total);
    statusLabel()->setText(m_result.cancelled ? tr("Cancelled after %1 of %2 rows; they are kept.")
                                                    .arg(m_result.rows.size())
                                                    .arg(total)
                                              : tr("Finished: %1 rows in %2.")
                                                    .arg(m_result.rows.size())
                                                    .arg(durationText(m_clock.elapsed())));
    showResult();
}

void ErrorAnalysisPanel::sweepFailed()
{
    m_refresh.stop();
    m_result.cancelled = true;
    showResult();
}

bool ErrorAnalysisPanel::resultOfAnEarlierInput() const
{
    // What a sweep reads of the window's experiment: the input, s, the mask and the precision.
    const auto key = [](const ExperimentSpec& spec) {
        ExperimentSpec key;
        key.input = spec.input;
        key.scale = spec.scale;
        key.causal = spec.causal;
        key.precision = spec.precision;
        return key.toJson();
    };
    return m_input && !m_result.rows.empty() && key(m_result.spec.experiment) != key(m_inputSpec);
}

void ErrorAnalysisPanel::showResult()
{
    m_notedEarlier = resultOfAnEarlierInput();
    if (m_result.rows.empty())
        m_chart->clear();
    else
        m_chart->setResult(m_result, errorMetric(), axis(),
                           m_notedEarlier
                               ? tr(" \u2014 from an earlier input: Run to sweep the current one")
                               : QString());
    setExportEnabled(!m_result.rows.empty());
}

void ErrorAnalysisPanel::sweepKindChanged()
{
    const ErrorSweepKind kind =
        chosenKind(m_sweepKind, parseErrorSweepKind, ErrorSweepKind::Features);
    if (kind != m_shownKind) {
        m_valuesText[m_shownKind] = m_values->text();
        m_values->setText(m_valuesText.value(kind));
        m_shownKind = kind;
    }
    m_features->setEnabled(kind != ErrorSweepKind::Features);
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

}  // namespace attnlab::ui
