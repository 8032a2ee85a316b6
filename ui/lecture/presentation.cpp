#include "ui/lecture/presentation.h"

#include "ui/plotting/plot_style.h"

#include <qcustomplot.h>
#include <QApplication>
#include <QCheckBox>
#include <QDockWidget>
#include <QEvent>
#include <QMainWindow>
#include <QMenuBar>
#include <QPainter>
#include <QProxyStyle>
#include <QRadialGradient>
#include <QRadioButton>
#include <QScreen>
#include <QStatusBar>
#include <QStyleOption>
#include <QTimer>
#include <QToolBar>

#include <algorithm>
#include <functional>
#include <set>
#include <type_traits>
#include <utility>
#include <vector>

namespace attnlab::ui {

namespace {

// The dot's diameter at the window's font size, in pixels; and how often it follows the cursor.
constexpr double kLaserDiameterInFonts = 2.2;
constexpr int kLaserFollowMs = 16;

// The dynamic property under which the mode remembers what it set on an object, and the value it
// replaced ("<key>.original").
QByteArray appliedKey(const char* key)
{
    return QByteArray("attnlab.presentation.") + key;
}

QByteArray originalKey(const char* key)
{
    return appliedKey(key) + ".original";
}

// The projector colours: ink, paper, the faint lines of grids.
struct ThemeColors {
    QColor ink;
    QColor paper;
    QColor grid;
};

ThemeColors themeColors(ProjectorTheme theme)
{
    if (theme == ProjectorTheme::Dark)
        return {QColor(245, 245, 245), QColor(16, 18, 22), QColor(80, 84, 92)};
    return {QColor(0, 0, 0), QColor(255, 255, 255), QColor(200, 200, 200)};
}

// Relative luminance (WCAG 2) of an opaque colour.
double luminance(const QColor& color)
{
    const auto channel = [](double c) {
        return c <= 0.03928 ? c / 12.92 : std::pow((c + 0.055) / 1.055, 2.4);
    };
    return 0.2126 * channel(color.redF()) + 0.7152 * channel(color.greenF()) +
           0.0722 * channel(color.blueF());
}

// The WCAG contrast ratio of two colours (1 to 21).
double contrast(const QColor& a, const QColor& b)
{
    const double la = luminance(a), lb = luminance(b);
    return (std::max(la, lb) + 0.05) / (std::min(la, lb) + 0.05);
}

// A text colour that reads on the theme's paper: c itself when it does (WCAG AA, 4.5:1), else
// the theme's ink with c's alpha.
QColor readableOn(const QColor& c, const ThemeColors& colors)
{
    if (contrast(c, colors.paper) >= 4.5)
        return c;
    QColor ink = colors.ink;
    ink.setAlpha(c.alpha());
    return ink;
}

// Whether two fonts have one size (in points, or in pixels for a font sized in pixels).
bool sameSize(const QFont& a, const QFont& b)
{
    return a.pointSizeF() == b.pointSizeF() && a.pixelSize() == b.pixelSize();
}

// The font `factor` times larger, in points or in pixels as it is sized.
QFont scaledFont(QFont font, double factor)
{
    if (font.pointSizeF() > 0)
        font.setPointSizeF(font.pointSizeF() * factor);
    else if (font.pixelSize() > 0)
        font.setPixelSize(int(std::lround(font.pixelSize() * factor)));
    return font;
}

// A size or length `factor` times larger, x -> x factor (rounded for a whole number of pixels).
template <typename T>
std::function<T(const T&)> scaledBy(double factor)
{
    return [factor](const T& x) {
        if constexpr (std::is_integral_v<T>)
            return T(std::lround(x * factor));
        else
            return T(x * factor);
    };
}

// A pen kLineScale times thicker (a cosmetic pen, width 0, counts as 1 pixel); NoPen stays.
QPen thickPen(QPen pen)
{
    if (pen.style() != Qt::NoPen)
        pen.setWidthF(std::max(pen.widthF(), 1.0) * PresentationMode::kLineScale);
    return pen;
}

// Sets and restores one attribute of one object, remembering on the object what presentation
// mode set and the value it replaced. Applying again leaves a value the mode set alone and takes
// any other value (the owner changed it) as the new original; restoring puts the original back
// only where the value is still the one the mode set.
class Restyle {
public:
    // fontScale: how much larger applying makes fonts and the sizes that go with them (icons,
    // markers, colour bars); fonts: whether applying scales fonts too (restoring always restores
    // them).
    Restyle(bool apply, double fontScale, bool fonts = true)
        : m_apply(apply), m_fontScale(fontScale), m_fonts(fonts)
    {
    }

