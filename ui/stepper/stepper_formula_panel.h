#pragma once

#include <QFrame>

class QLabel;

namespace attnlab::ui {

class ReservedHeightLabel;

struct StepperData;

// The Stepper page's formula panel: the three equations of the recurrent form (docs/design.md
// section 2.6),
//   S_i = S_{i-1} + phi(k_i) v_i^T,   z_i = z_{i-1} + phi(k_i),
//   y_i = phi(q_i)^T S_i / phi(q_i)^T z_i,
// each with its current numbers (|phi(k_i)|, |v_i|, |S_i|_F, |z_i|, the denominator, flagged
// when not positive, the first entries of y_i and o_i and their relative error), and at the
// bottom the memory line the frame writes.
class StepperFormulaPanel : public QFrame {
    Q_OBJECT

public:
    explicit StepperFormulaPanel(QWidget* parent = nullptr);

    // The numbers of step i = t + 1 of data.
    void showStep(const StepperData& data, int t);
    // The line under the equations: the state's size against exact softmax's (StepperFrame).
    ReservedHeightLabel* memoryLine() const { return m_stateLine; }
    // A fixed width: that of the widest row (an equation, a name and its number, or a preview of
    // negative numbers), so that the panel neither jumps nor takes the plots' width when a long
    // note or token appears. Called when the fonts change.
    void fitWidth();

private:
    QLabel* m_stepTitle;
    QLabel* m_keyNorm;
    QLabel* m_valueNorm;
    QLabel* m_stateNorm;
    QLabel* m_normalizerNorm;
    QLabel* m_denominator;
    QLabel* m_denominatorNote;
    QLabel* m_outputValues;
    QLabel* m_exactValues;
    QLabel* m_outputError;
    ReservedHeightLabel* m_stateLine;
};

}  // namespace attnlab::ui
