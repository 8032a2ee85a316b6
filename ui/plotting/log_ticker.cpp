#include "ui/plotting/log_ticker.h"

#include "ui/common/number_text.h"

#include <cmath>
#include <initializer_list>

namespace attnlab::ui {

namespace {

constexpr double kDenseDecades = 2.5;

// mantissa * 10^k for every mantissa and every k, from the power below range.lower to the one
// above range.upper.
QVector<double> multiples(const QCPRange& range, std::initializer_list<int> mantissas)
{
    QVector<double> values;
    const int first = int(std::floor(std::log10(range.lower))) - 1;
    const int last = int(std::ceil(std::log10(range.upper)));
    for (int k = first; k <= last; ++k)
        for (const int mantissa : mantissas)
            values.append(mantissa * std::pow(10.0, k));
    return values;
}

// Grouped integers from 1 to 10^15 ("65,536"), else three significant digits ("0.01", "1e+20":
// a 64-bit integer holds no tick past 9.2·10^18).
QString plainNumber(double tick)
{
    if (tick >= 1 && tick < 1e15 && tick == std::round(tick))
        return QLocale(QLocale::English).toString(qlonglong(tick));
    return QString::number(tick, 'g', 3);
}

}  // namespace

QVector<double> LogTicker::createTickVector(double tickStep, const QCPRange& range)
{
    m_dense =
        logBase() == 10 && range.lower > 0 && std::log10(range.upper / range.lower) < kDenseDecades;
    if (!m_dense)
        return QCPAxisTickerLog::createTickVector(tickStep, range);
    return multiples(range, {1, 2, 5});
}

QVector<double> LogTicker::createSubTickVector(int subTickCount, const QVector<double>& ticks)
{
    if (!m_dense || ticks.isEmpty())
        return QCPAxisTickerLog::createSubTickVector(subTickCount, ticks);
    return multiples(QCPRange(ticks.front(), ticks.back()), {3, 4, 6, 7, 8, 9});
}

QString powerOfTwoLabel(double tick)
{
    const int exponent = int(std::lround(std::log2(tick)));
    if (tick > 0 && std::ldexp(1.0, exponent) == tick)
        return QStringLiteral("2") + superscript(exponent);
    return plainNumber(tick);
}

QString LogTicker::getTickLabel(double tick, const QLocale& locale, QChar formatChar, int precision)
{
    if (m_labels == Labels::PowersOfTwo)
        return powerOfTwoLabel(tick);
    const bool plain = m_labels == Labels::Plain || (m_labels == Labels::PlainWhenDense && m_dense);
    return plain ? plainNumber(tick)
                 : QCPAxisTickerLog::getTickLabel(tick, locale, formatChar, precision);
}

void setLogAxis(QCPAxis* axis, LogTicker::Labels labels, int tickCount)
{
    axis->setScaleType(QCPAxis::stLogarithmic);
    auto ticker = QSharedPointer<LogTicker>::create(labels);
    ticker->setTickCount(tickCount);
    axis->setTicker(ticker);
    axis->setNumberFormat(QStringLiteral("eb"));
    axis->setNumberPrecision(0);
}

}  // namespace attnlab::ui
