#pragma once

#include "experiment.h"

#include <QHash>
#include <QStringList>
#include <QWidget>

class QGridLayout;
class QLabel;
class QVBoxLayout;

namespace attnlab::ui {

// Which column of the metrics table a text is read from: the selected head's, or the one over
// all heads (shown only when the result has more than one head; otherwise both name the one
// column shown).
enum class MetricScope { SelectedHead, AllHeads };

// Every metric of an ExperimentResult in plain words, each with its formula as a tooltip, with
// L, the method, m and the timings above and the result's warnings below. A metric that does not
// apply reads "n/a".
class MetricsPanel : public QWidget {
    Q_OBJECT

public:
    explicit MetricsPanel(QWidget* parent = nullptr);

    // Shows result; the metrics of result.heads[head] beside those over all heads when there is
    // more than one head (head outside [0, heads) shows only those over all heads).
    void setResult(const ExperimentResult& result, int head);
    // Shows no result: empty values, no warnings.
    void clear();

    // The text shown for a metric, by its key in metrics.json (max_abs, mean_abs,
    // rel_frobenius_attention, rel_frobenius_output, mean_tv, mean_kl, kernel_mse,
    // nonpositive_rows, kernel_overflow); empty when no result is shown.
    QString metricText(const QString& key, MetricScope scope = MetricScope::SelectedHead) const;
    // The warnings shown, one "heading: message" per warning; empty when there are none.
    QStringList warningTexts() const { return m_warningTexts; }

    // How a metric value is written: 4 significant digits, powers of ten for tiny or huge values,
    // "n/a" for NaN.
    static QString formatValue(double value);

private:
    // Adds a row "name  value" to the summary above the metrics table, its value right-aligned;
    // returns the value label.
    QLabel* addSummaryRow(QLabel* name, QLabel* value);
    // Shows text in a metric's value label, which wraps after the mantissa of a value in
    // scientific notation so that the dock keeps its width.
    static void setValueText(QLabel* value, const QString& text);
    // Removes every warning row.
    void clearWarnings();

    QLabel* m_summaryTitle;
    QLabel* m_length;
    QLabel* m_method;
    QLabel* m_featuresName;  // the method's size parameter: "Features m", "Window w"
    QLabel* m_features;
    QLabel* m_role;  // what the method is to softmax attention
    QLabel* m_timeApproxName;
    QLabel* m_timeApprox;
    QLabel* m_timeExactName;
    QLabel* m_timeExact;
    QLabel* m_headColumn;
    QLabel* m_lastColumn;
    QHash<QString, QLabel*> m_headValues;  // a head's metrics, beside those over all heads
    QHash<QString, QLabel*> m_lastValues;  // over all heads, or the only metrics shown
    QGridLayout* m_summary;
    QVBoxLayout* m_warnings;
    QLabel* m_noWarnings;
    QStringList m_warningTexts;
};

}  // namespace attnlab::ui
