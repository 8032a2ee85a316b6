#include "ui/experiment/attention_maps_page.h"

#include "ui/experiment/row_comparison_view.h"
#include "ui/plotting/heatmap_view.h"

#include <QGridLayout>
#include <QResizeEvent>

#include <algorithm>

namespace attnlab::ui {

namespace {

// Space between the figures, pixels.
constexpr int kSpacing = 6;
// The strip of query rows below a row of maps: this share of the page's height, within bounds.
constexpr double kRowsShare = 0.3;
constexpr int kMinRowsHeight = 170;
constexpr int kMaxRowsHeight = 360;
// The other arrangement must give maps this much larger before the page switches to it.
constexpr double kHysteresis = 1.08;
// Maps smaller than this (pixels a side) are hard to read: the rows make way for them.
constexpr int kMinReadableMap = 160;

// The height of the strip of query rows below a row of maps on a page `pageHeight` high, for
// text `lineHeight` pixels high (presentation mode's fonts are larger): room for the title, the
// legend, the key labels and a readable plot.
int rowsHeight(int pageHeight, int lineHeight)
{
    const int minimum = std::max(kMinRowsHeight, 11 * lineHeight);
    return std::clamp(int(pageHeight * kRowsShare), minimum, std::max(minimum, kMaxRowsHeight));
}

}  // namespace

AttentionMapsPage::AttentionMapsPage(HeatmapView* exact, QWidget* approx, QWidget* error,
                                     RowComparisonView* rows, QWidget* parent)
    : QWidget(parent),
      m_exact(exact),
      m_approx(approx),
      m_error(error),
      m_rows(rows),
      m_grid(new QGridLayout(this))
{
    m_grid->setContentsMargins(0, 0, 0, 0);
    m_grid->setSpacing(kSpacing);
    arrange(Arrangement::TwoByTwo);
    // The maps' decorations change size without the page changing size (presentation mode's
    // larger fonts, longer tick labels of a new input): each replot of the exact map may call
    // for another arrangement. Queued, so that the layout is not changed inside a replot.
    connect(m_exact, &QCustomPlot::afterReplot, this, &AttentionMapsPage::reconsiderArrangement,
            Qt::QueuedConnection);
    connect(m_rows, &RowComparisonView::hasRowsChanged, this,
            &AttentionMapsPage::reconsiderArrangement);
    // The strip's chart needs more height once its key labels go on a slant (stripHeight).
    connect(m_rows, &QCustomPlot::afterReplot, this, &AttentionMapsPage::shareHeight,
            Qt::QueuedConnection);
    connect(m_rows, &QCustomPlot::afterReplot, this, &AttentionMapsPage::reconsiderArrangement,
            Qt::QueuedConnection);
    for (HeatmapView* map : maps())
        if (map)
            connect(map, &QCustomPlot::afterReplot, this, &AttentionMapsPage::lineUpMaps,
                    Qt::QueuedConnection);
}

std::array<HeatmapView*, 3> AttentionMapsPage::maps() const
{
    const auto mapIn = [](QWidget* figure) {
        auto* map = qobject_cast<HeatmapView*>(figure);
        return map ? map : figure->findChild<HeatmapView*>();
    };
    return {m_exact, mapIn(m_approx), mapIn(m_error)};
}

void AttentionMapsPage::lineUpMaps()
{
    std::array<HeatmapView*, 3> row = maps();
    labelMapsAlike({row.begin(), row.end()});
    if (m_arrangement == Arrangement::TwoByTwo) {
        if (row[2])
            row[2]->setMapTop(-1);  // under the exact map, beside the query rows
        row[2] = nullptr;
    }
    lineUpMapTops({row.begin(), row.end()});
}

void AttentionMapsPage::lineUpNewContent()
{
    for (HeatmapView* map : maps())
        if (map && map->isVisible())
            map->layOut();
    lineUpMaps();
}

void AttentionMapsPage::reconsiderArrangement()
{
    if (const Arrangement best = bestArrangement(size()); best != m_arrangement)
        arrange(best);
}

int AttentionMapsPage::mapSide(Arrangement arrangement, QSize size) const
{
    const QSize decoration = m_exact->decorationSize();
    switch (arrangement) {
        case Arrangement::TwoByTwo:
            return std::min((size.width() - kSpacing) / 2 - decoration.width(),
                            (size.height() - kSpacing) / 2 - decoration.height());
        case Arrangement::MapsInARow:
            return std::min((size.width() - 2 * kSpacing) / 3 - decoration.width(),
                            size.height() - stripHeight(size) - kSpacing - decoration.height());
        case Arrangement::MapsOnly:
            return std::min((size.width() - 2 * kSpacing) / 3 - decoration.width(),
                            size.height() - decoration.height());
    }
    return 0;
}

AttentionMapsPage::Arrangement AttentionMapsPage::bestArrangement(QSize size) const
{
    // The rows are left out only when the maps would otherwise be too small to read.
    const int smallest = kMinReadableMap;
    Arrangement best =
        m_arrangement == Arrangement::MapsOnly ? Arrangement::TwoByTwo : m_arrangement;
    const Arrangement other =
        best == Arrangement::TwoByTwo ? Arrangement::MapsInARow : Arrangement::TwoByTwo;
    if (mapSide(other, size) > kHysteresis * mapSide(best, size))
        best = other;
    if (mapSide(best, size) < smallest &&
        mapSide(Arrangement::MapsOnly, size) > kHysteresis * mapSide(best, size))
        best = Arrangement::MapsOnly;
    if (best == Arrangement::MapsInARow && !m_rows->hasRows())
        best = Arrangement::MapsOnly;
    return best;
}

void AttentionMapsPage::resizeEvent(QResizeEvent* event)
{
    QWidget::resizeEvent(event);
    reconsiderArrangement();
    shareHeight();
}

void AttentionMapsPage::shareHeight()
{
    if (m_arrangement != Arrangement::MapsInARow)
        return;
    m_rows->setFixedHeight(stripHeight(size()));
}

int AttentionMapsPage::stripHeight(QSize size) const
{
    const QWidget* rows = m_rows;  // QCustomPlot makes its own size hints protected
    return std::max(rowsHeight(size.height(), fontMetrics().height()),
                    rows->minimumSizeHint().height());
}

void AttentionMapsPage::arrange(Arrangement arrangement)
{
    m_arrangement = arrangement;
    const std::initializer_list<QWidget*> figures{m_exact, m_approx, m_error, m_rows};
    for (QWidget* figure : figures)
        m_grid->removeWidget(figure);
    for (int i = 0; i < 3; ++i) {
        m_grid->setRowStretch(i, 0);
        m_grid->setColumnStretch(i, 0);
    }
    m_rows->setMinimumHeight(0);
    m_rows->setMaximumHeight(QWIDGETSIZE_MAX);
    if (arrangement == Arrangement::TwoByTwo) {
        m_grid->addWidget(m_exact, 0, 0);
        m_grid->addWidget(m_approx, 0, 1);
        m_grid->addWidget(m_error, 1, 0);
        m_grid->addWidget(m_rows, 1, 1);
        for (int i = 0; i < 2; ++i) {
            m_grid->setRowStretch(i, 1);
            m_grid->setColumnStretch(i, 1);
        }
    } else {
        m_grid->addWidget(m_exact, 0, 0);
        m_grid->addWidget(m_approx, 0, 1);
        m_grid->addWidget(m_error, 0, 2);
        if (arrangement == Arrangement::MapsInARow)
            m_grid->addWidget(m_rows, 1, 0, 1, 3);
        m_grid->setRowStretch(0, 1);
        shareHeight();
        for (int i = 0; i < 3; ++i)
            m_grid->setColumnStretch(i, 1);
    }
    m_rows->setVisible(arrangement != Arrangement::MapsOnly);
    lineUpMaps();
}

}  // namespace attnlab::ui
