#pragma once

#include "types.h"

#include <QStringList>
#include "ui/plotting/plot_style.h"

#include <qcustomplot.h>

namespace attnlab::ui {

// One query's attention row, exact P_i beside its approximation P^_i, over the keys j. Up to
// kMaxBarKeys keys the two rows are grouped bars, one pair per key; longer rows are drawn as two
// step lines (QCPGraph::lsStepCenter, adaptively sampled), which stay fast for thousands of keys.
// Negative approximate weights (trigonometric features) are drawn below zero.
class RowComparisonView : public QCustomPlot {
    Q_OBJECT

public:
    static constexpr int kMaxBarKeys = 160;

    explicit RowComparisonView(QWidget* parent = nullptr);

    // Shows P_i (exact) and P^_i (approx), one value per key, with the keys' token texts on the
    // x axis (thinned when they do not fit) and title above the plot ("Query i: <token>"); the
    // legend names P^ approxName ("approximation", or "checkpoint" for a second checkpoint's).
    void setRows(const VectorD& exact, const VectorD& approx, const QStringList& keyLabels,
                 const QString& title, const QString& approxName = QStringLiteral("approximation"));
    // Removes the rows and shows the hint that tells the user how to pick a query.
    void clear();
    // Whether rows are shown (setRows since the last clear).
    bool hasRows() const { return m_hasRows; }

    // The plottable that draws P_i (QCPBars or QCPGraph, named "exact P"), and the one for P^_i.
    QCPAbstractPlottable* exactPlottable() const;
    QCPAbstractPlottable* approxPlottable() const;
    // Every how many keys a label is written on the x axis (1: every key), as of the last replot.
    int labelStride() const { return m_labelStride; }

signals:
    // setRows after clear, or clear after setRows.
    void hasRowsChanged(bool hasRows);

protected:
    // Lays out the plot, then thins the key labels for the width it got (on screen and for
    // exports at any size).
    void updateLayout() override;

private:
    // Sets hasRows(), emitting hasRowsChanged when it changes.
    void setHasRows(bool hasRows);
    // Switches between grouped bars (short rows) and step lines (long rows).
    void showAsBars(bool bars);
    // Chooses the labelled keys, their rotation and the side margins they need, so that no two
    // labels overlap at the current width; leaves the layout updated.
    void updateKeyLabels();

    QCPTextElement* m_title;
    QCPBarsGroup* m_barsGroup;
    QCPBars* m_exactBars;
    QCPBars* m_approxBars;
    QCPGraph* m_exactGraph;
    QCPGraph* m_approxGraph;
    FigureHint* m_hint;
    QSharedPointer<QCPAxisTickerText> m_keyTicker;
    QStringList m_keyLabels;
    bool m_bars = true;
    bool m_hasRows = false;
    int m_labelStride = 1;
};

}  // namespace attnlab::ui
