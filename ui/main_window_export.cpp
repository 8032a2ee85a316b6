// MainWindow's exports: the current page's figure (File > Export Figure, Copy Figure), the
// matrices and arrays (File > Export Matrix), and the About box.

#include "main_window.h"

#include "common/export_dialog.h"
#include "autosave.h"
#include "controls_column.h"
#include "io/csv.h"
#include "model/downstream_panel.h"
#include "errors.h"
#include "experiment/experiment_controller.h"
#include "errors/error_analysis_panel.h"
#include "errors/error_chart.h"
#include "experiment/error_distribution_view.h"
#include "plotting/figure_export.h"
#include "model/head_grid_view.h"
#include "plotting/heatmap_view.h"
#include "experiment/image_overlay_view.h"
#include "experiment/input_panel.h"
#include "experiment/attention_maps_page.h"
#include "experiment/method_panel.h"
#include "experiment/metrics_panel.h"
#include "inputs/model_input.h"
#include "io/npy.h"
#include "experiment/row_comparison_view.h"
#include "lecture/scenario_panel.h"
#include "sessions/session.h"
#include "stepper/stepper_view.h"
#include "timing/timing_chart.h"
#include "timing/timing_panel.h"
#include <QApplication>
#include <QDir>
#include <QFileDialog>
#include <QMessageBox>
#include <QtConcurrent/QtConcurrentRun>

namespace attnlab::ui {

void MainWindow::exportFigureDialog()
{
    const bool stepper = currentPage() == StepperPage;
    const bool heads = currentPage() == HeadsPage;
    QString name = QStringLiteral("attention-exact");
    if (stepper)
        name = QStringLiteral("stepper-frame");
    else if (heads)
        name = QStringLiteral("heads");
    else if (m_currentFigure == m_downstream->chart())
        name = QStringLiteral("inside-the-model");
    else if (m_currentFigure == m_errorPanel->chart())
        name = QStringLiteral("error-analysis");
    else if (m_currentFigure == m_distributionView)
        name = QStringLiteral("error-distribution");
    else if (m_currentFigure == m_timingPanel->chart())
        name = QStringLiteral("timing");
    else if (m_currentFigure == m_approxView)
        name = QStringLiteral("attention-approx");
    else if (m_currentFigure == m_errorView)
        name = QStringLiteral("attention-error");
    else if (m_currentFigure == m_rowView)
        name = QStringLiteral("query-row");
    else if (m_currentFigure == m_imageView)
        name = QStringLiteral("image-overlay");
    const QString path = runFigureExportDialog(
        this, tr("Export figure"), name + QStringLiteral(".png"),
        [&](const QString& path, FigureFormat format) {
            if (stepper)
                m_stepperView->exportFrame(path, format);
            else if (heads)
                m_headGrid->exportFigure(path, format);
            else
                exportFigure(*m_currentFigure, path, format);
        });
    if (!path.isEmpty())
        statusBar()->showMessage(tr("Exported %1").arg(QDir::toNativeSeparators(path)), 3000);
}

void MainWindow::exportMatrixDialog(int which)
{
    const Computation& computation = m_controller->current();
    if (!computation.result)
        return;
    const ExperimentResult& result = *computation.result;
    const HeadResult& head = result.heads[std::size_t(m_view.head)];
    MatrixD matrix;
    QString name;
    QStringList columns;
    switch (ExportedMatrix(which)) {
        case ExactAttention:
            matrix = head.attentionExact.toDouble(), name = QStringLiteral("attention_exact");
            columns = result.labels;
            break;
        case ApproximateAttention:
            matrix = head.attentionApprox.toDouble(), name = QStringLiteral("attention_approx");
            columns = result.labels;
            break;
        case ErrorMap:
            matrix = attentionError(head.attentionExact.toDouble(), head.attentionApprox.toDouble(),
                                    m_view.errorKind);
            name = QStringLiteral("attention_error_") + errorKindName(m_view.errorKind);
            columns = result.labels;
            break;
        case ExactOutput: matrix = head.outputExact, name = QStringLiteral("output_exact"); break;
        case ApproximateOutput:
            matrix = head.outputApprox, name = QStringLiteral("output_approx");
            break;
        case QueryFeatures: matrix = head.featuresQ, name = QStringLiteral("features_q"); break;
        case KeyFeatures: matrix = head.featuresK, name = QStringLiteral("features_k"); break;
        case Projection: matrix = head.projection, name = QStringLiteral("projection"); break;
    }
    if (matrix.size() == 0) {
        QMessageBox::information(this, tr("Export matrix"),
                                 tr("This method has no such matrix (%1).").arg(name));
        return;
    }
    QString selectedFilter;
    QString path = QFileDialog::getSaveFileName(
        this, tr("Export matrix"), name + QStringLiteral(".npy"),
        tr("NumPy array (*.npy);;CSV table (*.csv)"), &selectedFilter);
    if (path.isEmpty())
        return;
    const bool csv = path.endsWith(QLatin1String(".csv"), Qt::CaseInsensitive) ||
                     (!path.endsWith(QLatin1String(".npy"), Qt::CaseInsensitive) &&
                      selectedFilter.contains(QLatin1String("csv")));
    if (!path.endsWith(QLatin1String(csv ? ".csv" : ".npy"), Qt::CaseInsensitive))
        path += csv ? QStringLiteral(".csv") : QStringLiteral(".npy");
    const bool single = result.spec.precision == Precision::Float;
    const bool written = writeOrWarn(this, tr("Export matrix"), [&] {
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
        statusBar()->showMessage(tr("Exported %1").arg(QDir::toNativeSeparators(path)), 3000);
}

void MainWindow::copyFigure()
{
    if (currentPage() == StepperPage)
        QApplication::clipboard()->setImage(m_stepperView->grab().toImage());
    else
        copyFigureToClipboard(*m_currentFigure);
    statusBar()->showMessage(tr("Figure copied to the clipboard"), 3000);
}

void MainWindow::showAbout()
{
    QMessageBox::about(
        this, tr("About Attention Lab"),
        tr("<h3>Attention Lab %1</h3>"
           "<p>Exact softmax attention beside its linear-time approximations: Performer's "
           "FAVOR+ random features, elu+1 linear attention and more.</p>"
           "<p>Licence: GNU General Public License, version 3 or later.</p>"
           "<p>Built with Qt (LGPL 3), QCustomPlot (GPL 3) and Eigen (MPL 2). Sample images: "
           "scikit-image sample data (CC0 and public domain).</p>")
            .arg(QApplication::applicationVersion()));
}

}  // namespace attnlab::ui
