#include "stepper/stepper_view.h"

#include "errors.h"
#include "plotting/heatmap_view.h"
#include "plotting/plot_style.h"

#include <QCoreApplication>
#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QFontInfo>
#include <QFrame>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QKeyEvent>
#include <QLabel>
#include <QMessageBox>
#include <QPainter>
#include <QProgressDialog>
#include <QSaveFile>
#include <QScrollArea>
#include <QScrollBar>
#include <QSlider>
#include <QSpinBox>
#include <QStyle>
#include <QStyleOptionToolButton>
#include <QTimer>
#include <QToolButton>
#include <QVBoxLayout>
#include <QtConcurrent/QtConcurrentRun>
#include <qcustomplot.h>

#include <algorithm>
#include <cmath>
#include <limits>

namespace attnlab::ui {

// One job of the page's worker: a whole experiment (the causal steps and the causal matrices P,
// P^), or, for the experiment shown, only the states S_i of a window of positions.
struct StepperJob {
    bool whole = true;
    ExperimentSpec spec;
    std::shared_ptr<const AttentionInput> input;
    int head = 0;
    MemoryBudget budget;
    Eigen::Index around = 0;     // the position the kept states are placed around
    double keptMatrixBytes = 0;  // window jobs: the bytes of the P and P^ already kept
    quint64 generation = 0;
};

// What the page shows for one experiment.
struct StepperData {
    quint64 generation = 0;
    std::shared_ptr<const AttentionInput> input;
    std::shared_ptr<const CausalSteps> steps;
    std::shared_ptr<const MatrixD> exactAttention;   // causal P (L x L); null when not kept
    std::shared_ptr<const MatrixD> approxAttention;  // causal P^
    QString matricesNote;        // why P and P^ are not kept
    double allStatesBytes = 0;   // causalStepsBytes with every state kept
};

struct StepperOutcome {
    StepperData data;
    QString error;
    bool cancelled = false;
};

namespace {

// Sizes in points. The page is read off a projector from the back of a room.
constexpr double kTokenPoints = 15;
constexpr double kTokenIndexPoints = 10;
constexpr double kPanelTitlePoints = 14;
constexpr double kPlotTitlePoints = 13;
constexpr double kTickPoints = 11;
constexpr double kAxisLabelPoints = 12;
constexpr double kStepTitlePoints = 19;
constexpr double kEquationPoints = 19;
constexpr double kValuePoints = 17;
constexpr double kLinePoints = 13;
constexpr double kControlPoints = 12;
constexpr double kStatePoints = 14;

// Token boxes of the strip, in pixels.
constexpr int kTokenPadding = 9;
constexpr int kTokenGap = 5;
constexpr int kStripMargin = 4;
constexpr int kMaxTokenCharacters = 16;

// The most cells of phi(k_i) v_i^T outlined as "changed most", and the share of the largest change
// a cell needs to be among them.
constexpr int kMarkedCells = 8;
constexpr double kMarkedShare = 0.5;
constexpr double kMarkPixels = 11;
// The first entries of y_i and o_i written in the formula panel.
constexpr int kPreviewEntries = 3;

// The smallest panels: below them the body scrolls.
constexpr QSize kMinimumHeatmapSize(230, 220);
constexpr QSize kMinimumPlotSize(190, 220);

// The page is designed for this size (a full-screen window on a 1920 x 1080 projector); its text
// scales with the page's size, within these bounds, in steps of kTextScaleStep.
constexpr QSize kDesignSize(1900, 980);
constexpr double kMinTextScale = 0.65;
constexpr double kMaxTextScale = 1.5;
constexpr double kTextScaleStep = 0.05;
// The dynamic properties that hold a widget's designed font size and weight.
constexpr char kPointsProperty[] = "attnlabPoints";
constexpr char kBoldProperty[] = "attnlabBold";

constexpr double kMinSpeed = 0.25;
constexpr double kMaxSpeed = 30.0;

// Okabe-Ito-like colours, distinct for every common colour-vision deficiency and in grey: exact
// results blue and approximations orange as on the other pages; what step i adds vermilion.
const QColor kExactColor(0x1f, 0x4e, 0x8c);
const QColor kApproxColor(0xe6, 0x8a, 0x00);
const QColor kAddedColor(0xd5, 0x5e, 0x00);
const QColor kStateColor(0x9d, 0xb3, 0xd1);
const QColor kQueryColor(0x5b, 0x3a, 0x8c);
const QColor kDifferenceColor(0x55, 0x55, 0x55);
const QColor kInkColor(40, 40, 40);
const QColor kFrameColor(90, 90, 90);
const QColor kWarningColor(0xb0, 0x1c, 0x1c);

// x with 4 significant digits, as people write it: a true minus sign, "∞" beyond the double
// range, "undefined" for NaN (never "nan" on screen).
QString displayNumber(double x)
{
    if (std::isnan(x))
        return QStringLiteral("undefined");
    if (std::isinf(x))
        return x > 0 ? QStringLiteral("\u221e") : QStringLiteral("\u2212\u221e");
    return QString::number(x, 'g', 4).replace(QLatin1Char('-'), QChar(0x2212));
}

// A short exponent form for tiny differences ("3.1e-08"), with the same care as displayNumber.
QString displayDifference(double x)
{
    if (!std::isfinite(x))
        return displayNumber(x);
    return x == 0 ? QStringLiteral("0") : QString::number(x, 'e', 1);
}

// The first kPreviewEntries entries of a row, "(0.1234, −0.5678, 0.9012, …)".
QString vectorPreview(const Eigen::Ref<const Eigen::RowVectorXd>& row)
{
    QStringList entries;
    for (Eigen::Index c = 0; c < std::min<Eigen::Index>(row.size(), kPreviewEntries); ++c)
        entries.append(displayNumber(row[c]));
    if (row.size() > kPreviewEntries)
        entries.append(QStringLiteral("\u2026"));
    return QLatin1Char('(') + entries.join(QStringLiteral(", ")) + QLatin1Char(')');
}

// values with every entry that is not finite replaced by NaN (drawn as a gap or grey cell).
MatrixD finiteOrNaN(MatrixD values)
{
    values = values.unaryExpr([](double x) {
        return std::isfinite(x) ? x : std::numeric_limits<double>::quiet_NaN();
    });
    return values;
}

// The largest finite |entry| of values, 0 when none is.
template <typename Derived>
double largestMagnitude(const Eigen::DenseBase<Derived>& values)
{
    double largest = 0;
    for (Eigen::Index r = 0; r < values.rows(); ++r)
        for (Eigen::Index c = 0; c < values.cols(); ++c)
            if (const double x = values(r, c); std::isfinite(x))
                largest = std::max(largest, std::abs(x));
    return largest;
}

// [min(0, smallest), max(0, largest)] of the finite entries of the given vectors, with 8% room
// at the ends that are not 0; [0, 1] when all are 0.
QCPRange barRange(std::initializer_list<const VectorD*> vectors)
{
    double lowest = 0;
    double highest = 0;
    for (const VectorD* values : vectors)
        for (const double x : *values)
            if (std::isfinite(x)) {
                lowest = std::min(lowest, x);
                highest = std::max(highest, x);
            }
    if (lowest == highest)
        return QCPRange(0, 1);
    const double room = 0.08 * (highest - lowest);
    return QCPRange(lowest < 0 ? lowest - room : 0.0, highest > 0 ? highest + room : 0.0);
}

// Shows values as bars at keys 0..n-1; entries that are not finite are left out.
void setBars(QCPBars* bars, const VectorD& values)
{
    QVector<double> keys;
    QVector<double> heights;
    for (Eigen::Index i = 0; i < values.size(); ++i) {
        if (std::isfinite(values[i])) {
            keys.append(double(i));
            heights.append(values[i]);
        }
    }
    bars->setData(keys, heights, true);
}

// The look of one axis rect of the bar plots: thin dark axes, a light value grid with a dark
// zero line, about four ticks on the value axis (fonts: scalePlotFonts).
void styleAxisRect(QCPAxisRect* rect, const QString& keyLabel)
{
    for (QCPAxis* axis : {rect->axis(QCPAxis::atBottom), rect->axis(QCPAxis::atLeft)}) {
        axis->setTickLabelColor(kInkColor);
        axis->setLabelColor(kInkColor);
        axis->setBasePen(QPen(kFrameColor, 1));
        axis->setTickPen(QPen(kFrameColor, 1));
        axis->setSubTicks(false);
        axis->setTickLength(0, 4);
        axis->ticker()->setTickCount(4);
        axis->grid()->setPen(QPen(QColor(228, 228, 228), 0));
        axis->grid()->setZeroLinePen(QPen(kFrameColor, 1));
    }
    rect->axis(QCPAxis::atBottom)->grid()->setVisible(false);
    rect->axis(QCPAxis::atBottom)->setLabel(keyLabel);
    rect->axis(QCPAxis::atLeft)->setNumberFormat(QStringLiteral("g"));
    rect->axis(QCPAxis::atLeft)->setNumberPrecision(3);
}

// Replaces the plot's layout by axis rects stacked top to bottom, each under its title (none for
// an empty title), with their left edges aligned and whole-number ticks along the bottom (the
// keys are features, dimensions and steps); returns them.
QList<QCPAxisRect*> stackedAxisRects(QCustomPlot* plot, const QStringList& titles,
                                     const QStringList& keyLabels)
{
    plot->setBackground(Qt::white);
    plot->setAutoAddPlottableToLegend(false);
    plot->plotLayout()->clear();
    auto* group = new QCPMarginGroup(plot);
    QList<QCPAxisRect*> rects;
    QList<double> stretch;
    for (int r = 0; r < titles.size(); ++r) {
        const int row = plot->plotLayout()->rowCount();
        if (!titles[r].isEmpty()) {
            auto* title = new QCPTextElement(plot, titles[r]);
            title->setTextColor(kInkColor);
            plot->plotLayout()->addElement(row, 0, title);
            stretch << 0.001;
        }
        auto* rect = new QCPAxisRect(plot);
        plot->plotLayout()->addElement(plot->plotLayout()->rowCount(), 0, rect);
        styleAxisRect(rect, keyLabels.value(r));
        rect->axis(QCPAxis::atBottom)->setTicker(integerTicker());  // features, dims, steps
        rect->setMarginGroup(QCP::msLeft | QCP::msRight, group);
        rects.append(rect);
        stretch << 1.0;
    }
    plot->plotLayout()->setRowStretchFactors(stretch);
    plot->plotLayout()->setRowSpacing(0);
    return rects;
}

// Bars in rect's axes, outlined in their own colour.
QCPBars* addBars(QCPAxisRect* rect, const QString& name, const QColor& color, double width = 0.8)
{
    auto* bars = new QCPBars(rect->axis(QCPAxis::atBottom), rect->axis(QCPAxis::atLeft));
    bars->setName(name);
    bars->setPen(QPen(color, 0));  // a bar narrower than a pixel still shows as a line
    bars->setBrush(color);
    bars->setWidth(width);
    return bars;
}

// Puts a legend of `entries` in a row of its own above `rect` (below its title), centred, so
// that it never covers a bar; the plot's axis rects keep all the stretch.
void addLegend(QCustomPlot* plot, QCPAxisRect* rect, const QList<QCPAbstractPlottable*>& entries)
{
    QCPLayoutGrid* layout = plot->plotLayout();
    int row = 0;
    while (row < layout->rowCount() && layout->element(row, 0) != rect)
        ++row;
    layout->insertRow(row);
    auto* centred = new QCPLayoutGrid;
    layout->addElement(row, 0, centred);
    auto* legend = new QCPLegend;
    centred->addElement(0, 0, new QCPLayoutElement(plot));
    centred->addElement(0, 1, legend);
    centred->addElement(0, 2, new QCPLayoutElement(plot));
    centred->setColumnStretchFactors({1, 0.001, 1});
    legend->setLayer(QStringLiteral("legend"));
    legend->setBrush(Qt::NoBrush);
    legend->setBorderPen(Qt::NoPen);
    legend->setIconSize(18, 12);
    legend->setColumnSpacing(14);
    legend->setFillOrder(QCPLegend::foColumnsFirst);
    legend->setMargins(QMargins(2, 0, 2, 0));
    for (QCPAbstractPlottable* plottable : entries)
        plottable->addToLegend(legend);
    plot->legend = legend;  // addToLegend() and removeFromLegend() act on it
    QList<double> stretch;
    for (int r = 0; r < layout->rowCount(); ++r)
        stretch.append(qobject_cast<QCPAxisRect*>(layout->element(r, 0)) ? 1.0 : 0.001);
    layout->setRowStretchFactors(stretch);
}

// The fonts of a plot's axes, titles, legends and colour scales at `scale` times the sizes the
// page is designed with (kTickPoints, ...); HeatmapView's own title is not used here.
void scalePlotFonts(QCustomPlot* plot, double scale)
{
    // A named family rather than an alias such as "Sans Serif", which SVG viewers do not know.
    const QFont base(QFontInfo(plot->font()).family());
    const QFont tickFont = sizedFont(base, kTickPoints * scale);
    const QFont labelFont = sizedFont(base, kAxisLabelPoints * scale);
    QList<QCPAxis*> axes;
    for (QCPAxisRect* rect : plot->axisRects())
        axes += rect->axes();
    for (QCPLayoutElement* element : plot->plotLayout()->elements(true)) {
        if (auto* title = qobject_cast<QCPTextElement*>(element))
            title->setFont(sizedFont(base, kPlotTitlePoints * scale, true));
        else if (auto* legend = qobject_cast<QCPLegend*>(element))
            legend->setFont(tickFont);
        else if (auto* colorScale = qobject_cast<QCPColorScale*>(element))
            axes.append(colorScale->axis());
    }
    for (QCPAxis* axis : axes) {
        axis->setTickLabelFont(tickFont);
        axis->setLabelFont(labelFont);
    }
    plot->replot(QCustomPlot::rpQueuedReplot);
}

// Outlines cells of `view` (row, column), reusing the rectangles in `marks` (two per cell: a
// dark outline with a white one inside, visible on every colour of the map) and hiding the rest.
// An outline is at least kMarkPixels wide, so that it shows on cells of a few pixels.
void markCells(HeatmapView* view, std::vector<QCPItemRect*>& marks,
               const std::vector<std::pair<int, int>>& cells)
{
    while (marks.size() < 2 * cells.size()) {
        for (const bool outer : {true, false}) {
            auto* mark = new QCPItemRect(view);
            mark->setLayer(QStringLiteral("overlay"));
            mark->setPen(outer ? QPen(QColor(0, 0, 0, 230), 3) : QPen(Qt::white, 1.5));
            mark->setBrush(Qt::NoBrush);
            mark->setClipToAxisRect(true);
            marks.push_back(mark);
        }
    }
    const double cellPixels =
        std::max(1e-3, std::abs(view->xAxis->coordToPixel(1) - view->xAxis->coordToPixel(0)));
    const double outerPad = std::max(0.1, (kMarkPixels / cellPixels - 1) / 2);
    const double innerPad = outerPad - 2.0 / cellPixels;
    for (std::size_t m = 0; m < marks.size(); ++m) {
        const std::size_t cell = m / 2;
        marks[m]->setVisible(cell < cells.size());
        if (cell >= cells.size())
            continue;
        const auto [row, col] = cells[cell];
        const double pad = m % 2 == 0 ? outerPad : innerPad;
        marks[m]->topLeft->setCoords(col - 0.5 - pad, row - 0.5 - pad);
        marks[m]->bottomRight->setCoords(col + 0.5 + pad, row + 0.5 + pad);
    }
}

// The cells of `change` of largest magnitude: at most kMarkedCells, each at least kMarkedShare of
// the largest, largest first.
std::vector<std::pair<int, int>> largestCells(const MatrixD& change)
{
    const double largest = largestMagnitude(change);
    std::vector<Eigen::Index> order;
    for (Eigen::Index i = 0; i < change.size(); ++i)
        if (largest > 0 && std::abs(change.data()[i]) >= kMarkedShare * largest)
            order.push_back(i);
    const std::size_t kept = std::min<std::size_t>(order.size(), kMarkedCells);
    std::partial_sort(order.begin(), order.begin() + std::ptrdiff_t(kept), order.end(),
                      [&](Eigen::Index a, Eigen::Index b) {
                          return std::abs(change.data()[a]) > std::abs(change.data()[b]);
                      });
    std::vector<std::pair<int, int>> cells;
    for (std::size_t k = 0; k < kept; ++k)
        cells.emplace_back(int(order[k] / change.cols()), int(order[k] % change.cols()));
    return cells;
}

// Gives widget a font of `points` (times the page's text scale, see applyTextScale).
void setTextPoints(QWidget* widget, double points, bool bold = false)
{
    widget->setProperty(kPointsProperty, points);
    widget->setProperty(kBoldProperty, bold);
    widget->setFont(sizedFont(widget->font(), points, bold));
}

// A label of `points` in the given colour; rich text when the text has tags.
QLabel* makeLabel(const QString& text, double points, bool bold = false,
                  const QColor& color = kInkColor)
{
    auto* label = new QLabel(text);
    setTextPoints(label, points, bold);
    QPalette palette = label->palette();
    palette.setColor(QPalette::WindowText, color);
    label->setPalette(palette);
    return label;
}

// A panel of the frame: a large title (rich text) over content.
QWidget* makePanel(QLabel* title, QWidget* content)
{
    auto* panel = new QWidget;
    auto* layout = new QVBoxLayout(panel);
    layout->setContentsMargins(2, 2, 2, 2);
    layout->setSpacing(2);
    title->setAlignment(Qt::AlignHCenter);
    title->setWordWrap(true);
    layout->addWidget(title);
    layout->addWidget(content, 1);
    return panel;
}

// Exactly what the stepper for job needs, on the worker thread: for a whole job the causal P and
// P^ of the head (compute() with matrices only; over the budget they are left out with a note),
// then the causal steps with phi(Q), phi(K) and as many states as the budget allows (all, or a
// window around job.around). Errors become outcome->error.
void runJob(const StepperJob& job, const std::atomic<bool>& cancel, StepperOutcome* outcome)
{
    try {
        if (job.spec.exactMethod)
            throw InputError(QStringLiteral(
                "the method \"exact\" has no recurrent form. The stepper runs a feature map as a "
                "recurrent network: choose FAVOR+, elu+1 or another feature map."));
        const AttentionInput& input = *job.input;
        StepperData& data = outcome->data;
        data.generation = job.generation;
        data.input = job.input;
        const auto cancelled = [&cancel] { return cancel.load(); };
        double matrixBytes = job.keptMatrixBytes;
        if (job.whole) {
            ExperimentSpec causal = job.spec;
            causal.causal = true;
            ComputeOptions options;
            options.matrices = true;
            options.kernels = false;
            options.features = false;
            options.budget = job.budget;
            options.cancelled = cancelled;
            try {
                ExperimentResult result = compute(causal, input, options);
                HeadResult& head = result.heads[std::size_t(job.head)];
                data.exactAttention =
                    std::make_shared<const MatrixD>(head.attentionExact.toDouble());
                data.approxAttention =
                    std::make_shared<const MatrixD>(head.attentionApprox.toDouble());
                matrixBytes = 8.0 * double(data.exactAttention->size() +
                                           data.approxAttention->size());
            } catch (const ResourceError& e) {
                data.matricesNote = e.message();
            }
        }

        const Eigen::Index length = input.length();
        const Eigen::Index features = featureCountOf(job.spec.featureMap, int(input.headDim()));
        const Eigen::Index valueDim = input.valueDim();
        data.allStatesBytes = causalStepsBytes(length, features, valueDim, length, true);
        CausalStepsOptions options;
        options.head = job.head;
        options.features = true;
        options.budget = job.budget;
        options.cancelled = cancelled;
        const double available = double(job.budget.bytes()) - matrixBytes;
        if (data.allStatesBytes > available) {
            const double perState = 8.0 * double(features) * double(valueDim);
            const double room =
                available - causalStepsBytes(length, features, valueDim, 0, true);
            const Eigen::Index window =
                std::clamp<Eigen::Index>(Eigen::Index(std::floor(room / perState)), 1, length);
            options.statesFrom =
                std::clamp<Eigen::Index>(job.around - window / 4, 0, length - window);
            options.statesTo = options.statesFrom + window;
        }
        data.steps = std::make_shared<const CausalSteps>(causalSteps(job.spec, input, options));
    } catch (const Cancelled&) {
        outcome->cancelled = true;
    } catch (const InputError& e) {
        outcome->error = e.message();
    } catch (const ResourceError& e) {
        outcome->error = e.message();
    } catch (const std::bad_alloc&) {
        outcome->error = QStringLiteral("Out of memory: lower the memory budget so that requests "
                                        "this large are refused before they are allocated.");
    } catch (const std::exception& e) {
        outcome->error = QString::fromLocal8Bit(e.what());
    }
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// StepperTokenStrip

namespace {

// The font of the step numbers under the tokens, in proportion to the tokens' font.
QFont tokenIndexFont(const QFont& base)
{
    return sizedFont(base, base.pointSizeF() * kTokenIndexPoints / kTokenPoints);
}

}  // namespace

StepperTokenStrip::StepperTokenStrip(QWidget* parent) : QWidget(parent)
{
    setFont(sizedFont(font(), kTokenPoints));
    setToolTip(tr("The input's tokens; the number under each is its step i. Click one to go "
                  "there."));
}

void StepperTokenStrip::setTokens(const QStringList& labels)
{
    m_labels = labels;
    m_current = -1;
    layoutTokens();
}

void StepperTokenStrip::changeEvent(QEvent* event)
{
    if (event->type() == QEvent::FontChange)
        layoutTokens();
    QWidget::changeEvent(event);
}

void StepperTokenStrip::layoutTokens()
{
    const QStringList& labels = m_labels;
    const QFontMetrics metrics(font());
    const QFontMetrics indexMetrics(tokenIndexFont(font()));
    m_texts.clear();
    m_left.clear();
    m_width.clear();
    int x = kStripMargin;
    for (int t = 0; t < labels.size(); ++t) {
        QString text = labels[t].simplified();
        if (text.isEmpty())
            text = QStringLiteral("\u2423");  // a visible space
        text = metrics.elidedText(text, Qt::ElideRight,
                                  metrics.averageCharWidth() * kMaxTokenCharacters);
        const int width = std::max(metrics.horizontalAdvance(text),
                                   indexMetrics.horizontalAdvance(QString::number(t + 1))) +
                          2 * kTokenPadding;
        m_texts.append(text);
        m_left.push_back(x);
        m_width.push_back(width);
        x += width + kTokenGap;
    }
    setMinimumSize(sizeHint());
    updateGeometry();
    update();
}

void StepperTokenStrip::setCurrent(int position)
{
    if (position == m_current)
        return;
    m_current = position;
    update();
}

QRect StepperTokenStrip::tokenRect(int position) const
{
    const QFontMetrics metrics(font());
    const QFontMetrics indexMetrics(tokenIndexFont(font()));
    return QRect(m_left[std::size_t(position)], kStripMargin, m_width[std::size_t(position)],
                 metrics.height() + indexMetrics.height() + 10);
}

QSize StepperTokenStrip::sizeHint() const
{
    const QFontMetrics metrics(font());
    const QFontMetrics indexMetrics(tokenIndexFont(font()));
    const int width = m_left.empty() ? 0 : m_left.back() + m_width.back() + kStripMargin;
    return QSize(width, metrics.height() + indexMetrics.height() + 10 + 2 * kStripMargin);
}

QSize StepperTokenStrip::minimumSizeHint() const
{
    return sizeHint();
}

int StepperTokenStrip::firstTokenFrom(int x) const
{
    int low = 0;
    int high = count();
    while (low < high) {
        const int middle = (low + high) / 2;
        if (m_left[std::size_t(middle)] + m_width[std::size_t(middle)] <= x)
            low = middle + 1;
        else
            high = middle;
    }
    return low;
}

int StepperTokenStrip::tokenAt(int x) const
{
    const int t = firstTokenFrom(x);
    return t < count() && m_left[std::size_t(t)] <= x ? t : -1;
}

void StepperTokenStrip::paintEvent(QPaintEvent* event)
{
    QPainter painter(this);
    painter.setRenderHint(QPainter::Antialiasing);
    const QFont textFont = font();
    QFont currentFont = textFont;
    currentFont.setBold(true);
    const QFont indexFont = tokenIndexFont(textFont);
    const QFontMetrics metrics(textFont);
    const QFontMetrics indexMetrics(indexFont);
    const QRect exposed = event->rect();
    for (int t = firstTokenFrom(exposed.left()); t < count(); ++t) {
        const QRect box = tokenRect(t);
        if (box.left() > exposed.right())
            break;
        if (!box.intersects(exposed))
            continue;
        QColor fill = Qt::white;
        QColor border(205, 205, 205);
        QColor text(128, 128, 128);
        if (t == m_current) {
            fill = kExactColor;
            border = kExactColor.darker(130);
            text = Qt::white;
        } else if (t < m_current) {
            fill = QColor(0xdb, 0xe5, 0xf1);
            border = kStateColor;
            text = kInkColor;
        }
        painter.setPen(QPen(border, t == m_current ? 2 : 1));
        painter.setBrush(fill);
        painter.drawRoundedRect(QRectF(box).adjusted(0.5, 0.5, -0.5, -0.5), 6, 6);
        painter.setPen(text);
        painter.setFont(t == m_current ? currentFont : textFont);
        painter.drawText(QRect(box.left(), box.top() + 3, box.width(), metrics.height()),
                         Qt::AlignHCenter | Qt::AlignVCenter, m_texts[t]);
        painter.setFont(indexFont);
        painter.drawText(QRect(box.left(), box.bottom() - indexMetrics.height() - 3, box.width(),
                               indexMetrics.height()),
                         Qt::AlignHCenter | Qt::AlignVCenter, QString::number(t + 1));
    }
}

void StepperTokenStrip::mousePressEvent(QMouseEvent* event)
{
    const int t = tokenAt(event->position().toPoint().x());
    if (event->button() == Qt::LeftButton && t >= 0 &&
        tokenRect(t).contains(event->position().toPoint())) {
        emit tokenClicked(t);
        event->accept();
        return;
    }
    QWidget::mousePressEvent(event);
}

// ---------------------------------------------------------------------------------------------
// StepperView: building the page

StepperView::StepperView(QWidget* parent) : QWidget(parent), m_timer(new QTimer(this))
{
    m_pool.setMaxThreadCount(1);
    connect(&m_watcher, &QFutureWatcher<void>::finished, this, &StepperView::finished);
    connect(m_timer, &QTimer::timeout, this, &StepperView::advance);
    setFocusPolicy(Qt::StrongFocus);

    m_errorBar = new QLabel;
    m_errorBar->setObjectName(QStringLiteral("stepperError"));
    m_errorBar->setWordWrap(true);
    m_errorBar->setTextInteractionFlags(Qt::TextSelectableByMouse);
    setTextPoints(m_errorBar, kLinePoints);
    m_errorBar->setStyleSheet(QStringLiteral(
        "QLabel { background: #fde8e8; color: #7a1010; border: 1px solid #e4a0a0; "
        "border-radius: 3px; padding: 6px; }"));
    m_errorBar->hide();

    QWidget* controls = buildControls();

    m_frame = new QWidget;
    m_frame->setObjectName(QStringLiteral("stepperFrame"));
    m_frame->setAutoFillBackground(true);
    QPalette white = m_frame->palette();
    white.setColor(QPalette::Window, Qt::white);
    m_frame->setPalette(white);

    m_agreementLine = makeLabel(QString(), kLinePoints);
    m_agreementLine->setObjectName(QStringLiteral("agreementLine"));
    m_agreementLine->setWordWrap(true);
    m_stateLine = makeLabel(QString(), kStatePoints);
    m_stateLine->setObjectName(QStringLiteral("stateLine"));
    m_stateLine->setWordWrap(true);

    m_strip = new StepperTokenStrip;
    m_strip->setObjectName(QStringLiteral("tokenStrip"));
    setTextPoints(m_strip, kTokenPoints);
    m_strip->setFocusPolicy(Qt::ClickFocus);
    m_strip->setFocusProxy(this);
    connect(m_strip, &StepperTokenStrip::tokenClicked, this, [this](int t) {
        pause();
        setPosition(t);
    });
    m_stripScroll = new QScrollArea;
    m_stripScroll->setWidget(m_strip);
    m_stripScroll->setWidgetResizable(true);
    m_stripScroll->setFrameShape(QFrame::NoFrame);
    m_stripScroll->setVerticalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    m_stripScroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAsNeeded);
    m_stripScroll->setFocusPolicy(Qt::NoFocus);
    m_stripScroll->horizontalScrollBar()->setFocusPolicy(Qt::NoFocus);

    buildPlots();
    QWidget* formula = buildFormulaPanel();

    const auto title = [](const QString& text) {
        return makeLabel(text, kPanelTitlePoints, true);
    };
    m_approxTitle = title(QString());
    m_exactTitle = title(QString());
    auto* bodyWidget = new QWidget;
    bodyWidget->setObjectName(QStringLiteral("stepperBody"));
    auto* body = new QGridLayout(bodyWidget);
    body->setContentsMargins(0, 0, 0, 0);
    body->setHorizontalSpacing(6);
    body->setVerticalSpacing(4);
    body->addWidget(formula, 0, 0, 2, 1);
    body->addWidget(makePanel(title(tr("What step i adds")), m_inputPlot), 0, 1);
    body->addWidget(
        makePanel(title(tr("<span style='color:#d55e00'>+ \u03c6(k<sub>i</sub>) "
                           "v<sub>i</sub><sup>T</sup></span> (own colour scale)")),
                  m_updateView),
        0, 2);
    body->addWidget(
        makePanel(title(tr("= state S<sub>i</sub>, largest changes outlined")), m_stateView), 0,
        3);
    body->addWidget(makePanel(title(tr("Normalizer and query")), m_normalizerPlot), 0, 4);
    body->addWidget(
        makePanel(title(tr("Output y<sub>i</sub>, exact o<sub>i</sub>")), m_outputPlot), 1, 1);
    body->addWidget(makePanel(m_approxTitle, m_approxView), 1, 2);
    body->addWidget(makePanel(m_exactTitle, m_exactView), 1, 3);
    body->addWidget(makePanel(title(tr("Error to exact, by step")), m_errorPlot), 1, 4);
    // The heatmaps get more of the width than the bar plots: their cells are square.
    body->setColumnStretch(0, 0);
    for (const int column : {1, 4})
        body->setColumnStretch(column, 2);
    for (const int column : {2, 3})
        body->setColumnStretch(column, 3);
    body->setRowStretch(0, 1);
    body->setRowStretch(1, 1);
    for (HeatmapView* view : {m_updateView, m_stateView, m_approxView, m_exactView})
        view->setMinimumSize(kMinimumHeatmapSize);
    for (QCustomPlot* plot : {m_inputPlot, m_normalizerPlot, m_outputPlot, m_errorPlot})
        plot->setMinimumSize(kMinimumPlotSize);
    // Below the panels' minimum sizes the body scrolls rather than squeezing them.
    auto* bodyScroll = new QScrollArea;
    bodyScroll->setWidget(bodyWidget);
    bodyScroll->setWidgetResizable(true);
    bodyScroll->setFrameShape(QFrame::NoFrame);
    bodyScroll->setFocusPolicy(Qt::NoFocus);
    bodyScroll->viewport()->setAutoFillBackground(false);
    bodyWidget->setAutoFillBackground(false);

    auto* frameLayout = new QVBoxLayout(m_frame);
    frameLayout->setContentsMargins(8, 6, 8, 6);
    frameLayout->setSpacing(4);
    frameLayout->addWidget(m_agreementLine);
    frameLayout->addWidget(m_stripScroll);
    frameLayout->addWidget(bodyScroll, 1);

    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(0);
    layout->addWidget(m_errorBar);
    layout->addWidget(controls);
    layout->addWidget(m_frame, 1);

    // Clicks on the plots give the page the focus, so that the keys step.
    for (QWidget* plot : m_frame->findChildren<QCustomPlot*>()) {
        plot->setFocusPolicy(Qt::ClickFocus);
        plot->setFocusProxy(this);
    }
    formula->setFocusPolicy(Qt::ClickFocus);
    formula->setFocusProxy(this);

    applyTextScale();
    showLines(-1);
    updatePlayButton();
}

StepperView::~StepperView()
{
    if (m_cancel)
        *m_cancel = true;
    m_watcher.waitForFinished();
}

QWidget* StepperView::buildControls()
{
    auto* bar = new QWidget;
    bar->setObjectName(QStringLiteral("stepperControls"));
    const auto button = [&](QStyle::StandardPixmap icon, const QString& text,
                            const QString& tip, const QString& name) {
        auto* b = new QToolButton;
        b->setObjectName(name);
        b->setIcon(style()->standardIcon(icon));
        b->setText(text);
        b->setToolTip(tip);
        b->setToolButtonStyle(Qt::ToolButtonTextBesideIcon);
        setTextPoints(b, kControlPoints);
        b->setIconSize(QSize(22, 22));
        b->setFocusPolicy(Qt::NoFocus);
        m_controlButtons.push_back(b);
        return b;
    };
    m_firstButton = button(QStyle::SP_MediaSkipBackward, tr("First"),
                           tr("The first token (Home)"), QStringLiteral("firstButton"));
    m_backButton = button(QStyle::SP_MediaSeekBackward, tr("Back"),
                          tr("One step back (Left)"), QStringLiteral("backButton"));
    m_playButton = button(QStyle::SP_MediaPlay, tr("Play"), tr("Play or pause (Space)"),
                          QStringLiteral("playButton"));
    m_stepButton = button(QStyle::SP_MediaSeekForward, tr("Step"),
                          tr("One step forward (Right)"), QStringLiteral("stepButton"));
    m_lastButton = button(QStyle::SP_MediaSkipForward, tr("Last"), tr("The last token (End)"),
                          QStringLiteral("lastButton"));
    connect(m_firstButton, &QToolButton::clicked, this, [this] {
        pause();
        setPosition(0);
    });
    connect(m_backButton, &QToolButton::clicked, this, [this] {
        pause();
        setPosition(m_position - 1);
    });
    connect(m_playButton, &QToolButton::clicked, this, [this] {
        if (m_playing)
            pause();
        else
            play();
    });
    connect(m_stepButton, &QToolButton::clicked, this, [this] {
        pause();
        setPosition(m_position + 1);
    });
    connect(m_lastButton, &QToolButton::clicked, this, [this] {
        pause();
        setPosition(length() - 1);
    });

    m_speedBox = new QDoubleSpinBox;
    m_speedBox->setObjectName(QStringLiteral("speed"));
    m_speedBox->setRange(kMinSpeed, kMaxSpeed);
    m_speedBox->setDecimals(2);
    m_speedBox->setSingleStep(0.5);
    m_speedBox->setSuffix(tr(" steps/s"));
    m_speedBox->setValue(m_speed);
    setTextPoints(m_speedBox, kControlPoints);
    m_speedBox->setToolTip(tr("Steps per second while playing"));
    connect(m_speedBox, &QDoubleSpinBox::valueChanged, this, &StepperView::setSpeed);

    m_slider = new QSlider(Qt::Horizontal);
    m_slider->setObjectName(QStringLiteral("positionSlider"));
    m_slider->setRange(0, 0);
    m_slider->setFocusPolicy(Qt::NoFocus);
    m_slider->setToolTip(tr("The step shown"));
    connect(m_slider, &QSlider::valueChanged, this, [this](int t) {
        pause();
        setPosition(t);
    });

    m_positionLabel = makeLabel(QString(), kControlPoints + 1, true);
    m_positionLabel->setObjectName(QStringLiteral("positionLabel"));
    m_positionLabel->setMinimumWidth(QFontMetrics(m_positionLabel->font())
                                         .horizontalAdvance(tr("step i = 0000 of 0000")));

    m_headLabel = makeLabel(tr("Head"), kControlPoints);
    m_headBox = new QSpinBox;
    m_headBox->setObjectName(QStringLiteral("stepperHead"));
    setTextPoints(m_headBox, kControlPoints);
    m_headBox->setToolTip(tr("The head the stepper runs"));
    m_headBox->setRange(0, 0);
    connect(m_headBox, &QSpinBox::valueChanged, this, &StepperView::setHead);
    m_headLabel->hide();
    m_headBox->hide();

    m_exportFrameButton = button(QStyle::SP_DialogSaveButton, tr("Export frame\u2026"),
                                 tr("The current frame as PNG, SVG or PDF"),
                                 QStringLiteral("exportFrameButton"));
    m_exportAllButton = button(
        QStyle::SP_DirIcon, tr("Export all frames\u2026"),
        tr("Every step as numbered PNG files (frame_0001.png, ...) for slides"),
        QStringLiteral("exportAllButton"));
    connect(m_exportFrameButton, &QToolButton::clicked, this, &StepperView::exportFrameDialog);
    connect(m_exportAllButton, &QToolButton::clicked, this, &StepperView::exportAllFramesDialog);

    m_controlsBar = bar;
    auto* layout = new QHBoxLayout(bar);
    layout->setContentsMargins(8, 4, 8, 4);
    for (QToolButton* b :
         {m_firstButton, m_backButton, m_playButton, m_stepButton, m_lastButton})
        layout->addWidget(b);
    layout->addSpacing(8);
    layout->addWidget(m_speedBox);
    layout->addSpacing(8);
    layout->addWidget(m_slider, 1);
    layout->addWidget(m_positionLabel);
    layout->addWidget(m_headLabel);
    layout->addWidget(m_headBox);
    layout->addSpacing(8);
    layout->addWidget(m_exportFrameButton);
    layout->addWidget(m_exportAllButton);
    return bar;
}

QWidget* StepperView::buildFormulaPanel()
{
    auto* panel = new QFrame;
    panel->setObjectName(QStringLiteral("formulaPanel"));
    panel->setStyleSheet(QStringLiteral("QFrame#formulaPanel { background: #f5f6f8; "
                                        "border: 1px solid #d5d9e0; border-radius: 6px; }"));
    auto* grid = new QGridLayout(panel);
    grid->setContentsMargins(14, 10, 14, 10);
    grid->setHorizontalSpacing(14);
    grid->setVerticalSpacing(5);
    int row = 0;

    m_stepTitle = makeLabel(QString(), kStepTitlePoints, true);
    m_stepTitle->setObjectName(QStringLiteral("stepTitle"));
    m_stepTitle->setWordWrap(true);
    grid->addWidget(m_stepTitle, row++, 0, 1, 2);

    const auto equation = [&](const QString& html) {
        QLabel* label = makeLabel(html, kEquationPoints);
        label->setContentsMargins(0, 12, 0, 2);
        grid->addWidget(label, row++, 0, 1, 2);
    };
    // A name and its value side by side, or for long values (vectors) the value on a line of
    // its own under the name.
    const auto value = [&](const QString& nameHtml, const QString& name, bool below = false) {
        QLabel* label = makeLabel(nameHtml, kValuePoints);
        label->setContentsMargins(18, 0, 0, 0);
        grid->addWidget(label, row, 0);
        QLabel* number = makeLabel(QString(), kValuePoints, true, kExactColor);
        number->setObjectName(name);
        number->setTextFormat(Qt::PlainText);
        number->setTextInteractionFlags(Qt::TextSelectableByMouse);
        if (below) {
            number->setContentsMargins(18, 0, 0, 0);
            number->setWordWrap(true);  // after a comma, for long numbers
            grid->addWidget(number, ++row, 0, 1, 2);
        } else {
            grid->addWidget(number, row, 1);
        }
        ++row;
        return number;
    };
    equation(tr("S<sub>i</sub> = S<sub>i\u22121</sub> + <span style='color:#d55e00'>"
                "\u03c6(k<sub>i</sub>) v<sub>i</sub><sup>T</sup></span>"));
    m_keyNorm = value(tr("|\u03c6(k<sub>i</sub>)|"), QStringLiteral("keyNorm"));
    m_valueNorm = value(tr("|v<sub>i</sub>|"), QStringLiteral("valueNorm"));
    m_stateNorm = value(tr("\u2016S<sub>i</sub>\u2016<sub>F</sub>"), QStringLiteral("stateNorm"));
    equation(tr("z<sub>i</sub> = z<sub>i\u22121</sub> + <span style='color:#d55e00'>"
                "\u03c6(k<sub>i</sub>)</span>"));
    m_normalizerNorm = value(tr("|z<sub>i</sub>|"), QStringLiteral("normalizerNorm"));
    equation(tr("y<sub>i</sub> = \u03c6(q<sub>i</sub>)<sup>T</sup> S<sub>i</sub> / "
                "\u03c6(q<sub>i</sub>)<sup>T</sup> z<sub>i</sub>"));
    m_denominator = value(tr("\u03c6(q<sub>i</sub>)<sup>T</sup> z<sub>i</sub>"),
                          QStringLiteral("denominator"));
    m_denominatorNote = makeLabel(tr("not positive: y<sub>i</sub> is no weighted average of "
                                     "the values (these features can be negative)"),
                                  kLinePoints, false, kWarningColor);
    m_denominatorNote->setObjectName(QStringLiteral("denominatorNote"));
    m_denominatorNote->setWordWrap(true);
    m_denominatorNote->setContentsMargins(18, 0, 0, 0);
    m_denominatorNote->hide();
    grid->addWidget(m_denominatorNote, row++, 0, 1, 2);
    m_outputValues = value(tr("y<sub>i</sub>, first entries"), QStringLiteral("outputValues"),
                           true);
    m_exactValues = value(tr("exact softmax o<sub>i</sub>"), QStringLiteral("exactOutputValues"),
                          true);
    m_outputError = value(tr("|y<sub>i</sub> \u2212 o<sub>i</sub>| / |o<sub>i</sub>|"),
                          QStringLiteral("outputError"));
    // The state's size at the bottom.
    grid->setRowStretch(row++, 1);
    m_stateLine->setContentsMargins(0, 10, 0, 0);
    grid->addWidget(m_stateLine, row++, 0, 1, 2);
    grid->setColumnStretch(1, 1);

    m_formulaPanel = panel;
    return panel;
}

void StepperView::fitFormulaPanel()
{
    auto* grid = static_cast<QGridLayout*>(m_formulaPanel->layout());
    const QFontMetrics valueMetrics(m_outputValues->font());
    int nameWidth = 0;
    int spanWidth =
        m_outputValues->contentsMargins().left() +
        valueMetrics.horizontalAdvance(
            vectorPreview(Eigen::RowVectorXd::Constant(kPreviewEntries + 1, -0.0123456)));
    for (int r = 0; r < grid->rowCount(); ++r) {
        QLayoutItem* first = grid->itemAtPosition(r, 0);
        QWidget* widget = first ? first->widget() : nullptr;
        if (!widget || widget == m_stepTitle || widget == m_denominatorNote ||
            widget == m_stateLine || widget == m_outputValues || widget == m_exactValues)
            continue;
        if (first == grid->itemAtPosition(r, 1))  // over both columns
            spanWidth = std::max(spanWidth, widget->sizeHint().width());
        else if (grid->itemAtPosition(r, 1))  // a name beside its number
            nameWidth = std::max(nameWidth, widget->sizeHint().width());
    }
    const int numberWidth = valueMetrics.horizontalAdvance(displayNumber(-0.123456));
    const QMargins margins = grid->contentsMargins();
    m_formulaPanel->setFixedWidth(
        margins.left() + margins.right() + 4 +
        std::max(spanWidth, nameWidth + grid->horizontalSpacing() + numberWidth));
}

void StepperView::applyTextScale()
{
    for (QWidget* widget : findChildren<QWidget*>()) {
        const QVariant points = widget->property(kPointsProperty);
        if (points.isValid())
            widget->setFont(sizedFont(widget->font(), points.toDouble() * m_textScale,
                                      widget->property(kBoldProperty).toBool()));
    }
    for (QCustomPlot* plot : m_frame->findChildren<QCustomPlot*>())
        scalePlotFonts(plot, m_textScale);
    if (m_data) {  // the heatmaps measure their labels when given them
        for (HeatmapView* view : {m_approxView, m_exactView})
            view->setAxisLabels(m_data->steps->labels, m_data->steps->labels);
    }
    m_stripScroll->setFixedHeight(m_strip->sizeHint().height() +
                                  m_stripScroll->horizontalScrollBar()->sizeHint().height());
    fitFormulaPanel();
    fitControls();
}

void StepperView::resizeEvent(QResizeEvent* event)
{
    const double fit = std::min(width() / double(kDesignSize.width()),
                                height() / double(kDesignSize.height()));
    const double scale = std::clamp(std::round(fit / kTextScaleStep) * kTextScaleStep,
                                    kMinTextScale, kMaxTextScale);
    if (scale != m_textScale) {
        m_textScale = scale;
        applyTextScale();
    }
    fitControls();
    QWidget::resizeEvent(event);
}

void StepperView::fitControls()
{
    // What the bar needs with the buttons' texts: its layout's hint less the buttons' current
    // widths plus their widths with text.
    const QStyleOptionToolButton textOption = [] {
        QStyleOptionToolButton option;
        option.toolButtonStyle = Qt::ToolButtonTextBesideIcon;
        return option;
    }();
    int needed = m_controlsBar->layout()->sizeHint().width();
    for (QToolButton* b : m_controlButtons) {
        const int textWidth = b->iconSize().width() + 12 +
                              b->fontMetrics().horizontalAdvance(b->text()) +
                              2 * style()->pixelMetric(QStyle::PM_ButtonMargin, &textOption, b);
        needed += textWidth - b->sizeHint().width();
        // The layout may give a button less than its text needs: it then shows its icon only.
        b->setMinimumWidth(b->iconSize().width() + 12);
    }
    const Qt::ToolButtonStyle buttonStyle =
        width() < needed ? Qt::ToolButtonIconOnly : Qt::ToolButtonTextBesideIcon;
    for (QToolButton* b : m_controlButtons)
        b->setToolButtonStyle(buttonStyle);
}

void StepperView::buildPlots()
{
    m_inputPlot = new QCustomPlot;
    m_inputPlot->setObjectName(QStringLiteral("inputPlot"));
    const QList<QCPAxisRect*> inputRects = stackedAxisRects(
        m_inputPlot, {QStringLiteral("\u03c6(k\u1d62)"), QStringLiteral("v\u1d62")},
        {QStringLiteral("feature c"), QStringLiteral("value dimension")});
    m_keyBars = addBars(inputRects[0], QStringLiteral("\u03c6(k\u1d62)"), kAddedColor);
    m_valueBars = addBars(inputRects[1], QStringLiteral("v\u1d62"), kAddedColor);

    m_updateView = new HeatmapView;
    m_updateView->setObjectName(QStringLiteral("updateView"));
    m_stateView = new HeatmapView;
    m_stateView->setObjectName(QStringLiteral("stateView"));
    for (HeatmapView* view : {m_updateView, m_stateView}) {
        view->setColorMap(ColorMap::Diverging);
        view->setAxisTitles(tr("value dimension"), tr("feature c"));
    }

    m_normalizerPlot = new QCustomPlot;
    m_normalizerPlot->setObjectName(QStringLiteral("normalizerPlot"));
    const QList<QCPAxisRect*> normalizerRects = stackedAxisRects(
        m_normalizerPlot, {QStringLiteral("z\u1d62 = z\u1d62\u208b\u2081 + \u03c6(k\u1d62)"),
                           QStringLiteral("\u03c6(q\u1d62)")},
        {QStringLiteral("feature c"), QStringLiteral("feature c")});
    m_previousNormalizerBars =
        addBars(normalizerRects[0], QStringLiteral("z\u1d62\u208b\u2081"), kStateColor);
    m_addedNormalizerBars =
        addBars(normalizerRects[0], QStringLiteral("+ \u03c6(k\u1d62)"), kAddedColor);
    m_addedNormalizerBars->moveAbove(m_previousNormalizerBars);
    addLegend(m_normalizerPlot, normalizerRects[0],
              {m_previousNormalizerBars, m_addedNormalizerBars});
    m_queryBars = addBars(normalizerRects[1], QStringLiteral("\u03c6(q\u1d62)"), kQueryColor);

    m_outputPlot = new QCustomPlot;
    m_outputPlot->setObjectName(QStringLiteral("outputPlot"));
    const QList<QCPAxisRect*> outputRects = stackedAxisRects(
        m_outputPlot, {QString(), QStringLiteral("y\u1d62 \u2212 o\u1d62")},
        {QStringLiteral("value dimension"), QStringLiteral("value dimension")});
    auto* group = new QCPBarsGroup(m_outputPlot);
    group->setSpacingType(QCPBarsGroup::stAbsolute);
    group->setSpacing(0);
    m_exactOutputBars = addBars(outputRects[0], QStringLiteral("exact o\u1d62"), kExactColor, 0.45);
    m_outputBars = addBars(outputRects[0], QStringLiteral("y\u1d62"), kApproxColor, 0.45);
    m_exactOutputBars->setBarsGroup(group);
    m_outputBars->setBarsGroup(group);
    addLegend(m_outputPlot, outputRects[0], {m_outputBars, m_exactOutputBars});
    m_differenceBars =
        addBars(outputRects[1], QStringLiteral("y\u1d62 \u2212 o\u1d62"), kDifferenceColor);

    m_approxView = new HeatmapView;
    m_approxView->setObjectName(QStringLiteral("stepperApproxView"));
    m_exactView = new HeatmapView;
    m_exactView->setObjectName(QStringLiteral("stepperExactView"));

    m_errorPlot = new QCustomPlot;
    m_errorPlot->setObjectName(QStringLiteral("errorPlot"));
    const QList<QCPAxisRect*> errorRects = stackedAxisRects(
        m_errorPlot, {QStringLiteral("|y\u1d62 \u2212 o\u1d62| / |o\u1d62|")},
        {QStringLiteral("step i")});
    QCPAxis* stepAxis = errorRects[0]->axis(QCPAxis::atBottom);
    QCPAxis* errorAxis = errorRects[0]->axis(QCPAxis::atLeft);
    m_errorAll = m_errorPlot->addGraph(stepAxis, errorAxis);
    m_errorAll->setName(tr("all steps"));
    m_errorAll->setPen(QPen(QColor(190, 190, 190), 2));
    m_errorSoFar = m_errorPlot->addGraph(stepAxis, errorAxis);
    m_errorSoFar->setName(tr("so far"));
    m_errorSoFar->setPen(QPen(kApproxColor, 2.5));
    m_errorSoFar->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, 5));
    m_errorNow = m_errorPlot->addGraph(stepAxis, errorAxis);
    m_errorNow->setName(tr("step i"));
    m_errorNow->setLineStyle(QCPGraph::lsNone);
    m_errorNow->setScatterStyle(
        QCPScatterStyle(QCPScatterStyle::ssCircle, QPen(kExactColor, 3), Qt::white, 13));
    m_errorMarker = new QCPItemStraightLine(m_errorPlot);
    m_errorMarker->setClipAxisRect(errorRects[0]);
    m_errorMarker->setPen(QPen(kExactColor, 1.5, Qt::DashLine));
    m_errorMarker->point1->setAxes(stepAxis, errorAxis);
    m_errorMarker->point2->setAxes(stepAxis, errorAxis);
}

