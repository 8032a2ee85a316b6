#include "stepper/stepper_view.h"

#include "stepper/stepper_jobs.h"
#include "stepper/stepper_style.h"

#include "plotting/heatmap_view.h"
#include "plotting/plot_style.h"

#include <QFrame>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QKeyEvent>
#include <QLabel>
#include <QScrollArea>
#include <QSlider>
#include <QSpinBox>
#include <QTimer>
#include <QToolButton>
#include <QVBoxLayout>
#include <qcustomplot.h>

#include <algorithm>
#include <cmath>
#include <tuple>

namespace attnlab::ui {

using namespace stepper;

// ---------------------------------------------------------------------------------------------
// StepperView: building the page

StepperView::StepperView(QWidget* parent) : QWidget(parent), m_timer(new QTimer(this))
{
    connect(&m_job, &BackgroundJob::runningChanged, this, &StepperView::setBusy);
    connect(&m_job, &BackgroundJob::failed, this, &StepperView::showError);
    connect(m_timer, &QTimer::timeout, this, &StepperView::advance);
    setFocusPolicy(Qt::StrongFocus);

    m_errorBar = new QLabel;
    m_errorBar->setObjectName(QStringLiteral("stepperError"));
    m_errorBar->setWordWrap(true);
    m_errorBar->setTextInteractionFlags(Qt::TextSelectableByMouse);
    setTextPoints(m_errorBar, kLinePoints);
    m_errorBar->setStyleSheet(QStringLiteral(
        "QLabel { background: #fde8e8; color: #7a1010; border: 1px solid #e4a0a0; "
        "border-radius: 3px; padding: 6px; }"));
    m_errorBar->hide();

    QWidget* controls = buildControls();

    m_frame = new QWidget;
    m_frame->setObjectName(QStringLiteral("stepperFrame"));
    m_frame->setAutoFillBackground(true);
    QPalette white = m_frame->palette();
    white.setColor(QPalette::Window, Qt::white);
    m_frame->setPalette(white);

    m_agreementLine = makeLabel(QString(), kLinePoints);
    m_agreementLine->setObjectName(QStringLiteral("agreementLine"));
    m_agreementLine->setWordWrap(true);
    m_stateLine = makeLabel(QString(), kStatePoints);
    m_stateLine->setObjectName(QStringLiteral("stateLine"));
    m_stateLine->setWordWrap(true);

    m_strip = new StepperTokenStrip;
    m_strip->setObjectName(QStringLiteral("tokenStrip"));
    setTextPoints(m_strip, kTokenPoints);
    m_strip->setFocusPolicy(Qt::ClickFocus);
    m_strip->setFocusProxy(this);
    connect(m_strip, &StepperTokenStrip::tokenClicked, this, [this](int t) {
        pause();
        setPosition(t);
    });
    m_stripScroll = new QScrollArea;
    m_stripScroll->setWidget(m_strip);
    m_stripScroll->setWidgetResizable(true);
    m_stripScroll->setFrameShape(QFrame::NoFrame);
    m_stripScroll->setVerticalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    m_stripScroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAsNeeded);
    m_stripScroll->setFocusPolicy(Qt::NoFocus);
    m_stripScroll->horizontalScrollBar()->setFocusPolicy(Qt::NoFocus);

    buildPlots();
    QWidget* formula = buildFormulaPanel();

