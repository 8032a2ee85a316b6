#pragma once

#include <QString>
#include <QWidget>

class QLabel;
class QToolButton;

namespace attnlab::ui {

// The red banner above the pages that says why the window does not show what was asked, with a
// button that closes it. Two kinds of message, which go at different times:
// - a refusal (showRefusal: "Could not compute this: ..."): it is about the input of the moment,
//   so it goes as soon as another computation starts (and comes back if that one fails too), or
//   when a result arrives;
// - a file that could not be opened (showOpenError: "Could not open this: ...", a session, a
//   scenario, a model): it stays through the next computations and results until it is closed or
//   another message replaces it (the window may compute its example just after).
class ErrorBanner : public QWidget {
    Q_OBJECT

public:
    explicit ErrorBanner(QWidget* parent = nullptr);

    void showRefusal(const QString& message);
    void showOpenError(const QString& message);
    // A computation started, or a result arrived: a refusal goes, an open error stays.
    void inputMoved();
    // The text shown, empty when the banner is hidden.
    QString message() const;

private:
    void showText(const QString& text, bool openError);

    QLabel* m_text;
    QToolButton* m_close;
    bool m_openError = false;  // the banner holds showOpenError's message
};

}  // namespace attnlab::ui