// ---------------------------------------------------------------------------------------------
// StepperView: the worker

void StepperView::setExperiment(const ExperimentSpec& spec,
                                std::shared_ptr<const AttentionInput> input)
{
    m_spec = spec;
    m_input = std::move(input);
    if (!m_input) {
        ++m_generation;
        showError(tr("There is no input to step through."));
        return;
    }
    m_head = std::clamp(m_head, 0, int(m_input->heads.size()) - 1);
    requestWhole();
}

void StepperView::setHead(int head)
{
    const int clamped = m_input ? std::clamp(head, 0, int(m_input->heads.size()) - 1)
                                : std::max(head, 0);
    if (clamped == m_head)
        return;
    m_head = clamped;
    {
        const QSignalBlocker block(m_headBox);
        m_headBox->setValue(m_head);
    }
    if (m_input)
        requestWhole();
}

void StepperView::requestWhole()
{
    ++m_generation;
    m_wholePending = true;
    m_windowPending = false;
    if (m_watcher.isRunning())
        *m_cancel = true;  // finished() starts the newest request
    else
        start();
}

void StepperView::requestWindow()
{
    m_windowPending = true;
    if (!m_watcher.isRunning())
        start();
    else if (!m_running->whole)
        *m_cancel = true;  // a newer position wins; a whole job places its window itself
}

