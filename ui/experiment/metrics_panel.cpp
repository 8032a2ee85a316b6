#include "ui/experiment/metrics_panel.h"

#include "inputs/model_input.h"
#include "ui/common/number_text.h"

#include <QFrame>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QScrollArea>
#include <QStyle>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>
#include <functional>
#include <set>
#include <vector>

namespace attnlab::ui {

namespace {

// One metric: its key in metrics.json, its name in plain words, its formula (rich text, for the
// tooltip) and how its value is written, given the number of rows it was measured over.
struct MetricDefinition {
    QString key;
    QString name;
    QString formula;
    std::function<QString(const AttentionMetrics& metrics, qint64 rows)> text;
};

// The text of a metric that is one number of AttentionMetrics, or of its row properties, as the
// panel writes numbers (formatValue).
std::function<QString(const AttentionMetrics&, qint64)> number(double AttentionMetrics::*field)
{
    return
        [field](const AttentionMetrics& m, qint64) { return MetricsPanel::formatValue(m.*field); };
}

std::function<QString(const AttentionMetrics&, qint64)> number(double RowProperties::*field)
{
    return [field](const AttentionMetrics& m, qint64) {
        return MetricsPanel::formatValue(m.properties.*field);
    };
}

// P^ and A^ are written with a combining circumflex, so the hat sits on the letter.
const std::vector<MetricDefinition>& metricDefinitions()
{
    static const std::vector<MetricDefinition> definitions{
        {QStringLiteral("max_abs"), QStringLiteral("Largest error in P"),
         QStringLiteral("max<sub>i,j</sub> |P\u0302<sub>ij</sub> \u2212 P<sub>ij</sub>|"),
         number(&AttentionMetrics::maxAbsError)},
        {QStringLiteral("mean_abs"), QStringLiteral("Mean error in P"),
         QStringLiteral("mean<sub>i,j</sub> |P\u0302<sub>ij</sub> \u2212 P<sub>ij</sub>| over the "
                        "entries that are not masked"),
         number(&AttentionMetrics::meanAbsError)},
        {QStringLiteral("rel_frobenius_attention"), QStringLiteral("Relative error of P"),
         QStringLiteral("\u2016P\u0302 \u2212 P\u2016<sub>F</sub> / \u2016P\u2016<sub>F</sub> "
                        "(Frobenius norms)"),
         number(&AttentionMetrics::relFrobeniusAttention)},
        {QStringLiteral("rel_frobenius_output"), QStringLiteral("Relative error of the output"),
         QStringLiteral("\u2016O\u0302 \u2212 O\u2016<sub>F</sub> / \u2016O\u2016<sub>F</sub>, "
                        "with O = P V and O\u0302 = P\u0302 V"),
         number(&AttentionMetrics::relFrobeniusOutput)},
        {QStringLiteral("mean_tv"), QStringLiteral("Mean total variation of a row"),
         QStringLiteral("mean<sub>i</sub> \u00bd \u2211<sub>j</sub> |P\u0302<sub>ij</sub> \u2212 "
                        "P<sub>ij</sub>|: the probability mass the approximation puts in the "
                        "wrong place, from 0 to 1"),
         number(&AttentionMetrics::meanTotalVariation)},
        {QStringLiteral("mean_kl"), QStringLiteral("Mean KL divergence of a row"),
         QStringLiteral("mean<sub>i</sub> KL(P<sub>i</sub> \u2016 P\u0302<sub>i</sub>) = "
                        "mean<sub>i</sub> \u2211<sub>j</sub> [P<sub>ij</sub> log(P<sub>ij</sub> / "
                        "P\u0302<sub>ij</sub>) \u2212 P<sub>ij</sub> + P\u0302<sub>ij</sub>], "
                        "the KL where P\u0302's rows sum to 1 (the last two terms cancel) and "
                        "\u2265 0 where they do not (Nystr\u00f6m, Linformer); n/a when "
                        "P\u0302 has entries \u2264 0 where P is positive"),
         number(&AttentionMetrics::meanKl)},
        // Exact and approximate on rows of their own: one number per cell keeps the dock's
        // width whatever the values.
        {QStringLiteral("entropy_exact"), QStringLiteral("Row entropy, exact"),
         QStringLiteral("mean<sub>i</sub> H(P<sub>i</sub>) = \u2212\u2211<sub>j</sub> "
                        "P<sub>ij</sub> log P<sub>ij</sub> in nats: a trained head's rows are "
                        "spiky (low entropy)"),
         number(&RowProperties::entropyExact)},
        {QStringLiteral("entropy_approx"), QStringLiteral("Row entropy, approximate"),
         QStringLiteral("mean<sub>i</sub> H(P\u0302<sub>i</sub>) in nats: fixed feature maps "
                        "spread their weight (higher than exact); n/a when P\u0302 has negative "
                        "entries"),
         number(&RowProperties::entropyApprox)},
        {QStringLiteral("monotonicity"), QStringLiteral("Monotonicity in q\u00b7k"),
         QStringLiteral("mean over the rows of Spearman's rank correlation between "
                        "q<sub>i</sub>\u00b7k<sub>j</sub> and P\u0302<sub>ij</sub>: 1 when "
                        "P\u0302 ranks the keys as softmax does, 0 when it ignores q\u00b7k"),
         number(&RowProperties::monotonicity)},
        {QStringLiteral("kernel_mse"), QStringLiteral("Kernel mean squared error"),
         QStringLiteral("mean<sub>i,j</sub> (A\u0302<sub>ij</sub> \u2212 A<sub>ij</sub>)\u00b2, "
                        "with A<sub>ij</sub> = exp(s q<sub>i</sub>\u00b7k<sub>j</sub>) and "
                        "A\u0302<sub>ij</sub> = \u03c6(q<sub>i</sub>)\u00b7\u03c6(k<sub>j</sub>)"),
         number(&AttentionMetrics::kernelMse)},
        {QStringLiteral("nonpositive_rows"), QStringLiteral("Rows with a denominator \u2264 0"),
         QStringLiteral("rows i whose normaliser \u03c6(q<sub>i</sub>)\u00b7\u2211<sub>j</sub> "
                        "\u03c6(k<sub>j</sub>) is not positive, so P\u0302<sub>i</sub> is not a "
                        "distribution"),
         [](const AttentionMetrics& m, qint64 rows) {
             return QStringLiteral("%1 of %2").arg(m.nonPositiveRows).arg(rows);
         }},
        {QStringLiteral("kernel_overflow"), QStringLiteral("Kernel entries out of range"),
         QStringLiteral("entries of A or A\u0302 beyond the range of the precision the engine "
                        "runs in (written as inf); P, P\u0302 and the outputs are not affected"),
         [](const AttentionMetrics& m, qint64) { return QString::number(m.kernelOverflow); }},
    };
    return definitions;
}

// The heading of a warning in plain words, by its stable code.
QString warningHeading(const QString& code)
{
    if (code == QLatin1String("nonpositive-denominator"))
        return QStringLiteral("Non-positive denominators");
    if (code == QLatin1String("overflow"))
        return QStringLiteral("Kernel values out of range");
    if (code == QLatin1String("feature-overflow"))
        return QStringLiteral("Feature values out of range");
    if (code == QLatin1String("kl-undefined"))
        return QStringLiteral("KL divergence undefined");
    if (code == QLatin1String("entropy-undefined"))
        return QStringLiteral("Entropy of P\u0302 undefined");
    if (code == QLatin1String("monotonicity-undefined"))
        return QStringLiteral("Monotonicity undefined");
    if (code == QLatin1String("causal-form"))
        return QStringLiteral("Causal form");
    if (code == QLatin1String("window-covers-every-pair"))
        return QStringLiteral("The window holds every key");
    if (code == QLatin1String("size-past-length"))
        return QStringLiteral("Size past the sequence");
    if (code == QLatin1String("output-zero"))
        return QStringLiteral("Output error undefined");
    if (code == QLatin1String("input"))
        return QStringLiteral("Input");
    if (code == QLatin1String("other-heads"))
        return QStringLiteral("Other heads");
    return code;
}

// A file name that may break after its '-', '_' and '.' (a zero-width space after each), so that
// a long one wraps rather than widening the dock.
QString breakableName(const QString& name)
{
    QString text;
    for (const QChar c : name) {
        text += c;
        if (c == QLatin1Char('-') || c == QLatin1Char('_') || c == QLatin1Char('.'))
            text += QChar(0x200b);
    }
    return text;
}

// What the errors of a result are: an estimator's, another kernel's, rounding (both sides exact),
// or a second checkpoint's.
QString roleText(const ExperimentSpec& spec)
{
    if (!spec.input.comparisonModelPath.isEmpty())
        return QStringLiteral("Both sides are exact softmax attention, of two checkpoints of one "
                              "model: the errors below are how far the second strays from the "
                              "first.");
    switch (spec.exactMethod ? MethodRole::Exact : methodInfo(spec.approximation.kind).role) {
        case MethodRole::Exact: return QStringLiteral("Both sides are exact softmax attention.");
        case MethodRole::Estimate:
            return QStringLiteral("Estimates softmax: the errors below are the estimator's.");
        case MethodRole::Replacement:
            return QStringLiteral("Replaces softmax with another kernel, which matches it only "
                                  "after training: the errors below measure a different kernel, "
                                  "not an estimator's variance.");
    }
    Q_UNREACHABLE();
}

// A duration in milliseconds with three or four significant digits.
QString formatMilliseconds(double seconds)
{
    const double ms = seconds * 1e3;
    const int decimals = ms >= 100 ? 0 : ms >= 10 ? 1 : ms >= 1 ? 2 : 3;
    return QStringLiteral("%1 ms").arg(ms, 0, 'f', decimals);
}

// A label at least as wide as a reserved text, the widest it commonly shows, in whatever font it
// has (presentation mode enlarges it): values that change with every result ("0.04772", then
// "0.009005"; a time of 0.988 ms, then 1.23 ms) leave their column's width, and the dock's, where
// they are. A digit more took eight pixels from the maps beside the dock, and drew them again.
class ReservedWidthLabel : public QLabel {
public:
    explicit ReservedWidthLabel(const QString& widest) : m_widest(widest) {}

