// The Stepper page's strip of tokens (StepperTokenStrip): the sentence one box per token, the
// current one marked, a click to jump to it.

#include "ui/stepper/stepper_token_strip.h"

#include "ui/stepper/stepper_style.h"

#include "ui/plotting/plot_style.h"

#include <QMouseEvent>
#include <QPainter>

#include <algorithm>

namespace attnlab::ui {

using namespace stepper;

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

}  // namespace attnlab::ui