void StepperView::start()
{
    if (m_watcher.isRunning())
        return;
    auto job = std::make_unique<StepperJob>();
    if (m_wholePending) {
        job->spec = m_spec;
        job->input = m_input;
        job->head = m_head;
        job->generation = m_generation;
    } else if (m_windowPending && m_data && !stateAvailable(m_position)) {
        job->whole = false;
        job->spec = m_data->steps->spec;
        job->input = m_data->input;
        job->head = m_data->steps->head;
        job->generation = m_data->generation;
        if (m_data->exactAttention)
            job->keptMatrixBytes = 8.0 * double(m_data->exactAttention->size() +
                                               m_data->approxAttention->size());
    } else {
        m_windowPending = false;
        setBusy(false);
        return;
    }
    m_wholePending = false;
    m_windowPending = false;
    job->budget = m_budget;
    job->around = m_position;
    m_cancel = std::make_shared<std::atomic<bool>>(false);
    m_outcome = std::make_shared<StepperOutcome>();
    m_running = std::move(job);
    m_watcher.setFuture(QtConcurrent::run(
        &m_pool, [job = *m_running, cancel = m_cancel, outcome = m_outcome] {
            runJob(job, *cancel, outcome.get());
        }));
    setBusy(true);
}

void StepperView::finished()
{
    const std::shared_ptr<StepperOutcome> outcome = m_outcome;
    const std::unique_ptr<StepperJob> job = std::move(m_running);
    if (!outcome->cancelled) {
        if (job->whole && job->generation == m_generation) {
            if (outcome->error.isEmpty())
                showData(std::make_shared<StepperData>(std::move(outcome->data)));
            else
                showError(outcome->error);
        } else if (!job->whole && m_data && m_data->generation == job->generation) {
            if (outcome->error.isEmpty()) {
                m_data->steps = outcome->data.steps;
                showPosition();
            } else {
                showError(outcome->error);
            }
        }
    }
    start();
}