    const auto title = [](const QString& text) {
        return makeLabel(text, kPanelTitlePoints, true);
    };
    m_approxTitle = title(QString());
    m_exactTitle = title(QString());
    auto* bodyWidget = new QWidget;
    bodyWidget->setObjectName(QStringLiteral("stepperBody"));
    m_body = new QGridLayout(bodyWidget);
    m_body->setContentsMargins(0, 0, 0, 0);
    m_body->setHorizontalSpacing(6);
    m_body->setVerticalSpacing(4);
    m_panels = {
        makePanel(title(tr("What step i adds")), m_inputPlot),
        makePanel(title(tr("<span style='color:#d55e00'>+ \u03c6(k<sub>i</sub>) "
                           "v<sub>i</sub><sup>T</sup></span> (own colour scale)")),
                  m_updateView),
        makePanel(title(tr("= state S<sub>i</sub>, largest changes outlined")), m_stateView),
        makePanel(title(tr("Normalizer and query")), m_normalizerPlot),
        makePanel(title(tr("Output y<sub>i</sub>, exact o<sub>i</sub>")), m_outputPlot),
        makePanel(m_approxTitle, m_approxView),
        makePanel(m_exactTitle, m_exactView),
        makePanel(title(tr("Error to exact, by step")), m_errorPlot),
    };
    // The grid's stretch factors alone size the plots: their size hints follow what they show
    // (tick labels, colour scales), and would move the panels at every step.
    for (HeatmapView* view : {m_updateView, m_stateView, m_approxView, m_exactView}) {
        view->setMinimumSize(kMinimumHeatmapSize);
        view->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Ignored);
    }
    for (QCustomPlot* plot : {m_inputPlot, m_normalizerPlot, m_outputPlot, m_errorPlot}) {
        plot->setMinimumSize(kMinimumPlotSize);
        plot->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Ignored);
    }
    arrangePanels(PanelArrangement::FourColumns);
    // Below the panels' minimum sizes the body scrolls down rather than squeezing them; never
    // sideways: the panels are arranged in as many columns as the page's width holds.
    auto* bodyScroll = m_bodyScroll = new QScrollArea;
    bodyScroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    bodyScroll->setWidget(bodyWidget);
    bodyScroll->setWidgetResizable(true);
    bodyScroll->setFrameShape(QFrame::NoFrame);
    bodyScroll->setFocusPolicy(Qt::NoFocus);
    bodyScroll->viewport()->setAutoFillBackground(false);
    bodyWidget->setAutoFillBackground(false);

    auto* frameLayout = new QVBoxLayout(m_frame);
    frameLayout->setContentsMargins(8, 6, 8, 6);
    frameLayout->setSpacing(4);
    frameLayout->addWidget(m_agreementLine);
    frameLayout->addWidget(m_stripScroll);
    frameLayout->addWidget(bodyScroll, 1);

    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(0);
    layout->addWidget(m_errorBar);
    layout->addWidget(controls);
    layout->addWidget(m_frame, 1);

    // Clicks on the plots give the page the focus, so that the keys step.
    for (QWidget* plot : m_frame->findChildren<QCustomPlot*>()) {
        plot->setFocusPolicy(Qt::ClickFocus);
        plot->setFocusProxy(this);
    }
    formula->setFocusPolicy(Qt::ClickFocus);
    formula->setFocusProxy(this);

    // The smallest text until the first resize fits it to the page, so that the page asks for
    // no more width than its smallest layout needs.
    m_textScale = kMinTextScale;
    applyTextScale();
    showLines(-1);
    updatePlayButton();
}

