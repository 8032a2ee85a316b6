#include "ui/generation/continuation_view.h"

#include <QHeaderView>

#include <algorithm>
#include <cmath>

namespace attnlab::ui {

namespace {

enum Column { StepColumn, ExactColumn, ApproxColumn, KlColumn, ColumnCount };

// The tint of an approximate token that differs from the exact one (as the Inside the model
// page's table tints a changed prediction), and the mark of the first divergence.
const QColor kChangedColor(248, 205, 190);
const QColor kDivergenceColor(176, 28, 28);

QString shownToken(const QString& label)
{
    return label.isEmpty() ? QStringLiteral("\u2205") : label;
}

}  // namespace

ContinuationText continuationText(const TextTokenizer& tokenizer, const std::vector<int>& promptIds,
                                  const std::vector<int>& ids, int agree)
{
    // The prompt and the continuation's first `count` tokens, decoded together.
    const auto decoded = [&](std::size_t count) {
        std::vector<int> all = promptIds;
        all.insert(all.end(), ids.begin(), ids.begin() + std::ptrdiff_t(count));
        return tokenizer.decode(all);
    };
    const QString whole = decoded(ids.size());
    // How much of the whole text the first `count` tokens give: the text they decode to, less
    // the U+FFFD of a character whose bytes they end within.
    const auto length = [&](std::size_t count) {
        QString part = decoded(count);
        while (!part.isEmpty() && !whole.startsWith(part))
            part.chop(1);
        return part.size();
    };
    const qsizetype promptEnd = length(0);
    const qsizetype agreedEnd = std::max(
        promptEnd, length(std::clamp<std::size_t>(std::size_t(std::max(agree, 0)), 0, ids.size())));
    return {whole.mid(promptEnd, agreedEnd - promptEnd), whole.mid(agreedEnd)};
}

ContinuationView::ContinuationView(QWidget* parent) : QTableWidget(0, ColumnCount, parent)
{
    setObjectName(QStringLiteral("continuationView"));
    verticalHeader()->hide();
    horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    horizontalHeader()->setSectionResizeMode(ExactColumn, QHeaderView::Stretch);
    horizontalHeader()->setSectionResizeMode(ApproxColumn, QHeaderView::Stretch);
    setEditTriggers(QAbstractItemView::NoEditTriggers);
    setSelectionBehavior(QAbstractItemView::SelectRows);
    setSelectionMode(QAbstractItemView::SingleSelection);
    setWordWrap(false);
    resetFor(tr("Approximate"));
}

void ContinuationView::resetFor(const QString& approximation)
{
    setRowCount(0);
    m_divergence = -1;
    setHorizontalHeaderLabels({tr("Step"), tr("Exact"), approximation, tr("KL(p \u2016 q)")});
    horizontalHeaderItem(StepColumn)
        ->setToolTip(tr("The generated token's step k (0-based); it follows position P - 1 + k"));
    horizontalHeaderItem(ExactColumn)
        ->setToolTip(tr("The model with its own softmax attention over a key/value cache"));
    horizontalHeaderItem(ApproxColumn)
        ->setToolTip(tr("The model with the approximation in the replaced layers, run as a "
                        "recurrent network, fed its own tokens"));
    horizontalHeaderItem(KlColumn)->setToolTip(
        tr("KL between the next-token distributions, exact p and approximate q, "
           "the approximate model fed the exact continuation (teacher-forced)"));
}

void ContinuationView::addStep(const GenerationStep& step, const QString& exactLabel,
                               const QString& approxLabel)
{
    const int row = rowCount();
    setRowCount(row + 1);
    const bool first = !step.sameToken && m_divergence < 0;
    if (first)
        m_divergence = row;
    auto* stepItem = new QTableWidgetItem((first ? QStringLiteral("\u25b6 ") : QString()) +
                                          QString::number(step.index));
    stepItem->setToolTip(
        tr("Step %1: the token after position %2").arg(step.index).arg(qint64(step.position)));
    auto* exact = new QTableWidgetItem(shownToken(exactLabel));
    auto* approx = new QTableWidgetItem(shownToken(approxLabel));
    auto* kl = new QTableWidgetItem(std::isfinite(step.kl) ? QString::number(step.kl, 'g', 3)
                                                           : QStringLiteral("\u221e"));
    kl->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
    if (!step.sameToken) {
        approx->setBackground(kChangedColor);
        approx->setForeground(QColor(0, 0, 0));  // light in every theme: black, not its ink
    }
    if (first) {
        for (QTableWidgetItem* item : {stepItem, exact, approx, kl}) {
            QFont font = item->font();
            font.setBold(true);
            item->setFont(font);
            item->setToolTip(tr("Step %1, after position %2: the first step where the two "
                                "continuations differ")
                                 .arg(step.index)
                                 .arg(qint64(step.position)));
        }
        stepItem->setForeground(kDivergenceColor);
    }
    setItem(row, StepColumn, stepItem);
    setItem(row, ExactColumn, exact);
    setItem(row, ApproxColumn, approx);
    setItem(row, KlColumn, kl);
}

}  // namespace attnlab::ui