void StepperView::setBusy(bool busy)
{
    if (busy == m_busy)
        return;
    m_busy = busy;
    emit busyChanged(busy);
}

int StepperView::length() const
{
    return m_data ? int(m_data->steps->length()) : 0;
}

std::shared_ptr<const CausalSteps> StepperView::steps() const
{
    return m_data ? m_data->steps : nullptr;
}

bool StepperView::keepsAllStates() const
{
    return m_data && m_data->steps->statesFrom == 0 &&
           m_data->steps->statesTo == m_data->steps->length();
}

bool StepperView::stateAvailable(int t) const
{
    return m_data && t >= m_data->steps->statesFrom && t < m_data->steps->statesTo;
}

QString StepperView::errorMessage() const
{
    return m_errorBar->isHidden() ? QString() : m_errorBar->text();
}

void StepperView::showError(const QString& message)
{
    m_errorBar->setText(m_data ? tr("The stepper cannot run this: %1\nThe page still shows the "
                                    "previous experiment.")
                                     .arg(message)
                               : tr("The stepper cannot run this: %1").arg(message));
    m_errorBar->show();
    emit failed(message);
}

// ---------------------------------------------------------------------------------------------
// StepperView: stepping

void StepperView::setPosition(int position)
{
    const int clamped =
        length() > 0 ? std::clamp(position, 0, length() - 1) : std::max(0, position);
    if (clamped == m_position && (m_shownPosition == clamped || !m_data))
        return;
    const bool changed = clamped != m_position;
    m_position = clamped;
    showPosition();
    if (changed)
        emit positionChanged(m_position);
}

