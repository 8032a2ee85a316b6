#include "ui/sweeps/sweep_page.h"

#include "ui/common/controls_column.h"
#include "ui/common/export_dialog.h"
#include "errors.h"
#include "io/atomic_files.h"

#include <QCloseEvent>
#include <QDir>
#include <QHBoxLayout>
#include <QLabel>
#include <QMenu>
#include <QProgressBar>
#include <QPushButton>
#include <QSaveFile>
#include <QSpinBox>
#include <QVBoxLayout>
#include <qcustomplot.h>

#include <algorithm>

namespace attnlab::ui {

namespace {

// The object name of a shared control: "run", or "errorsRun" with the prefix "errors".
QString controlName(const QString& prefix, const QString& name)
{
    if (prefix.isEmpty())
        return name;
    return prefix + name.front().toUpper() + name.mid(1);
}

}  // namespace

SweepPage::SweepPage(const Words& words, QWidget* parent) : QWidget(parent), m_words(words)
{
    connect(&m_job, &BackgroundJob::failed, this, [this](const QString& message) {
        m_status->setText(tr("The sweep failed: %1").arg(message));
        sweepFailed();
        endSweep();
    });

    m_runButton = new QPushButton(tr("Run"));
    m_runButton->setToolTip(words.runTip);
    m_cancelButton = new QPushButton(tr("Cancel"));
    m_cancelButton->setToolTip(words.cancelTip);
    connect(m_runButton, &QPushButton::clicked, this, &SweepPage::run);
    connect(m_cancelButton, &QPushButton::clicked, this, &SweepPage::cancel);
    auto* buttons = new QHBoxLayout;
    buttons->addWidget(m_runButton);
    buttons->addWidget(m_cancelButton);

    m_progress = new QProgressBar;
    m_progress->setToolTip(words.progressTip);
    m_progress->setFormat(words.progressFormat);
    m_status = new QLabel;
    m_status->setWordWrap(true);
    m_status->setTextInteractionFlags(Qt::TextSelectableByMouse);

    m_exportButton = menuButton(tr("Export"), words.exportTip);
    QMenu* exportMenu = m_exportButton->menu();
    for (const FigureFormat format : {FigureFormat::Png, FigureFormat::Svg, FigureFormat::Pdf})
        exportMenu->addAction(tr("Chart as %1...").arg(figureFormatName(format).toUpper()), this,
                              [this, format] { exportChartDialog(format); });
    exportMenu->addSeparator();
    exportMenu->addAction(tr("Data as CSV..."), this, &SweepPage::exportCsvDialog);

    m_sweepControls = new QWidget;
    auto* layout = new QVBoxLayout(m_sweepControls);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addLayout(buttons);
    layout->addWidget(m_progress);
    layout->addWidget(m_status);
    layout->addWidget(m_exportButton, 0, Qt::AlignLeft);

    // Object names: for tests and accessibility tools.
    m_runButton->setObjectName(controlName(words.objectPrefix, QStringLiteral("run")));
    m_cancelButton->setObjectName(controlName(words.objectPrefix, QStringLiteral("cancel")));
    m_exportButton->setObjectName(controlName(words.objectPrefix, QStringLiteral("export")));
    m_progress->setObjectName(controlName(words.objectPrefix, QStringLiteral("progress")));
    m_status->setObjectName(controlName(words.objectPrefix, QStringLiteral("status")));
}

QString SweepPage::statusText() const
{
    return m_status->text();
}

void SweepPage::exportChart(const QString& path, FigureFormat format)
{
    exportFigure(*m_chart, path, format);
}

void SweepPage::exportCsv(const QString& path) const
{
    QSaveFile file(path);
    if (!file.open(QIODevice::WriteOnly))
        throw OutputError(
            tr("Cannot write %1: %2").arg(QDir::toNativeSeparators(path), file.errorString()));
    writeAll(file, csv());
    if (!file.commit())
        throw OutputError(
            tr("Cannot write %1: %2").arg(QDir::toNativeSeparators(path), file.errorString()));
}

void SweepPage::cancel()
{
    if (!m_running)
        return;
    m_cancelling = true;
    m_job.cancel();
    m_status->setText(m_words.cancelling);
}

void SweepPage::stopAndWait()
{
    if (!m_running)
        return;
    m_cancelling = true;
    m_job.cancel();
    m_job.finishNow();
}

void SweepPage::abandonSweep()
{
    if (!m_running)
        return;
    m_job.discard();
    endSweep();
}

void SweepPage::endSweep()
{
    setRunning(false);
    emit sweepFinished();
}

void SweepPage::setRunning(bool running)
{
    const bool changed = running != m_running;
    m_running = running;
    m_runButton->setEnabled(!running);
    m_cancelButton->setEnabled(running);
    if (changed)
        emit runningChanged(running);
}

void SweepPage::setProgress(int done, int total)
{
    m_progress->setRange(0, std::max(1, total));
    m_progress->setValue(done);
}

void SweepPage::setExportEnabled(bool enabled)
{
    m_exportButton->setEnabled(enabled);
}

void SweepPage::closeEvent(QCloseEvent* event)
{
    stopAndWait();
    QWidget::closeEvent(event);
}

void SweepPage::exportChartDialog(FigureFormat format)
{
    runExportDialog(this, tr("Export chart"), m_words.fileName, figureFormatName(format),
                    [&](const QString& path) { exportChart(path, format); });
}

void SweepPage::exportCsvDialog()
{
    runExportDialog(this, tr("Export data"), m_words.fileName, QStringLiteral("csv"),
                    [&](const QString& path) { exportCsv(path); });
}

QSpinBox* sweepSpinBox(int minimum, int maximum, int value, const QString& tip, QSpinBox* box)
{
    if (!box)
        box = new QSpinBox;
    box->setRange(minimum, maximum);
    box->setValue(value);
    box->setGroupSeparatorShown(true);
    box->setToolTip(tip);
    return box;
}

}  // namespace attnlab::ui
