#include "ui/stepper/stepper_formula_panel.h"

#include "ui/common/reserved_height_label.h"
#include "ui/stepper/stepper_job.h"
#include "ui/stepper/stepper_style.h"

#include <QGridLayout>
#include <QLabel>

#include <algorithm>

namespace attnlab::ui {

using namespace stepper;

StepperFormulaPanel::StepperFormulaPanel(QWidget* parent) : QFrame(parent)
{
    QFrame* panel = this;
    panel->setObjectName(QStringLiteral("formulaPanel"));
    panel->setStyleSheet(QStringLiteral("QFrame#formulaPanel { background: #f5f6f8; "
                                        "border: 1px solid #d5d9e0; border-radius: 6px; }"));
    auto* grid = new QGridLayout(panel);
    grid->setContentsMargins(14, 10, 14, 10);
    grid->setHorizontalSpacing(14);
    grid->setVerticalSpacing(5);
    int row = 0;

    m_stepTitle = makeLabel(QString(), kStepTitlePoints, true);
    m_stepTitle->setObjectName(QStringLiteral("stepTitle"));
    m_stepTitle->setWordWrap(true);
    grid->addWidget(m_stepTitle, row++, 0, 1, 2);

    const auto equation = [&](const QString& html) {
        QLabel* label = makeLabel(html, kEquationPoints);
        label->setContentsMargins(0, 12, 0, 2);
        grid->addWidget(label, row++, 0, 1, 2);
    };
    // A name and its value side by side, or for long values (vectors) the value on a line of
    // its own under the name.
    const auto value = [&](const QString& nameHtml, const QString& name, bool below = false) {
        QLabel* label = makeLabel(nameHtml, kValuePoints);
        label->setContentsMargins(18, 0, 0, 0);
        grid->addWidget(label, row, 0);
        QLabel* number = makeLabel(QString(), kValuePoints, true, kExactColor);
        number->setObjectName(name);
        number->setTextFormat(Qt::PlainText);
        number->setTextInteractionFlags(Qt::TextSelectableByMouse);
        if (below) {
            number->setContentsMargins(18, 0, 0, 0);
            number->setWordWrap(true);  // after a comma, for long numbers
            grid->addWidget(number, ++row, 0, 1, 2);
        } else {
            grid->addWidget(number, row, 1);
        }
        ++row;
        return number;
    };
    equation(tr("S<sub>i</sub> = S<sub>i\u22121</sub> + <span style='color:#d55e00'>"
                "\u03c6(k<sub>i</sub>) v<sub>i</sub><sup>T</sup></span>"));
    m_keyNorm = value(tr("|\u03c6(k<sub>i</sub>)|"), QStringLiteral("keyNorm"));
    m_valueNorm = value(tr("|v<sub>i</sub>|"), QStringLiteral("valueNorm"));
    m_stateNorm = value(tr("\u2016S<sub>i</sub>\u2016<sub>F</sub>"), QStringLiteral("stateNorm"));
    equation(tr("z<sub>i</sub> = z<sub>i\u22121</sub> + <span style='color:#d55e00'>"
                "\u03c6(k<sub>i</sub>)</span>"));
    m_normalizerNorm = value(tr("|z<sub>i</sub>|"), QStringLiteral("normalizerNorm"));
    equation(tr("y<sub>i</sub> = \u03c6(q<sub>i</sub>)<sup>T</sup> S<sub>i</sub> / "
                "\u03c6(q<sub>i</sub>)<sup>T</sup> z<sub>i</sub>"));
    m_denominator =
        value(tr("\u03c6(q<sub>i</sub>)<sup>T</sup> z<sub>i</sub>"), QStringLiteral("denominator"));
    m_denominatorNote = makeLabel(tr("not positive: y<sub>i</sub> is no weighted average of "
                                     "the values (these features can be negative)"),
                                  kLinePoints, false, kWarningColor);
    m_denominatorNote->setObjectName(QStringLiteral("denominatorNote"));
    m_denominatorNote->setWordWrap(true);
    m_denominatorNote->setContentsMargins(18, 0, 0, 0);
    m_denominatorNote->hide();
    grid->addWidget(m_denominatorNote, row++, 0, 1, 2);
    m_outputValues =
        value(tr("y<sub>i</sub>, first entries"), QStringLiteral("outputValues"), true);
    m_exactValues =
        value(tr("exact softmax o<sub>i</sub>"), QStringLiteral("exactOutputValues"), true);
    m_outputError = value(tr("|y<sub>i</sub> \u2212 o<sub>i</sub>| / |o<sub>i</sub>|"),
                          QStringLiteral("outputError"));
    // The state's size at the bottom.
    grid->setRowStretch(row++, 1);
    m_stateLine = makeReservedLine(kStatePoints);
    m_stateLine->setObjectName(QStringLiteral("stateLine"));
    m_stateLine->setContentsMargins(0, 10, 0, 0);
    grid->addWidget(m_stateLine, row++, 0, 1, 2);
    grid->setColumnStretch(1, 1);
}

void StepperFormulaPanel::fitWidth()
{
    auto* grid = static_cast<QGridLayout*>(layout());
    const QFontMetrics valueMetrics(m_outputValues->font());
    int nameWidth = 0;
    int spanWidth = m_outputValues->contentsMargins().left() +
                    valueMetrics.horizontalAdvance(vectorPreview(
                        Eigen::RowVectorXd::Constant(kPreviewEntries + 1, -0.0123456)));
    for (int r = 0; r < grid->rowCount(); ++r) {
        QLayoutItem* first = grid->itemAtPosition(r, 0);
        QWidget* widget = first ? first->widget() : nullptr;
        if (!widget || widget == m_stepTitle || widget == m_denominatorNote ||
            widget == m_stateLine || widget == m_outputValues || widget == m_exactValues)
            continue;
        if (first == grid->itemAtPosition(r, 1))  // over both columns
            spanWidth = std::max(spanWidth, widget->sizeHint().width());
        else if (grid->itemAtPosition(r, 1))  // a name beside its number
            nameWidth = std::max(nameWidth, widget->sizeHint().width());
    }
    const int numberWidth = valueMetrics.horizontalAdvance(displayNumber(-0.123456));
    const QMargins margins = grid->contentsMargins();
    setFixedWidth(margins.left() + margins.right() + 4 +
                  std::max(spanWidth, nameWidth + grid->horizontalSpacing() + numberWidth));
}

void StepperFormulaPanel::showStep(const StepperData& data, int t)
{
    const CausalSteps& steps = *data.steps;
    const CausalStepRecord& record = steps.records[std::size_t(t)];
    const MatrixD& values = data.input->heads[std::size_t(steps.head)].v;
    const QString token = QFontMetrics(m_stepTitle->font())
                              .elidedText(steps.labels.value(t).simplified(), Qt::ElideRight, 200);
    m_stepTitle->setText(tr("Step i = %1 of %2: \u201c%3\u201d")
                             .arg(t + 1)
                             .arg(steps.length())
                             .arg(token.toHtmlEscaped()));
    m_keyNorm->setText(displayNumber(steps.keyFeatures.row(t).stableNorm()));
    m_valueNorm->setText(displayNumber(values.row(t).stableNorm()));
    m_stateNorm->setText(displayNumber(record.stateNorm));
    m_normalizerNorm->setText(displayNumber(record.normalizerNorm));
    m_denominator->setText(displayNumber(record.denominator));
    const bool positive = record.denominator > 0;
    QPalette palette = m_denominator->palette();
    palette.setColor(QPalette::WindowText, positive ? kExactColor : kWarningColor);
    m_denominator->setPalette(palette);
    m_denominatorNote->setVisible(!positive);
    m_outputValues->setText(vectorPreview(steps.outputs.row(t)));
    m_exactValues->setText(vectorPreview(steps.outputsExact.row(t)));
    m_outputError->setText(displayNumber(record.errorToExact));
}

}  // namespace attnlab::ui