void StepperView::play()
{
    if (length() < 2 || m_playing)
        return;
    if (m_position >= length() - 1)
        setPosition(0);
    m_playing = true;
    m_timer->start(int(std::lround(1000.0 / m_speed)));
    updatePlayButton();
    emit playingChanged(true);
}

void StepperView::pause()
{
    if (!m_playing)
        return;
    m_playing = false;
    m_timer->stop();
    updatePlayButton();
    emit playingChanged(false);
}

void StepperView::setSpeed(double stepsPerSecond)
{
    m_speed = std::clamp(stepsPerSecond, kMinSpeed, kMaxSpeed);
    {
        const QSignalBlocker block(m_speedBox);
        m_speedBox->setValue(m_speed);
    }
    m_timer->setInterval(int(std::lround(1000.0 / m_speed)));
}

void StepperView::advance()
{
    if (m_shownPosition != m_position)
        return;  // the states of this step are still being computed
    if (m_position < length() - 1)
        setPosition(m_position + 1);
    if (m_position >= length() - 1)
        pause();
}

void StepperView::updatePlayButton()
{
    m_playButton->setIcon(
        style()->standardIcon(m_playing ? QStyle::SP_MediaPause : QStyle::SP_MediaPlay));
    m_playButton->setText(m_playing ? tr("Pause") : tr("Play"));
}

