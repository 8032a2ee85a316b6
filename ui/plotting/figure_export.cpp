#include "ui/plotting/figure_export.h"

#include "named_values.h"
#include "ui/plotting/heatmap_view.h"

#include "errors.h"

#include <QClipboard>
#include <QDir>
#include <QFileDialog>
#include <QFileDevice>
#include <QFileInfo>
#include <QGuiApplication>
#include <QPageLayout>
#include <QPageSize>
#include <QPdfWriter>
#include <QSaveFile>
#include <QScrollBar>
#include <QSvgGenerator>
#include <qcustomplot.h>

#include <cmath>
#include <functional>

namespace attnlab::ui {

namespace {

// The plot rendered at kPngExportScale times `size` logical pixels, tagged with the matching
// resolution so that it keeps its logical size at 96 dpi.
QImage renderImage(QCustomPlot& plot, QSize size)
{
    QImage image = plot.toPixmap(size.width(), size.height(), kPngExportScale).toImage();
    tagExportResolution(image, kPngExportScale);
    return image;
}

// The text of the plot's first text element (a HeatmapView's title), or `fallback` when it has
// none or it is empty.
QString plotTitle(QCustomPlot& plot, const QString& fallback)
{
    for (QCPLayoutElement* element : plot.plotLayout()->elements(true)) {
        if (auto* text = qobject_cast<QCPTextElement*>(element); text && !text->text().isEmpty())
            return text->text();
    }
    return fallback;
}

// Paints `plot` at `size` logical pixels on `device` in vector mode, with pens that scale with
// the figure; `setUp` adjusts the painter first (the PDF maps its window onto the page).
bool paintVectorized(QCustomPlot& plot, QPaintDevice& device, QSize size,
                     const std::function<void(QCPPainter&)>& setUp)
{
    QCPPainter painter;
    if (!beginVectorPainting(painter, device))
        return false;
    setUp(painter);
    plot.toPainter(&painter, size.width(), size.height());
    return painter.end();
}

}  // namespace

bool beginVectorPainting(QCPPainter& painter, QPaintDevice& device)
{
    if (!painter.begin(&device))
        return false;
    painter.setMode(QCPPainter::pmVectorized);
    painter.setMode(QCPPainter::pmNoCaching);
    painter.setMode(QCPPainter::pmNonCosmetic);
    return true;
}

bool figureFormatFromSuffix(const QString& path, FigureFormat* format)
{
    return parseName(QFileInfo(path).suffix(),
                     {FigureFormat::Png, FigureFormat::Svg, FigureFormat::Pdf}, figureFormatName,
                     format, Qt::CaseInsensitive);
}

QString figureFormatName(FigureFormat format)
{
    switch (format) {
        case FigureFormat::Png: return QStringLiteral("png");
        case FigureFormat::Svg: return QStringLiteral("svg");
        case FigureFormat::Pdf: return QStringLiteral("pdf");
    }
    return {};
}

void tagExportResolution(QImage& image, double scale)
{
    const int dotsPerMeter = int(std::lround(scale * 96 / 0.0254));
    image.setDotsPerMeterX(dotsPerMeter);
    image.setDotsPerMeterY(dotsPerMeter);
}

void writeFigure(QIODevice& device, FigureFormat format, const PaintedFigure& figure)
{
    bool painted = false;
    switch (format) {
        case FigureFormat::Png: painted = figure.png().save(&device, "PNG"); break;
        case FigureFormat::Svg: {
            QSvgGenerator generator;
            generator.setOutputDevice(&device);
            generator.setSize(figure.size);
            generator.setViewBox(QRect(QPoint(0, 0), figure.size));
            generator.setResolution(figure.dpi);
            generator.setTitle(figure.title);
            generator.setDescription(figure.description);
            painted = figure.paintVector(generator, false);
            break;
        }
        case FigureFormat::Pdf: {
            QPdfWriter writer(&device);
            writer.setResolution(figure.dpi);
            writer.setTitle(figure.title);
            writer.setCreator(QStringLiteral("Attention Lab"));
            QPageLayout page;
            page.setMode(QPageLayout::FullPageMode);
            page.setOrientation(QPageLayout::Portrait);
            page.setMargins(QMarginsF(0, 0, 0, 0));
            page.setPageSize(
                QPageSize(figure.size, QPageSize::Point, QString(), QPageSize::ExactMatch));
            painted = writer.setPageLayout(page) && figure.paintVector(writer, true);
            break;
        }
    }
    if (!painted) {
        const auto* file = qobject_cast<const QFileDevice*>(&device);
        throw OutputError(QStringLiteral("cannot write the %1 %2: rendering the %3 failed")
                              .arg(figure.what,
                                   file ? QDir::toNativeSeparators(file->fileName()) : QString(),
                                   figureFormatName(format).toUpper()));
    }
}

void exportPaintedFigure(const QString& path, FigureFormat format, const PaintedFigure& figure)
{
    const QString shownPath = QDir::toNativeSeparators(path);
    const QFileInfo info(path);
    if (!QDir().mkpath(info.absolutePath()))
        throw OutputError(
            QStringLiteral("cannot write the %1 %2: cannot create the folder %3")
                .arg(figure.what, shownPath, QDir::toNativeSeparators(info.absolutePath())));
    QSaveFile file(path);
    if (!file.open(QIODevice::WriteOnly))
        throw OutputError(QStringLiteral("cannot write the %1 %2: %3")
                              .arg(figure.what, shownPath, file.errorString()));
    writeFigure(file, format, figure);
    if (!file.commit())
        throw OutputError(QStringLiteral("cannot write the %1 %2: %3")
                              .arg(figure.what, shownPath, file.errorString()));
}

PaintedFigure plotFigure(QCustomPlot& plot, QSize size, const QString& fallbackTitle)
{
    PaintedFigure figure;
    // A heatmap as the window lays it out, without the bands that keep its cells square.
    const auto* heatmap = qobject_cast<const HeatmapView*>(&plot);
    figure.size = !size.isEmpty() ? size : heatmap ? heatmap->tightSize() : plot.size();
    figure.dpi = plot.logicalDpiX();
    figure.title = plotTitle(plot, fallbackTitle);
    figure.description = QStringLiteral("Attention Lab figure");
    figure.what = QStringLiteral("figure");
    const QSize laidOut = figure.size;
    figure.png = [&plot, laidOut] {
        const QImage image = renderImage(plot, laidOut);
        plot.replot(QCustomPlot::rpQueuedReplot);  // laid out for the figure: again for screen
        return image;
    };
    figure.paintVector = [&plot, laidOut](QPaintDevice& device, bool pdf) {
        const bool painted = paintVectorized(plot, device, laidOut, [&](QCPPainter& painter) {
            if (pdf)  // the page is size points wide: map the plot's pixels onto it
                painter.setWindow(QRect(QPoint(0, 0), laidOut));
        });
        plot.replot(QCustomPlot::rpQueuedReplot);
        return painted;
    };
    return figure;
}

void paintWidgetTree(QCPPainter& painter, QWidget* widget, QPoint offset, const QRect& clip)
{
    for (QObject* object : widget->children()) {
        auto* child = qobject_cast<QWidget*>(object);
        if (!child || child->isWindow() || child->isHidden() || qobject_cast<QScrollBar*>(child))
            continue;
        const QPoint at = offset + child->pos();
        const QRect visible = clip & QRect(at, child->size());
        if (visible.isEmpty())
            continue;
        if (auto* plot = qobject_cast<QCustomPlot*>(child)) {
            painter.save();
            painter.translate(at);
            plot->toPainter(&painter, plot->width(), plot->height());
            painter.restore();
            plot->replot(QCustomPlot::rpQueuedReplot);
            continue;
        }
        child->render(&painter, at, QRegion(visible.translated(-at)), QWidget::RenderFlags());
        paintWidgetTree(painter, child, at, visible);
    }
}

QImage paintedImage(QSize size, double scale, const std::function<void(QCPPainter&)>& paint)
{
    QImage image((QSizeF(size) * scale).toSize(), QImage::Format_ARGB32_Premultiplied);
    image.fill(Qt::white);
    QCPPainter painter(&image);
    painter.setMode(QCPPainter::pmNonCosmetic);
    painter.scale(scale, scale);
    paint(painter);
    painter.end();
    tagExportResolution(image, scale);
    return image;
}

PaintedFigure paintedFigure(QSize size, std::function<void(QCPPainter&)> paint)
{
    PaintedFigure figure;
    figure.size = size;
    figure.png = [size, paint] { return paintedImage(size, kPngExportScale, paint); };
    figure.paintVector = [size, paint](QPaintDevice& device, bool pdf) {
        QCPPainter painter;
        if (!beginVectorPainting(painter, device))
            return false;
        if (pdf)
            painter.scale(device.width() / double(size.width()),
                          device.height() / double(size.height()));
        paint(painter);
        return painter.end();
    };
    return figure;
}

void paintWidgetOnWhite(QCPPainter& painter, QWidget& widget)
{
    const QRect all(QPoint(0, 0), widget.size());
    painter.fillRect(all, Qt::white);
    paintWidgetTree(painter, &widget, QPoint(0, 0), all);
}

PaintedFigure widgetFigure(QWidget& widget, const QString& title)
{
    PaintedFigure figure = paintedFigure(
        widget.size(), [&widget](QCPPainter& painter) { paintWidgetOnWhite(painter, widget); });
    figure.title = title;
    figure.what = QStringLiteral("figure");
    return figure;
}

void exportFigure(QCustomPlot& plot, const QString& path, FigureFormat format, QSize size)
{
    exportPaintedFigure(path, format, plotFigure(plot, size, QFileInfo(path).completeBaseName()));
}

void copyFigureToClipboard(QCustomPlot& plot)
{
    QGuiApplication::clipboard()->setImage(renderImage(plot, plot.size()));
    plot.replot(QCustomPlot::rpQueuedReplot);
}

QString askFigurePath(QWidget* parent, const QString& title, const QString& fileName,
                      FigureFormat* format)
{
    QString selectedFilter;
    QString path = QFileDialog::getSaveFileName(
        parent, title, fileName,
        QCoreApplication::translate("attnlab",
                                    "PNG image (*.png);;SVG drawing (*.svg);;PDF document (*.pdf)"),
        &selectedFilter);
    if (path.isEmpty())
        return path;
    if (!figureFormatFromSuffix(path, format)) {
        *format = selectedFilter.contains(QLatin1String("svg"))   ? FigureFormat::Svg
                  : selectedFilter.contains(QLatin1String("pdf")) ? FigureFormat::Pdf
                                                                  : FigureFormat::Png;
        path += QLatin1Char('.') + figureFormatName(*format);
    }
    return path;
}

QString runFigureExportDialog(QWidget* parent, const QString& title, const QString& fileName,
                              const std::function<void(const QString&, FigureFormat)>& write)
{
    FigureFormat format;
    const QString path = askFigurePath(parent, title, fileName, &format);
    if (path.isEmpty() || !writeOrWarn(parent, title, [&] { write(path, format); }))
        return QString();
    return path;
}

}  // namespace attnlab::ui
