#pragma once

#include <QWidget>

#include <array>

class QGridLayout;

namespace attnlab::ui {

class HeatmapView;
class RowComparisonView;

// The "Attention matrices" page: the exact map, the approximate map, the error (map or
// histograms) and the selected query's rows, arranged so that the maps are as large as the page
// allows. A tall or square page takes them two by two (exact and approximate on top, the error
// and the rows below); a wide, short page (presentation mode, a wide window) puts the three
// maps in one row and the rows in a strip below them; a page so short that both would leave the
// maps too small to read (presentation mode on a 1280 x 720 projector, under a scenario's
// explanation) shows the three maps alone, and so does a wide, short page while no query is
// selected (the strip would only hold its hint). The arrangement changes with the page's size, with
// some hysteresis so that a resize near the boundary does not flip it back and forth.
class AttentionMapsPage : public QWidget {
    Q_OBJECT

public:
    enum class Arrangement { TwoByTwo, MapsInARow, MapsOnly };

    // exact, approx: the two maps; error: the error map or its histograms; rows: the query rows.
    // The maps' decoration sizes decide the arrangement.
    AttentionMapsPage(HeatmapView* exact, QWidget* approx, QWidget* error, RowComparisonView* rows,
                      QWidget* parent = nullptr);

    Arrangement arrangement() const { return m_arrangement; }

    // The side of the largest square map each arrangement gives a page of `size`.
    int mapSide(Arrangement arrangement, QSize size) const;

    // Lines the maps up for the content they were just given, before they draw it (lineUpMaps
    // after their replots would draw them a second time wherever their centred tops moved: the
    // colour scales' numbers change width with every range).
    void lineUpNewContent();

protected:
    void resizeEvent(QResizeEvent* event) override;

private:
    // Arranges the figures as bestArrangement(size()) says, if that is not how they are.
    void reconsiderArrangement();
    // The arrangement for a page of `size`, as documented above.
    Arrangement bestArrangement(QSize size) const;
    void arrange(Arrangement arrangement);
    // With the maps in a row, gives the strip of query rows below them stripHeight for the
    // page's current height, and the maps the rest. Stretch factors in proportion did not hold
    // it: the layout started from the strip's size hint, so the strip took 200 pixels where 170
    // were planned and the maps came out 130 pixels a side, not the 160 that bestArrangement had
    // counted on.
    void shareHeight();
    // The strip's height on a page of `size`: its share of the page (rowsHeight), and no less
    // than its chart needs for the title, the legend, the key labels (on a slant they take about
    // 60 pixels) and a plot, as of the chart's latest layout (its minimum size hint). At 170
    // pixels a slanted row of keys left the plot 16 pixels high, its title under the legend.
    int stripHeight(QSize size) const;
    // Puts the top edges of the maps shown side by side (exact and approximate, and the error
    // map in a row of three) at one height, the lowest of their centred tops: a title on two
    // lines beside one on one line left the maps about 10 pixels apart. The three maps label
    // their tokens at one step (labelMapsAlike).
    void lineUpMaps();
    // The heat maps of the figures, where they are heat maps: the exact map, the approximate one
    // and the error map (in its stack); null for a figure that is not one.
    std::array<HeatmapView*, 3> maps() const;

    HeatmapView* m_exact;
    QWidget* m_approx;
    QWidget* m_error;
    RowComparisonView* m_rows;
    QGridLayout* m_grid;
    Arrangement m_arrangement = Arrangement::TwoByTwo;
};

}  // namespace attnlab::ui