QJsonObject StepperView::state() const
{
    return QJsonObject{{QStringLiteral("position"), m_position},
                       {QStringLiteral("speed"), m_speed},
                       {QStringLiteral("head"), m_head}};
}

void StepperView::setState(const QJsonObject& state)
{
    if (state.contains(QLatin1String("speed")))
        setSpeed(state.value(QLatin1String("speed")).toDouble(m_speed));
    if (state.contains(QLatin1String("head")))
        setHead(state.value(QLatin1String("head")).toInt(m_head));
    if (state.contains(QLatin1String("position")))
        setPosition(state.value(QLatin1String("position")).toInt(m_position));
}

void StepperView::keyPressEvent(QKeyEvent* event)
{
    switch (event->key()) {
    case Qt::Key_Left:
        pause();
        setPosition(m_position - 1);
        break;
    case Qt::Key_Right:
        pause();
        setPosition(m_position + 1);
        break;
    case Qt::Key_Space:
        if (event->isAutoRepeat())
            break;
        if (m_playing)
            pause();
        else
            play();
        break;
    case Qt::Key_Home:
        pause();
        setPosition(0);
        break;
    case Qt::Key_End:
        pause();
        setPosition(length() - 1);
        break;
    default:
        QWidget::keyPressEvent(event);
        return;
    }
    event->accept();
}

