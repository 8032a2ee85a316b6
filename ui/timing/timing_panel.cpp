#include "ui/timing/timing_panel.h"

#include "ui/common/controls_column.h"
#include "ui/common/number_text.h"
#include "errors.h"
#include "parallel.h"
#include "sessions/timing_page_state.h"
#include "ui/timing/timing_chart.h"

#include <QCheckBox>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPainter>
#include <QResizeEvent>
#include <QScrollArea>
#include <QSpinBox>
#include <QSplitter>
#include <QTableWidget>
#include <QVBoxLayout>

#include <chrono>
#include <cmath>
#include <condition_variable>
#include <mutex>

namespace attnlab::ui {

// How far the panel has drawn the points of one sweep, shared with its worker. The worker measures
// a point only once the panel has drawn the one before: a replot on one core while the engine's
// threads time a run on all of them would be measured as part of the run (it made runs of
// L = 128 a hundred times slower on two cores).
struct ShownPoints {
    std::mutex mutex;
    std::condition_variable changed;
    int shown = -1;  // points the panel has drawn; -1 until it has drawn the empty sweep

    void markShown(int count)
    {
        {
            const std::lock_guard lock(mutex);
            shown = count;
        }
        changed.notify_all();
    }

    // Waits until the panel has drawn `count` points, or the sweep is cancelled (looked at every
    // 20 ms, so that a sweep the page discards stops too).
    void waitShown(int count, const JobContext& context)
    {
        std::unique_lock lock(mutex);
        while (shown < count && !context.isCancelled())
            changed.wait_for(lock, std::chrono::milliseconds(20));
    }
};

namespace {

constexpr int kMinLength = TimingPageState::minLength;
constexpr int kMaxLength = TimingPageState::maxLength;
constexpr int kMaxThreads = 256;
// The chart's least height with the sgemm line and the table under it: its heading, plots four
// tick labels high and the legend of four methods in presentation mode's fonts. A shorter page
// (presentation mode on a 1280 x 720 projector, under a scenario's explanation) shows the chart
// alone: under the table its plots were 150 pixels high and it gave up its title.
constexpr int kLeastChartHeight = 380;

// The columns of the table under the chart.
enum Column {
    MethodColumn,
    SlopeColumn,
    CrossoverColumn,
    LengthColumn,
    GflopsColumn,
    SgemmShareColumn,
    ColumnCount
};

// A spin box for lengths that steps by doubling and halving, since the lengths are log-spaced.
class LengthSpinBox : public QSpinBox {
public:
    void stepBy(int steps) override
    {
        const double stepped = value() * std::pow(2.0, steps);
        setValue(int(std::clamp(std::round(stepped), double(minimum()), double(maximum()))));
    }
};

// A spin box for a count, with thousands separators.
// A small square of the method's colour, for its row of the table.
QIcon colorIcon(const TimedMethod& method)
{
    QPixmap pixmap(12, 12);
    pixmap.fill(Qt::transparent);
    QPainter painter(&pixmap);
    const QColor color = methodColor(method);
    painter.setPen(QPen(color, 2));
    painter.setBrush(method.causal ? QBrush(Qt::white) : QBrush(color));
    painter.drawRect(QRectF(1, 1, 10, 10));
    return QIcon(pixmap);
}

// A number of the table, or "n/a".
QString tableNumber(double value, int decimals)
{
    return std::isfinite(value) ? QString::number(value, 'f', decimals) : QStringLiteral("n/a");
}

// "1 thread", "2 threads".
QString countText(qsizetype count, const QString& one, const QString& many)
{
    return QStringLiteral("%1 %2").arg(count).arg(count == 1 ? one : many);
}

// "1 point", "48 points".
QString points(qsizetype count)
{
    return countText(count, TimingPanel::tr("point"), TimingPanel::tr("points"));
}

// The points measured or skipped: not cancelled.
qsizetype measuredCount(const SweepResult& result)
{
    return std::count_if(result.points.begin(), result.points.end(), [](const SweepPoint& point) {
        return point.status != PointStatus::Cancelled;
    });
}

}  // namespace

TimingPanel::TimingPanel(QWidget* parent)
    : SweepPage({tr("Measure every method at every length on a worker thread; points appear on "
                    "the chart as they are measured."),
                 tr("Stop the sweep now, in the middle of a run if need be; the points measured "
                    "so far are kept."),
                 tr("Cancelling..."),
                 tr("Points measured (or skipped) out of every method at every length."),
                 tr("%v of %m points"),
                 tr("Save the chart as shown (PNG, SVG or PDF) or the data (CSV, one row per "
                    "method and length)."),
                 QStringLiteral("timing"), QString()},
                parent)
{
    buildControls();
    updateLengthsPreview();
    setRunning(false);
    showResult();
}

QWidget* TimingPanel::buildMethodsBox()
{
    auto* methodsBox = new QGroupBox(tr("Methods"));
    auto* methodsLayout = new QVBoxLayout(methodsBox);
    for (const MethodInfo& info : methodRegistry()) {
        auto* box = new QCheckBox(info.title);
        box->setToolTip(info.summary);
        box->setObjectName(QStringLiteral("method-") + info.name);
        methodsLayout->addWidget(box);
        m_methods[info.method] = box;
    }
    for (const Method checked : {Method::ExactStreaming, Method::FavorPositive, Method::Elu})
        m_methods[checked]->setChecked(true);
    m_nonCausal = new QCheckBox(tr("non-causal"));
    m_nonCausal->setToolTip(tr("Measure each method without a mask: every query attends to "
                               "every key."));
    m_nonCausal->setChecked(true);
    m_causal = new QCheckBox(tr("causal"));
    m_causal->setToolTip(
        tr("Measure each method with the causal mask: query i attends to keys 1..i (exact: half "
           "the flops; linear: prefix sums of the key features, in chunks). Methods without a "
           "causal form (%1) are measured without the mask only.")
            .arg(methodTitleList(methodsWithoutCausalForm())));
    auto* variants = new QHBoxLayout;
    variants->addWidget(m_nonCausal);
    variants->addWidget(m_causal);
    variants->addStretch();
    methodsLayout->addLayout(variants);
    m_nonCausal->setObjectName(QStringLiteral("nonCausal"));
    m_causal->setObjectName(QStringLiteral("timingCausal"));
    return methodsBox;
}

QWidget* TimingPanel::buildLengthsBox()
{
    auto* lengthsBox = new QGroupBox(tr("Sequence lengths L"));
    auto* lengthsForm = new QFormLayout(lengthsBox);
    const auto lengthBox = [](int value, const QString& tip) {
        return sweepSpinBox(kMinLength, kMaxLength, value, tip, new LengthSpinBox);
    };
    m_minLength = lengthBox(128, tr("The shortest sequence length L measured, in tokens (the "
                                    "arrows halve and double it). Lengths are rounded to "
                                    "multiples of 16."));
    m_maxLength = lengthBox(16384, tr("The longest sequence length L measured, in tokens (the "
                                      "arrows halve and double it). Exact attention at 65,536 "
                                      "takes seconds a run."));
    m_pointsPerOctave = sweepSpinBox(1, 4, 1,
                                     tr("Lengths per doubling of L, log-spaced between the "
                                        "shortest and the longest: 1 gives 128, 256, 512, "
                                        "...; 2 adds the lengths halfway between (181, "
                                        "362, ...)."));
    m_lengthsPreview = new QLabel;
    m_lengthsPreview->setWordWrap(true);
    lengthsForm->addRow(tr("From"), m_minLength);
    lengthsForm->addRow(tr("To"), m_maxLength);
    lengthsForm->addRow(tr("Per octave"), m_pointsPerOctave);
    lengthsForm->addRow(m_lengthsPreview);
    // The range stays ordered: moving one end past the other moves both.
    connect(m_minLength, &QSpinBox::valueChanged, this, [this](int value) {
        if (m_maxLength->value() < value)
            m_maxLength->setValue(value);
        updateLengthsPreview();
    });
    connect(m_maxLength, &QSpinBox::valueChanged, this, [this](int value) {
        if (m_minLength->value() > value)
            m_minLength->setValue(value);
        updateLengthsPreview();
    });
    connect(m_pointsPerOctave, &QSpinBox::valueChanged, this, &TimingPanel::updateLengthsPreview);
    for (QCheckBox* box : {m_nonCausal, m_causal})
        connect(box, &QCheckBox::toggled, this, &TimingPanel::updateLengthsPreview);
    for (const auto& [algorithm, box] : m_methods)
        connect(box, &QCheckBox::toggled, this, &TimingPanel::updateLengthsPreview);
    m_minLength->setObjectName(QStringLiteral("minLength"));
    m_maxLength->setObjectName(QStringLiteral("maxLength"));
    m_pointsPerOctave->setObjectName(QStringLiteral("pointsPerOctave"));
    m_lengthsPreview->setObjectName(QStringLiteral("lengthsPreview"));
    return lengthsBox;
}

QWidget* TimingPanel::buildSizesBox()
{
    auto* sizesBox = new QGroupBox(tr("Sizes"));
    auto* sizesForm = new QFormLayout(sizesBox);
    m_headDim = sweepSpinBox(1, 1024, 64,
                             tr("d, the dimension of each query, key and value (d_v = "
                                "d). Exact attention costs 4 L^2 d flops."));
    m_features = sweepSpinBox(1, 16384, 256,
                              tr("m, the number of random features of the FAVOR+ "
                                 "maps (2m for hyperbolic and trigonometric; elu + 1 "
                                 "has d features and ignores m). Their cost grows "
                                 "like L m d."));
    m_threads = sweepSpinBox(0, kMaxThreads, 0,
                             tr("The engine threads of the sweep; 0 uses every "
                                "hardware thread of the machine."));
    m_threads->setSpecialValueText(tr("all (%1)").arg(hardwareThreads()));
    m_repetitions = sweepSpinBox(1, 1000, 3,
                                 tr("Timed runs per point, after one warm-up run: the "
                                    "curve goes through their median, the error bars "
                                    "span their minimum and maximum."));
    sizesForm->addRow(tr("d"), m_headDim);
    sizesForm->addRow(tr("m"), m_features);
    sizesForm->addRow(tr("Threads"), m_threads);
    sizesForm->addRow(tr("Repetitions"), m_repetitions);
    m_headDim->setObjectName(QStringLiteral("timingHeadDim"));
    m_features->setObjectName(QStringLiteral("timingFeatures"));
    m_threads->setObjectName(QStringLiteral("threads"));
    m_repetitions->setObjectName(QStringLiteral("repetitions"));
    return sizesBox;
}

QWidget* TimingPanel::buildResults()
{
    m_chart = new TimingChart;
    m_chart->setMinimumSize(360, 300);
    setChart(m_chart);
    m_sgemm = new QLabel;
    m_sgemm->setWordWrap(true);  // a long line held the page wider than a 1280-pixel window
    m_sgemm->setToolTip(tr("The machine's float matrix product rate (Eigen, n = 1536) with the "
                           "sweep's threads, measured at the start of the sweep: the yardstick "
                           "of the GFLOP/s in the table."));
    m_table = new QTableWidget(0, ColumnCount);
    const QStringList headers{
        tr("Method"),  tr("Slope"),     tr("Crossover with exact"), tr("Largest L measured"),
        tr("GFLOP/s"), tr("% of sgemm")};
    const QStringList headerTips{
        tr("The method and its variant; the colour and marker of its curves."),
        tr("The least-squares slope of log(time) against log(L): about 2 for exact attention, "
           "about 1 for linear attention."),
        tr("The length L above which this linear method is faster than exact attention of the "
           "same causality (streaming, else materialised), interpolated in log-log."),
        tr("The longest L this method was measured at (longer ones may have been skipped for "
           "the memory budget)."),
        tr("The flops of a run at that L (exact attention 4 L^2 d, half when causal; FAVOR+ "
           "2 L m d per side for its features plus 4 L m d) over its median time."),
        tr("That rate as a share of the machine's sgemm rate measured in the same run.")};
    for (int column = 0; column < ColumnCount; ++column) {
        auto* header = new QTableWidgetItem(headers[column]);
        header->setToolTip(headerTips[column]);
        m_table->setHorizontalHeaderItem(column, header);
    }
    m_table->verticalHeader()->hide();
    m_table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->installEventFilter(this);
    m_table->viewport()->installEventFilter(this);

    m_belowChart = new QWidget;
    auto* belowLayout = new QVBoxLayout(m_belowChart);
    belowLayout->setContentsMargins(0, 0, 0, 0);
    belowLayout->addWidget(m_sgemm);
    belowLayout->addWidget(m_table);
    auto* splitter = new QSplitter(Qt::Vertical);
    splitter->addWidget(m_chart);
    splitter->addWidget(m_belowChart);
    splitter->setStretchFactor(0, 3);
    splitter->setStretchFactor(1, 1);
    splitter->setChildrenCollapsible(false);
    m_chart->setObjectName(QStringLiteral("timingChart"));
    m_sgemm->setObjectName(QStringLiteral("sgemm"));
    m_table->setObjectName(QStringLiteral("timingTable"));
    return splitter;
}

void TimingPanel::buildControls()
{
    QWidget* methodsBox = buildMethodsBox();
    QWidget* lengthsBox = buildLengthsBox();
    QWidget* sizesBox = buildSizesBox();
    auto* note = new QLabel(tr("Timings are of this machine. Other work while a sweep runs "
                               "(recomputing in the main window, other programs) disturbs "
                               "them."));
    note->setWordWrap(true);
    note->setObjectName(QStringLiteral("timingNote"));
    QPalette muted = note->palette();
    muted.setColor(QPalette::WindowText, muted.color(QPalette::PlaceholderText));
    note->setPalette(muted);

    auto* controls = new QWidget;
    auto* controlsLayout = new QVBoxLayout(controls);
    controlsLayout->addWidget(methodsBox);
    controlsLayout->addWidget(lengthsBox);
    controlsLayout->addWidget(sizesBox);
    controlsLayout->addWidget(sweepControls());
    controlsLayout->addStretch();
    controlsLayout->addWidget(note);
    QScrollArea* scroll = controlsColumn(controls);

    auto* layout = new QHBoxLayout(this);
    layout->addWidget(scroll);
    layout->addWidget(buildResults(), 1);
}

SweepSpec TimingPanel::spec() const
{
    SweepSpec spec;
    for (const MethodInfo& info : methodRegistry()) {
        if (!m_methods.at(info.method)->isChecked())
            continue;
        if (m_nonCausal->isChecked())
            spec.methods.push_back({info.method, false});
        if (m_causal->isChecked() && info.hasCausalForm)
            spec.methods.push_back({info.method, true});
    }
    spec.lengths =
        logSpacedLengths(m_minLength->value(), m_maxLength->value(), m_pointsPerOctave->value());
    spec.headDim = m_headDim->value();
    spec.features = m_features->value();
    spec.threads = m_threads->value();
    spec.repetitions = m_repetitions->value();
    spec.budget = m_budget;
    return spec;
}

QJsonObject TimingPanel::state() const
{
    TimingPageState state;
    state.spec = spec();
    state.fromLength = m_minLength->value();
    state.toLength = m_maxLength->value();
    state.pointsPerOctave = m_pointsPerOctave->value();
    state.nonCausal = m_nonCausal->isChecked();
    state.causal = m_causal->isChecked();
    state.result = m_result;
    return state.toJson();
}

void TimingPanel::setState(const QJsonObject& json)
{
    // Read everything first, so that a malformed state changes nothing.
    const TimingPageState state = TimingPageState::fromJson(json);
    const SweepSpec& restored = state.spec;
    abandonSweep();
    for (const auto& [algorithm, box] : m_methods) {
        box->setChecked(std::any_of(
            restored.methods.begin(), restored.methods.end(),
            [algorithm = algorithm](const TimedMethod& m) { return m.algorithm == algorithm; }));
    }
    m_nonCausal->setChecked(state.nonCausal);
    m_causal->setChecked(state.causal);
    m_maxLength->setValue(state.toLength);  // first, so that the range stays ordered
    m_minLength->setValue(state.fromLength);
    m_pointsPerOctave->setValue(state.pointsPerOctave);
    m_headDim->setValue(restored.headDim);
    m_features->setValue(restored.features);
    m_threads->setValue(restored.threads);
    m_repetitions->setValue(restored.repetitions);

    m_result = state.result;
    setProgress(int(measuredCount(m_result)), int(m_result.points.size()));
    statusLabel()->setText(m_result.points.empty()
                               ? QString()
                               : tr("Restored from the session, not run again: %1.")
                                     .arg(points(qsizetype(m_result.points.size()))));
    showResult();
}

QByteArray TimingPanel::csv() const
{
    return sweepCsv(m_result);
}

QString TimingPanel::sgemmText() const
{
    return m_sgemm->text();
}

void TimingPanel::run()
{
    if (isRunning())
        return;
    const SweepSpec sweep = spec();
    if (sweep.methods.empty()) {
        statusLabel()->setText(
            tr("Choose at least one method and one variant (non-causal, causal)."));
        return;
    }
    if (sweep.lengths.empty()) {
        statusLabel()->setText(tr("Choose a length range."));
        return;
    }

    m_result = SweepResult();
    m_result.spec = sweep;
    const int total = int(sweep.methods.size() * sweep.lengths.size());
    setProgress(0, total);
    statusLabel()->setText(tr("Measuring the machine's sgemm rate, then %1...").arg(points(total)));

    m_shown = std::make_shared<ShownPoints>();
    // The worker hands each point to the GUI thread (JobContext::post) and never touches a
    // widget; the points still queued when the sweep ends are dropped (its result has them all).
    startSweep(
        [this, sweep, shown = m_shown](JobContext& context) {
            const auto progress = [&](const SweepPoint& point, int done, int total) {
                context.post([this, point, done, total] { addPoint(point, done, total); });
                shown->waitShown(done, context);
            };
            shown->waitShown(0, context);
            return runSweep(sweep, progress, context.cancelledCheck());
        },
        [this](SweepResult result) { finishSweep(std::move(result)); });
    showResult();
    releaseWorker(0);
}

void TimingPanel::addPoint(const SweepPoint& point, int done, int total)
{
    m_result.points.push_back(point);
    setProgress(done, total);
    if (point.status != PointStatus::Cancelled && !isCancelling()) {
        statusLabel()->setText(
            tr("Measuring: %1 of %2 points (last: %3 at L = %4).")
                .arg(done)
                .arg(total)
                .arg(methodLabel(point.method), formatLength(double(point.length))));
    }
    showResult();
    releaseWorker(done);
}

void TimingPanel::releaseWorker(int count)
{
    // Queued behind the chart's queued replot; the repaint draws the rest (table, progress) now.
    QMetaObject::invokeMethod(
        this,
        [this, shown = m_shown, count] {
            if (isVisible())
                repaint();
            shown->markShown(count);
        },
        Qt::QueuedConnection);
}

void TimingPanel::finishSweep(SweepResult result)
{
    m_result = std::move(result);
    const qsizetype measured = measuredCount(m_result);
    setProgress(int(measured), int(m_result.points.size()));
    const bool cancelled = measured < qsizetype(m_result.points.size());
    statusLabel()->setText(cancelled ? tr("Cancelled after %1 of %2 points; they are kept.")
                                           .arg(measured)
                                           .arg(m_result.points.size())
                                     : tr("Finished: %1 in %2.")
                                           .arg(points(qsizetype(m_result.points.size())),
                                                durationText(m_clock.elapsed())));
    showResult();
}

void TimingPanel::sweepFailed()
{
    showResult();
}

void TimingPanel::showResult()
{
    const bool shown =
        std::any_of(m_result.points.begin(), m_result.points.end(),
                    [](const SweepPoint& point) { return point.status != PointStatus::Cancelled; });
    if (shown || isRunning())
        m_chart->setResult(m_result);
    else
        m_chart->clear();
    updateTable();

    if (std::isfinite(m_result.sgemmGflops) && m_result.sgemmGflops > 0) {
        m_sgemm->setText(tr("sgemm: %1 GFLOP/s on %2, measured in the same run as these timings")
                             .arg(m_result.sgemmGflops, 0, 'f', 0)
                             .arg(countText(m_result.threads, tr("thread"), tr("threads"))));
    } else {
        m_sgemm->setText(isRunning() ? tr("sgemm: measured with the sweep, shown when it ends")
                                     : tr("sgemm: measured at the start of each sweep"));
    }
    setExportEnabled(shown);
}

void TimingPanel::resizeEvent(QResizeEvent* event)
{
    SweepPage::resizeEvent(event);
    const QMargins margins = layout()->contentsMargins();
    const int height = event->size().height() - margins.top() - margins.bottom();
    m_belowChart->setVisible(height >=
                             kLeastChartHeight + m_belowChart->minimumSizeHint().height());
}

bool TimingPanel::eventFilter(QObject* watched, QEvent* event)
{
    if ((watched == m_table->viewport() && event->type() == QEvent::Resize) ||
        (watched == m_table && event->type() == QEvent::FontChange))
        fitTableColumns();
    return SweepPage::eventFilter(watched, event);
}

void TimingPanel::fitTableColumns()
{
    m_table->resizeColumnsToContents();
    QHeaderView* header = m_table->horizontalHeader();
    const int spare = m_table->viewport()->width() - header->length();
    if (spare > 0)
        header->resizeSection(CrossoverColumn, header->sectionSize(CrossoverColumn) + spare);
}

void TimingPanel::updateTable()
{
    const std::vector<TimingChart::MethodCurves>& curves = m_chart->allCurves();
    m_table->setRowCount(int(curves.size()));
    for (int row = 0; row < int(curves.size()); ++row) {
        const TimedMethod& method = curves[std::size_t(row)].method;
        // The largest length it was measured at, and its rate there.
        const SweepPoint* largest = nullptr;
        for (const SweepPoint& point : m_result.points) {
            if (point.method == method && point.status == PointStatus::Ok &&
                (!largest || point.length > largest->length))
                largest = &point;
        }
        QString crossover = QStringLiteral("\u2014");
        if (isApproximation(method.algorithm)) {
            // Compared with exact attention of its own causality only: beside the other
            // causality's exact curves on the chart, "no exact curve" read as a mistake.
            crossover = crossoverReference(m_result, method) ? tr("not in the range measured")
                        : method.causal                      ? tr("no causal exact curve")
                                                             : tr("no non-causal exact curve");
            for (const TimingChart::Crossover& marked : m_chart->crossovers()) {
                if (marked.method == method) {
                    crossover = tr("L %1 %2 (vs %3)")
                                    .arg(marked.atFirstLength ? QStringLiteral("\u2264")
                                                              : QStringLiteral("\u2248"))
                                    .arg(marked.atFirstLength ? formatLength(marked.length)
                                                              : formatLength(marked.length, 2))
                                    .arg(marked.reference.algorithm == Method::ExactStreaming
                                             ? tr("streaming")
                                             : tr("materialised"));
                }
            }
        }
        const double gflops = largest ? largest->gflops : std::nan("");
        const double share = gflops / m_result.sgemmGflops * 100;
        const QStringList texts{methodLabel(method),
                                tableNumber(fittedSlope(m_result, method), 2),
                                crossover,
                                largest ? formatLength(double(largest->length)) : tr("none"),
                                tableNumber(gflops, 1),
                                std::isfinite(share) && m_result.sgemmGflops > 0
                                    ? tableNumber(share, 0) + QLatin1Char('%')
                                    : QStringLiteral("n/a")};
        for (int column = 0; column < ColumnCount; ++column) {
            auto* item = new QTableWidgetItem(texts[column]);
            if (column != MethodColumn && column != CrossoverColumn)
                item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
            m_table->setItem(row, column, item);
        }
        m_table->item(row, MethodColumn)->setIcon(colorIcon(method));
    }
    fitTableColumns();
}

void TimingPanel::updateLengthsPreview()
{
    const SweepSpec sweep = spec();
    const std::size_t count = sweep.lengths.size();
    QString lengths;
    if (count > 0 && count <= 4) {
        QStringList texts;
        for (const Eigen::Index length : sweep.lengths)
            texts.append(formatLength(double(length)));
        lengths = texts.join(QStringLiteral(", "));
    } else if (count > 4) {
        lengths =
            tr("%1, %2, \u2026, %3")
                .arg(formatLength(double(sweep.lengths[0])), formatLength(double(sweep.lengths[1])),
                     formatLength(double(sweep.lengths.back())));
    }
    const qsizetype total = qsizetype(sweep.methods.size() * count);
    m_lengthsPreview->setText(
        tr("%1: %2\n%3 to measure")
            .arg(countText(qsizetype(count), tr("length"), tr("lengths")), lengths, points(total)));
    // Before the first sweep the progress bar counts the points of the controls' sweep (at
    // least 1: an empty range would make it a busy indicator).
    if (!isRunning() && m_result.points.empty()) {
        setProgress(0, int(total));
    }
}

}  // namespace attnlab::ui
