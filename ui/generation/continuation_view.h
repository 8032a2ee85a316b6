#pragma once

#include "generation/generation.h"

#include <QTableWidget>

namespace attnlab::ui {

// The two continuations of a generation side by side, token by token: a row per generated token
// with its step (its tooltip gives the position it follows), the exact run's token, the
// approximate run's, and
// the teacher-forced KL of that step (docs/design.md section 2.11). Tokens are the model's labels
// (a leading space drawn as "␣", as the heatmaps draw it). Where the approximate token differs
// from the exact one its cell is tinted; the first step where they differ is marked ("▶" before
// its step, the row in bold, a tooltip saying so). Rows are added as the steps arrive.
class ContinuationView : public QTableWidget {
    Q_OBJECT

public:
    explicit ContinuationView(QWidget* parent = nullptr);

    // No rows; the approximate column titled `approximation` (the method, "FAVOR+ positive").
    void reset(const QString& approximation);
    // Adds the row of `step`, its tokens labelled exactLabel and approxLabel.
    void addStep(const GenerationStep& step, const QString& exactLabel, const QString& approxLabel);
    // The row (step) marked as the first divergence; -1 while the continuations agree.
    int firstDivergence() const { return m_divergence; }

private:
    int m_divergence = -1;
};

}  // namespace attnlab::ui
