#include "figure_export.h"

#include "errors.h"

#include <QClipboard>
#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QGuiApplication>
#include <QPageLayout>
#include <QPageSize>
#include <QPdfWriter>
#include <QSaveFile>
#include <QSvgGenerator>
#include <qcustomplot.h>

#include <cmath>
#include <functional>

namespace attnlab::ui {

namespace {

// PNG exports are rendered at this multiple of the logical size.
constexpr double kPngScale = 2.0;

// The plot rendered at kPngScale times `size` logical pixels, tagged with the matching
// resolution so that it keeps its logical size at 96 dpi.
QImage renderImage(QCustomPlot& plot, QSize size)
{
    QImage image = plot.toPixmap(size.width(), size.height(), kPngScale).toImage();
    const int dotsPerMeter = int(std::lround(kPngScale * 96 / 0.0254));
    image.setDotsPerMeterX(dotsPerMeter);
    image.setDotsPerMeterY(dotsPerMeter);
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
    if (!painter.begin(&device))
        return false;
    painter.setMode(QCPPainter::pmVectorized);
    painter.setMode(QCPPainter::pmNoCaching);
    painter.setMode(QCPPainter::pmNonCosmetic);
    setUp(painter);
    plot.toPainter(&painter, size.width(), size.height());
    return painter.end();
}

bool writeSvg(QCustomPlot& plot, QSize size, const QString& title, QIODevice& file)
{
    QSvgGenerator generator;
    generator.setOutputDevice(&file);
    generator.setSize(size);
    generator.setViewBox(QRect(QPoint(0, 0), size));
    // Fonts are sized in points: at the screen's resolution they get the size they have there.
    generator.setResolution(plot.logicalDpiX());
    generator.setTitle(title);
    generator.setDescription(QStringLiteral("Attention Lab figure"));
    return paintVectorized(plot, generator, size, [](QCPPainter&) {});
}

bool writePdf(QCustomPlot& plot, QSize size, const QString& title, QIODevice& file)
{
    QPdfWriter writer(&file);
    writer.setResolution(plot.logicalDpiX());
    writer.setTitle(title);
    writer.setCreator(QStringLiteral("Attention Lab"));
    QPageLayout page;
    page.setMode(QPageLayout::FullPageMode);
    page.setOrientation(QPageLayout::Portrait);
    page.setMargins(QMarginsF(0, 0, 0, 0));
    page.setPageSize(QPageSize(size, QPageSize::Point, QString(), QPageSize::ExactMatch));
    if (!writer.setPageLayout(page))
        return false;
    return paintVectorized(plot, writer, size, [size](QCPPainter& painter) {
        painter.setWindow(QRect(QPoint(0, 0), size));
    });
}

}  // namespace

bool figureFormatFromSuffix(const QString& path, FigureFormat* format)
{
    const QString suffix = QFileInfo(path).suffix();
    for (FigureFormat candidate : {FigureFormat::Png, FigureFormat::Svg, FigureFormat::Pdf}) {
        if (suffix.compare(figureFormatName(candidate), Qt::CaseInsensitive) == 0) {
            *format = candidate;
            return true;
        }
    }
    return false;
}

QString figureFormatName(FigureFormat format)
{
    switch (format) {
    case FigureFormat::Png:
        return QStringLiteral("png");
    case FigureFormat::Svg:
        return QStringLiteral("svg");
    case FigureFormat::Pdf:
        return QStringLiteral("pdf");
    }
    return {};
}

void exportFigure(QCustomPlot& plot, const QString& path, FigureFormat format, QSize size)
{
    const QSize logical = size.isEmpty() ? plot.size() : size;
    const QFileInfo info(path);
    if (!QDir().mkpath(info.absolutePath()))
        throw OutputError(QStringLiteral("cannot write the figure %1: cannot create the folder %2")
                              .arg(path, info.absolutePath()));
    QSaveFile file(path);
    if (!file.open(QIODevice::WriteOnly))
        throw OutputError(
            QStringLiteral("cannot write the figure %1: %2").arg(path, file.errorString()));
    const QString title = plotTitle(plot, info.completeBaseName());
    bool painted = false;
    switch (format) {
    case FigureFormat::Png:
        painted = renderImage(plot, logical).save(&file, "PNG");
        break;
    case FigureFormat::Svg:
        painted = writeSvg(plot, logical, title, file);
        break;
    case FigureFormat::Pdf:
        painted = writePdf(plot, logical, title, file);
        break;
    }
    plot.replot(QCustomPlot::rpQueuedReplot);
    if (!painted)
        throw OutputError(QStringLiteral("cannot write the figure %1: rendering the %2 failed")
                              .arg(path, figureFormatName(format).toUpper()));
    if (!file.commit())
        throw OutputError(
            QStringLiteral("cannot write the figure %1: %2").arg(path, file.errorString()));
}

void copyFigureToClipboard(QCustomPlot& plot)
{
    QGuiApplication::clipboard()->setImage(renderImage(plot, plot.size()));
    plot.replot(QCustomPlot::rpQueuedReplot);
}

QString askSavePath(QWidget* parent, const QString& title, const QString& baseName,
                    const QString& suffix)
{
    QString path = QFileDialog::getSaveFileName(
        parent, title, baseName + QLatin1Char('.') + suffix,
        QCoreApplication::translate("attnlab", "%1 files (*.%2)").arg(suffix.toUpper(), suffix));
    if (!path.isEmpty() && QFileInfo(path).suffix().compare(suffix, Qt::CaseInsensitive) != 0)
        path += QLatin1Char('.') + suffix;
    return path;
}

}  // namespace attnlab::ui
