#include "ui/experiment/image_overlay_view.h"

#include "ui/plotting/plot_style.h"

#include "ui/plotting/color_maps.h"

#include <QToolTip>

#include <algorithm>
#include <cmath>

namespace attnlab::ui {

namespace {

// Opacity of a patch's colour for a value at fraction t of its scale: 0 up to t = kClearBelow,
// so the image shows through where attention is small (no tint of the whole image), then rising
// linearly to kMaxAlpha at t = kFullAlphaAt, so the colour dominates the peaks and mid-range
// weights still read. A fixed alpha over the colour map would tint the whole image with the
// map's low end and hide it where nothing is attended.
constexpr double kClearBelow = 0.05;
constexpr double kFullAlphaAt = 0.6;
constexpr double kMaxAlpha = 0.85;
const QMargins kFigureMargins(8, 4, 8, 8);

unsigned char overlayAlpha(double t)
{
    if (!std::isfinite(t) || t <= kClearBelow)
        return 0;
    const double ramp = std::min((t - kClearBelow) / (kFullAlphaAt - kClearBelow), 1.0);
    return static_cast<unsigned char>(std::lround(255 * kMaxAlpha * ramp));
}

// The image in grey, with its contrast lowered, so that colour on it always means attention.
QImage greyedImage(const QImage& image)
{
    QImage grey = image.convertToFormat(QImage::Format_Grayscale8);
    for (int y = 0; y < grey.height(); ++y) {
        uchar* line = grey.scanLine(y);
        for (int x = 0; x < grey.width(); ++x)
            line[x] = uchar(40 + line[x] * 200 / 255);
    }
    return grey;
}

// Sets rect to cover patch (row-major over cols columns), or hides it when patch < 0.
// Images smaller than this on their longest side are scaled up without smoothing.
constexpr int kSharpPixels = 128;

void placeOnPatch(QCPItemRect* rect, int patch, int cols)
{
    rect->setVisible(patch >= 0 && cols > 0);
    if (!rect->visible())
        return;
    const int row = patch / cols;
    const int col = patch % cols;
    rect->topLeft->setCoords(col, row);
    rect->bottomRight->setCoords(col + 1, row + 1);
}

// A rectangle item on axisRect's plot coordinates, drawn with pen and no fill.
QCPItemRect* patchRect(QCustomPlot* plot, QCPAxisRect* axisRect, const QPen& pen)
{
    auto* rect = new QCPItemRect(plot);
    rect->setClipToAxisRect(false);
    for (QCPItemPosition* corner : {rect->topLeft, rect->bottomRight})
        corner->setAxes(axisRect->axis(QCPAxis::atBottom), axisRect->axis(QCPAxis::atLeft));
    rect->setPen(pen);
    rect->setBrush(Qt::NoBrush);
    rect->setVisible(false);
    return rect;
}

}  // namespace

ImageOverlayView::ImageOverlayView(QWidget* parent) : QCustomPlot(parent)
{
    setBackground(Qt::white);
    paintWithTheWindow(this);
    setMouseTracking(true);
    plotLayout()->clear();
    plotLayout()->setAutoMargins(QCP::msNone);
    plotLayout()->setRowSpacing(10);
    m_figureTitle = new QCPTextElement(this, QString(), sizedFont(font(), 13, true));
    m_panelGrid = new QCPLayoutGrid;
    m_panelGrid->setAutoMargins(QCP::msNone);
    m_panelGrid->setMargins(QMargins());
    m_panelGrid->setColumnSpacing(10);
    m_panelGrid->setRowSpacing(2);
    plotLayout()->addElement(0, 0, m_figureTitle);
    plotLayout()->addElement(1, 0, m_panelGrid);
    plotLayout()->setRowStretchFactors({0.001, 1});
    addLayer(QStringLiteral("image"), layer(QStringLiteral("main")), QCustomPlot::limBelow);
    layer(QStringLiteral("overlay"))->setMode(QCPLayer::lmBuffered);

    auto* margins = new QCPMarginGroup(this);
    const auto makeScale = [&](const QString& label, const QCPColorGradient& gradient) {
        auto* scale = new QCPColorScale(this);
        scale->setType(QCPAxis::atRight);
        scale->setBarWidth(12);
        scale->setGradient(gradient);
        scale->setLabel(label);
        scale->axis()->setLabelFont(sizedFont(font(), 10));
        scale->axis()->setTickLabelFont(sizedFont(font(), 9));
        scale->axis()->setNumberFormat(QStringLiteral("gb"));
        scale->axis()->ticker()->setTickCount(4);
        scale->setMarginGroup(QCP::msTop | QCP::msBottom, margins);
        return scale;
    };
    // Magma rather than viridis: on the greyed image its purples and oranges read as colour at any
    // opacity, where viridis' blues and teals turn muddy.
    m_attentionScale =
        makeScale(QStringLiteral("attention weight"), colorGradient(ColorMap::Magma));
    m_errorScale =
        makeScale(QStringLiteral("approximation \u2212 exact"), colorGradient(ColorMap::Diverging));

    m_margins = margins;
    const QStringList titles{QStringLiteral("exact"), QStringLiteral("approximation"),
                             QStringLiteral("error")};
    for (int p = 0; p < kPanels; ++p) {
        PanelItems& panel = m_panels[p];
        panel.rect = new QCPAxisRect(this);
        // Top and bottom follow the colour scales (margin group); left and right stay 0.
        panel.rect->setAutoMargins(QCP::msTop | QCP::msBottom);
        panel.rect->setMargins(QMargins(0, 0, 0, 0));
        panel.rect->setMarginGroup(QCP::msTop | QCP::msBottom, margins);
        for (QCPAxis* axis : panel.rect->axes()) {
            axis->setVisible(true);
            axis->setTicks(false);
            axis->setTickLabels(false);
            axis->grid()->setVisible(false);
            axis->setBasePen(QPen(QColor(160, 160, 160), 1));
        }
        panel.rect->axis(QCPAxis::atLeft)->setRangeReversed(true);
        panel.rect->axis(QCPAxis::atRight)->setRangeReversed(true);
        panel.title = new QCPTextElement(this, titles[p], sizedFont(font(), 12));
        m_titles[p] = titles[p];
    }
    // Items find their axis rect through the layout: the panels are placed before they are made.
    arrange(Arrangement::OneRow);
    for (int p = 0; p < kPanels; ++p) {
        PanelItems& panel = m_panels[p];
        QCPAxis* keyAxis = panel.rect->axis(QCPAxis::atBottom);
        QCPAxis* valueAxis = panel.rect->axis(QCPAxis::atLeft);
        panel.image = new QCPItemPixmap(this);
        panel.image->setLayer(QStringLiteral("image"));
        panel.image->setClipAxisRect(panel.rect);
        panel.image->topLeft->setAxes(keyAxis, valueAxis);
        panel.image->bottomRight->setAxes(keyAxis, valueAxis);
        panel.image->setScaled(true, Qt::IgnoreAspectRatio, Qt::SmoothTransformation);

        panel.map = new QCPColorMap(keyAxis, valueAxis);
        panel.map->setInterpolate(false);
        panel.map->setColorScale(p == ErrorPanel ? m_errorScale : m_attentionScale);
        panel.map->setVisible(false);

        panel.outlineHalo = patchRect(this, panel.rect, QPen(QColor(0, 0, 0, 200), 4.5));
        panel.outline = patchRect(this, panel.rect, QPen(Qt::white, 2));
        panel.hover = patchRect(this, panel.rect, QPen(Qt::white, 1.5, Qt::DashLine));
        panel.hover->setLayer(QStringLiteral("overlay"));
    }
    m_hint =
        new FigureHint(this, QStringLiteral("Load an image to see attention over its patches"), 12);

    clear();
}

void ImageOverlayView::setImage(const QImage& image, int gridRows, int gridCols)
{
    Q_ASSERT(gridRows > 0 && gridCols > 0);
    m_gridRows = gridRows;
    m_gridCols = gridCols;
    const QPixmap pixmap = QPixmap::fromImage(greyedImage(image));
    // A small image (a ViT's 28 x 28 input) is drawn with sharp pixels, as the model sees it.
    const Qt::TransformationMode scaling = std::max(image.width(), image.height()) < kSharpPixels
                                               ? Qt::FastTransformation
                                               : Qt::SmoothTransformation;
    for (PanelItems& panel : m_panels) {
        panel.image->setScaled(true, Qt::IgnoreAspectRatio, scaling);
        panel.image->setPixmap(pixmap);
        panel.image->setVisible(true);
        panel.image->topLeft->setCoords(0, 0);
        panel.image->bottomRight->setCoords(gridCols, gridRows);
        panel.map->data()->setSize(gridCols, gridRows);
        panel.map->data()->setRange(QCPRange(0.5, gridCols - 0.5), QCPRange(0.5, gridRows - 0.5));
        panel.map->setVisible(false);
    }
    m_exact = VectorD();
    m_approx = VectorD();
    m_hoveredPatch = -1;
    for (PanelItems& panel : m_panels) {
        for (QCPItemRect* rect : {panel.outline, panel.outlineHalo, panel.hover})
            placeOnPatch(rect, -1, m_gridCols);
    }
    m_attentionScale->setVisible(false);
    m_errorScale->setVisible(false);
    showPanels(true);
    replot(rpQueuedReplot);
}

void ImageOverlayView::setTitles(const QString& figure, const QString& exact, const QString& approx,
                                 const QString& error)
{
    m_figureTitleText = figure;
    m_figureTitle->setText(figure);
    m_titles = {exact, approx, error};
    for (int p = 0; p < kPanels; ++p)
        m_panels[p].title->setText(m_titles[p]);
}

void ImageOverlayView::setAttention(const VectorD& exact, const VectorD& approx, int selectedPatch)
{
    const int patches = m_gridRows * m_gridCols;
    Q_ASSERT(exact.size() == patches && approx.size() == patches);
    m_exact = exact;
    m_approx = approx;

    double top = 0;
    double largestError = 0;
    for (int i = 0; i < patches; ++i) {
        if (std::isfinite(exact[i]))
            top = std::max(top, exact[i]);
        if (std::isfinite(approx[i]))
            top = std::max(top, approx[i]);
        if (std::isfinite(approx[i] - exact[i]))
            largestError = std::max(largestError, std::abs(approx[i] - exact[i]));
    }
    if (top <= 0)
        top = 1;
    if (largestError <= 0)
        largestError = top * 1e-3;
    if (m_heldErrorExtent > 0)
        largestError = m_heldErrorExtent;

    for (int p = 0; p < kPanels; ++p) {
        QCPColorMapData* data = m_panels[p].map->data();
        for (int row = 0; row < m_gridRows; ++row) {
            for (int col = 0; col < m_gridCols; ++col) {
                const int i = row * m_gridCols + col;
                const double value = p == ExactPanel    ? exact[i]
                                     : p == ApproxPanel ? approx[i]
                                                        : approx[i] - exact[i];
                const double fraction =
                    p == ErrorPanel ? std::abs(value) / largestError : value / top;
                data->setCell(col, row, std::isfinite(value) ? value : 0.0);
                data->setAlpha(col, row, overlayAlpha(fraction));
            }
        }
        m_panels[p].map->setVisible(true);
        placeOnPatch(m_panels[p].outline, selectedPatch, m_gridCols);
        placeOnPatch(m_panels[p].outlineHalo, selectedPatch, m_gridCols);
    }
    m_attentionScale->setDataRange(QCPRange(0, top));
    m_errorScale->setDataRange(QCPRange(-largestError, largestError));
    m_attentionScale->setVisible(true);
    m_errorScale->setVisible(true);
    replot(rpQueuedReplot);
}

void ImageOverlayView::setErrorScale(double a)
{
    m_heldErrorExtent = a;
}

void ImageOverlayView::clear()
{
    // Text input clears the view with every result, on a page not shown: a view already clear is
    // not laid out and drawn again.
    if (m_gridRows == 0 && !m_attentionScale->visible())
        return;
    m_gridRows = 0;
    m_gridCols = 0;
    m_exact = VectorD();
    m_approx = VectorD();
    m_hoveredPatch = -1;
    for (PanelItems& panel : m_panels) {
        panel.image->setVisible(false);
        panel.map->setVisible(false);
        for (QCPItemRect* rect : {panel.outline, panel.outlineHalo, panel.hover})
            rect->setVisible(false);
    }
    m_attentionScale->setVisible(false);
    m_errorScale->setVisible(false);
    showPanels(false);
    replot(rpQueuedReplot);
}

QPoint ImageOverlayView::patchCenter(int panel, int patch) const
{
    Q_ASSERT(panel >= 0 && panel < kPanels);
    if (m_gridCols == 0)
        return QPoint();
    const QCPAxisRect* rect = m_panels[panel].rect;
    const double x = rect->axis(QCPAxis::atBottom)->coordToPixel(patch % m_gridCols + 0.5);
    const double y = rect->axis(QCPAxis::atLeft)->coordToPixel(patch / m_gridCols + 0.5);
    return QPointF(x, y).toPoint();
}

int ImageOverlayView::patchAt(const QPointF& pos) const
{
    const int panel = panelAt(pos);
    if (panel < 0 || m_gridCols == 0)
        return -1;
    const QCPAxisRect* rect = m_panels[panel].rect;
    const int col = int(std::floor(rect->axis(QCPAxis::atBottom)->pixelToCoord(pos.x())));
    const int row = int(std::floor(rect->axis(QCPAxis::atLeft)->pixelToCoord(pos.y())));
    if (col < 0 || col >= m_gridCols || row < 0 || row >= m_gridRows)
        return -1;
    return row * m_gridCols + col;
}

void ImageOverlayView::mousePressEvent(QMouseEvent* event)
{
    QCustomPlot::mousePressEvent(event);
    ensureScreenLayout();
    if (event->button() != Qt::LeftButton)
        return;
    const int patch = patchAt(event->position());
    if (patch >= 0)
        emit patchClicked(patch);
}

void ImageOverlayView::mouseMoveEvent(QMouseEvent* event)
{
    QCustomPlot::mouseMoveEvent(event);
    ensureScreenLayout();
    const int patch = patchAt(event->position());
    if (patch != m_hoveredPatch) {
        m_hoveredPatch = patch;
        for (PanelItems& panel : m_panels)
            placeOnPatch(panel.hover, patch, m_gridCols);
        layer(QStringLiteral("overlay"))->replot();
    }
    if (patch < 0) {
        QToolTip::hideText();
        return;
    }
    QString text = QStringLiteral("patch %1 (row %2, column %3)")
                       .arg(patch)
                       .arg(patch / m_gridCols)
                       .arg(patch % m_gridCols);
    if (m_exact.size() > patch) {
        text += QStringLiteral("\nexact %1\napproximation %2\nerror %3")
                    .arg(m_exact[patch], 0, 'g', 4)
                    .arg(m_approx[patch], 0, 'g', 4)
                    .arg(m_approx[patch] - m_exact[patch], 0, 'g', 4);
    }
    QToolTip::showText(event->globalPosition().toPoint(), text, this);
}

void ImageOverlayView::leaveEvent(QEvent* event)
{
    QCustomPlot::leaveEvent(event);
    m_hoveredPatch = -1;
    for (PanelItems& panel : m_panels)
        panel.hover->setVisible(false);
    layer(QStringLiteral("overlay"))->replot();
}

void ImageOverlayView::arrange(Arrangement arrangement)
{
    m_arrangement = arrangement;
    QCPLayoutGrid* grid = m_panelGrid;
    std::vector<QCPLayoutElement*> elements{m_attentionScale, m_errorScale};
    for (PanelItems& panel : m_panels) {
        elements.push_back(panel.title);
        elements.push_back(panel.rect);
    }
    for (QCPLayoutElement* element : elements) {
        if (element->layout())
            grid->take(element);
    }
    grid->simplify();
    const bool oneRow = arrangement == Arrangement::OneRow;
    // One row: exact, approximation, their scale, error, its scale. Two rows: exact,
    // approximation and their scale above; the error below the exact panel, with its scale
    // under it, lying down (a standing scale would stretch across the approximation's column).
    m_errorScale->setType(oneRow ? QCPAxis::atRight : QCPAxis::atBottom);
    m_errorScale->setMarginGroup(QCP::msTop | QCP::msBottom, oneRow ? m_margins : nullptr);
    grid->addElement(0, 0, m_panels[ExactPanel].title);
    grid->addElement(1, 0, m_panels[ExactPanel].rect);
    grid->addElement(0, 1, m_panels[ApproxPanel].title);
    grid->addElement(1, 1, m_panels[ApproxPanel].rect);
    grid->addElement(1, 2, m_attentionScale);
    if (oneRow) {
        grid->addElement(0, 3, m_panels[ErrorPanel].title);
        grid->addElement(1, 3, m_panels[ErrorPanel].rect);
        grid->addElement(1, 4, m_errorScale);
        grid->setRowStretchFactors({0.001, 1});
        grid->setColumnStretchFactors({1, 1, 0.001, 1, 0.001});
    } else {
        grid->addElement(2, 0, m_panels[ErrorPanel].title);
        grid->addElement(3, 0, m_panels[ErrorPanel].rect);
        grid->addElement(4, 0, m_errorScale);
        grid->setRowStretchFactors({0.001, 1, 0.001, 1, 0.001});
        grid->setColumnStretchFactors({1, 1, 0.001});
    }
}

ImageOverlayView::Arrangement ImageOverlayView::bestArrangement() const
{
    // The image's width in each arrangement, from the sizes the titles and scales took in the
    // last layout; the other arrangement must do better by a margin to be taken, so that a
    // resize near the boundary does not flip it back and forth.
    const double aspect = double(std::max(m_gridCols, 1)) / std::max(m_gridRows, 1);
    const QRect area = viewport().marginsRemoved(kFigureMargins);
    const double spacing = m_panelGrid->columnSpacing();
    const double title = m_panels[0].title->outerRect().height() + m_panelGrid->rowSpacing();
    const double figureTitle = m_figureTitle->outerRect().height() + plotLayout()->rowSpacing();
    const double standing = std::max(40, m_attentionScale->outerRect().width());
    const double lying = 1.5 * standing;  // the error scale under the error panel
    const auto imageWidth = [&](double width, double height) {
        return std::min(width, height * aspect);
    };
    const double height = area.height() - figureTitle;
    const double oneRow =
        imageWidth((area.width() - 2 * standing - 4 * spacing) / 3, height - title);
    const double twoRows =
        imageWidth((area.width() - standing - 2 * spacing) / 2, (height - 2 * title - lying) / 2);
    const bool current = m_arrangement == Arrangement::OneRow;
    const double here = current ? oneRow : twoRows;
    const double there = current ? twoRows : oneRow;
    if (there > 1.08 * here)
        return current ? Arrangement::TwoRows : Arrangement::OneRow;
    return m_arrangement;
}

void ImageOverlayView::updateLayout()
{
    m_layoutViewport = viewport();
    const int cols = std::max(m_gridCols, 1);
    const int rows = std::max(m_gridRows, 1);
    const double aspect = double(cols) / rows;

    if (const Arrangement best = bestArrangement(); best != m_arrangement)
        arrange(best);
    // First lay out with the plain margins, then give the slack (the space the panels cannot use
    // at the image's aspect ratio) to the outer margins, so that the figure is centred and the
    // titles and colour scales sit right against the images.
    const auto layOut = [&] {
        plotLayout()->setMargins(kFigureMargins);
        QCustomPlot::updateLayout();
        const int panelColumns = m_arrangement == Arrangement::OneRow ? kPanels : 2;
        const int panelRows = m_arrangement == Arrangement::OneRow ? 1 : 2;
        const QRect first = m_panels[0].rect->rect();
        QMargins margins = kFigureMargins;
        if (first.width() > first.height() * aspect) {
            const int slack = int(panelColumns * (first.width() - first.height() * aspect));
            margins.setLeft(margins.left() + slack / 2);
            margins.setRight(margins.right() + slack - slack / 2);
        } else {
            const int slack = int(panelRows * (first.height() - first.width() / aspect));
            margins.setTop(margins.top() + slack / 2);
            margins.setBottom(margins.bottom() + slack - slack / 2);
        }
        plotLayout()->setMargins(margins);
        QCustomPlot::updateLayout();
    };
    layOut();
    // A title wider than its panel wraps (in its own font: presentation mode enlarges it), the
    // figure's title at the figure's width.
    const int titleWidth = m_panels[0].rect->rect().width() + int(m_panelGrid->columnSpacing());
    const QString figureBefore = m_figureTitle->text();
    setWrappedText(m_figureTitle, m_figureTitleText,
                   viewport().marginsRemoved(kFigureMargins).width());
    bool wrapped = m_figureTitle->text() != figureBefore;
    for (int p = 0; p < kPanels; ++p) {
        const QString before = m_panels[p].title->text();
        setWrappedText(m_panels[p].title, m_titles[p], titleWidth);
        wrapped = wrapped || m_panels[p].title->text() != before;
    }
    if (wrapped)
        layOut();

    // Whole pixels leave a residue: widen the range in the direction that has room, so that the
    // image keeps its aspect ratio and stays whole.
    for (PanelItems& panel : m_panels) {
        const QRect area = panel.rect->rect();
        const double unitsPerPixel = std::max(double(cols) / std::max(area.width(), 1),
                                              double(rows) / std::max(area.height(), 1));
        const double spanX = area.width() * unitsPerPixel;
        const double spanY = area.height() * unitsPerPixel;
        const QCPRange x((cols - spanX) / 2, (cols + spanX) / 2);
        const QCPRange y((rows - spanY) / 2, (rows + spanY) / 2);
        panel.rect->axis(QCPAxis::atBottom)->setRange(x);
        panel.rect->axis(QCPAxis::atTop)->setRange(x);
        panel.rect->axis(QCPAxis::atLeft)->setRange(y);
        panel.rect->axis(QCPAxis::atRight)->setRange(y);
    }
}

void ImageOverlayView::ensureScreenLayout()
{
    if (m_layoutViewport != viewport())
        updateLayout();
}

void ImageOverlayView::showPanels(bool shown)
{
    m_figureTitle->setVisible(shown);
    for (PanelItems& panel : m_panels) {
        panel.title->setVisible(shown);
        for (QCPAxis* axis : panel.rect->axes())
            axis->setVisible(shown);
    }
    m_hint->setVisible(!shown);
}

int ImageOverlayView::panelAt(const QPointF& pos) const
{
    for (int p = 0; p < kPanels; ++p) {
        if (QRectF(m_panels[p].rect->rect()).contains(pos))
            return p;
    }
    return -1;
}

}  // namespace attnlab::ui