    bool fonts() const { return !m_apply || m_fonts; }
    bool applying() const { return m_apply; }
    // f -> f fontScale.
    std::function<QFont(const QFont&)> biggerFont() const
    {
        return [scale = m_fontScale](const QFont& font) { return scaledFont(font, scale); };
    }
    // x -> x fontScale, for a size that goes with the fonts.
    template <typename T>
    std::function<T(const T&)> withFonts() const
    {
        return scaledBy<T>(m_fontScale);
    }

    template <typename T>
    void operator()(QObject* object, const char* key, const T& current,
                    const std::function<T(const T&)>& styled,
                    const std::function<void(const T&)>& set) const
    {
        const QByteArray applied = appliedKey(key);
        const QVariant mark = object->property(applied.constData());
        const bool stillApplied = mark.isValid() && mark.value<T>() == current;
        if (m_apply) {
            if (stillApplied)
                return;
            const T value = styled(current);
            object->setProperty(originalKey(key).constData(), QVariant::fromValue(current));
            object->setProperty(applied.constData(), QVariant::fromValue(value));
            set(value);
            return;
        }
        if (!mark.isValid())
            return;
        if (stillApplied)
            set(object->property(originalKey(key).constData()).value<T>());
        object->setProperty(applied.constData(), QVariant());
        object->setProperty(originalKey(key).constData(), QVariant());
    }

private:
    bool m_apply;
    double m_fontScale;
    bool m_fonts;
};

// Fonts, pens and colours of one axis (its grid too).
void styleAxis(QCPAxis* axis, const Restyle& restyle, const ThemeColors& colors)
{
    const std::function<QFont(const QFont&)> bigger = restyle.biggerFont();
    if (restyle.fonts())
        restyle(axis, "tickLabelFont", axis->tickLabelFont(), bigger,
                {[axis](const QFont& f) { axis->setTickLabelFont(f); }});
    if (restyle.fonts())
        restyle(axis, "labelFont", axis->labelFont(), bigger,
                {[axis](const QFont& f) { axis->setLabelFont(f); }});
    const std::function<QPen(const QPen&)> inkPen = [&](const QPen& pen) {
        QPen p = thickPen(pen);
        p.setColor(colors.ink);
        return p;
    };
    restyle(axis, "basePen", axis->basePen(), inkPen,
            {[axis](const QPen& p) { axis->setBasePen(p); }});
    restyle(axis, "tickPen", axis->tickPen(), inkPen,
            {[axis](const QPen& p) { axis->setTickPen(p); }});
    restyle(axis, "subTickPen", axis->subTickPen(), inkPen,
            {[axis](const QPen& p) { axis->setSubTickPen(p); }});
    const std::function<QColor(const QColor&)> ink = [&](const QColor&) { return colors.ink; };
    restyle(axis, "tickLabelColor", axis->tickLabelColor(), ink,
            {[axis](const QColor& c) { axis->setTickLabelColor(c); }});
    restyle(axis, "labelColor", axis->labelColor(), ink,
            {[axis](const QColor& c) { axis->setLabelColor(c); }});
    const std::function<int(const int&)> longer = scaledBy<int>(PresentationMode::kLineScale);
    restyle(axis, "tickLengthIn", axis->tickLengthIn(), longer,
            {[axis](const int& l) { axis->setTickLengthIn(l); }});
    restyle(axis, "tickLengthOut", axis->tickLengthOut(), longer,
            {[axis](const int& l) { axis->setTickLengthOut(l); }});

    QCPGrid* grid = axis->grid();
    const std::function<QPen(const QPen&)> gridPen = [&](const QPen& pen) {
        QPen p = pen;
        if (p.style() != Qt::NoPen) {
            p.setWidthF(std::max(p.widthF(), 1.0) * 1.5);
            p.setColor(colors.grid);
        }
        return p;
    };
    restyle(grid, "gridPen", grid->pen(), gridPen, {[grid](const QPen& p) { grid->setPen(p); }});
    restyle(grid, "subGridPen", grid->subGridPen(), gridPen,
            {[grid](const QPen& p) { grid->setSubGridPen(p); }});
    restyle(grid, "zeroLinePen", grid->zeroLinePen(), inkPen,
            {[grid](const QPen& p) { grid->setZeroLinePen(p); }});
}

// Fonts and text colours of the layout elements: text elements, legends and their items, colour
// scales (and, recursively, their axes).
void styleElement(QCPLayoutElement* element, const Restyle& restyle, const ThemeColors& colors)
{
    const std::function<QFont(const QFont&)> bigger = restyle.biggerFont();
    const std::function<QColor(const QColor&)> readable = [&](const QColor& c) {
        return readableOn(c, colors);
    };
    if (auto* text = qobject_cast<QCPTextElement*>(element)) {
        if (restyle.fonts())
            restyle(text, "font", text->font(), bigger,
                    {[text](const QFont& f) { text->setFont(f); }});
        restyle(text, "textColor", text->textColor(), readable,
                {[text](const QColor& c) { text->setTextColor(c); }});
    } else if (auto* legend = qobject_cast<QCPLegend*>(element)) {
        if (restyle.fonts())
            restyle(legend, "font", legend->font(), bigger,
                    {[legend](const QFont& f) { legend->setFont(f); }});
        restyle(legend, "textColor", legend->textColor(), readable,
                {[legend](const QColor& c) { legend->setTextColor(c); }});
        restyle(legend, "iconSize", legend->iconSize(), restyle.withFonts<QSize>(),
                {[legend](const QSize& s) { legend->setIconSize(s); }});
        for (int i = 0; i < legend->itemCount(); ++i) {
            QCPAbstractLegendItem* item = legend->item(i);
            if (!item)  // a wrapped legend's grid may have empty cells after its last entry
                continue;
            // setFont on the legend has set the items' fonts too (and new items take it): only
            // an item with a font of its own is scaled on its own.
            if (restyle.fonts() && (!restyle.applying() || item->font() != legend->font()))
                restyle(item, "font", item->font(), bigger,
                        {[item](const QFont& f) { item->setFont(f); }});
            restyle(item, "textColor", item->textColor(), readable,
                    {[item](const QColor& c) { item->setTextColor(c); }});
        }
    } else if (auto* scale = qobject_cast<QCPColorScale*>(element)) {
        restyle(scale, "barWidth", scale->barWidth(), restyle.withFonts<int>(),
                {[scale](const int& w) { scale->setBarWidth(w); }});
        styleAxis(scale->axis(), restyle, colors);
    }
}

// Thickens the pen of item when it is one of Items (lines, rectangles, tracers, ellipses).
template <typename... Items>
void thickenPen(QCPAbstractItem* item, const Restyle& restyle)
{
    const auto thicken = [&](auto* typed) {
        if (typed)
            restyle(typed, "pen", typed->pen(), std::function<QPen(const QPen&)>(thickPen),
                    {[typed](const QPen& p) { typed->setPen(p); }});
    };
    (thicken(qobject_cast<Items*>(item)), ...);
}

// Pens (thicker), scatter markers (larger) and, in the dark theme, text colours of the plottables
// and items of a plot.
void styleContent(QCustomPlot* plot, const Restyle& restyle, const ThemeColors& colors)
{
    const std::function<QPen(const QPen&)> thicker = thickPen;
    const std::function<QFont(const QFont&)> bigger = restyle.biggerFont();
    for (int i = 0; i < plot->plottableCount(); ++i) {
        QCPAbstractPlottable* plottable = plot->plottable(i);
        if (qobject_cast<QCPColorMap*>(plottable))
            continue;
        restyle(plottable, "pen", plottable->pen(), thicker,
                {[plottable](const QPen& p) { plottable->setPen(p); }});
        if (auto* graph = qobject_cast<QCPGraph*>(plottable)) {
            const QCPScatterStyle style = graph->scatterStyle();
            restyle(graph, "scatterSize", style.size(), restyle.withFonts<double>(),
                    {[graph](const double& s) {
                        QCPScatterStyle scatter = graph->scatterStyle();
                        scatter.setSize(s);
                        graph->setScatterStyle(scatter);
                    }});
        }
        if (auto* bars = qobject_cast<QCPErrorBars*>(plottable))
            restyle(bars, "whiskerWidth", bars->whiskerWidth(),
                    scaledBy<double>(PresentationMode::kLineScale),
                    {[bars](const double& w) { bars->setWhiskerWidth(w); }});
    }
    for (int i = 0; i < plot->itemCount(); ++i) {
        QCPAbstractItem* item = plot->item(i);
        if (auto* text = qobject_cast<QCPItemText*>(item)) {
            if (restyle.fonts())
                restyle(text, "font", text->font(), bigger,
                        {[text](const QFont& f) { text->setFont(f); }});
            // Text on its own light box stays as it is; bare text must read on the paper.
            if (text->brush().style() == Qt::NoBrush)
                restyle(text, "color", text->color(),
                        std::function<QColor(const QColor&)>(
                            [&](const QColor& c) { return readableOn(c, colors); }),
                        {[text](const QColor& c) { text->setColor(c); }});
            continue;
        }
        thickenPen<QCPItemStraightLine, QCPItemLine, QCPItemRect, QCPItemTracer, QCPItemEllipse>(
            item, restyle);
    }
}

// The application's style, with the indicators of check boxes and radio buttons outlined in the
// palette's window text colour (the theme's ink), kIndicatorOutline pixels wide. Fusion frames an
// indicator a shade darker than the window: on the dark theme's near-black paper an unchecked box
// vanishes, and on the light theme's white its frame has 2:1 contrast, below the 3:1 that WCAG
// asks of a control's boundary; the ink outline has over 15:1 on either.
class ProjectorIndicatorStyle : public QProxyStyle {
public:
    static constexpr double kIndicatorOutline = 2.0;