    QSize sizeHint() const override { return reserveWidth(QLabel::sizeHint()); }
    QSize minimumSizeHint() const override { return reserveWidth(QLabel::minimumSizeHint()); }

private:
    // `size`, at least as wide as the reserved text in this label's font, measured by a label
    // that is never shown (QLabel's own measure, to the pixel).
    QSize reserveWidth(QSize size) const
    {
        if (m_widest.font() != font())
            m_widest.setFont(font());
        return QSize(std::max(size.width(), m_widest.minimumSizeHint().width()), size.height());
    }

    mutable QLabel m_widest;
};

// Text colour for secondary text: halfway between the text and the background, so that it still
// reads (the palette's disabled text is too faint for that).
QColor mutedColor(const QWidget* widget)
{
    const QColor text = widget->palette().color(QPalette::WindowText);
    const QColor window = widget->palette().color(QPalette::Window);
    return QColor((text.red() + window.red()) / 2, (text.green() + window.green()) / 2,
                  (text.blue() + window.blue()) / 2);
}

// A bold section heading.
QLabel* sectionLabel(const QString& text)
{
    auto* label = new QLabel(text);
    QFont font = label->font();
    font.setBold(true);
    label->setFont(font);
    return label;
}

// A thin horizontal line between sections.
QFrame* separator()
{
    auto* line = new QFrame;
    line->setFrameShape(QFrame::HLine);
    line->setFrameShadow(QFrame::Sunken);
    return line;
}

}  // namespace

MetricsPanel::MetricsPanel(QWidget* parent) : QWidget(parent)
{
    auto* layout = new QVBoxLayout(this);
    layout->setSpacing(6);

    m_method = new QLabel;
    m_method->setWordWrap(true);
    QFont titleFont = m_method->font();
    titleFont.setBold(true);
    titleFont.setPointSizeF(titleFont.pointSizeF() * 1.25);
    m_method->setFont(titleFont);
    layout->addWidget(m_method);
    m_role = new QLabel;
    m_role->setWordWrap(true);
    m_role->setObjectName(QStringLiteral("metricsRole"));
    QPalette rolePalette = m_role->palette();
    rolePalette.setColor(QPalette::WindowText, mutedColor(this));
    m_role->setPalette(rolePalette);
    layout->addWidget(m_role);

    m_summary = new QGridLayout;
    m_summary->setColumnStretch(0, 1);
    m_summary->setHorizontalSpacing(8);
    m_length = addSummaryRow(new QLabel(QStringLiteral("Sequence length L")), new QLabel);
    m_featuresName = new QLabel;
    m_features = addSummaryRow(m_featuresName, new QLabel);
    m_features->setWordWrap(true);  // a long file name (the first checkpoint's) on two lines
    m_timeApproxName = new QLabel;
    // Times have three or four digits: "0.000 ms" is the widest.
    const QString widestTime = formatMilliseconds(0);
    m_timeApprox = addSummaryRow(m_timeApproxName, new ReservedWidthLabel(widestTime));
    m_timeExactName = new QLabel;
    m_timeExact = addSummaryRow(m_timeExactName, new ReservedWidthLabel(widestTime));
    layout->addLayout(m_summary);
    layout->addWidget(separator());

    auto* table = new QGridLayout;
    table->setColumnStretch(0, 1);
    table->setHorizontalSpacing(8);
    table->setVerticalSpacing(5);
    table->addWidget(sectionLabel(QStringLiteral("Error against exact attention")), 0, 0, 1, 3);
    m_headColumn = new QLabel;
    m_lastColumn = new QLabel;
    for (QLabel* header : {m_headColumn, m_lastColumn}) {
        header->setAlignment(Qt::AlignRight | Qt::AlignBottom);
        header->setWordWrap(true);  // "all 4 heads" may take two lines in a narrow dock
        QPalette palette = header->palette();
        palette.setColor(QPalette::WindowText, mutedColor(this));
        header->setPalette(palette);
    }
    table->addWidget(m_headColumn, 1, 1);
    table->addWidget(m_lastColumn, 1, 2);
    // Values have four significant digits, in scientific notation below 10^-3: "0.001234" is the
    // widest but for the rare negative one.
    const QString widestValue = formatValue(0.001234);
    int row = 2;
    for (const MetricDefinition& metric : metricDefinitions()) {
        auto* name = new QLabel(metric.name);
        name->setWordWrap(true);
        name->setToolTip(metric.formula);
        table->addWidget(name, row, 0);
        for (const bool last : {false, true}) {
            auto* value = new ReservedWidthLabel(widestValue);
            value->setAlignment(Qt::AlignRight | Qt::AlignVCenter);
            value->setTextInteractionFlags(Qt::TextSelectableByMouse);
            value->setToolTip(metric.formula);
            table->addWidget(value, row, last ? 2 : 1);
            (last ? m_lastValues : m_headValues).insert(metric.key, value);
        }
        ++row;
    }
    layout->addLayout(table);
    layout->addWidget(separator());

    layout->addWidget(sectionLabel(QStringLiteral("Warnings")));
    auto* scroll = new QScrollArea;
    scroll->setFrameShape(QFrame::NoFrame);
    scroll->setWidgetResizable(true);
    scroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    auto* warningsWidget = new QWidget;
    m_warnings = new QVBoxLayout(warningsWidget);
    m_warnings->setContentsMargins(0, 0, 0, 0);
    m_warnings->setSpacing(8);
    m_noWarnings = new QLabel(QStringLiteral("No warnings"));
    QPalette muted = m_noWarnings->palette();
    muted.setColor(QPalette::WindowText, mutedColor(this));
    m_noWarnings->setPalette(muted);
    m_warnings->addWidget(m_noWarnings);
    m_warnings->addStretch(1);
    scroll->setWidget(warningsWidget);
    layout->addWidget(scroll, 1);

    clear();
}

void MetricsPanel::setResult(const ExperimentResult& result, int head)
{
    const int heads = int(result.heads.size());
    const bool oneHead = head >= 0 && head < heads;
    const bool twoColumns = oneHead && heads > 1;
    const qint64 length = result.labels.size();
    const AttentionMetrics& headMetrics = oneHead ? result.heads[head].metrics : result.metrics;
    const qint64 headRows = oneHead ? length : length * std::max(heads, 1);

    const MethodInfo& map = methodInfo(result.spec.approximation.kind);
    // A second checkpoint in the approximation's place: named by its file, the first beside it.
    const QString& checkpoint = result.spec.input.comparisonModelPath;
    QString method = result.spec.exactMethod ? QStringLiteral("Exact: streaming vs materialised")
                     : checkpoint.isEmpty()  ? map.title
                                             : breakableName(result.spec.methodTitle());
    if (result.spec.causal)
        method += QStringLiteral(", causal");
    m_method->setText(method);
    m_method->setPalette(palette());
    m_length->setText(QString::number(length));
    // The method's size: m (random features, landmarks, projected length) or the window w.
    const MethodParameter* size =
        result.spec.exactMethod || !checkpoint.isEmpty() ? nullptr : map.size;
    m_featuresName->setText(size                   ? size->label
                            : checkpoint.isEmpty() ? QStringLiteral("Size (m or w)")
                                                   : QStringLiteral("Against"));
    m_features->setText(size ? size->format(result.spec.approximation.value(*size))
                        : checkpoint.isEmpty()
                            ? QStringLiteral("n/a")
                            : breakableName(modelDisplayName(result.spec.input.modelPath)));
    m_features->setToolTip(size ? size->description : QString());
    m_role->setText(roleText(result.spec));
    m_timeApproxName->setText(result.spec.exactMethod ? QStringLiteral("Time, streaming exact")
                              : checkpoint.isEmpty()  ? QStringLiteral("Time, approximation")
                                                      : QStringLiteral("Time, checkpoint"));
    m_timeApprox->setText(formatMilliseconds(result.secondsApprox));
    // A result that kept the previous exact side spent this time on its rows and metrics only.
    m_timeExactName->setText(result.exactKept ? QStringLiteral("Time, rows and metrics")
                                              : QStringLiteral("Time, exact"));
    m_timeExactName->setToolTip(result.exactKept
                                    ? QStringLiteral("Exact attention was kept from the previous "
                                                     "result (only the approximation changed): "
                                                     "this is the time of the rows of P and "
                                                     "P\u0302 and their metrics.")
                                    : QString());
    m_timeExact->setText(formatMilliseconds(result.secondsExact));

    // The last column holds the metrics over all heads beside a head's own, or the only metrics
    // shown; the head's column is shown only when there are two.
    m_headColumn->setText(twoColumns ? QStringLiteral("head %1").arg(head) : QString());
    m_lastColumn->setText(twoColumns ? QStringLiteral("all %1 heads").arg(heads) : QString());
    m_headColumn->setVisible(twoColumns);
    m_lastColumn->setVisible(twoColumns);
    const qint64 allRows = length * std::max(heads, 1);
    for (const MetricDefinition& metric : metricDefinitions()) {
        // Exact attention (streaming, or a second checkpoint's) has no denominator to fail.
        const bool noDenominator = (result.spec.exactMethod || !checkpoint.isEmpty()) &&
                                   metric.key == QLatin1String("nonpositive_rows");
        const QString na = QStringLiteral("n/a");
        setValueText(m_headValues[metric.key],
                     noDenominator ? na : metric.text(headMetrics, headRows));
        m_headValues[metric.key]->setVisible(twoColumns);
        setValueText(m_lastValues[metric.key], noDenominator ? na
                                               : twoColumns  ? metric.text(result.metrics, allRows)
                                                             : metric.text(headMetrics, headRows));
    }

    clearWarnings();
    const QIcon icon = style()->standardIcon(QStyle::SP_MessageBoxWarning);
    const int iconSize = style()->pixelMetric(QStyle::PM_SmallIconSize, nullptr, this);
    int index = 0;
    // A head's own warnings show with that head; the others' are named in one line after.
    std::vector<ResultWarning> shown;
    std::set<int> otherHeads;
    for (const ResultWarning& warning : result.warnings) {
        if (oneHead && warning.head >= 0 && warning.head != head)
            otherHeads.insert(warning.head);
        else
            shown.push_back(warning);
    }
    if (!otherHeads.empty()) {
        QStringList names;
        for (const int other : otherHeads)
            names.append(QString::number(other));
        shown.push_back(
            {QStringLiteral("other-heads"),
             tr("%1 %2 %3 warnings of %4 own: choose the head above the maps to read them.")
                 .arg(otherHeads.size() == 1 ? tr("Head") : tr("Heads"),
                      names.join(QStringLiteral(", ")),
                      otherHeads.size() == 1 ? tr("has") : tr("have"),
                      otherHeads.size() == 1 ? tr("its") : tr("their"))});
    }
    for (const ResultWarning& warning : shown) {
        const QString heading = warningHeading(warning.code);
        auto* row = new QHBoxLayout;
        row->setSpacing(8);
        auto* iconLabel = new QLabel;
        iconLabel->setPixmap(icon.pixmap(iconSize, iconSize));
        iconLabel->setAlignment(Qt::AlignTop);
        auto* text = new QLabel(QStringLiteral("<b>%1</b><br>%2")
                                    .arg(heading.toHtmlEscaped(), warning.message.toHtmlEscaped()));
        text->setWordWrap(true);
        text->setTextInteractionFlags(Qt::TextSelectableByMouse);
        text->setToolTip(warning.code);
        row->addWidget(iconLabel);
        row->addWidget(text, 1);
        m_warnings->insertLayout(index++, row);
        m_warningTexts.append(heading + QStringLiteral(": ") + warning.message);
    }
    m_noWarnings->setVisible(shown.empty());
}

void MetricsPanel::clear()
{
    m_method->setText(QStringLiteral("No result yet"));
    QPalette muted = m_method->palette();
    muted.setColor(QPalette::WindowText, mutedColor(this));
    m_method->setPalette(muted);
    for (QLabel* value : {m_length, m_features, m_timeApprox, m_timeExact, m_role})
        value->setText(QString());
    m_featuresName->setText(QStringLiteral("Features m"));
    m_timeApproxName->setText(QStringLiteral("Time, approximation"));
    m_headColumn->setVisible(false);
    m_lastColumn->setVisible(false);
    for (QLabel* value : std::as_const(m_headValues)) {
        value->setText(QString());
        value->setVisible(false);
    }
    for (QLabel* value : std::as_const(m_lastValues))
        value->setText(QString());
    clearWarnings();
    m_noWarnings->setVisible(false);
}

QString MetricsPanel::metricText(const QString& key, MetricScope scope) const
{
    const QLabel* head = m_headValues.value(key);
    const QLabel* last = m_lastValues.value(key);
    if (!head || !last)
        return QString();
    const bool twoColumns = head->isVisibleTo(this);
    return scope == MetricScope::SelectedHead && twoColumns ? head->text() : last->text();
}

QString MetricsPanel::formatValue(double value)
{
    if (std::isnan(value))
        return QStringLiteral("n/a");
    if (std::isinf(value))
        return value > 0 ? QStringLiteral("\u221e") : QStringLiteral("\u2212\u221e");
    if (value == 0)
        return QStringLiteral("0");
    const QString plain = QString::number(value, 'g', 4);
    if (std::abs(value) >= 1e-3 && !plain.contains(QLatin1Char('e')))
        return plain;
    // m x 10^e with four significant digits in m (trailing zeros dropped).
    const QString scientific = QString::number(value, 'e', 3);
    const qsizetype e = scientific.indexOf(QLatin1Char('e'));
    QString mantissa = scientific.left(e);
    while (mantissa.endsWith(QLatin1Char('0')))
        mantissa.chop(1);
    if (mantissa.endsWith(QLatin1Char('.')))
        mantissa.chop(1);
    return QStringLiteral("%1 \u00d7 10%2")
        .arg(mantissa, superscript(scientific.mid(e + 1).toInt()));
}

void MetricsPanel::setValueText(QLabel* value, const QString& text)
{
    value->setText(text);
    // A value in scientific notation ("2.847 × 10⁸") may break after its mantissa when its
    // column is narrow, rather than widen the dock, which would move the maps beside it.
    value->setWordWrap(text.contains(QStringLiteral(" \u00d7 10")));
}

QLabel* MetricsPanel::addSummaryRow(QLabel* name, QLabel* value)
{
    const int row = m_summary->count() / 2;
    m_summary->addWidget(name, row, 0);
    value->setAlignment(Qt::AlignRight | Qt::AlignVCenter);
    m_summary->addWidget(value, row, 1);
    return value;
}

void MetricsPanel::clearWarnings()
{
    // Every item before the "No warnings" label is a warning row.
    while (m_warnings->count() > 0 && m_warnings->itemAt(0)->widget() != m_noWarnings) {
        QLayoutItem* item = m_warnings->takeAt(0);
        if (QLayout* row = item->layout()) {
            while (QLayoutItem* child = row->takeAt(0)) {
                delete child->widget();
                delete child;
            }
        }
        delete item;
    }
    m_warningTexts.clear();
}

}  // namespace attnlab::ui
