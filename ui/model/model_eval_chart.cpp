#include "ui/model/model_eval_chart.h"

#include "ui/plotting/log_ticker.h"
#include "ui/plotting/plot_style.h"

#include <algorithm>
#include <cmath>
#include <map>

namespace attnlab::ui {

namespace {

// The KL axis floor: a KL of 0 (the exact method, or an approximation that changed nothing) is
// drawn here instead of falling off a log axis.
constexpr double kKlFloor = 1e-6;

// The row of a second checkpoint of the model (model-eval --compare-model, the Inside the model
// page with a second checkpoint): every layer of the model against the first's.
const QLatin1String kCheckpointRow("checkpoint");

QColor methodColor(const QString& method)
{
    Method kind;
    if (parseApproximation(method, &kind))
        return ui::methodColor(kind);
    return method == kCheckpointRow ? QColor(118, 42, 131) : QColor(110, 110, 110);
}

QString methodTitle(const QString& method)
{
    Method kind;
    if (parseApproximation(method, &kind))
        return methodInfo(kind).title;
    return method == QLatin1String("exact") ? ModelEvalChart::tr("exact (no approximation)")
                                            : method;
}

QString layersTitle(const QString& layers)
{
    return layers == QLatin1String("all") ? ModelEvalChart::tr("all layers")
                                          : ModelEvalChart::tr("layer %1").arg(layers);
}

// The x position of a layer set on the Layer axis: single layers at their number, "all" (and
// sets of several) after the last.
double layerPosition(const QString& layers, int lastLayer)
{
    bool ok = false;
    const int layer = layers.toInt(&ok);
    return ok ? double(layer) : double(lastLayer + 1);
}

struct Point {
    double x;
    double agreementMean = 0, agreementMin = 1e300, agreementMax = -1e300;
    double klMean = 0, klMin = 1e300, klMax = -1e300;
    int seeds = 0;
};

void addTo(Point& point, const ModelEvalRow& row)
{
    const double agreement = 100.0 * row.top1Agreement;
    const double kl = std::isfinite(row.meanKl) ? std::max(row.meanKl, kKlFloor) : 1e3;
    point.agreementMean += agreement;
    point.agreementMin = std::min(point.agreementMin, agreement);
    point.agreementMax = std::max(point.agreementMax, agreement);
    point.klMean += kl;
    point.klMin = std::min(point.klMin, kl);
    point.klMax = std::max(point.klMax, kl);
    ++point.seeds;
}

using Lines = std::map<std::pair<QString, QString>, std::map<double, Point>>;

// A graph with error bars (min to max over the seeds) in each of the two rects per line: one per
// (method, layers) against m, or per (method, m) against the layer. The agreement graphs are
// appended to *keyed, for the legend.
void addLines(QCPAxisRect* agreement, QCPAxisRect* klRect, const Lines& lines, ModelEvalAxis axis,
              int lastLayer, std::vector<QCPAbstractPlottable*>* keyed)
{
    const QVector<Qt::PenStyle> styles = {Qt::SolidLine, Qt::DashLine, Qt::DotLine,
                                          Qt::DashDotLine};
    const QVector<QCPScatterStyle::ScatterShape> shapes = {
        QCPScatterStyle::ssDisc, QCPScatterStyle::ssSquare, QCPScatterStyle::ssTriangle,
        QCPScatterStyle::ssDiamond, QCPScatterStyle::ssCross};
    std::map<QString, int> styleOfMethod;
    for (const auto& [key, points] : lines) {
        const int variant = styleOfMethod[key.first]++;
        const QColor color = methodColor(key.first);
        const QString name =
            axis == ModelEvalAxis::Features
                ? ModelEvalChart::tr("%1, %2").arg(methodTitle(key.first), layersTitle(key.second))
                : ModelEvalChart::tr("%1, m = %2").arg(methodTitle(key.first), key.second);
        for (QCPAxisRect* rect : {agreement, klRect}) {
            const bool kl = rect == klRect;
            auto* graph = new QCPGraph(rect->axis(QCPAxis::atBottom), rect->axis(QCPAxis::atLeft));
            QPen pen(color, 2.2, styles[variant % styles.size()]);
            graph->setPen(pen);
            graph->setScatterStyle(
                QCPScatterStyle(shapes[variant % shapes.size()], color, color, 8));
            auto* bars =
                new QCPErrorBars(rect->axis(QCPAxis::atBottom), rect->axis(QCPAxis::atLeft));
            bars->setPen(QPen(color, 1.2));
            bars->setDataPlottable(graph);
            QVector<double> xs, ys;
            QVector<double> minus, plus;
            for (const auto& [x, p] : points) {
                if (axis == ModelEvalAxis::Layer && x > lastLayer && !xs.isEmpty()) {
                    // "all" is not the layer after the last: a gap (NaN) keeps the line from
                    // joining them.
                    xs.append(lastLayer + 0.5);
                    ys.append(qQNaN());
                    minus.append(0);
                    plus.append(0);
                }
                const double mean = (kl ? p.klMean : p.agreementMean) / p.seeds;
                xs.append(p.x);
                ys.append(mean);
                minus.append(mean - (kl ? p.klMin : p.agreementMin));
                plus.append((kl ? p.klMax : p.agreementMax) - mean);
            }
            graph->setData(xs, ys, true);
            bars->setData(minus, plus);
            if (!kl) {
                graph->setName(name);
                keyed->push_back(graph);
            }
        }
    }
}

// The reference lines of the methods without m (exact, elu+1, ...): dashed, across the m axis,
// or per method against the layer. Those named are appended to *keyed, for the legend.
void addReferences(QCPAxisRect* agreement, QCPAxisRect* klRect, const Lines& references,
                   ModelEvalAxis axis, const std::vector<int>& features, int lastLayer,
                   std::vector<QCPAbstractPlottable*>* keyed)
{
    bool exactNamed = false;
    for (const auto& [key, points] : references) {
        const bool exact = key.first == QLatin1String("exact");
        QString name;
        if (exact && !exactNamed)
            name =
                ModelEvalChart::tr("exact attention in the replaced layers (float rounding only)");
        else if (key.first == kCheckpointRow)
            name = ModelEvalChart::tr("second checkpoint of the model (every layer)");
        else if (!exact)
            name = axis == ModelEvalAxis::Features
                       ? ModelEvalChart::tr("%1 (no m), %2")
                             .arg(methodTitle(key.first), layersTitle(key.second))
                       : ModelEvalChart::tr("%1 (no m)").arg(methodTitle(key.first));
        exactNamed = exactNamed || exact;
        for (QCPAxisRect* rect : {agreement, klRect}) {
            const bool kl = rect == klRect;
            auto* graph = new QCPGraph(rect->axis(QCPAxis::atBottom), rect->axis(QCPAxis::atLeft));
            graph->setPen(QPen(exact ? QColor(120, 120, 120) : methodColor(key.first),
                               exact ? 1.6 : 2.0, Qt::DashLine));
            QVector<double> xs, ys;
            if (axis == ModelEvalAxis::Features) {
                const Point& p = points.begin()->second;
                const double y = (kl ? p.klMean : p.agreementMean) / p.seeds;
                const double lo = features.empty() ? 1 : features.front() / 1.5;
                const double hi = features.empty() ? 1024 : features.back() * 1.5;
                xs = {lo, hi};
                ys = {y, y};
            } else {
                for (const auto& [x, p] : points) {
                    if (x > lastLayer && !xs.isEmpty()) {  // the gap before "all", as above
                        xs.append(lastLayer + 0.5);
                        ys.append(qQNaN());
                    }
                    xs.append(x);
                    ys.append((kl ? p.klMean : p.agreementMean) / p.seeds);
                }
            }
            graph->setData(xs, ys, true);
            if (!kl && !name.isEmpty()) {
                graph->setName(name);
                keyed->push_back(graph);
            }
        }
    }
}

// The x axes: m on a log scale ticked at the values swept, or the layers with "all" after them.
void setXAxes(QCPAxisRect* agreement, QCPAxisRect* klRect, ModelEvalAxis axis,
              const std::vector<int>& features, int lastLayer)
{
    for (QCPAxisRect* rect : {agreement, klRect}) {
        QCPAxis* x = rect->axis(QCPAxis::atBottom);
        if (axis == ModelEvalAxis::Features) {
            x->setScaleType(QCPAxis::stLogarithmic);
            auto ticker = QSharedPointer<QCPAxisTickerText>::create();
            for (const int m : features)
                ticker->addTick(m, QString::number(m));
            x->setTicker(ticker);
            x->setLabel(ModelEvalChart::tr("features m"));
            if (!features.empty())
                x->setRange(features.front() / 1.4, features.back() * 1.4);
            else
                x->setRange(8, 512);
        } else {
            x->setScaleType(QCPAxis::stLinear);
            auto ticker = QSharedPointer<QCPAxisTickerText>::create();
            for (int layer = 0; layer <= lastLayer; ++layer)
                ticker->addTick(layer, QString::number(layer));
            ticker->addTick(lastLayer + 1, ModelEvalChart::tr("all"));
            x->setTicker(ticker);
            x->setLabel(ModelEvalChart::tr("replaced layer"));
            x->setRange(-0.5, lastLayer + 1.5);
        }
    }
}

}  // namespace

ModelEvalChart::ModelEvalChart(QWidget* parent) : HeadedChart(parent, 10.5, 36)
{
    setTitle(tr("Predictions with the approximation"));
    m_agreement = axisRect();
    m_kl = new QCPAxisRect(this);
    auto* plots = new QCPLayoutGrid;
    plots->addElement(0, 0, m_agreement);
    plots->addElement(0, 1, m_kl);
    plots->setColumnSpacing(24);
    arrangeUnderHeading(plots);
    legend->setVisible(true);
    applyAxisStyle(m_agreement, font(), 10, false);
    applyAxisStyle(m_kl, font(), 10, false);
    m_agreement->axis(QCPAxis::atLeft)->setLabel(tr("top-1 agreement (%)"));
    m_kl->axis(QCPAxis::atLeft)->setLabel(tr("mean KL(p \u2016 q) (nats)"));
    setLogAxis(m_kl->axis(QCPAxis::atLeft), LogTicker::Labels::AxisFormat);
    m_hint = new FigureHint(this,
                            tr("Sweep m or Per layer: the top-1 agreement and the mean KL of the "
                               "predictions with the approximation appear here."),
                            12);
    rebuild();
}

void ModelEvalChart::setRows(const std::vector<ModelEvalRow>& rows, ModelEvalAxis axis,
                             const QString& subtitle)
{
    m_rows = rows;
    m_axis = axis;
    setSubtitle(subtitle);
    rebuild();
}

void ModelEvalChart::rebuild()
{
    clearPlottables();
    legend->clearItems();
    // Until there are rows: the hint in the plots' place, no axes of made-up ranges.
    const bool empty = m_rows.empty();
    m_hint->setVisible(empty);
    for (QCPAxisRect* rect : {m_agreement, m_kl})
        setAxesVisible(rect, !empty);

    int lastLayer = 0;
    std::vector<int> features;
    for (const ModelEvalRow& row : m_rows) {
        bool ok = false;
        lastLayer = std::max(lastLayer, row.layers.toInt(&ok));
        if (row.features > 0)
            features.push_back(row.features);
    }
    std::sort(features.begin(), features.end());
    features.erase(std::unique(features.begin(), features.end()), features.end());

    // One line per (method, layers) against m, or per (method, m) against the layer. The rows
    // of methods without m (exact, elu+1, ...: features 0) are reference lines, per (method,
    // layer set) against m, per method against the layer.
    Lines lines;
    Lines references;
    for (const ModelEvalRow& row : m_rows) {
        const bool reference = row.features == 0;
        if (m_axis == ModelEvalAxis::Features) {
            if (reference) {
                addTo(references[{row.method, row.layers}][0], row);
                continue;
            }
            Point& p = lines[{row.method, row.layers}][double(row.features)];
            p.x = row.features;
            addTo(p, row);
        } else {
            const double x = layerPosition(row.layers, lastLayer);
            Point& p = reference ? references[{row.method, QString()}][x]
                                 : lines[{row.method, QString::number(row.features)}][x];
            p.x = x;
            addTo(p, row);
        }
    }

    std::vector<QCPAbstractPlottable*> keyed;
    addLines(m_agreement, m_kl, lines, m_axis, lastLayer, &keyed);
    addReferences(m_agreement, m_kl, references, m_axis, features, lastLayer, &keyed);
    for (QCPAbstractPlottable* plottable : keyed)
        addToLegend(plottable);
    setXAxes(m_agreement, m_kl, m_axis, features, lastLayer);
    m_agreement->axis(QCPAxis::atLeft)->setRange(0, 105);
    double klLow = 1e300, klHigh = 0;
    for (const ModelEvalRow& row : m_rows) {
        const double kl = std::isfinite(row.meanKl) ? std::max(row.meanKl, kKlFloor) : 1e3;
        klLow = std::min(klLow, kl);
        klHigh = std::max(klHigh, kl);
    }
    if (klHigh <= 0)
        m_kl->axis(QCPAxis::atLeft)->setRange(1e-4, 10);
    else
        m_kl->axis(QCPAxis::atLeft)->setRange(klLow / 3, klHigh * 3);
    replot(QCustomPlot::rpQueuedReplot);
}

void saveModelEvalChart(const std::vector<ModelEvalRow>& rows, ModelEvalAxis axis,
                        const QString& path, FigureFormat format, QSize size,
                        const QString& subtitle)
{
    ModelEvalChart chart;
    chart.resize(size);
    chart.setRows(rows, axis, subtitle);
    exportFigure(chart, path, format, size);
}

}  // namespace attnlab::ui