QWidget* StepperView::buildControls()
{
    auto* bar = new QWidget;
    bar->setObjectName(QStringLiteral("stepperControls"));
    const auto button = [&](QStyle::StandardPixmap icon, const QString& text,
                            const QString& tip, const QString& name) {
        auto* b = new QToolButton;
        b->setObjectName(name);
        b->setIcon(style()->standardIcon(icon));
        b->setText(text);
        b->setToolTip(tip);
        b->setToolButtonStyle(Qt::ToolButtonTextBesideIcon);
        setTextPoints(b, kControlPoints);
        b->setIconSize(QSize(22, 22));
        b->setFocusPolicy(Qt::NoFocus);
        m_controlButtons.push_back(b);
        return b;
    };
    m_firstButton = button(QStyle::SP_MediaSkipBackward, tr("First"),
                           tr("The first token (Home)"), QStringLiteral("firstButton"));
    m_backButton = button(QStyle::SP_MediaSeekBackward, tr("Back"),
                          tr("One step back (Left)"), QStringLiteral("backButton"));
    m_playButton = button(QStyle::SP_MediaPlay, tr("Play"), tr("Play or pause (Space)"),
                          QStringLiteral("playButton"));
    m_stepButton = button(QStyle::SP_MediaSeekForward, tr("Step"),
                          tr("One step forward (Right)"), QStringLiteral("stepButton"));
    m_lastButton = button(QStyle::SP_MediaSkipForward, tr("Last"), tr("The last token (End)"),
                          QStringLiteral("lastButton"));
    connect(m_firstButton, &QToolButton::clicked, this, [this] {
        pause();
        setPosition(0);
    });
    connect(m_backButton, &QToolButton::clicked, this, [this] {
        pause();
        setPosition(m_position - 1);
    });
    connect(m_playButton, &QToolButton::clicked, this, [this] {
        if (m_playing)
            pause();
        else
            play();
    });
    connect(m_stepButton, &QToolButton::clicked, this, [this] {
        pause();
        setPosition(m_position + 1);
    });
    connect(m_lastButton, &QToolButton::clicked, this, [this] {
        pause();
        setPosition(length() - 1);
    });

    m_speedBox = new QDoubleSpinBox;
    m_speedBox->setObjectName(QStringLiteral("speed"));
    m_speedBox->setRange(kMinSpeed, kMaxSpeed);
    m_speedBox->setDecimals(2);
    m_speedBox->setSingleStep(0.5);
    m_speedBox->setSuffix(tr(" steps/s"));
    m_speedBox->setValue(m_speed);
    setTextPoints(m_speedBox, kControlPoints);
    m_speedBox->setToolTip(tr("Steps per second while playing"));
    connect(m_speedBox, &QDoubleSpinBox::valueChanged, this, &StepperView::setSpeed);

    m_slider = new QSlider(Qt::Horizontal);
    m_slider->setObjectName(QStringLiteral("positionSlider"));
    m_slider->setRange(0, 0);
    m_slider->setFocusPolicy(Qt::NoFocus);
    m_slider->setToolTip(tr("The step shown"));
    connect(m_slider, &QSlider::valueChanged, this, [this](int t) {
        pause();
        setPosition(t);
    });

    m_positionLabel = makeLabel(QString(), kControlPoints + 1, true);
    m_positionLabel->setObjectName(QStringLiteral("positionLabel"));

    m_headLabel = makeLabel(tr("Head"), kControlPoints);
    m_headBox = new QSpinBox;
    m_headBox->setObjectName(QStringLiteral("stepperHead"));
    setTextPoints(m_headBox, kControlPoints);
    m_headBox->setToolTip(tr("The head the stepper runs"));
    m_headBox->setRange(0, 0);
    connect(m_headBox, &QSpinBox::valueChanged, this, &StepperView::setHead);
    m_headLabel->hide();
    m_headBox->hide();

    m_exportFrameButton = button(QStyle::SP_DialogSaveButton, tr("Export frame\u2026"),
                                 tr("The current frame as PNG, SVG or PDF"),
                                 QStringLiteral("exportFrameButton"));
    m_exportAllButton = button(
        QStyle::SP_DirIcon, tr("Export all frames\u2026"),
        tr("Every step as numbered PNG files (frame_0001.png, ...) for slides"),
        QStringLiteral("exportAllButton"));
    connect(m_exportFrameButton, &QToolButton::clicked, this, &StepperView::exportFrameDialog);
    connect(m_exportAllButton, &QToolButton::clicked, this, &StepperView::exportAllFramesDialog);

    m_controlsBar = bar;
    auto* layout = new QHBoxLayout(bar);
    layout->setContentsMargins(8, 4, 8, 4);
    for (QToolButton* b :
         {m_firstButton, m_backButton, m_playButton, m_stepButton, m_lastButton})
        layout->addWidget(b);
    layout->addSpacing(8);
    layout->addWidget(m_speedBox);
    layout->addSpacing(8);
    layout->addWidget(m_slider, 1);
    layout->addWidget(m_positionLabel);
    layout->addWidget(m_headLabel);
    layout->addWidget(m_headBox);
    layout->addSpacing(8);
    layout->addWidget(m_exportFrameButton);
    layout->addWidget(m_exportAllButton);
    return bar;
}

