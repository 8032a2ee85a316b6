#pragma once

#include <QString>
#include <QWidget>

#include <utility>
#include <vector>

namespace attnlab::ui {

// The five likeliest predictions (next tokens, or an image's classes) of one prediction, exact
// (left) beside approximate (right), or of two checkpoints, as horizontal bars of their
// probability on one scale from 0 to 1, under a title.
class TopTokensChart : public QWidget {
    Q_OBJECT

public:
    explicit TopTokensChart(QWidget* parent = nullptr);

    QSize sizeHint() const override;
    // The title and each side's (label, probability) pairs, likeliest first.
    void setTokens(QString title, std::vector<std::pair<QString, double>> exact,
                   std::vector<std::pair<QString, double>> approx);
    // The headings of the two sides ("exact model", "with the approximation" until set).
    void setHeadings(QString left, QString right);
    QString rightHeading() const { return m_rightHeading; }

protected:
    void paintEvent(QPaintEvent* event) override;

private:
    // One side: its heading, then a bar per prediction, in area.
    void drawColumn(QPainter& painter, QRect area, const QString& heading,
                    const std::vector<std::pair<QString, double>>& tokens, QColor color) const;

    QString m_title;
    QString m_leftHeading = tr("exact model");
    QString m_rightHeading = tr("with the approximation");
    std::vector<std::pair<QString, double>> m_exact;
    std::vector<std::pair<QString, double>> m_approx;
};

}  // namespace attnlab::ui