    // The indicators grow with the presentation fonts: as tall as the capital letters and ascent of
    // their label's font (Fusion's 13 pixels otherwise stay the size of the small text).
    int pixelMetric(PixelMetric metric, const QStyleOption* option,
                    const QWidget* widget) const override
    {
        const int size = QProxyStyle::pixelMetric(metric, option, widget);
        switch (metric) {
            case PM_IndicatorWidth:
            case PM_IndicatorHeight:
            case PM_ExclusiveIndicatorWidth:
            case PM_ExclusiveIndicatorHeight:
                return widget ? std::max(size, widget->fontMetrics().ascent()) : size;
            default: return size;
        }
    }

    void drawPrimitive(PrimitiveElement element, const QStyleOption* option, QPainter* painter,
                       const QWidget* widget) const override
    {
        QProxyStyle::drawPrimitive(element, option, painter, widget);
        if (element != PE_IndicatorCheckBox && element != PE_IndicatorRadioButton)
            return;
        painter->save();
        painter->setRenderHint(QPainter::Antialiasing);
        painter->setBrush(Qt::NoBrush);
        painter->setPen(QPen(option->palette.color(QPalette::WindowText), kIndicatorOutline));
        const double inset = kIndicatorOutline / 2;
        const QRectF outline = QRectF(option->rect).adjusted(inset, inset, -inset, -inset);
        if (element == PE_IndicatorCheckBox)
            painter->drawRect(outline);
        else
            painter->drawEllipse(outline);
        painter->restore();
    }
};

// Whether widget lies on the Stepper page, which sizes its text with the page itself (it is laid
// out for a screen): scaling it again would crowd its small plots.
bool scalesItsOwnText(const QWidget* widget)
{
    for (const QWidget* up = widget; up; up = up->parentWidget())
        if (up->property(kScalesOwnTextProperty).toBool())
            return true;
    return false;
}

}  // namespace

LaserPointer::LaserPointer(QWidget* parent) : QWidget(parent), m_follow(new QTimer(this))
{
    setAttribute(Qt::WA_TransparentForMouseEvents);
    setAttribute(Qt::WA_NoSystemBackground);
    setAttribute(Qt::WA_TranslucentBackground);
    setObjectName(QStringLiteral("laserPointer"));
    setGeometry(parent->rect());
    parent->installEventFilter(this);
    m_follow->setInterval(kLaserFollowMs);
    connect(m_follow, &QTimer::timeout, this, &LaserPointer::followCursor);
    hide();
}

int LaserPointer::diameter() const
{
    return int(std::lround(QFontMetrics(font()).height() * kLaserDiameterInFonts));
}

void LaserPointer::setPosition(const QPoint& position)
{
    if (position == m_position)
        return;
    const int d = diameter();
    const QRect before(m_position - QPoint(d, d), QSize(2 * d, 2 * d));
    m_position = position;
    update(before);
    update(QRect(m_position - QPoint(d, d), QSize(2 * d, 2 * d)));
}

void LaserPointer::followCursor()
{
    setPosition(mapFromGlobal(QCursor::pos()));
}

void LaserPointer::paintEvent(QPaintEvent*)
{
    if (!rect().contains(m_position))
        return;
    QPainter painter(this);
    painter.setRenderHint(QPainter::Antialiasing);
    const double radius = diameter() / 2.0;
    QRadialGradient glow(m_position, radius);
    glow.setColorAt(0.0, QColor(255, 30, 30, 235));
    glow.setColorAt(0.35, QColor(255, 0, 0, 200));
    glow.setColorAt(1.0, QColor(255, 0, 0, 0));
    painter.setPen(Qt::NoPen);
    painter.setBrush(glow);
    painter.drawEllipse(QPointF(m_position), radius, radius);
}

bool LaserPointer::eventFilter(QObject* watched, QEvent* event)
{
    if (watched == parentWidget() && event->type() == QEvent::Resize)
        setGeometry(parentWidget()->rect());
    return QWidget::eventFilter(watched, event);
}

void LaserPointer::showEvent(QShowEvent* event)
{
    m_follow->start();
    QWidget::showEvent(event);
}

void LaserPointer::hideEvent(QHideEvent* event)
{
    m_follow->stop();
    QWidget::hideEvent(event);
}

PresentationMode::PresentationMode(QMainWindow* window)
    : QObject(window),
      m_window(window),
      m_laser(new LaserPointer(window)),
      m_indicatorStyle(new ProjectorIndicatorStyle)
{
    m_indicatorStyle->setParent(this);
}

PresentationMode::~PresentationMode() = default;

QPalette PresentationMode::projectorPalette(ProjectorTheme theme)
{
    const ThemeColors colors = themeColors(theme);
    const bool dark = theme == ProjectorTheme::Dark;
    QPalette palette(colors.ink, colors.paper);  // window text, window; the rest derived
    const QColor button = dark ? QColor(44, 48, 56) : QColor(232, 232, 232);
    const QColor highlight = dark ? QColor(90, 160, 255) : QColor(0, 70, 200);
    for (const QPalette::ColorGroup group : {QPalette::Active, QPalette::Inactive}) {
        palette.setColor(group, QPalette::Window, colors.paper);
        palette.setColor(group, QPalette::WindowText, colors.ink);
        palette.setColor(group, QPalette::Base, colors.paper);
        palette.setColor(group, QPalette::AlternateBase, button);
        palette.setColor(group, QPalette::Text, colors.ink);
        palette.setColor(group, QPalette::Button, button);
        palette.setColor(group, QPalette::ButtonText, colors.ink);
        palette.setColor(group, QPalette::Highlight, highlight);
        palette.setColor(group, QPalette::HighlightedText, dark ? Qt::black : Qt::white);
        palette.setColor(group, QPalette::ToolTipBase, colors.paper);
        palette.setColor(group, QPalette::ToolTipText, colors.ink);
        palette.setColor(group, QPalette::PlaceholderText, colors.grid);
        palette.setColor(group, QPalette::Link, highlight);
    }
    for (const QPalette::ColorRole role : {QPalette::Window, QPalette::Base, QPalette::Button})
        palette.setColor(QPalette::Disabled, role, palette.color(QPalette::Active, role));
    palette.setColor(QPalette::Disabled, QPalette::WindowText, colors.grid);
    palette.setColor(QPalette::Disabled, QPalette::Text, colors.grid);
    palette.setColor(QPalette::Disabled, QPalette::ButtonText, colors.grid);
    return palette;
}

double PresentationMode::fontScaleFor(int height)
{
    return std::clamp(kFontScale * height / kReferenceHeight, 1.0, kFontScale);
}

void PresentationMode::enter(Placement placement)
{
    if (m_active)
        return;
    m_saved.geometry = m_window->saveGeometry();
    m_saved.rect = m_window->geometry();
    m_saved.state = m_window->saveState();
    m_saved.windowState = m_window->windowState();
    m_saved.menuBarShown = m_window->menuBar()->isVisible() || m_window->isHidden();
    m_saved.statusBarShown = m_window->statusBar()->isVisible() || m_window->isHidden();
    m_saved.ownFont = m_window->testAttribute(Qt::WA_SetFont);
    m_saved.font = m_window->font();
    m_saved.ownPalette = m_window->testAttribute(Qt::WA_SetPalette);
    m_saved.palette = m_window->palette();
    m_active = true;

    for (QDockWidget* dock : m_window->findChildren<QDockWidget*>())
        if (dock->parentWidget() == m_window)
            dock->hide();
    for (QToolBar* bar : m_window->findChildren<QToolBar*>())
        if (bar->parentWidget() == m_window)
            bar->hide();
    m_window->menuBar()->hide();
    m_window->statusBar()->hide();
    m_fontScale =
        fontScaleFor(placement == Placement::FullScreen ? m_window->screen()->geometry().height()
                                                        : m_window->height());
    // Which widgets size their fonts themselves: those whose size stays when their parent's grows
    // with the window's (where the parent's stays too, styleWidget tells by comparing).
    std::vector<std::pair<QWidget*, QFont>> before{{m_window, m_window->font()}};
    for (QWidget* widget : m_window->findChildren<QWidget*>())
        before.emplace_back(widget, widget->font());
    m_window->setFont(scaledFont(m_saved.font, m_fontScale));
    std::set<const QWidget*> grew;
    for (const auto& [widget, font] : before)
        if (!sameSize(widget->font(), font))
            grew.insert(widget);
    for (const auto& [widget, font] : before)
        if (widget->testAttribute(Qt::WA_SetFont) && grew.count(widget->parentWidget()))
            widget->setProperty(appliedKey("ownFontSize").constData(), !grew.count(widget));
    m_window->setPalette(projectorPalette(m_theme));
    styleWidgets(true);
    qApp->installEventFilter(this);
    if (placement == Placement::FullScreen)
        m_window->showFullScreen();
    updateLaserPointer();
    emit activeChanged(true);
}

void PresentationMode::leave()
{
    if (!m_active)
        return;
    m_active = false;
    qApp->removeEventFilter(this);
    updateLaserPointer();
    styleWidgets(false);
    for (QWidget* widget : m_window->findChildren<QWidget*>())
        widget->setProperty(appliedKey("ownFontSize").constData(), QVariant());
    if (m_saved.ownFont)
        m_window->setFont(m_saved.font);
    else
        m_window->setFont(QFont());  // inherit the application's again
    if (m_saved.ownPalette)
        m_window->setPalette(m_saved.palette);
    else
        m_window->setPalette(QPalette());
    // The state first (full screen off), then the geometry it had in that state: a normal
    // window exactly where it was, a maximized one with its normal geometry for later.
    m_window->setWindowState(m_saved.windowState);
    if (m_saved.windowState & (Qt::WindowMaximized | Qt::WindowFullScreen))
        m_window->restoreGeometry(m_saved.geometry);
    else
        m_window->setGeometry(m_saved.rect);
    m_window->restoreState(m_saved.state);
    m_window->menuBar()->setVisible(m_saved.menuBarShown);
    m_window->statusBar()->setVisible(m_saved.statusBarShown);
    // The status bar keeps the height it fixed for its labels at the large font until a layout
    // request makes it measure them again.
    QEvent layoutRequest(QEvent::LayoutRequest);
    QApplication::sendEvent(m_window->statusBar(), &layoutRequest);
    emit activeChanged(false);
}

void PresentationMode::setTheme(ProjectorTheme theme)
{
    if (theme == m_theme)
        return;
    if (!m_active) {
        m_theme = theme;
        return;
    }
    styleWidgets(false);
    m_theme = theme;
    m_window->setPalette(projectorPalette(m_theme));
    styleWidgets(true);
}

void PresentationMode::setLaserPointerEnabled(bool enabled)
{
    m_laserEnabled = enabled;
    updateLaserPointer();
}

void PresentationMode::updateLaserPointer()
{
    const bool shown = m_active && m_laserEnabled;
    m_laser->setVisible(shown);
    if (shown)
        m_laser->raise();
}

void PresentationMode::styleWidgets(bool apply)
{
    for (QWidget* widget : m_window->findChildren<QWidget*>())
        styleWidget(widget, apply);
}

void PresentationMode::styleWidget(QWidget* widget, bool apply)
{
    if (widget == m_laser || widget->isWindow())
        return;
    const Restyle restyle(apply, m_fontScale);
    if (auto* plot = qobject_cast<QCustomPlot*>(widget)) {
        stylePlot(plot, apply);
        plot->replot(QCustomPlot::rpQueuedReplot);
        return;
    }
    // Check boxes and radio buttons take the style that outlines their indicators, unless they
    // have a style of their own.
    if (qobject_cast<QCheckBox*>(widget) || qobject_cast<QRadioButton*>(widget)) {
        const QByteArray styled = appliedKey("indicatorStyle");
        if (apply && !widget->testAttribute(Qt::WA_SetStyle)) {
            widget->setStyle(m_indicatorStyle);
            widget->setProperty(styled.constData(), true);
        } else if (!apply && widget->property(styled.constData()).isValid()) {
            widget->setStyle(nullptr);
            widget->setProperty(styled.constData(), QVariant());
        }
    }
    // Widgets whose font takes its size from their parent's follow the window's; those with a
    // size of their own are scaled. A font set for its weight alone still takes its size from
    // the parent: scaled as well, it grew twice, and leaving set the presentation size for good.
    // Entering noted which widgets have a size of their own (ownFontSize: it stayed when their
    // parent's grew with the window's). Telling them by a size unlike their parent's mistook the
    // explanation's 12.5 points for its parent's when the window's 9 grew to 12.5 (a 1000-pixel
    // screen). A widget made while presenting, or whose parent kept its size, is told that way
    // still (its parent is styled before it).
    const QVariant noted = widget->property(appliedKey("ownFontSize").constData());
    const QWidget* parent = widget->parentWidget();
    const bool ownSize =
        widget->testAttribute(Qt::WA_SetFont) &&
        (noted.isValid() ? noted.toBool() : !(parent && sameSize(widget->font(), parent->font())));
    if (!(apply && scalesItsOwnText(widget)) &&
        (ownSize || widget->property(appliedKey("font")).isValid()))
        if (restyle.fonts())
            restyle(widget, "font", widget->font(), restyle.biggerFont(),
                    {[widget](const QFont& f) { widget->setFont(f); }});
    // Own text colours must read on the theme's window colour, unless the widget sits on a
    // style sheet's background of its own (then it keeps them).
    if (widget->testAttribute(Qt::WA_SetPalette) ||
        widget->property(appliedKey("palette")).isValid()) {
        for (QWidget* up = widget; up && up != m_window; up = up->parentWidget())
            if (!up->styleSheet().isEmpty())
                return;
        const ThemeColors colors = themeColors(m_theme);
        restyle(widget, "palette", widget->palette(),
                std::function<QPalette(const QPalette&)>([&](const QPalette& own) {
                    QPalette palette = projectorPalette(m_theme);
                    for (const QPalette::ColorRole role :
                         {QPalette::WindowText, QPalette::Text, QPalette::ButtonText})
                        palette.setColor(role, readableOn(own.color(role), colors));
                    return palette;
                }),
                {[widget](const QPalette& p) { widget->setPalette(p); }});
    }
}

void PresentationMode::stylePlot(QCustomPlot* plot, bool apply)
{
    const Restyle restyle(apply, m_fontScale, !scalesItsOwnText(plot));
    const ThemeColors colors = themeColors(m_theme);
    const bool alreadyStyled = plot->property(appliedKey("background")).isValid();
    if (apply && !alreadyStyled) {
        plot->setBackground(colors.paper);
        plot->setProperty(appliedKey("background").constData(), true);
    } else if (!apply && alreadyStyled) {
        plot->setBackground(Qt::white);  // every plot of Attention Lab is drawn on white
        plot->setProperty(appliedKey("background").constData(), QVariant());
    }
    for (QCPAxisRect* rect : plot->axisRects())
        for (QCPAxis* axis : rect->axes())
            styleAxis(axis, restyle, colors);
    QList<QCPLayoutElement*> elements = plot->plotLayout()->elements(true);
    for (QCPAxisRect* rect : plot->axisRects())
        elements += rect->insetLayout()->elements(true);
    for (QCPLayoutElement* element : elements)
        if (element)
            styleElement(element, restyle, colors);
    styleContent(plot, restyle, colors);

    // Views rebuild curves and reset fonts as results arrive: re-apply before every replot.
    if (!plot->property(appliedKey("hooked")).isValid()) {
        plot->setProperty(appliedKey("hooked").constData(), true);
        connect(plot, &QCustomPlot::beforeReplot, this, [this, plot] {
            if (m_active)
                stylePlot(plot, true);
        });
    }
}

bool PresentationMode::eventFilter(QObject* watched, QEvent* event)
{
    if (m_active && event->type() == QEvent::Polish && watched->isWidgetType()) {
        auto* widget = static_cast<QWidget*>(watched);
        if (m_window->isAncestorOf(widget))
            styleWidget(widget, true);
    }
    return QObject::eventFilter(watched, event);
}

}  // namespace attnlab::ui
