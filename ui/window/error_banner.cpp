#include "ui/window/error_banner.h"

#include <QHBoxLayout>
#include <QLabel>
#include <QToolButton>

namespace attnlab::ui {

ErrorBanner::ErrorBanner(QWidget* parent) : QWidget(parent)
{
    m_text = new QLabel;
    m_text->setObjectName(QStringLiteral("errorBar"));  // for tests and accessibility tools
    m_text->setWordWrap(true);
    m_text->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_text->setStyleSheet(
        QStringLiteral("QLabel { background: #fde8e8; color: #7a1010; border: 1px solid #e4a0a0; "
                       "border-radius: 3px; padding: 6px; }"));
    m_close = new QToolButton;
    m_close->setText(QStringLiteral("\u2715"));
    m_close->setToolTip(tr("Hide this message"));
    m_close->setAutoRaise(true);
    auto* row = new QHBoxLayout(this);
    row->setContentsMargins(0, 0, 0, 0);
    row->addWidget(m_text, 1);
    row->addWidget(m_close);
    connect(m_close, &QToolButton::clicked, this, [this] {
        m_openError = false;
        hide();
    });
    hide();
}

void ErrorBanner::showRefusal(const QString& message)
{
    showText(
        tr("Could not compute this: %1\nThe view still shows the previous result.").arg(message),
        false);
}

void ErrorBanner::showOpenError(const QString& message)
{
    showText(tr("Could not open this: %1\nThe window shows what it showed before.").arg(message),
             true);
}

void ErrorBanner::inputMoved()
{
    if (!m_openError)
        hide();
}

QString ErrorBanner::message() const
{
    return isHidden() ? QString() : m_text->text();
}

void ErrorBanner::showText(const QString& text, bool openError)
{
    m_text->setText(text);
    m_openError = openError;
    show();
}

}  // namespace attnlab::ui