void StepperView::mousePressEvent(QMouseEvent* event)
{
    setFocus(Qt::MouseFocusReason);
    QWidget::mousePressEvent(event);
}

// ---------------------------------------------------------------------------------------------
// StepperView: showing a computation

void StepperView::showData(std::shared_ptr<StepperData> data)
{
    m_data = std::move(data);
    m_errorBar->hide();
    const CausalSteps& steps = *m_data->steps;
    const int length = int(steps.length());
    const int previous = m_position;
    m_position = std::clamp(m_position, 0, length - 1);

    m_strip->setTokens(steps.labels);
    {
        const QSignalBlocker blockSlider(m_slider), blockHead(m_headBox);
        m_slider->setRange(0, length - 1);
        m_slider->setPageStep(std::max(1, length / 10));
        const int heads = int(m_data->input->heads.size());
        m_headBox->setRange(0, heads - 1);
        m_headBox->setValue(steps.head);
        m_headLabel->setVisible(heads > 1);
        m_headBox->setVisible(heads > 1);
    }

    // The causal P and P^ on one colour scale, fixed for all steps: viridis from 0, or diverging
    // about 0 when the approximation has negative weights (trigonometric features).
    const QString approxTitle = tr("P\u0302, filled row by row");
    const QString exactTitle = tr("Exact causal softmax P");
    if (m_data->exactAttention) {
        const double exactHigh = largestMagnitude(*m_data->exactAttention);
        const double approxHigh = largestMagnitude(*m_data->approxAttention);
        const bool negative = (m_data->approxAttention->array() < 0).any();
        const double high = std::max({exactHigh, approxHigh, 1e-12});
        const QCPRange range = negative ? QCPRange(-high, high) : QCPRange(0, high);
        for (HeatmapView* view : {m_exactView, m_approxView}) {
            view->setColorMap(negative ? ColorMap::Diverging : ColorMap::Viridis);
            view->setAxisLabels(steps.labels, steps.labels);
            view->setColorRange(range);
        }
        m_exactView->setMatrix(m_data->exactAttention);
        for (QLabel* title : {m_approxTitle, m_exactTitle})
            title->setToolTip(QString());
        m_approxTitle->setText(approxTitle);
        m_exactTitle->setText(exactTitle);
    } else {
        for (HeatmapView* view : {m_exactView, m_approxView})
            view->setMatrix(MatrixD());
        const QString missing =
            tr("<br><span style='color:#b01c1c; font-weight:normal'>not drawn: L \u00d7 L is over "
               "the memory budget</span>");
        m_approxTitle->setText(approxTitle + missing);
        m_exactTitle->setText(exactTitle + missing);
        m_approxTitle->setToolTip(m_data->matricesNote);
        m_exactTitle->setToolTip(m_data->matricesNote);
    }

    // z_i over all steps sets the normalizer's axis once, so that its growth shows.
    const VectorD allNormalizers = Eigen::Map<const VectorD>(steps.normalizers.data(),
                                                             steps.normalizers.size());
    const QCPRange normalizerRange = barRange({&allNormalizers});
    m_previousNormalizerBars->valueAxis()->setRange(normalizerRange);
    const bool negativeFeatures = methodInfo(steps.spec.featureMap.kind).canBeNegative;
    // Stacking shows z_i = z_{i-1} + phi(k_i) only when no feature is negative; otherwise z_i is
    // drawn alone.
    m_addedNormalizerBars->setVisible(!negativeFeatures);
    m_previousNormalizerBars->setName(negativeFeatures ? QStringLiteral("z\u1d62")
                                                       : QStringLiteral("z\u1d62\u208b\u2081"));
    m_addedNormalizerBars->removeFromLegend();
    if (!negativeFeatures)
        m_addedNormalizerBars->addToLegend();

    QVector<double> stepNumbers(length);
    QVector<double> errors(length);
    double highest = 0;
    for (int t = 0; t < length; ++t) {
        stepNumbers[t] = t + 1;
        const double error = steps.records[std::size_t(t)].errorToExact;
        errors[t] = std::isfinite(error) ? error : std::numeric_limits<double>::quiet_NaN();
        if (std::isfinite(error))
            highest = std::max(highest, error);
    }
    m_errorAll->setData(stepNumbers, errors, true);
    m_errorAll->keyAxis()->setRange(0, length + 1);  // room for the marker at both ends
    m_errorAll->valueAxis()->setRange(0, highest > 0 ? 1.1 * highest : 1.0);

    m_shownPosition = -1;
    showPosition();
    if (m_position != previous)
        emit positionChanged(m_position);
    emit experimentShown();
}

void StepperView::showPosition()
{
    if (!m_data)
        return;
    const int t = m_position;
    const int length = this->length();
    m_strip->setCurrent(t);
    const QRect box = m_strip->tokenRect(t);
    m_stripScroll->ensureVisible(box.center().x(), box.center().y(), box.width() / 2 + 80, 0);
    {
        const QSignalBlocker block(m_slider);
        m_slider->setValue(t);
    }
    m_positionLabel->setText(tr("step i = %1 of %2").arg(t + 1).arg(length));
    m_firstButton->setEnabled(t > 0);
    m_backButton->setEnabled(t > 0);
    m_stepButton->setEnabled(t < length - 1);
    m_lastButton->setEnabled(t < length - 1);
    m_playButton->setEnabled(length > 1);
    if (stateAvailable(t)) {
        showFrame();
    } else {
        showLines(t);
        requestWindow();
    }
}

void StepperView::showFrame()
{
    const int t = m_position;
    showFormula(t);
    showVectors(t);
    showState(t);
    showAttention(t);
    showLines(t);
    showErrorCurve(t);
    m_shownPosition = t;
}

void StepperView::showFormula(int t)
{
    const CausalSteps& steps = *m_data->steps;
    const CausalStepRecord& record = steps.records[std::size_t(t)];
    const MatrixD& values = m_data->input->heads[std::size_t(steps.head)].v;
    const QString token =
        QFontMetrics(m_stepTitle->font())
            .elidedText(steps.labels.value(t).simplified(), Qt::ElideRight, 200);
    m_stepTitle->setText(tr("Step i = %1 of %2: \u201c%3\u201d")
                             .arg(t + 1)
                             .arg(steps.length())
                             .arg(token.toHtmlEscaped()));
    m_keyNorm->setText(displayNumber(steps.keyFeatures.row(t).stableNorm()));
    m_valueNorm->setText(displayNumber(values.row(t).stableNorm()));
    m_stateNorm->setText(displayNumber(record.stateNorm));
    m_normalizerNorm->setText(displayNumber(record.normalizerNorm));
    m_denominator->setText(displayNumber(record.denominator));
    const bool positive = record.denominator > 0;
    QPalette palette = m_denominator->palette();
    palette.setColor(QPalette::WindowText, positive ? kExactColor : kWarningColor);
    m_denominator->setPalette(palette);
    m_denominatorNote->setVisible(!positive);
    m_outputValues->setText(vectorPreview(steps.outputs.row(t)));
    m_exactValues->setText(vectorPreview(steps.outputsExact.row(t)));
    m_outputError->setText(displayNumber(record.errorToExact));
}

