#include "ui/experiment/methods_side_by_side.h"

#include "attention/fitted_feature_maps.h"
#include "ui/experiment/attention_figures.h"
#include "ui/plotting/heatmap_view.h"
#include "ui/plotting/plot_style.h"

#include <QCheckBox>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <QScrollArea>
#include <QVBoxLayout>
#include <qcustomplot.h>

#include <algorithm>
#include <cmath>

namespace attnlab::ui {

namespace {

// The methods ticked at first: the ones issue 31's lecture slide compares, those that can run.
bool tickedAtFirst(Method method, const ExperimentSpec& spec)
{
    if (methodInfo(method).needsFittedMaps)
        return spec.approximation.fittedMaps != nullptr;
    return method == Method::FavorPositive || method == Method::Elu;
}

QString number(double value)
{
    return std::isfinite(value) ? QString::number(value, 'g', 3) : QStringLiteral("n/a");
}

// The mean weight on the key of rank r by q.k (r = 1 the largest), exact and each method's, on a
// log axis: a spiky, monotonic head falls steeply; a map that ignores q.k stays flat.
QCustomPlot* rankChart(const std::vector<std::shared_ptr<const ExperimentResult>>& results,
                       int head)
{
    auto* chart = new QCustomPlot;
    paintWithTheWindow(chart);
    chart->setObjectName(QStringLiteral("sideBySideRanks"));
    chart->setMinimumSize(260, 260);
    chart->plotLayout()->insertRow(0);
    chart->plotLayout()->addElement(
        0, 0,
        new QCPTextElement(chart, QObject::tr("Mean weight by rank of q\u00b7k"),
                           QFont(chart->font().family(), 11, QFont::Bold)));
    chart->xAxis->setLabel(QObject::tr("rank of q\u00b7k in the row"));
    chart->yAxis->setLabel(QObject::tr("mean weight"));
    chart->yAxis->setScaleType(QCPAxis::stLogarithmic);
    chart->yAxis->setTicker(QSharedPointer<QCPAxisTickerLog>(new QCPAxisTickerLog));
    chart->legend->setVisible(true);
    chart->legend->setFont(QFont(chart->font().family(), 8));
    const auto addCurve = [chart](const std::vector<double>& curve, const QString& name,
                                  const QPen& pen) {
        QCPGraph* graph = chart->addGraph();
        graph->setName(name);
        graph->setPen(pen);
        for (std::size_t r = 0; r < curve.size(); ++r)
            if (curve[r] > 0)
                graph->addData(double(r + 1), curve[r]);
    };
    const auto headMetrics = [head](const ExperimentResult& result) -> const AttentionMetrics& {
        return result.heads[std::size_t(std::clamp(head, 0, int(result.heads.size()) - 1))].metrics;
    };
    addCurve(headMetrics(*results.front()).properties.rankCurveExact, QObject::tr("exact"),
             QPen(Qt::black, 2));
    for (const auto& result : results)
        addCurve(headMetrics(*result).properties.rankCurveApprox,
                 methodInfo(result->spec.approximation.kind).title,
                 QPen(methodColor(result->spec.approximation.kind), 1.5));
    chart->rescaleAxes();
    return chart;
}

}  // namespace

MethodsSideBySide::MethodsSideBySide(QWidget* parent)
    : QWidget(parent), m_job(new BackgroundJob(this))
{
    setWindowTitle(tr("Methods Side by Side"));
    build();
    connect(m_job, &BackgroundJob::failed, this, [this](const QString& message) {
        m_message->setText(message);
        m_message->show();
    });
}

MethodsSideBySide::~MethodsSideBySide() = default;

void MethodsSideBySide::build()
{
    auto* boxes = new QHBoxLayout;
    boxes->addWidget(new QLabel(tr("Methods:")));
    for (const MethodInfo& info : approximationMethods()) {
        auto* box = new QCheckBox(info.title);
        box->setObjectName(QStringLiteral("sideBySide-") + info.name);
        box->setToolTip(info.summary);
        connect(box, &QCheckBox::toggled, this, &MethodsSideBySide::recompute);
        m_boxes.emplace_back(info.method, box);
    }
    auto* grid = new QGridLayout;
    for (std::size_t i = 0; i < m_boxes.size(); ++i)
        grid->addWidget(m_boxes[i].second, int(i / 5), int(i % 5));
    auto* exportButton = new QPushButton(tr("Export Figure..."));
    exportButton->setObjectName(QStringLiteral("sideBySideExport"));
    connect(exportButton, &QPushButton::clicked, this, &MethodsSideBySide::exportDialog);
    boxes->addLayout(grid, 1);
    boxes->addWidget(exportButton, 0, Qt::AlignTop);

    m_message = new QLabel;
    m_message->setObjectName(QStringLiteral("sideBySideMessage"));
    m_message->setWordWrap(true);
    m_message->setText(tr("Waiting for the window's result: the comparison is of the head on "
                          "show, with its input and parameters."));
    m_figure = new QWidget;
    m_figure->setObjectName(QStringLiteral("sideBySideFigure"));
    m_figure->setAutoFillBackground(true);
    m_figure->setPalette(QPalette(Qt::white));
    m_grid = new QGridLayout(m_figure);
    auto* scroll = new QScrollArea;
    scroll->setWidget(m_figure);
    scroll->setWidgetResizable(true);

    auto* layout = new QVBoxLayout(this);
    layout->addLayout(boxes);
    layout->addWidget(m_message);
    layout->addWidget(scroll, 1);
    resize(1400, 760);
}

void MethodsSideBySide::setExperiment(const ExperimentSpec& spec,
                                      std::shared_ptr<const AttentionInput> input, int head)
{
    const bool first = !m_input;
    m_spec = spec;
    m_spec.exactMethod = false;
    m_input = std::move(input);
    m_head = head;
    for (const auto& [method, box] : m_boxes) {
        const QSignalBlocker blocker(box);
        const MethodInfo& info = methodInfo(method);
        // A method without a causal form cannot serve causal attention: greyed out, saying why,
        // while the attention is causal (its tick is kept for another input).
        const bool serves = info.hasCausalForm || !spec.causal;
        box->setEnabled(serves);
        box->setToolTip(
            info.summary +
            (serves ? QString()
                    : QLatin1Char('\n') + (causalReason(spec.input) == CausalBecause::LanguageModel
                                               ? tr("No causal form: not compared, since a "
                                                    "language model's attention is causal.")
                                               : tr("No causal form: not compared while the "
                                                    "causal mask is on."))));
        if (first)
            box->setChecked(tickedAtFirst(method, spec) && box->isEnabled());
    }
    recompute();
}

void MethodsSideBySide::setMethods(const std::vector<Method>& methods)
{
    for (const auto& [method, box] : m_boxes) {
        const QSignalBlocker blocker(box);
        box->setChecked(std::find(methods.begin(), methods.end(), method) != methods.end());
    }
    recompute();
}

std::vector<Method> MethodsSideBySide::methods() const
{
    std::vector<Method> chosen;
    for (const auto& [method, box] : m_boxes)
        if (box->isChecked() && box->isEnabled())
            chosen.push_back(method);
    return chosen;
}

QString MethodsSideBySide::numbers(int i) const
{
    return i >= 0 && i < int(m_numbers.size()) ? m_numbers[std::size_t(i)]->text() : QString();
}

QString MethodsSideBySide::errorMessage() const
{
    return m_message->isVisible() ? m_message->text() : QString();
}

void MethodsSideBySide::recompute()
{
    if (!m_input)
        return;
    const std::vector<Method> chosen = methods();
    std::vector<ExperimentSpec> specs;
    for (const Method method : chosen) {
        ExperimentSpec spec = m_spec;
        spec.approximation.kind = method;
        specs.push_back(spec);
    }
    m_job->start(
        [specs, input = m_input](JobContext& context) {
            std::vector<std::shared_ptr<const ExperimentResult>> results;
            ComputeOptions options;
            options.kernels = false;
            options.features = false;
            options.cancelled = context.cancelledCheck();
            for (std::size_t i = 0; i < specs.size(); ++i) {
                results.push_back(
                    std::make_shared<const ExperimentResult>(compute(specs[i], *input, options)));
                // Every method has the same exact side.
                options.sameInputAs = results.back();
                context.setProgress(int(i + 1), int(specs.size()));
            }
            return results;
        },
        [this](std::vector<std::shared_ptr<const ExperimentResult>> results) {
            showResults(std::move(results));
        });
}

void MethodsSideBySide::clearColumns()
{
    while (QLayoutItem* item = m_grid->takeAt(0)) {
        delete item->widget();
        delete item;
    }
    m_numbers.clear();
    m_attentionMaps.clear();
    m_errorMaps.clear();
}

void MethodsSideBySide::lineUpMaps() const
{
    lineUpMapTops(m_attentionMaps);
    lineUpMapTops(m_errorMaps);
    std::vector<HeatmapView*> maps = m_attentionMaps;
    maps.insert(maps.end(), m_errorMaps.begin(), m_errorMaps.end());
    labelMapsAlike(maps);
}

void MethodsSideBySide::showResults(std::vector<std::shared_ptr<const ExperimentResult>> results)
{
    clearColumns();
    m_message->hide();
    m_results = std::move(results);
    if (m_results.empty()) {
        m_message->setText(tr("Tick the methods to compare."));
        m_message->show();
        emit shown();
        return;
    }
    ViewSettings settings;
    settings.head = m_head;
    settings.errorKind = ErrorKind::Signed;
    const auto heatmap = [this](const QString& name) {
        auto* view = new HeatmapView;
        view->setObjectName(name);
        view->setMinimumSize(260, 260);
        connect(view, &QCustomPlot::afterReplot, this, &MethodsSideBySide::lineUpMaps,
                Qt::QueuedConnection);
        return view;
    };
    HeatmapView* exact = heatmap(QStringLiteral("sideBySideExact"));
    m_attentionMaps.push_back(exact);
    // Shown at once (a layout shows new children only once the event loop runs), so that an
    // export right after draws them.
    const auto place = [this](QWidget* widget, int row, int column, Qt::Alignment alignment = {}) {
        m_grid->addWidget(widget, row, column, alignment);
        widget->show();
    };
    place(exact, 0, 0);
    place(rankChart(m_results, m_head), 1, 0);
    const RowProperties& exactProperties =
        m_results.front()
            ->heads[std::size_t(std::clamp(m_head, 0, int(m_results.front()->heads.size()) - 1))]
            .metrics.properties;
    auto* exactNumbers =
        new QLabel(tr("entropy H(P) %1 nats").arg(number(exactProperties.entropyExact)));
    place(exactNumbers, 2, 0, Qt::AlignTop);
    for (std::size_t i = 0; i < m_results.size(); ++i) {
        const int column = int(i) + 1;
        HeatmapView* approx = heatmap(QStringLiteral("sideBySideApprox%1").arg(i));
        HeatmapView* error = heatmap(QStringLiteral("sideBySideError%1").arg(i));
        m_attentionMaps.push_back(approx);
        m_errorMaps.push_back(error);
        HeatmapView unused;
        showAttention(i == 0 ? *exact : unused, *approx, *error, m_results[i], settings);
        place(approx, 0, column);
        place(error, 1, column);
        const ExperimentResult& result = *m_results[i];
        const AttentionMetrics& metrics =
            result.heads[std::size_t(std::clamp(m_head, 0, int(result.heads.size()) - 1))].metrics;
        auto* numbers =
            new QLabel(tr("relative error of P %1\nmean row KL %2\nentropy H(P\u0302) %3 (P: %4)\n"
                          "monotonicity %5")
                           .arg(number(metrics.relFrobeniusAttention), number(metrics.meanKl),
                                number(metrics.properties.entropyApprox),
                                number(metrics.properties.entropyExact),
                                number(metrics.properties.monotonicity)));
        numbers->setObjectName(QStringLiteral("sideBySideNumbers%1").arg(i));
        place(numbers, 2, column, Qt::AlignTop);
        m_numbers.push_back(numbers);
    }
    // One error scale: each map's own made an error a third the size look as strong.
    double extent = 0;
    for (const HeatmapView* error : m_errorMaps)
        extent = std::max({extent, -error->dataRange().lower, error->dataRange().upper});
    for (HeatmapView* error : m_errorMaps)
        error->setColorRange(QCPRange(-extent, extent));
    // Equal columns; the maps take the height, the numbers what they need.
    for (int column = 0; column < m_grid->columnCount(); ++column)
        m_grid->setColumnStretch(column, column <= int(m_results.size()) ? 1 : 0);
    m_grid->setRowStretch(0, 1);
    m_grid->setRowStretch(1, 1);
    m_grid->setRowStretch(2, 0);
    emit shown();
}

PaintedFigure MethodsSideBySide::figure() const
{
    QWidget* widget = m_figure;
    // Laid out for the columns shown now (they may have come since the last layout pass).
    widget->layout()->activate();
    if (widget->size().width() < widget->minimumSizeHint().width() ||
        widget->size().height() < widget->minimumSizeHint().height())
        widget->resize(widget->size().expandedTo(widget->minimumSizeHint()));
    for (const std::vector<HeatmapView*>* row : {&m_attentionMaps, &m_errorMaps})
        for (HeatmapView* map : *row)
            map->layOut();
    lineUpMaps();
    return widgetFigure(*widget, tr("Methods side by side"));
}

void MethodsSideBySide::exportFigure(const QString& path, FigureFormat format) const
{
    exportPaintedFigure(path, format, figure());
}

void MethodsSideBySide::exportDialog()
{
    runFigureExportDialog(
        this, tr("Export methods side by side"), QStringLiteral("methods-side-by-side.png"),
        [this](const QString& path, FigureFormat format) { exportFigure(path, format); });
}

}  // namespace attnlab::ui
