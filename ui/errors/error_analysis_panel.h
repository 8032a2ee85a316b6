#pragma once

#include "memory_budget.h"
#include "sweeps/error_sweep.h"
#include "ui/sweeps/sweep_page.h"

#include <QJsonObject>
#include <QMap>
#include <QTimer>

#include <map>
#include <memory>

class QCheckBox;
class QComboBox;
class QLabel;
class QLineEdit;
class QSpinBox;

namespace attnlab::ui {

class ErrorChart;

// The Error analysis page: where and why the approximations break, on the main window's input.
// The controls on the left choose the methods, the projections (orthogonal, iid, simplex), what
// to sweep (m, the query/key norm multiplier or L) and its values, m for the norm and length
// sweeps, the seeds and the (query, key) pair of the kernel MSE; the metric chooses what the
// chart shows (relative Frobenius error of P, mean row TV, output relative error, kernel MSE
// against Lemma 2) without running again. Run computes the sweep (core/sweeps/error_sweep.h) on
// a worker thread; the chart (ErrorChart) grows as rows finish, with a progress bar and Cancel,
// which keeps the rows finished. The chart exports as PNG, SVG or PDF and the rows as CSV;
// state() and setState() keep the controls and the result in the session, so a session reopens
// without computing again.
class ErrorAnalysisPanel : public SweepPage {
    Q_OBJECT

public:
    explicit ErrorAnalysisPanel(QWidget* parent = nullptr);

    // The experiment and input sweeps run on from now on (the main window's current ones; the
    // spec says how the input was made, its scale, causality and precision). A running sweep goes
    // on with the input it started with. A null input: Run says there is none.
    void setInput(const ExperimentSpec& spec, std::shared_ptr<const AttentionInput> input);
    // The memory budget of the sweeps run from now on (a sweep over it is refused).
    void setMemoryBudget(const MemoryBudget& budget) { m_budget = budget; }

    // The sweep the controls describe on the current input. Throws InputError naming the control
    // when the values cannot be read.
    ErrorSweepSpec spec() const;
    ErrorMetric errorMetric() const;
    void setErrorMetric(ErrorMetric metric);
    // The chart's x axis: the swept value, or the cost (an equal-cost comparison).
    ErrorAxis axis() const;
    void setAxis(ErrorAxis axis);

    // The result shown: the rows finished so far while a sweep runs, else the last sweep run or
    // restored (no rows before the first).
    const ErrorSweepResult& result() const { return m_result; }

    // The controls and the result shown, as JSON for the session file (ErrorPageState).
    QJsonObject state() const;
    // Restores what state() saved: sets the controls and shows the result without computing (a
    // running sweep is dropped first, without waiting for it). Throws InputError naming the field
    // when the state is malformed, leaving the panel as it was.
    void setState(const QJsonObject& state);

    // The chart: the figure the main window's export and copy act on.
    ErrorChart* chart() const { return m_chart; }

public slots:
    // Starts the sweep of spec() on the worker thread; does nothing while one runs. Without an
    // input, a method or readable values, says so in the status line instead. Cancel stops it
    // after the block of rows it is in; the rows finished are kept.
    void run() override;

protected:
    void sweepFailed() override;
    // errorSweepCsv(result()), what Export > Data as CSV writes.
    QByteArray csv() const override;

private:
    void buildControls();
    // The methods and projections to sweep; what is swept, its values, m, the seeds and the pair.
    QWidget* buildMethodsBox();
    QWidget* buildSweepBox();
    // Takes a row the worker finished (posted by the worker).
    void addRow(const ErrorSweepResult& header, const ErrorRow& row, int total);
    // The sweep returned (finished or cancelled): shows all its rows.
    void finishSweep(ErrorSweepResult result);
    // Shows m_result on the chart (or the hint when it has no row), noting a sweep of another
    // input than the current one (resultOfAnEarlierInput).
    void showResult();
    // The result shown was swept on an input other than the window's current one (another
    // input, or s, mask or precision).
    bool resultOfAnEarlierInput() const;
    // The sweep kind changed: swaps the values text and enables the m of fixed-m sweeps.
    void sweepKindChanged();
    void updateInputLabel();

    MemoryBudget m_budget;
    ExperimentSpec m_inputSpec;
    std::shared_ptr<const AttentionInput> m_input;
    ErrorSweepResult m_result;
    bool m_notedEarlier = false;  // the chart notes that m_result is of an earlier input
    QTimer m_refresh;             // coalesces chart redraws while rows arrive
    QMap<ErrorSweepKind, QString> m_valuesText;  // the values entered for each sweep kind
    ErrorSweepKind m_shownKind = ErrorSweepKind::Features;

    std::map<Method, QCheckBox*> m_methods;
    std::map<Method, QString> m_methodTips;  // each box's tooltip, before what the input adds
    std::map<ProjectionKind, QCheckBox*> m_projections;
    QComboBox* m_sweepKind;
    QLineEdit* m_values;
    QSpinBox* m_features;
    QSpinBox* m_seeds;
    QSpinBox* m_pairQuery;
    QSpinBox* m_pairKey;
    QComboBox* m_metric;
    QComboBox* m_axis;
    QLabel* m_inputLabel;
    ErrorChart* m_chart;
};

}  // namespace attnlab::ui