void StepperView::showVectors(int t)
{
    const CausalSteps& steps = *m_data->steps;
    const VectorD key = steps.keyFeatures.row(t).transpose();
    const VectorD value = m_data->input->heads[std::size_t(steps.head)].v.row(t).transpose();
    const VectorD query = steps.queryFeatures.row(t).transpose();
    const VectorD normalizer = steps.normalizers.row(t).transpose();
    const VectorD output = steps.outputs.row(t).transpose();
    const VectorD exact = steps.outputsExact.row(t).transpose();
    const VectorD difference = output - exact;

    const auto show = [](QCPBars* bars, const VectorD& values, const QCPRange& range) {
        setBars(bars, values);
        bars->keyAxis()->setRange(-0.6, double(values.size()) - 0.4);
        bars->valueAxis()->setRange(range);
    };
    show(m_keyBars, key, barRange({&key}));
    show(m_valueBars, value, barRange({&value}));
    m_inputPlot->replot(QCustomPlot::rpQueuedReplot);

    // The normalizer's range is fixed for all steps (showData).
    const QCPRange normalizerRange = m_previousNormalizerBars->valueAxis()->range();
    if (m_addedNormalizerBars->visible()) {
        const VectorD previous = t > 0 ? VectorD(steps.normalizers.row(t - 1).transpose())
                                       : VectorD::Zero(normalizer.size());
        show(m_previousNormalizerBars, previous, normalizerRange);
        show(m_addedNormalizerBars, key, normalizerRange);
    } else {
        show(m_previousNormalizerBars, normalizer, normalizerRange);
    }
    show(m_queryBars, query, barRange({&query}));
    m_normalizerPlot->replot(QCustomPlot::rpQueuedReplot);

    show(m_exactOutputBars, exact, barRange({&output, &exact}));
    setBars(m_outputBars, output);
    const double spread = std::max(largestMagnitude(difference), 1e-300) * 1.15;
    show(m_differenceBars, difference, QCPRange(-spread, spread));
    m_outputPlot->replot(QCustomPlot::rpQueuedReplot);
}

void StepperView::showState(int t)
{
    const CausalSteps& steps = *m_data->steps;
    const VectorD key = steps.keyFeatures.row(t).transpose();
    const VectorD value = m_data->input->heads[std::size_t(steps.head)].v.row(t).transpose();
    const MatrixD change = finiteOrNaN(key * value.transpose());
    const MatrixD state = finiteOrNaN(steps.state(t));
    // Symmetric colour scales about 0, each its own: the change is small against the state
    // after a few steps, and on the state's scale its rank-one pattern would fade to grey. The
    // scales' numbers say how large each is.
    const double stateHigh = std::max(largestMagnitude(state), 1e-300);
    const double changeHigh = std::max(largestMagnitude(change), 1e-300);
    m_stateView->setMatrix(state);
    m_stateView->setColorRange(QCPRange(-stateHigh, stateHigh));
    m_updateView->setMatrix(change);
    m_updateView->setColorRange(QCPRange(-changeHigh, changeHigh));
    const std::vector<std::pair<int, int>> cells = largestCells(change);
    markCells(m_updateView, m_updateMarks, cells);
    markCells(m_stateView, m_stateMarks, cells);
    m_updateView->replot(QCustomPlot::rpQueuedReplot);
    m_stateView->replot(QCustomPlot::rpQueuedReplot);
}

void StepperView::showAttention(int t)
{
    if (!m_data->approxAttention)
        return;
    const MatrixD& approx = *m_data->approxAttention;
    const Eigen::Index rows = approx.rows();
    std::shared_ptr<const MatrixD> shown = m_data->approxAttention;
    if (t + 1 < rows) {
        auto filled = std::make_shared<MatrixD>(approx);
        filled->bottomRows(rows - t - 1).setConstant(std::numeric_limits<double>::quiet_NaN());
        shown = std::move(filled);
    }
    m_approxView->setMatrix(std::move(shown));
    m_approxView->setSelectedRow(t);
    m_exactView->setSelectedRow(t);
}

void StepperView::showLines(int t)
{
    if (!m_data) {
        m_agreementLine->setText(tr("Recurrent and parallel forms: waiting for a computation."));
        m_stateLine->clear();
        return;
    }
    const CausalSteps& steps = *m_data->steps;
    const FormAgreement agreement = steps.agreementThrough(t);
    m_agreementLine->setText(
        tr("Recurrent and parallel (chunked) forms agree to %1 (largest difference so far, "
           "steps 1 to %2; relative to the largest output: %3)")
            .arg(displayDifference(agreement.absolute))
            .arg(t + 1)
            .arg(displayDifference(agreement.relative)));
    const qint64 c = steps.featureCount;
    const qint64 m = steps.valueDim;
    const qint64 d = m_data->input->headDim();
    QString text =
        tr("<b>Memory.</b> State S<sub>i</sub>: C \u00d7 M = %1 \u00d7 %2 = %3 numbers "
           "(+ z<sub>i</sub>: %1), whatever i is: O(C M), not O(i).<br>Exact softmax keeps "
           "all i keys and values: i (d + M) = %4 \u00d7 %5 = %6 numbers at this step, growing "
           "with i.")
            .arg(c)
            .arg(m)
            .arg(c * m)
            .arg(t + 1)
            .arg(d + m)
            .arg(qint64(t + 1) * (d + m));
    if (!keepsAllStates()) {
        text += tr("<br><span style='color:#b01c1c'>States kept for steps %1 to %2 only (all %3 "
                   "would need %4, over the memory budget of %5); moving outside recomputes "
                   "them%6.</span>")
                    .arg(steps.statesFrom + 1)
                    .arg(steps.statesTo)
                    .arg(steps.length())
                    .arg(formatBytes(m_data->allStatesBytes))
                    .arg(formatBytes(double(m_budget.bytes())))
                    .arg(stateAvailable(t) ? QString() : tr(": computing them now"));
    }
    m_stateLine->setText(text);
}

void StepperView::showErrorCurve(int t)
{
    QVector<double> steps;
    QVector<double> errors;
    for (auto it = m_errorAll->data()->constBegin();
         it != m_errorAll->data()->constEnd() && it->key <= t + 1; ++it) {
        steps.append(it->key);
        errors.append(it->value);
    }
    m_errorSoFar->setData(steps, errors, true);
    m_errorNow->setData({double(t + 1)}, {errors.isEmpty() ? 0.0 : errors.back()}, true);
    m_errorMarker->point1->setCoords(t + 1, 0);
    m_errorMarker->point2->setCoords(t + 1, 1);
    m_errorPlot->replot(QCustomPlot::rpQueuedReplot);
}

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

void StepperView::exportFrame(const QString& path, FigureFormat format)
{
    QCoreApplication::sendPostedEvents(nullptr, QEvent::LayoutRequest);
    PaintedFigure figure;
    figure.size = m_frame->size();
    figure.dpi = logicalDpiX();
    figure.title = tr("Attention Lab stepper, step %1").arg(m_position + 1);
    figure.description = QStringLiteral("Attention Lab frame");
    figure.what = QStringLiteral("frame");
    figure.png = [this] { return frameImage(kPngExportScale); };
    figure.paintVector = [&](QPaintDevice& device, bool pdf) {
        QCPPainter painter;
        if (!painter.begin(&device))
            return false;
        painter.setMode(QCPPainter::pmVectorized);
        painter.setMode(QCPPainter::pmNoCaching);
        painter.setMode(QCPPainter::pmNonCosmetic);
        // The page is size.width() points wide at the device's resolution; a world transform
        // (not setWindow, which QWidget::render ignores) maps the frame's pixels onto it.
        if (pdf)
            painter.scale(device.width() / double(figure.size.width()),
                          device.height() / double(figure.size.height()));
        paintFrame(painter);
        return painter.end();
    };
    exportPaintedFigure(path, format, figure);
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
    QString selectedFilter;
    QString path = QFileDialog::getSaveFileName(
        this, tr("Export frame"), QStringLiteral("stepper-step-%1.png").arg(m_position + 1),
        tr("PNG image (*.png);;SVG drawing (*.svg);;PDF document (*.pdf)"), &selectedFilter);
    if (path.isEmpty())
        return;
    FigureFormat format;
    if (!figureFormatFromSuffix(path, &format)) {
        format = selectedFilter.contains(QLatin1String("svg"))   ? FigureFormat::Svg
                 : selectedFilter.contains(QLatin1String("pdf")) ? FigureFormat::Pdf
                                                                 : FigureFormat::Png;
        path += QLatin1Char('.') + figureFormatName(format);
    }
    try {
        exportFrame(path, format);
    } catch (const OutputError& e) {
        QMessageBox::warning(this, tr("Export frame"), e.message());
    }
}

void StepperView::exportAllFramesDialog()
{
    if (!m_data)
        return;
    const QString folder = QFileDialog::getExistingDirectory(this, tr("Export all frames"));
    if (folder.isEmpty())
        return;
    try {
        const int written = exportAllFrames(folder);
        if (written < length())
            QMessageBox::information(
                this, tr("Export all frames"),
                tr("Stopped after %1 of %2 frames.").arg(written).arg(length()));
    } catch (const OutputError& e) {
        QMessageBox::warning(this, tr("Export all frames"), e.message());
    }
}

}  // namespace attnlab::ui
