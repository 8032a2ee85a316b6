#pragma once

#include "ui/experiment/attention_figures.h"
#include "experiment.h"
#include "memory_budget.h"
#include "ui/lecture/presentation.h"
#include "sessions/session.h"

#include <QJsonObject>
#include <QMainWindow>

#include <optional>

class QAction;
class QCheckBox;
class QComboBox;
class QCustomPlot;
class QLabel;
class QMenu;
class QSpinBox;
class QStackedWidget;
class QTabWidget;
class QTimer;
class QUndoStack;

namespace attnlab::ui {

class AttentionMapsPage;
class Autosave;
class BackgroundJob;
class ErrorAnalysisPanel;
class FeatureMapControls;
class LectureControls;
class PageDocks;
class WindowExports;
class WindowSession;
class DownstreamPanel;
class ErrorBanner;
class ErrorDistributionView;
class ExperimentController;
class HeadGridPanel;
class HeatmapView;
class ImageOverlayView;
class ImagePage;
class InputPanel;
class MethodPanel;
class MetricsPanel;
class RowComparisonView;
class ScenarioPanel;
class GenerationPage;
class StepperView;
class TimingPanel;
class ViewBar;

// The main window: exact attention P, its approximation P^ and the error side by side, with the
// Input and Method docks that define them, the metrics, the selected query's rows and, for
// images, the attention drawn over the image; then pages of their own for a model's heads
// (Heads), the approximation inside the model (Inside the model), the approximation error swept
// over m, the norms or L (Error analysis), the cost against the sequence length (Timing) and the
// causal recurrence run token by token (Stepper). The window hosts the pages, the docks and the
// menus; its parts do the rest: WindowSession (sessions as files, recent files, the autosave
// offered back after a crash, the last session), LectureControls (scenarios, decks and
// presentation mode, F5) and WindowExports (figures and matrices).
class MainWindow : public QMainWindow {
    Q_OBJECT

public:
    enum class Start {
        LastSession,     // reopen the session of the last run (the default example the first time)
        DefaultExample,  // the default example (a short sentence, FAVOR+ with m = 64) in the
                         // default layout, whatever the settings hold
        OpenFile,        // the settings (memory budget, layout) kept, the default example shown
                         // until the session or scenario the window is started with opens
    };

    // The pages of the central tab widget, in tab order.
    enum Page {
        MatricesPage,
        ImagePage,
        HeadsPage,  // every head of a model at a glance
        ModelPage,  // inside the model: what the approximation does to its predictions
        ErrorsPage,
        TimingPage,
        StepperPage,
        GeneratePage  // the model writes, with exact and approximate attention
    };

    explicit MainWindow(Start start = Start::LastSession, QWidget* parent = nullptr);
    ~MainWindow() override;

    // Opens a session file: its spec, then its view once computed. On failure the window keeps
    // what it showed and the message is shown in it; returns false.
    bool openSession(const QString& path);
    // Saves the current spec and view to path; false (and a message) on failure.
    bool saveSession(const QString& path);

    // Enters (with `placement`) or leaves presentation mode; the View menu and F5 come here.
    void setPresentationMode(
        bool on, PresentationMode::Placement placement = PresentationMode::Placement::FullScreen);
    PresentationMode& presentation();
    ScenarioPanel* scenarioPanel() const { return m_scenarioPanel; }
    WindowSession& session() { return *m_session; }
    LectureControls& lecture() { return *m_lecture; }
    // Fit to this model and Methods side by side (the Model menu).
    FeatureMapControls& featureMaps() { return *m_featureMaps; }

    ExperimentController& controller() { return *m_controller; }
    const ViewSettings& viewSettings() const { return m_view; }
    // The message shown in the window's error bar, empty when none is shown.
    QString errorMessage() const;
    HeatmapView* exactView() const { return m_exactView; }
    HeatmapView* approxView() const { return m_approxView; }
    HeatmapView* errorView() const { return m_errorView; }
    // The figure File > Export Figure and Copy Figure act on: the one last clicked or hovered,
    // the chart on the Error analysis and Timing pages (the Stepper page exports its whole frame
    // instead).
    QCustomPlot* currentFigure() const { return m_currentFigure; }
    TimingPanel* timingPanel() const { return m_timingPanel; }
    ErrorAnalysisPanel* errorPanel() const { return m_errorPanel; }
    // The histograms shown in place of the error map when the view asks for the distribution.
    ErrorDistributionView* distributionView() const { return m_distributionView; }
    RowComparisonView* rowView() const { return m_rowView; }
    ImageOverlayView* imageView() const { return m_imageView; }
    // Keeps an autosave of the session from now on (Autosave, written at most every 30 s while
    // it changes, removed by a clean close) and, when the last run left one behind (it
    // crashed), offers it back in a bar above the pages. The interactive program calls this;
    // screenshots and tests that do not test it leave it off.
    void startAutosave();
    // The autosave; null before startAutosave().
    Autosave* autosave() const;
    // Whether the bar offering back the autosave of a run that crashed is shown.
    bool isOfferingRecovery() const;
    // Opens the autosave the bar offers (as openSession would, without taking its path as the
    // session's) and hides the bar; false (and a message) when it cannot be read.
    bool restoreRecovery();
    // The memory budget every computation of the window is checked against (Edit > Memory
    // Budget, kept in the settings; by default half the machine's memory).
    MemoryBudget memoryBudget() const { return m_budget; }
    void setMemoryBudget(const MemoryBudget& budget);
    StepperView* stepperView() const { return m_stepperView; }
    HeadGridPanel* headGrid() const { return m_headGrid; }
    DownstreamPanel* downstreamPanel() const { return m_downstream; }
    GenerationPage* generationPage() const { return m_generatePage; }
    // Shows page `page` (the image page only for image input).
    void showPage(Page page);
    Page currentPage() const;

public slots:
    // Makes spec current and recomputes, as one undoable step.
    void setSpec(const ExperimentSpec& spec, const QString& description = QString(),
                 int mergeKey = -1);
    void selectQuery(int query);

signals:
    // The views show the latest result (their replot has been queued).
    void resultShown();
    // The error histograms show the distribution of the latest result (binned on a worker).
    void distributionShown();
    // The views show new view settings (another head, error kind, ...) of the same result.
    void viewChanged();

protected:
    void closeEvent(QCloseEvent* event) override;

private:
    // The window computes an approximation against exact attention; a session asking for the
    // "exact" method (a command-line notion) shows FAVOR+ instead. A second checkpoint goes with
    // the model's input.
    static ExperimentSpec windowSpec(ExperimentSpec spec);

