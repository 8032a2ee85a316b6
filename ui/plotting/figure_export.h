#pragma once

#include "ui/common/export_dialog.h"

#include <QImage>
#include <QPoint>
#include <QRect>
#include <QSize>
#include <QString>

#include <functional>

class QCPPainter;
class QCustomPlot;
class QIODevice;
class QPaintDevice;
class QWidget;

namespace attnlab::ui {

// The file formats a figure is exported in: PNG (raster, twice the plot's resolution), SVG and
// PDF (vector: lines and text stay sharp at any size; a heatmap inside is an embedded image).
enum class FigureFormat { Png, Svg, Pdf };

// Sets *format from the suffix of `path` (.png, .svg, .pdf, case-insensitive) and returns true;
// returns false and leaves *format alone for any other suffix.
bool figureFormatFromSuffix(const QString& path, FigureFormat* format);

// The format's name, which is also its suffix: "png", "svg", "pdf".
QString figureFormatName(FigureFormat format);

// A figure to write: a plot (plotFigure) or a figure drawn by code of its own (the head grid,
// the stepper's frame).
struct PaintedFigure {
    QSize size;           // logical pixels; the PDF page is as many points
    int dpi = 96;         // the SVG's and PDF's resolution: the screen's, so fonts keep their size
    QString title;        // the SVG's <title>, the PDF's title
    QString description;  // the SVG's description
    QString what;         // "figure", "frame": what the messages call it
    // The PNG: the figure rendered at twice its size and tagged with the matching resolution.
    std::function<QImage()> png;
    // Paints the figure onto an SVG generator of `size` or, with pdf, a one-page PDF writer whose
    // page is `size` points at `dpi`; false when painting failed.
    std::function<bool(QPaintDevice& device, bool pdf)> paintVector;
};

// Writes `figure` into `device` in `format`: the one function that draws every figure into a
// file (File > Export Figure, the pages' export buttons, `attention-lab render` and the
// commands' --plot). PNG: figure.png(), 2x and tagged 192 dpi so that slide software places it
// at its logical size. SVG: a QSvgGenerator with the title as <title>. PDF: a QPdfWriter page
// of the figure's size in points, text as text. Throws OutputError ("cannot write the <what>
// <file>: rendering the PNG failed") when painting fails.
void writeFigure(QIODevice& device, FigureFormat format, const PaintedFigure& figure);

// The figure of `plot` as it looks on screen (colours, labels, colour scale, title), laid out
// for `size` logical pixels (an empty size: the plot's current size; a heatmap's, without the
// bands that keep its cells square), in vector mode for SVG and PDF (pens scale with the
// figure). Titled by the plot's first text element, else `fallbackTitle`. The plot must outlive
// the figure; it is replotted (queued) after each drawing, which lays it out for its own size.
PaintedFigure plotFigure(QCustomPlot& plot, QSize size, const QString& fallbackTitle);

// Writes `figure` to `path` through writeFigure and a QSaveFile (a temporary file in the same
// folder, renamed at the end); the folder is created when missing. Throws OutputError ("cannot
// write the <what> <path>: ...") naming the path when anything fails, leaving no file, partial or
// otherwise, behind.
void exportPaintedFigure(const QString& path, FigureFormat format, const PaintedFigure& figure);

// Paints the widgets inside `widget` (not windows, hidden widgets or scroll bars) and theirs, at
// `offset`, clipped to `clip`, onto painter, `widget` itself not (its owner paints its
// background): each plot through QCustomPlot::toPainter (in vector mode on a vector painter), any
// other widget through QWidget::render. How a figure made of several widgets is drawn into a file
// (the Stepper's frame, the methods side by side).
void paintWidgetTree(QCPPainter& painter, QWidget* widget, QPoint offset, const QRect& clip);

// The picture that paint draws in the coordinates of `size` logical pixels, on white, at `scale`
// device pixels a logical pixel, tagged with the matching resolution.
QImage paintedImage(QSize size, double scale, const std::function<void(QCPPainter&)>& paint);

// A figure of `size` logical pixels that paint draws in their coordinates: its PNG is
// paintedImage at twice the size; its vector drawing a PDF page `size` points wide at the
// device's resolution (a world transform, not setWindow, which QWidget::render ignores, maps the
// pixels onto it) or an SVG of `size`. Whatever paint draws from must outlive the figure.
PaintedFigure paintedFigure(QSize size, std::function<void(QCPPainter&)> paint);

// Paints `widget`'s rectangle white and the widgets inside it (paintWidgetTree) over it, in the
// widget's coordinates.
void paintWidgetOnWhite(QCPPainter& painter, QWidget& widget);

// The figure that paintWidgetOnWhite draws, at the widget's size.
PaintedFigure widgetFigure(QWidget& widget, const QString& title);

// exportPaintedFigure of plotFigure(plot, size, the file's base name).
void exportFigure(QCustomPlot& plot, const QString& path, FigureFormat format,
                  QSize size = QSize());

// The number of device pixels per logical pixel of PNG exports.
inline constexpr double kPngExportScale = 2.0;

// Tags image with the resolution at which an image rendered at `scale` times its logical size
// keeps that size at 96 dpi.
void tagExportResolution(QImage& image, double scale);

// Begins painter on device in QCustomPlot's vector mode (no caching, pens that scale with the
// figure), as SVG and PDF exports paint; false when the device cannot be painted on.
bool beginVectorPainting(QCPPainter& painter, QPaintDevice& device);

// Asks with a save dialog titled `title` where to write a figure as PNG, SVG or PDF, suggesting
// `fileName` (with its suffix); the format follows the chosen name's suffix, else the dialog's
// filter, whose suffix is then added. Sets *format; empty when the user cancels.
QString askFigurePath(QWidget* parent, const QString& title, const QString& fileName,
                      FigureFormat* format);

// askFigurePath, then write(path, format) through writeOrWarn (ui/common/export_dialog.h): a
// failure is shown in a warning box titled `title`. The path written; empty when the user
// cancelled or writing failed.
QString runFigureExportDialog(QWidget* parent, const QString& title, const QString& fileName,
                              const std::function<void(const QString&, FigureFormat)>& write);

// Puts `plot`, at its current size rendered at 2x, on the clipboard as an image.
void copyFigureToClipboard(QCustomPlot& plot);

}  // namespace attnlab::ui
