#pragma once

#include "attention_figures.h"
#include "experiment.h"

#include <QMainWindow>

class QAction;
class QCheckBox;
class QComboBox;
class QCustomPlot;
class QLabel;
class QMenu;
class QSpinBox;
class QTabWidget;
class QTimer;
class QToolButton;
class QUndoStack;

namespace attnlab::ui {

class ExperimentController;
class HeatmapView;
class ImageOverlayView;
class InputPanel;
class MethodPanel;
class MetricsPanel;
class RowComparisonView;

// The main window: exact attention P, its approximation P^ and the error side by side, with the
// Input and Method docks that define them, the metrics, the selected query's rows and, for
// images, the attention drawn over the image.
class MainWindow : public QMainWindow {
    Q_OBJECT

public:
    enum class Start {
        LastSession,     // reopen the session of the last run (the default example the first time)
        DefaultExample,  // the default example (a short sentence, FAVOR+ with m = 64) in the
                         // default layout, whatever the settings hold
    };

    explicit MainWindow(Start start = Start::LastSession, QWidget* parent = nullptr);
    ~MainWindow() override;

    // Opens a session file: its spec, then its view once computed. On failure the window keeps
    // what it showed and the message is shown in it; returns false.
    bool openSession(const QString& path);
    // Saves the current spec and view to path; false (and a message) on failure.
    bool saveSession(const QString& path);

    ExperimentController& controller() { return *m_controller; }
    const ViewSettings& viewSettings() const { return m_view; }
    // The message shown in the window's error bar, empty when none is shown.
    QString errorMessage() const;
    HeatmapView* exactView() const { return m_exactView; }
    HeatmapView* approxView() const { return m_approxView; }
    HeatmapView* errorView() const { return m_errorView; }
    // The figure File > Export Figure and Copy Figure act on: the one last clicked or hovered.
    QCustomPlot* currentFigure() const { return m_currentFigure; }

public slots:
    // Makes spec current and recomputes, as one undoable step.
    void setSpec(const ExperimentSpec& spec, const QString& description = QString(),
                 int mergeKey = -1);
    void selectQuery(int query);

signals:
    // The views show the latest result (their replot has been queued).
    void resultShown();

protected:
    void closeEvent(QCloseEvent* event) override;

private:
    friend class SpecChange;

    void buildViews();
    void buildDocks();
    void buildMenus();
    // Shows spec in the docks and computes it (undo and redo come through here).
    void applySpec(const ExperimentSpec& spec);
    void showResult();
    void showError(const QString& message);
    void refreshViews();
    void hoverCell(int row, int col);
    void setViewSettings(const ViewSettings& settings);
    void openSessionDialog();
    bool saveSessionDialog();
    void exportFigureDialog();
    void exportMatrixDialog(int matrix);
    void copyFigure();
    void showAbout();
    void addRecentFile(const QString& path);
    void updateRecentMenu();
    void restoreSettings(Start start);
    void setSessionPath(const QString& path);

    ExperimentController* m_controller;
    QUndoStack* m_undo;
    ViewSettings m_view;
    QString m_sessionPath;
    // A session's view, applied when its spec's result arrives.
    std::optional<ViewSettings> m_pendingView;

    QLabel* m_errorBar;
    QToolButton* m_errorClose;
    QSpinBox* m_head;
    QComboBox* m_errorKind;
    QCheckBox* m_sharedScale;
    QComboBox* m_colorMap;
    HeatmapView* m_exactView;
    HeatmapView* m_approxView;
    HeatmapView* m_errorView;
    QTabWidget* m_pages;  // the matrices; the image (for image input)
    RowComparisonView* m_rowView;
    ImageOverlayView* m_imageView;
    QCustomPlot* m_currentFigure;
    InputPanel* m_inputPanel;
    MethodPanel* m_methodPanel;
    MetricsPanel* m_metricsPanel;
    QLabel* m_hoverLabel;
    QLabel* m_statusLabel;
    QTimer* m_busyDelay;
    QMenu* m_recentMenu;
};

}  // namespace attnlab::ui