    friend class SpecChange;
    friend class WindowSession;
    friend class LectureControls;

    // The central widget: the error and recovery bars, the view bar, the pages and the scenario
    // panel under them.
    void buildViews();
    // The three heatmaps, the error histograms, the query rows and the image overlay.
    void buildFigures();
    void buildPages();
    void buildDocks();
    void buildMenus();
    // Shows spec in the docks and computes it (undo and redo come through here).
    void applySpec(const ExperimentSpec& spec);
    // Shows a session's spec, as one step that cannot be undone; its view settings and `page`
    // apply when its result arrives (the pages' states are WindowSession's, applied first).
    void showSession(const Session& session, std::optional<Page> page);
    // Shows the example a new user sees first: the built-in model's clearest head.
    void showExample();
    void showResult();
    // A computation failed: the banner says so until another computation starts. A model just
    // chosen that cannot be read is taken back (the step that chose it leaves the undo stack) and
    // said as showOpenError does.
    void showError(const QString& message);
    // A session, scenario, autosave or model could not be opened (message names the file): the
    // banner says so until it is closed or another error replaces it (the next result does not
    // hide it: the window may compute its example just after).
    void showOpenError(const QString& message);
    void refreshViews();
    void hoverCell(int row, int col);
    void setViewSettings(const ViewSettings& settings);
    // Shows the error map or, when the view asks for it, the distribution of the errors.
    void showErrorDistribution();
    void memoryBudgetDialog();
    // Something worth autosaving changed: the spec, the view, a page's state.
    void markDirty();
    void showAbout();
    void restoreSettings(Start start);
    // Shrinks the window to the available area of its screen, its frame included, and moves it
    // inside: a first start asks for 1400 x 900 and a restart restores the size saved on the
    // last screen, either too large for a 1280 x 800 screen.
    void fitToScreen();
    // Gives the Stepper page the current experiment when it is shown and has not seen it.
    void updateStepper();
    // Gives the Heads and Inside the model pages the current experiment when one of them is shown
    // and has not seen it (their work runs over every layer: not for pages nobody looks at).
    void updateModelPages();
    // The Heads page chose a head: shows its layer and head in the three maps.
    void showHead(int layer, int head);

    ExperimentController* m_controller;
    QUndoStack* m_undo;
    ViewSettings m_view;
    MemoryBudget m_budget;
    WindowSession* m_session;
    LectureControls* m_lecture;
    FeatureMapControls* m_featureMaps;
    WindowExports* m_exports;
    PageDocks* m_pageDocks;  // the Metrics dock hidden on the Timing page (inputs of its own)
    // A session's view, applied when its spec's result arrives.
    std::optional<ViewSettings> m_pendingView;
    // A session's page, shown when its spec's result arrives.
    std::optional<Page> m_pendingPage;
    // Bins the errors for the histograms off the GUI thread (the newest request wins).
    BackgroundJob* m_distributionJob;
    // The Stepper page has not been given the current experiment yet.
    bool m_stepperStale = true;
    // The Heads and Inside the model pages have not been given the current experiment yet.
    bool m_headsStale = true;
    bool m_downstreamStale = true;

    ErrorBanner* m_errorBanner;  // why the window does not show what was asked
    QWidget* m_recoveryBar;      // offers back the autosave a crash left
    HeatmapView* m_exactView;
    HeatmapView* m_approxView;
    HeatmapView* m_errorView;
    ErrorDistributionView* m_distributionView;
    QStackedWidget* m_errorStack;  // the error map or the distribution view
    ViewBar* m_viewBar;            // head, error kind, colours: over the matrix page shown
    QTabWidget* m_pages;  // the matrices; the image (for image input); errors; timing; stepper
    RowComparisonView* m_rowView;
    AttentionMapsPage* m_mapsPage;  // the three maps and the query rows, on the matrix page
    ImageOverlayView* m_imageView;
    ui::ImagePage* m_imagePage;  // ui::, since Page::ImagePage names the tab
    ErrorAnalysisPanel* m_errorPanel;
    TimingPanel* m_timingPanel;
    StepperView* m_stepperView;
    HeadGridPanel* m_headGrid;
    DownstreamPanel* m_downstream;
    GenerationPage* m_generatePage;  // made by its WindowGeneration
    QCustomPlot* m_currentFigure;
    InputPanel* m_inputPanel;
    MethodPanel* m_methodPanel;
    MetricsPanel* m_metricsPanel;
    QLabel* m_hoverLabel;
    QLabel* m_statusLabel;
    QTimer* m_busyDelay;
    bool m_runNoticeShown = false;  // m_statusLabel shows a run's cost notice
    ScenarioPanel* m_scenarioPanel;
};

}  // namespace attnlab::ui
