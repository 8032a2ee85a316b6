#include "ui/stepper/stepper_view.h"

#include "ui/stepper/stepper_controller.h"
#include "ui/stepper/stepper_formula_panel.h"
#include "ui/stepper/stepper_frame.h"
#include "ui/stepper/stepper_job.h"
#include "ui/stepper/stepper_style.h"
#include "ui/stepper/stepper_token_strip.h"

#include "ui/common/export_dialog.h"
#include "errors.h"
#include "ui/plotting/plot_style.h"

#include <QDir>
#include <QFileDialog>
#include <QHBoxLayout>
#include <QKeyEvent>
#include <QLabel>
#include <QMessageBox>
#include <QProgressDialog>
#include <QSaveFile>
#include <QSlider>
#include <QSpinBox>
#include <QTimer>
#include <QToolButton>
#include <QVBoxLayout>
#include <qcustomplot.h>

#include <algorithm>
#include <cmath>

namespace attnlab::ui {

using namespace stepper;

StepperView::StepperView(QWidget* parent)
    : QWidget(parent), m_controller(new StepperController(this)), m_timer(new QTimer(this))
{
    connect(m_controller, &StepperController::computed, this, [this] {
        if (!m_followed)  // the window's experiment waits while the page follows a generation
            showData();
    });
    connect(m_controller, &StepperController::statesComputed, this, &StepperView::showPosition);
    connect(m_controller, &StepperController::failed, this, &StepperView::showError);
    connect(m_controller, &StepperController::busyChanged, this, &StepperView::busyChanged);
    connect(m_timer, &QTimer::timeout, this, &StepperView::advance);
    setFocusPolicy(Qt::StrongFocus);
    setProperty(kScalesOwnTextProperty, true);  // presentation mode leaves its fonts alone

    m_errorBar = new QLabel;
    m_errorBar->setObjectName(QStringLiteral("stepperError"));
    m_errorBar->setWordWrap(true);
    m_errorBar->setTextInteractionFlags(Qt::TextSelectableByMouse);
    setTextPoints(m_errorBar, kLinePoints);
    m_errorBar->setStyleSheet(
        QStringLiteral("QLabel { background: #fde8e8; color: #7a1010; border: 1px solid #e4a0a0; "
                       "border-radius: 3px; padding: 6px; }"));
    m_errorBar->hide();

    QWidget* controls = buildControls();
    QWidget* followBar = buildFollowBar();
    m_frame = new StepperFrame;
    m_frame->strip()->setFocusProxy(this);
    connect(m_frame->strip(), &StepperTokenStrip::tokenClicked, this, [this](int t) {
        pause();
        setPosition(t);
    });

    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(0);
    layout->addWidget(m_errorBar);
    layout->addWidget(followBar);
    layout->addWidget(controls);
    layout->addWidget(m_frame, 1);

    // Clicks on the plots give the page the focus, so that the keys step.
    for (QWidget* plot : m_frame->findChildren<QCustomPlot*>()) {
        plot->setFocusPolicy(Qt::ClickFocus);
        plot->setFocusProxy(this);
    }
    m_frame->formulaPanel()->setFocusPolicy(Qt::ClickFocus);
    m_frame->formulaPanel()->setFocusProxy(this);

    // The smallest text until the first resize fits it to the page, so that the page asks for
    // no more width than its smallest layout needs.
    m_textScale = kMinTextScale;
    applyTextScale();
    m_frame->showLines(-1, 0, true);
    updatePlayButton();
}

QWidget* StepperView::buildControls()
{
    auto* bar = new QWidget;
    bar->setObjectName(QStringLiteral("stepperControls"));
    const auto button = [&](QStyle::StandardPixmap icon, const QString& text, const QString& tip,
                            const QString& name) {
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
    m_firstButton = button(QStyle::SP_MediaSkipBackward, tr("First"), tr("The first token (Home)"),
                           QStringLiteral("firstButton"));
    m_backButton = button(QStyle::SP_MediaSeekBackward, tr("Back"), tr("One step back (Left)"),
                          QStringLiteral("backButton"));
    m_playButton = button(QStyle::SP_MediaPlay, tr("Play"), tr("Play or pause (Space)"),
                          QStringLiteral("playButton"));
    m_stepButton = button(QStyle::SP_MediaSeekForward, tr("Step"), tr("One step forward (Right)"),
                          QStringLiteral("stepButton"));
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

    m_exportFrameButton =
        button(QStyle::SP_DialogSaveButton, tr("Export frame\u2026"),
               tr("The current frame as PNG, SVG or PDF"), QStringLiteral("exportFrameButton"));
    m_exportAllButton =
        button(QStyle::SP_DirIcon, tr("Export all frames\u2026"),
               tr("Every step as numbered PNG files (frame_0001.png, ...) for slides"),
               QStringLiteral("exportAllButton"));
    connect(m_exportFrameButton, &QToolButton::clicked, this, &StepperView::exportFrameDialog);
    connect(m_exportAllButton, &QToolButton::clicked, this, &StepperView::exportAllFramesDialog);

    m_controlsBar = bar;
    auto* layout = new QHBoxLayout(bar);
    layout->setContentsMargins(8, 4, 8, 4);
    for (QToolButton* b : {m_firstButton, m_backButton, m_playButton, m_stepButton, m_lastButton})
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

QWidget* StepperView::buildFollowBar()
{
    m_followBar = new QWidget;
    m_followBar->setObjectName(QStringLiteral("stepperFollowBar"));
    m_followBar->setStyleSheet(QStringLiteral(
        "#stepperFollowBar { background: #e8f0fb; border: 1px solid #a8c0e0; border-radius: 3px; "
        "}"));
    m_followBar->setAttribute(Qt::WA_StyledBackground);
    m_followLabel = makeLabel(QString(), kLinePoints);
    m_followLabel->setObjectName(QStringLiteral("stepperFollowLabel"));
    m_followLabel->setWordWrap(true);
    auto* stop = new QToolButton;
    stop->setObjectName(QStringLiteral("stopFollowing"));
    stop->setText(tr("Stop following"));
    stop->setToolTip(tr("Show the window's experiment again"));
    setTextPoints(stop, kControlPoints);
    connect(stop, &QToolButton::clicked, this, [this] {
        m_declined = m_followed;
        follow(nullptr);
    });
    auto* layout = new QHBoxLayout(m_followBar);
    layout->setContentsMargins(8, 4, 8, 4);
    layout->addWidget(m_followLabel, 1);
    layout->addWidget(stop);
    m_followBar->hide();
    return m_followBar;
}

void StepperView::applyTextScale()
{
    scaleMarkedFonts(*this, m_textScale);  // the controls (and the frame's texts)
    m_frame->setTextScale(m_textScale);
    // Wide enough for four-digit steps at the scaled font, so that the bar does not jump.
    m_positionLabel->setMinimumWidth(
        QFontMetrics(m_positionLabel->font()).horizontalAdvance(tr("step i = 0000 of 0000")));
    fitControls();
}

void StepperView::resizeEvent(QResizeEvent* event)
{
    const double scale = textScaleFor(size());
    if (scale != m_textScale) {
        m_textScale = scale;
        applyTextScale();
    }
    fitControls();
    m_frame->fitPanels();
    QWidget::resizeEvent(event);
}

void StepperView::showEvent(QShowEvent* event)
{
    QWidget::showEvent(event);
    QTimer::singleShot(0, m_frame, &StepperFrame::fitPanels);
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
        default: QWidget::keyPressEvent(event); return;
    }
    event->accept();
}

void StepperView::mousePressEvent(QMouseEvent* event)
{
    setFocus(Qt::MouseFocusReason);
    QWidget::mousePressEvent(event);
}

void StepperView::setExperiment(const ExperimentSpec& spec,
                                std::shared_ptr<const AttentionInput> input)
{
    if (m_followed) {
        m_deferred = std::pair{spec, std::move(input)};
        return;
    }
    m_controller->setExperiment(spec, std::move(input), m_position);
}

void StepperView::follow(std::shared_ptr<const FollowedSteps> steps)
{
    if (!steps) {
        if (!m_followed)
            return;
        m_followed.reset();
        m_followData.reset();
        m_followLength = 0;
        m_followBar->hide();
        emit followingChanged(false);
        if (m_deferred) {
            auto [spec, input] = *std::exchange(m_deferred, std::nullopt);
            m_controller->setExperiment(spec, std::move(input), m_position);
        } else if (m_controller->data()) {
            showData();
        }
        return;
    }
    if (steps == m_declined.lock())
        return;  // the user stopped following this head
    const bool fresh = steps != m_followed;
    // At the newest step shown (or a new head): the page moves on with the generation. (The
    // steps grow in place between calls: their length now is not the length shown.)
    const bool atEnd = fresh || m_position >= m_followLength - 1;
    m_followed = std::move(steps);
    const QString head = tr("layer %1, head %2").arg(m_followed->layer()).arg(m_followed->head());
    m_followBar->show();
    if (fresh)
        emit followingChanged(true);
    const Eigen::Index tokens = m_followed->length();
    m_followLabel->setText(
        tokens == 0 ? tr("Following %1 of the generation on the Generate page: waiting for its "
                         "first token.")
                          .arg(head)
                    : tr("Following %1 of the generation on the Generate page: its state "
                         "S\u1d62 and normalizer z\u1d62 at each of the %2 tokens the "
                         "approximate run has read, of %3 (the prompt's, then its own "
                         "continuation's).")
                          .arg(head)
                          .arg(tokens)
                          .arg(m_followed->capacity()));
    if (tokens == 0)
        return;
    auto data = std::make_shared<StepperData>();
    data->input = std::shared_ptr<const AttentionInput>(m_followed, &m_followed->input());
    data->steps = std::shared_ptr<const CausalSteps>(m_followed, &m_followed->steps());
    data->exactAttention = std::make_shared<const MatrixD>(m_followed->exactAttention());
    data->approxAttention = std::make_shared<const MatrixD>(m_followed->approxAttention());
    data->followed = tr("%1 of the generation").arg(head);
    m_followData = std::move(data);
    m_followLength = int(tokens);
    const int previous = m_position;
    if (atEnd)
        m_position = int(tokens) - 1;
    showData();
    if (m_position != previous)
        emit positionChanged(m_position);
}

std::shared_ptr<const StepperData> StepperView::shownData() const
{
    return m_followed ? m_followData : m_controller->data();
}

bool StepperView::stateAvailable(int t) const
{
    return m_followed ? m_followData && t < length() : m_controller->stateAvailable(t);
}

void StepperView::setHead(int head)
{
    if (!m_controller->setHead(head, m_position))
        return;
    const QSignalBlocker block(m_headBox);
    m_headBox->setValue(m_controller->head());
}

int StepperView::head() const
{
    return m_controller->head();
}

void StepperView::setMemoryBudget(const MemoryBudget& budget)
{
    m_controller->setMemoryBudget(budget);
}

bool StepperView::isBusy() const
{
    return m_controller->isBusy();
}

int StepperView::length() const
{
    if (m_followed)  // as shown: the steps grow in place until the next follow()
        return m_followLength;
    return m_controller->length();
}

std::shared_ptr<const CausalSteps> StepperView::steps() const
{
    if (m_followed)
        return m_followData ? m_followData->steps : nullptr;
    return m_controller->steps();
}

bool StepperView::keepsAllStates() const
{
    return m_followed ? m_followData != nullptr : m_controller->keepsAllStates();
}

QString StepperView::errorMessage() const
{
    return m_errorBar->isHidden() ? QString() : m_errorBar->text();
}

void StepperView::showError(const QString& message)
{
    m_errorBar->setText(m_controller->data()
                            ? tr("The stepper cannot run this: %1\nThe page still shows the "
                                 "previous experiment.")
                                  .arg(message)
                            : tr("The stepper cannot run this: %1").arg(message));
    m_errorBar->show();
    emit failed(message);
}

void StepperView::setPosition(int position)
{
    const int clamped =
        length() > 0 ? std::clamp(position, 0, length() - 1) : std::max(0, position);
    if (clamped == m_position && (m_shownPosition == clamped || !shownData()))
        return;
    const bool changed = clamped != m_position;
    m_position = clamped;
    showPosition();
    if (changed)
        emit positionChanged(m_position);
}

void StepperView::play()
{
    if (length() < 2 || m_playing)
        return;
    if (m_position >= length() - 1)
        setPosition(0);
    m_playing = true;
    m_timer->start(int(std::lround(1000.0 / m_speed)));
    updatePlayButton();
    emit playingChanged(true);
}

void StepperView::pause()
{
    if (!m_playing)
        return;
    m_playing = false;
    m_timer->stop();
    updatePlayButton();
    emit playingChanged(false);
}

void StepperView::setSpeed(double stepsPerSecond)
{
    m_speed = std::clamp(stepsPerSecond, kMinSpeed, kMaxSpeed);
    {
        const QSignalBlocker block(m_speedBox);
        m_speedBox->setValue(m_speed);
    }
    m_timer->setInterval(int(std::lround(1000.0 / m_speed)));
}

void StepperView::advance()
{
    if (m_shownPosition != m_position)
        return;  // the states of this step are still being computed
    if (m_position < length() - 1)
        setPosition(m_position + 1);
    if (m_position >= length() - 1)
        pause();
}

void StepperView::updatePlayButton()
{
    m_playButton->setIcon(
        style()->standardIcon(m_playing ? QStyle::SP_MediaPause : QStyle::SP_MediaPlay));
    m_playButton->setText(m_playing ? tr("Pause") : tr("Play"));
}

QJsonObject StepperView::state() const
{
    return QJsonObject{{QStringLiteral("position"), m_position},
                       {QStringLiteral("speed"), m_speed},
                       {QStringLiteral("head"), head()}};
}

void StepperView::setState(const QJsonObject& state)
{
    if (state.contains(QLatin1String("speed")))
        setSpeed(state.value(QLatin1String("speed")).toDouble(m_speed));
    if (state.contains(QLatin1String("head")))
        setHead(state.value(QLatin1String("head")).toInt(head()));
    if (state.contains(QLatin1String("position")))
        setPosition(state.value(QLatin1String("position")).toInt(m_position));
}

void StepperView::showData()
{
    const std::shared_ptr<const StepperData> data = shownData();
    m_errorBar->hide();
    const CausalSteps& steps = *data->steps;
    const int length = int(steps.length());
    const int previous = m_position;
    m_position = std::clamp(m_position, 0, length - 1);

    m_frame->showData(data);
    {
        const QSignalBlocker blockSlider(m_slider), blockHead(m_headBox);
        m_slider->setRange(0, length - 1);
        m_slider->setPageStep(std::max(1, length / 10));
        const int heads = int(data->input->heads.size());
        m_headBox->setRange(0, heads - 1);
        m_headBox->setValue(steps.head);
        m_headLabel->setVisible(heads > 1);
        m_headBox->setVisible(heads > 1);
    }

    m_shownPosition = -1;
    showPosition();
    if (m_position != previous)
        emit positionChanged(m_position);
    emit experimentShown();
}

void StepperView::showPosition()
{
    if (!shownData())
        return;
    const int t = m_position;
    const int length = this->length();
    m_frame->showPosition(t);
    {
        const QSignalBlocker block(m_slider);
        m_slider->setValue(t);
    }
    m_positionLabel->setText(tr("step i = %1 of %2").arg(t + 1).arg(length));
    m_firstButton->setEnabled(t > 0);
    m_backButton->setEnabled(t > 0);
    m_stepButton->setEnabled(t < length - 1);
    m_lastButton->setEnabled(t < length - 1);
    m_playButton->setEnabled(length > 1);
    const qint64 budget = m_controller->memoryBudget().bytes();
    if (stateAvailable(t)) {
        m_frame->showStep(t, budget);
        m_shownPosition = t;
    } else if (!m_followed) {
        m_frame->showLines(t, budget, false);
        m_controller->requestStates(t);
    }
}

void StepperView::exportFrame(const QString& path, FigureFormat format)
{
    exportPaintedFigure(path, format, frameFigure());
}

PaintedFigure StepperView::frameFigure()
{
    return m_frame->paintedFigure(m_position);
}

int StepperView::exportAllFrames(const QString& folder)
{
    if (!shownData())
        return 0;
    if (!QDir().mkpath(folder))
        throw OutputError(tr("cannot write the frames: cannot create the folder %1").arg(folder));
    pause();
    const std::shared_ptr<const StepperData> data = shownData();
    const quint64 generation = m_controller->generation();
    const int length = this->length();
    const int start = m_position;
    const int digits = std::max(4, int(QString::number(length).size()));
    const auto current = [&] {
        return shownData() == data && m_controller->generation() == generation;
    };

    QProgressDialog progress(
        tr("Writing %1 frames to %2\u2026").arg(length).arg(QDir::toNativeSeparators(folder)),
        tr("Cancel"), 0, length, this);
    progress.setWindowTitle(tr("Export all frames"));
    progress.setWindowModality(Qt::WindowModal);
    progress.setMinimumDuration(300);
    QString error;
    int written = 0;
    for (int t = 0; t < length; ++t) {
        progress.setValue(t);
        if (progress.wasCanceled() || !current())
            break;
        setPosition(t);
        // Window of states: wait for the worker, with the event loop running.
        while (m_shownPosition != t && isBusy() && current() && !progress.wasCanceled())
            QCoreApplication::processEvents(QEventLoop::WaitForMoreEvents);
        if (progress.wasCanceled() || !current())
            break;
        const QString path = QDir(folder).filePath(
            QStringLiteral("frame_%1.png").arg(t + 1, digits, 10, QLatin1Char('0')));
        if (m_shownPosition != t) {
            error = tr("cannot write the frame %1: the state of step %2 could not be computed")
                        .arg(path)
                        .arg(t + 1);
            break;
        }
        QCoreApplication::processEvents();  // lays out the labels whose text changed
        QSaveFile file(path);
        if (!file.open(QIODevice::WriteOnly) || !m_frame->toImage(1.0).save(&file, "PNG") ||
            !file.commit()) {
            error = tr("cannot write the frame %1: %2").arg(path, file.errorString());
            break;
        }
        ++written;
    }
    progress.setValue(length);
    if (current())
        setPosition(start);
    if (!error.isEmpty())
        throw OutputError(error);
    return written;
}

void StepperView::exportFrameDialog()
{
    if (!shownData())
        return;
    runFigureExportDialog(
        this, tr("Export frame"), QStringLiteral("stepper-step-%1.png").arg(m_position + 1),
        [this](const QString& path, FigureFormat format) { exportFrame(path, format); });
}

void StepperView::exportAllFramesDialog()
{
    if (!shownData())
        return;
    const QString folder = QFileDialog::getExistingDirectory(this, tr("Export all frames"));
    if (folder.isEmpty())
        return;
    writeOrWarn(this, tr("Export all frames"), [&] {
        const int written = exportAllFrames(folder);
        if (written < length())
            QMessageBox::information(
                this, tr("Export all frames"),
                tr("Stopped after %1 of %2 frames.").arg(written).arg(length()));
    });
}

}  // namespace attnlab::ui
