#pragma once

#include <qcustomplot.h>

namespace attnlab::ui {

// The log axis ticker of the lab's charts. Over fewer than 2.5 decades of a base-10 axis it puts
// ticks at 1, 2 and 5 times the powers of ten, and sub ticks at the other integer multiples:
// there QCustomPlot's own log ticker labels at most one power of ten, and under 1.6 decades it
// falls back to linear ticks, which one-digit powers of ten label alike (2·10¹ for 15 and 20).
// Other bases (an axis of powers of two) and wider ranges keep QCustomPlot's powers.
class LogTicker : public QCPAxisTickerLog {
public:
    // How the ticks are labelled.
    enum class Labels {
        AxisFormat,      // the axis's number format ("eb": 2·10⁻³)
        Plain,           // plain numbers: grouped integers from 1 to 10^15 ("65,536"), else
                         // three significant digits ("0.01")
        PlainWhenDense,  // plain numbers on the 1, 2, 5 ticks, the axis's format on powers of ten
        PowersOfTwo,     // a power of two as one ("2¹⁰"), other ticks as Plain: the lengths of
                         // a narrow chart, whose plain numbers ("32,768") leave room for one label
    };

    explicit LogTicker(Labels labels) : m_labels(labels) {}
    void setLabels(Labels labels) { m_labels = labels; }

protected:
    QVector<double> createTickVector(double tickStep, const QCPRange& range) override;
    QVector<double> createSubTickVector(int subTickCount, const QVector<double>& ticks) override;
    QString getTickLabel(double tick, const QLocale& locale, QChar formatChar,
                         int precision) override;

private:
    Labels m_labels;
    bool m_dense = false;  // the ticks of the latest createTickVector are 1, 2, 5 multiples
};

// A tick's label as Labels::PowersOfTwo writes it: "2¹⁰" for 1024, a plain number otherwise.
QString powerOfTwoLabel(double tick);

// Makes axis logarithmic with a LogTicker labelling as `labels` says, aiming at tickCount ticks,
// its numbers one-digit powers of ten ("eb", precision 0) where the axis's format applies.
void setLogAxis(QCPAxis* axis, LogTicker::Labels labels, int tickCount = 6);

}  // namespace attnlab::ui