QWidget* StepperView::buildFormulaPanel()
{
    auto* panel = new QFrame;
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
    m_denominator = value(tr("\u03c6(q<sub>i</sub>)<sup>T</sup> z<sub>i</sub>"),
                          QStringLiteral("denominator"));
    m_denominatorNote = makeLabel(tr("not positive: y<sub>i</sub> is no weighted average of "
                                     "the values (these features can be negative)"),
                                  kLinePoints, false, kWarningColor);
    m_denominatorNote->setObjectName(QStringLiteral("denominatorNote"));
    m_denominatorNote->setWordWrap(true);
    m_denominatorNote->setContentsMargins(18, 0, 0, 0);
    m_denominatorNote->hide();
    grid->addWidget(m_denominatorNote, row++, 0, 1, 2);
    m_outputValues = value(tr("y<sub>i</sub>, first entries"), QStringLiteral("outputValues"),
                           true);
    m_exactValues = value(tr("exact softmax o<sub>i</sub>"), QStringLiteral("exactOutputValues"),
                          true);
    m_outputError = value(tr("|y<sub>i</sub> \u2212 o<sub>i</sub>| / |o<sub>i</sub>|"),
                          QStringLiteral("outputError"));
    // The state's size at the bottom.
    grid->setRowStretch(row++, 1);
    m_stateLine->setContentsMargins(0, 10, 0, 0);
    grid->addWidget(m_stateLine, row++, 0, 1, 2);
    grid->setColumnStretch(1, 1);

    m_formulaPanel = panel;
    return panel;
}

void StepperView::fitFormulaPanel()
{
    auto* grid = static_cast<QGridLayout*>(m_formulaPanel->layout());
    const QFontMetrics valueMetrics(m_outputValues->font());
    int nameWidth = 0;
    int spanWidth =
        m_outputValues->contentsMargins().left() +
        valueMetrics.horizontalAdvance(
            vectorPreview(Eigen::RowVectorXd::Constant(kPreviewEntries + 1, -0.0123456)));
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
    m_formulaPanel->setFixedWidth(
        margins.left() + margins.right() + 4 +
        std::max(spanWidth, nameWidth + grid->horizontalSpacing() + numberWidth));
}

void StepperView::applyTextScale()
{
    for (QWidget* widget : findChildren<QWidget*>()) {
        const QVariant points = widget->property(kPointsProperty);
        if (points.isValid())
            widget->setFont(sizedFont(widget->font(), points.toDouble() * m_textScale,
                                      widget->property(kBoldProperty).toBool()));
    }
    for (QCustomPlot* plot : m_frame->findChildren<QCustomPlot*>())
        scalePlotFonts(plot, m_textScale);
    if (m_data) {  // the heatmaps measure their labels when given them
        for (HeatmapView* view : {m_approxView, m_exactView})
            view->setAxisLabels(m_data->steps->labels, m_data->steps->labels);
    }
    m_stripScroll->setFixedHeight(m_strip->sizeHint().height() +
                                  m_stripScroll->horizontalScrollBar()->sizeHint().height());
    // Wide enough for four-digit steps at the scaled font, so that the bar does not jump.
    m_positionLabel->setMinimumWidth(QFontMetrics(m_positionLabel->font())
                                         .horizontalAdvance(tr("step i = 0000 of 0000")));
    fitFormulaPanel();
    fitControls();
}

void StepperView::resizeEvent(QResizeEvent* event)
{
    const double fit = std::min(width() / double(kDesignSize.width()),
                                height() / double(kDesignSize.height()));
    const double scale = std::clamp(std::round(fit / kTextScaleStep) * kTextScaleStep,
                                    kMinTextScale, kMaxTextScale);
    if (scale != m_textScale) {
        m_textScale = scale;
        applyTextScale();
    }
    fitControls();
    fitPanels();
    QWidget::resizeEvent(event);
}

