#pragma once

#include "generation/generation.h"
#include "model/text_tokenizer.h"

#include <QTableWidget>

#include <vector>

namespace attnlab::ui {

// A continuation as text: the part of its first `agree` tokens (where the two continuations
// agree) and the rest.
struct ContinuationText {
    QString agreed;
    QString rest;
};
// The text the continuation `ids` adds to the prompt, decoded with the prompt's ids before it (a
// byte-level BPE may split a character's UTF-8 bytes over tokens, even over the prompt's last
// and the continuation's first): the whole text is valid, and the cut after `agree` tokens falls
// before a character it would split (which then belongs to the rest).
ContinuationText continuationText(const TextTokenizer& tokenizer, const std::vector<int>& promptIds,
                                  const std::vector<int>& ids, int agree);

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
    void resetFor(const QString& approximation);
    // Adds the row of `step`, its tokens labelled exactLabel and approxLabel.
    void addStep(const GenerationStep& step, const QString& exactLabel, const QString& approxLabel);
    // The row (step) marked as the first divergence; -1 while the continuations agree.
    int firstDivergence() const { return m_divergence; }

private:
    int m_divergence = -1;
};

}  // namespace attnlab::ui
