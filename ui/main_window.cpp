#include "main_window.h"

#include "experiment.h"

#include <QHBoxLayout>
#include <qcustomplot.h>

namespace attnlab::ui {

namespace {

// A heatmap of an L x L attention matrix, query 0 on top, token labels on both axes.
QCustomPlot* attentionHeatmap(const MatrixD& matrix, const QStringList& labels,
                              const QString& title)
{
    auto* plot = new QCustomPlot;
    plot->plotLayout()->insertRow(0);
    plot->plotLayout()->addElement(0, 0, new QCPTextElement(plot, title));
    auto* map = new QCPColorMap(plot->xAxis, plot->yAxis);
    const int n = int(matrix.rows());
    map->data()->setSize(n, n);
    map->data()->setRange(QCPRange(0, n - 1), QCPRange(0, n - 1));
    for (int query = 0; query < n; ++query)
        for (int key = 0; key < n; ++key)
            map->data()->setCell(key, query, matrix(query, key));
    map->setGradient(QCPColorGradient::gpThermal);
    map->rescaleDataRange();
    QSharedPointer<QCPAxisTickerText> ticker(new QCPAxisTickerText);
    for (int i = 0; i < n; ++i)
        ticker->addTick(i, labels.value(i));
    plot->xAxis->setTicker(ticker);
    plot->yAxis->setTicker(ticker);
    plot->xAxis->setTickLabelRotation(60);
    plot->xAxis->setLabel(QStringLiteral("key"));
    plot->yAxis->setLabel(QStringLiteral("query"));
    plot->yAxis->setRangeReversed(true);
    plot->rescaleAxes();
    return plot;
}

}  // namespace

MainWindow::MainWindow(QWidget* parent) : QMainWindow(parent)
{
    setWindowTitle(QStringLiteral("Attention Lab"));
    ExperimentSpec spec;
    const ExperimentResult result = compute(spec, buildInput(spec.input));
    auto* central = new QWidget;
    auto* layout = new QHBoxLayout(central);
    layout->addWidget(attentionHeatmap(result.heads.front().attentionExact, result.labels,
                                       QStringLiteral("Exact softmax attention P")));
    layout->addWidget(attentionHeatmap(
        result.heads.front().attentionApprox, result.labels,
        QStringLiteral("%1, m = %2: P^").arg(featureMapInfo(spec.featureMap.kind).title)
            .arg(spec.featureMap.features)));
    setCentralWidget(central);
    resize(1200, 600);
}

}  // namespace attnlab::ui