void StepperView::arrangePanels(PanelArrangement arrangement)
{
    m_arrangement = arrangement;
    m_body->removeWidget(m_formulaPanel);
    for (QWidget* panel : m_panels)
        m_body->removeWidget(panel);
    for (int i = 0; i < 5; ++i) {  // every row and column an arrangement uses (at most 5)
        m_body->setColumnStretch(i, 0);
        m_body->setRowStretch(i, 0);
    }
    // The panels in the order a step reads: what step i adds, the update, the state; the output
    // and the two attention maps; the normalizer and the error so far.
    enum { Input, Update, State, Normalizer, Output, Approx, Exact, Error };
    const auto place = [this](int panel, int row, int column, int columnSpan = 1) {
        m_body->addWidget(m_panels[std::size_t(panel)], row, column, 1, columnSpan);
    };
    if (arrangement == PanelArrangement::FourColumns) {
        // Two rows of four beside the formula panel; the heatmaps get more of the width than
        // the bar plots: their cells are square.
        m_body->addWidget(m_formulaPanel, 0, 0, 2, 1);
        for (const int panel : {Input, Update, State, Normalizer})
            place(panel, 0, 1 + panel);
        for (const int panel : {Output, Approx, Exact, Error})
            place(panel, 1, 1 + panel - Output);
        for (const int column : {1, 4})
            m_body->setColumnStretch(column, 2);
        for (const int column : {2, 3})
            m_body->setColumnStretch(column, 3);
        m_body->setRowStretch(0, 1);
        m_body->setRowStretch(1, 1);
        return;
    }
    // Two rows of three beside the formula panel and, below them, the normalizer under the
    // formula panel beside the error so far; on a narrower page, the formula panel above three
    // rows of three.
    const bool beside = arrangement == PanelArrangement::ThreeColumnsBeside;
    const int top = beside ? 0 : 1;
    const int left = beside ? 1 : 0;
    m_body->addWidget(m_formulaPanel, 0, 0, beside ? 2 : 1, beside ? 1 : 3, Qt::AlignLeft);
    for (const auto& [panel, row, column] :
         {std::tuple{Input, 0, 0}, {Update, 0, 1}, {State, 0, 2}, {Output, 1, 0},
          {Approx, 1, 1}, {Exact, 1, 2}})
        place(panel, top + row, left + column);
    place(Normalizer, top + 2, 0);
    place(Error, top + 2, 1, beside ? 3 : 2);
    for (int column = left; column < left + 3; ++column)
        m_body->setColumnStretch(column, 1);
    for (int row = top; row < top + 3; ++row)
        m_body->setRowStretch(row, 1);
}

void StepperView::fitPanels()
{
    // The widest arrangement whose panels fit the page's width at their minimum sizes.
    const int width = m_bodyScroll->viewport()->width();
    const int spacing = m_body->horizontalSpacing();
    const int formula = m_formulaPanel->width() + spacing;
    const int margins = 4;  // makePanel's, left and right
    const int plot = kMinimumPlotSize.width() + margins + spacing;
    const int heatmap = kMinimumHeatmapSize.width() + margins + spacing;
    PanelArrangement arrangement = PanelArrangement::ThreeColumnsBelow;
    if (width >= formula + 2 * plot + 2 * heatmap)
        arrangement = PanelArrangement::FourColumns;
    else if (width >= formula + plot + 2 * heatmap)
        arrangement = PanelArrangement::ThreeColumnsBeside;
    if (arrangement != m_arrangement)
        arrangePanels(arrangement);
}

void StepperView::fitControls()
{
    // What the bar needs with the buttons' texts: its layout's hint less the buttons' current
    // widths plus their widths with text.
    const QStyleOptionToolButton textOption = [] {
        QStyleOptionToolButton option;
        option.toolButtonStyle = Qt::ToolButtonTextBesideIcon;
        return option;
    }();
    int needed = m_controlsBar->layout()->sizeHint().width();
    for (QToolButton* b : m_controlButtons) {
        const int textWidth = b->iconSize().width() + 12 +
                              b->fontMetrics().horizontalAdvance(b->text()) +
                              2 * style()->pixelMetric(QStyle::PM_ButtonMargin, &textOption, b);
        needed += textWidth - b->sizeHint().width();
        // The layout may give a button less than its text needs: it then shows its icon only.
        b->setMinimumWidth(b->iconSize().width() + 12);
    }
    const Qt::ToolButtonStyle buttonStyle =
        width() < needed ? Qt::ToolButtonIconOnly : Qt::ToolButtonTextBesideIcon;
    for (QToolButton* b : m_controlButtons)
        b->setToolButtonStyle(buttonStyle);
}

void StepperView::keyPressEvent(QKeyEvent* event)
{
    switch (event->key()) {
    case Qt::Key_Left:
        pause();
        setPosition(m_position - 1);
        break;
    case Qt::Key_Right:
        pause();
        setPosition(m_position + 1);
        break;
    case Qt::Key_Space:
        if (event->isAutoRepeat())
            break;
        if (m_playing)
            pause();
        else
            play();
        break;
    case Qt::Key_Home:
        pause();
        setPosition(0);
        break;
    case Qt::Key_End:
        pause();
        setPosition(length() - 1);
        break;
    default:
        QWidget::keyPressEvent(event);
        return;
    }
    event->accept();
}

void StepperView::mousePressEvent(QMouseEvent* event)
{
    setFocus(Qt::MouseFocusReason);
    QWidget::mousePressEvent(event);
}

}  // namespace attnlab::ui
