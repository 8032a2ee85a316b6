#pragma once

// What the window benchmarks (bench_interactivity, bench_open_model) share: waiting for the
// heatmaps to repaint a new result.

#include <QEvent>
#include <QEventLoop>
#include <QObject>
#include <QWidget>

#include <set>
#include <vector>

// Counts the paint events of the views after arm(): quits the loop once each has painted.
class RepaintWatch : public QObject {
public:
    explicit RepaintWatch(const std::vector<QWidget*>& views) : m_views(views)
    {
        for (QWidget* view : views)
            view->installEventFilter(this);
    }

    void arm(QEventLoop* loop)
    {
        m_painted.clear();
        m_loop = loop;
    }

    bool eventFilter(QObject* watched, QEvent* event) override
    {
        if (m_loop && event->type() == QEvent::Paint && m_armedForPaint) {
            m_painted.insert(watched);
            if (m_painted.size() == m_views.size()) {
                m_loop->quit();
                m_loop = nullptr;
            }
        }
        return false;
    }

    // Paints before the new result arrived do not count.
    void setArmedForPaint(bool armed) { m_armedForPaint = armed; }

private:
    std::vector<QWidget*> m_views;
    std::set<QObject*> m_painted;
    QEventLoop* m_loop = nullptr;
    bool m_armedForPaint = false;
};
