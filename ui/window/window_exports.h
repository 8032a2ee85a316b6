#pragma once

#include <QObject>

class QMenu;

namespace attnlab::ui {

class MainWindow;

// What the main window's File menu exports: the current page's figure (Export Figure: the figure
// last clicked or hovered, the chart of a chart page, the Heads page's grid, the Stepper's frame;
// Copy Figure puts it on the clipboard) and the current head's matrices (Export Matrix: P, P^,
// the error map as shown, O, O^, phi(Q), phi(K), W; as .npy or CSV).
class WindowExports : public QObject {
    Q_OBJECT

public:
    explicit WindowExports(MainWindow& window);

    // Export Figure, the Export Matrix menu and Copy Figure, at the end of `file`.
    void addFileActions(QMenu* file);

    void exportFigureDialog();
    // The matrices Export Matrix offers.
    enum class Matrix {
        ExactAttention,
        ApproximateAttention,
        ErrorMap,
        ExactOutput,
        ApproximateOutput,
        QueryFeatures,
        KeyFeatures,
        Projection,
    };
    void exportMatrixDialog(Matrix matrix);
    void copyFigure();

private:
    MainWindow& m_window;
};

}  // namespace attnlab::ui
