#include "ui/window/window_exports.h"

#include "ui/common/export_dialog.h"
#include "errors.h"
#include "ui/errors/error_analysis_panel.h"
#include "ui/errors/error_chart.h"
#include "ui/experiment/error_distribution_view.h"
#include "ui/experiment/experiment_controller.h"
#include "ui/experiment/image_overlay_view.h"
#include "ui/experiment/row_comparison_view.h"
#include "ui/generation/generation_page.h"
#include "io/csv.h"
#include "io/npy.h"
#include "ui/window/main_window.h"
#include "ui/model/downstream_panel.h"
#include "ui/model/head_grid_panel.h"
#include "ui/plotting/figure_export.h"
#include "ui/plotting/heatmap_view.h"
#include "ui/stepper/stepper_view.h"
#include "ui/timing/timing_chart.h"
#include "ui/timing/timing_panel.h"

#include <QApplication>
#include <QClipboard>
#include <QDir>
#include <QFileDialog>
#include <QMenu>
#include <QMessageBox>
#include <QStatusBar>
#include <qcustomplot.h>

namespace attnlab::ui {

WindowExports::WindowExports(MainWindow& window) : QObject(&window), m_window(window) {}

void WindowExports::addFileActions(QMenu* file)
{
    QAction* exportFigure =
        file->addAction(tr("&Export Figure..."), this, &WindowExports::exportFigureDialog);
    exportFigure->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_E));
    exportFigure->setToolTip(tr("Save the figure last clicked or hovered as PNG, SVG or PDF."));
    QMenu* exportMatrix = file->addMenu(tr("Export &Matrix"));
    const std::pair<Matrix, QString> matrices[] = {
        {Matrix::ExactAttention, tr("Exact attention P")},
        {Matrix::ApproximateAttention, tr("Approximate attention P\u0302")},
        {Matrix::ErrorMap, tr("Error map (as shown)")},
        {Matrix::ExactOutput, tr("Exact output O = P V")},
        {Matrix::ApproximateOutput, tr("Approximate output O\u0302")},
        {Matrix::QueryFeatures, tr("Query features \u03c6(Q)")},
        {Matrix::KeyFeatures, tr("Key features \u03c6(K)")},
        {Matrix::Projection, tr("Random projection W")},
    };
    for (const auto& [matrix, name] : matrices)
        exportMatrix->addAction(name + QStringLiteral("..."), this,
                                [this, matrix = matrix] { exportMatrixDialog(matrix); });
    QAction* copy = file->addAction(tr("&Copy Figure"), this, &WindowExports::copyFigure);
    copy->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_C));
}

void WindowExports::exportFigureDialog()
{
    MainWindow& w = m_window;
    QCustomPlot* const figure = w.currentFigure();
    const bool stepper = w.currentPage() == MainWindow::StepperPage;
    const bool heads = w.currentPage() == MainWindow::HeadsPage;
    QString name = QStringLiteral("attention-exact");
    if (stepper)
        name = QStringLiteral("stepper-frame");
    else if (heads)
        name = QStringLiteral("heads");
    else if (figure == w.downstreamPanel()->chart())
        name = QStringLiteral("inside-the-model");
    else if (figure == w.errorPanel()->chart())
        name = QStringLiteral("error-analysis");
    else if (figure == w.distributionView())
        name = QStringLiteral("error-distribution");
    else if (figure == w.timingPanel()->chart())
        name = QStringLiteral("timing");
    else if (figure == w.generationPage()->chart(GenerationChartKind::Kl))
        name = QStringLiteral("generate-kl");
    else if (figure == w.approxView())
        name = QStringLiteral("attention-approx");
    else if (figure == w.errorView())
        name = QStringLiteral("attention-error");
    else if (figure == w.rowView())
        name = QStringLiteral("query-row");
    else if (figure == w.imageView())
        name = QStringLiteral("image-overlay");
    const QString path =
        runFigureExportDialog(&w, tr("Export figure"), name + QStringLiteral(".png"),
                              [&](const QString& path, FigureFormat format) {
                                  if (stepper)
                                      w.stepperView()->exportFrame(path, format);
                                  else if (heads)
                                      w.headGrid()->exportFigure(path, format);
                                  else
                                      exportFigure(*figure, path, format);
                              });
    if (!path.isEmpty())
        w.statusBar()->showMessage(tr("Exported %1").arg(QDir::toNativeSeparators(path)), 3000);
}

