// The Stepper page's frame export: the page as one figure (PNG, SVG, PDF), one position or every
// position into a folder.

#include "stepper/stepper_style.h"
#include "stepper/stepper_view.h"

#include "common/export_dialog.h"
#include "errors.h"
#include "plotting/figure_export.h"

#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QMessageBox>
#include <QPainter>
#include <QProgressDialog>
#include <QSaveFile>
#include <qcustomplot.h>

namespace attnlab::ui {

using namespace stepper;

// ---------------------------------------------------------------------------------------------
// StepperView: export

void StepperView::paintFrame(QCPPainter& painter)
{
    const QRect all(QPoint(0, 0), m_frame->size());
    painter.fillRect(all, Qt::white);
    paintWidget(painter, m_frame, QPoint(0, 0), all);
}

void StepperView::paintWidget(QCPPainter& painter, QWidget* widget, QPoint offset,
                              const QRect& clip)
{
    const QRect visible = clip & QRect(offset, widget->size());
    if (visible.isEmpty())
        return;
    if (auto* plot = qobject_cast<QCustomPlot*>(widget)) {
        painter.save();
        painter.translate(offset);
        plot->toPainter(&painter, plot->width(), plot->height());
        painter.restore();
        plot->replot(QCustomPlot::rpQueuedReplot);
        return;
    }
    if (widget != m_frame)
        widget->render(&painter, offset, QRegion(visible.translated(-offset)),
                       QWidget::RenderFlags());
    for (QObject* object : widget->children()) {
        auto* child = qobject_cast<QWidget*>(object);
        if (child && !child->isWindow() && !child->isHidden() && !qobject_cast<QScrollBar*>(child))
            paintWidget(painter, child, offset + child->pos(), visible);
    }
}

QImage StepperView::frameImage(double scale)
{
    QImage image((QSizeF(m_frame->size()) * scale).toSize(), QImage::Format_ARGB32_Premultiplied);
    image.fill(Qt::white);
    QCPPainter painter(&image);
    painter.setMode(QCPPainter::pmNonCosmetic);
    painter.scale(scale, scale);
    paintFrame(painter);
    painter.end();
    tagExportResolution(image, scale);
    return image;
}

PaintedFigure StepperView::frameFigure()
{
    QCoreApplication::sendPostedEvents(nullptr, QEvent::LayoutRequest);
    PaintedFigure figure;
    figure.size = m_frame->size();
    figure.dpi = logicalDpiX();
    figure.title = tr("Attention Lab stepper, step %1").arg(m_position + 1);
    figure.description = QStringLiteral("Attention Lab frame");
    figure.what = QStringLiteral("frame");
    figure.png = [this] { return frameImage(kPngExportScale); };
    figure.paintVector = [this, size = figure.size](QPaintDevice& device, bool pdf) {
        QCPPainter painter;
        if (!beginVectorPainting(painter, device))
            return false;
        // The page is size.width() points wide at the device's resolution; a world transform
        // (not setWindow, which QWidget::render ignores) maps the frame's pixels onto it.
        if (pdf)
            painter.scale(device.width() / double(size.width()),
                          device.height() / double(size.height()));
        paintFrame(painter);
        return painter.end();
    };
    return figure;
}

void StepperView::exportFrame(const QString& path, FigureFormat format)
{
    exportPaintedFigure(path, format, frameFigure());
}

int StepperView::exportAllFrames(const QString& folder)
{
    if (!m_data)
        return 0;
    if (!QDir().mkpath(folder))
        throw OutputError(tr("cannot write the frames: cannot create the folder %1").arg(folder));
    pause();
    const std::shared_ptr<StepperData> data = m_data;
    const quint64 generation = m_generation;
    const int length = this->length();
    const int start = m_position;
    const int digits = std::max(4, int(QString::number(length).size()));
    const auto current = [&] { return m_data == data && m_generation == generation; };

    QProgressDialog progress(tr("Writing %1 frames to %2\u2026")
                                 .arg(length)
                                 .arg(QDir::toNativeSeparators(folder)),
                             tr("Cancel"), 0, length, this);
    progress.setWindowTitle(tr("Export all frames"));
    progress.setWindowModality(Qt::WindowModal);
    progress.setMinimumDuration(300);
    QString error;
    int written = 0;
    for (int t = 0; t < length; ++t) {
        progress.setValue(t);
        if (progress.wasCanceled() || !current())
            break;
        setPosition(t);
        // Window of states: wait for the worker, with the event loop running.
        while (m_shownPosition != t && m_busy && current() && !progress.wasCanceled())
            QCoreApplication::processEvents(QEventLoop::WaitForMoreEvents);
        if (progress.wasCanceled() || !current())
            break;
        const QString path = QDir(folder).filePath(
            QStringLiteral("frame_%1.png").arg(t + 1, digits, 10, QLatin1Char('0')));
        if (m_shownPosition != t) {
            error = tr("cannot write the frame %1: the state of step %2 could not be computed")
                        .arg(path)
                        .arg(t + 1);
            break;
        }
        QCoreApplication::processEvents();  // lays out the labels whose text changed
        QSaveFile file(path);
        if (!file.open(QIODevice::WriteOnly) || !frameImage(1.0).save(&file, "PNG") ||
            !file.commit()) {
            error = tr("cannot write the frame %1: %2").arg(path, file.errorString());
            break;
        }
        ++written;
    }
    progress.setValue(length);
    if (current())
        setPosition(start);
    if (!error.isEmpty())
        throw OutputError(error);
    return written;
}

void StepperView::exportFrameDialog()
{
    if (!m_data)
        return;
    runFigureExportDialog(this, tr("Export frame"),
                          QStringLiteral("stepper-step-%1.png").arg(m_position + 1),
                          [this](const QString& path, FigureFormat format) {
                              exportFrame(path, format);
                          });
}

void StepperView::exportAllFramesDialog()
{
    if (!m_data)
        return;
    const QString folder = QFileDialog::getExistingDirectory(this, tr("Export all frames"));
    if (folder.isEmpty())
        return;
    writeOrWarn(this, tr("Export all frames"), [&] {
        const int written = exportAllFrames(folder);
        if (written < length())
            QMessageBox::information(
                this, tr("Export all frames"),
                tr("Stopped after %1 of %2 frames.").arg(written).arg(length()));
    });
}

}  // namespace attnlab::ui