void WindowExports::exportMatrixDialog(Matrix which)
{
    const Computation& computation = m_window.controller().current();
    if (!computation.result)
        return;
    const ExperimentResult& result = *computation.result;
    const ViewSettings& view = m_window.viewSettings();
    const HeadResult& head = result.heads[std::size_t(view.head)];
    MatrixD matrix;
    QString name;
    QStringList columns;
    switch (which) {
        case Matrix::ExactAttention:
            matrix = head.attentionExact.toDouble(), name = QStringLiteral("attention_exact");
            columns = result.labels;
            break;
        case Matrix::ApproximateAttention:
            matrix = head.attentionApprox.toDouble(), name = QStringLiteral("attention_approx");
            columns = result.labels;
            break;
        case Matrix::ErrorMap:
            matrix = attentionError(head.attentionExact.toDouble(), head.attentionApprox.toDouble(),
                                    view.errorKind);
            name = QStringLiteral("attention_error_") + errorKindName(view.errorKind);
            columns = result.labels;
            break;
        case Matrix::ExactOutput:
            matrix = head.outputExact, name = QStringLiteral("output_exact");
            break;
        case Matrix::ApproximateOutput:
            matrix = head.outputApprox, name = QStringLiteral("output_approx");
            break;
        case Matrix::QueryFeatures:
            matrix = head.featuresQ, name = QStringLiteral("features_q");
            break;
        case Matrix::KeyFeatures:
            matrix = head.featuresK, name = QStringLiteral("features_k");
            break;
        case Matrix::Projection:
            matrix = head.projection, name = QStringLiteral("projection");
            break;
    }
    if (matrix.size() == 0) {
        QMessageBox::information(&m_window, tr("Export matrix"),
                                 tr("This method has no such matrix (%1).").arg(name));
        return;
    }
    QString selectedFilter;
    QString path =
        QFileDialog::getSaveFileName(&m_window, tr("Export matrix"), name + QStringLiteral(".npy"),
                                     tr("NumPy array (*.npy);;CSV table (*.csv)"), &selectedFilter);
    if (path.isEmpty())
        return;
    const bool csv = path.endsWith(QLatin1String(".csv"), Qt::CaseInsensitive) ||
                     (!path.endsWith(QLatin1String(".npy"), Qt::CaseInsensitive) &&
                      selectedFilter.contains(QLatin1String("csv")));
    if (!path.endsWith(QLatin1String(csv ? ".csv" : ".npy"), Qt::CaseInsensitive))
        path += csv ? QStringLiteral(".csv") : QStringLiteral(".npy");
    const bool single = result.spec.precision == Precision::Float;
    const bool written = writeOrWarn(&m_window, tr("Export matrix"), [&] {
        if (csv) {
            CsvOptions options;
            options.floatPrecision = single;
            options.columnNames = columns;
            if (matrix.rows() == result.labels.size())
                options.rowLabels = result.labels;
            if (!options.rowLabels.isEmpty() && !options.columnNames.isEmpty())
                options.columnNames.prepend(QStringLiteral("query \\ key"));
            saveCsv(path, matrix, options);
        } else {
            saveNpy(path, matrix.data(), {matrix.rows(), matrix.cols()},
                    single ? NpyDtype::Float32 : NpyDtype::Float64);
        }
    });
    if (written)
        m_window.statusBar()->showMessage(tr("Exported %1").arg(QDir::toNativeSeparators(path)),
                                          3000);
}

void WindowExports::copyFigure()
{
    if (m_window.currentPage() == MainWindow::StepperPage)
        QApplication::clipboard()->setImage(m_window.stepperView()->grab().toImage());
    else
        copyFigureToClipboard(*m_window.currentFigure());
    m_window.statusBar()->showMessage(tr("Figure copied to the clipboard"), 3000);
}

}  // namespace attnlab::ui
