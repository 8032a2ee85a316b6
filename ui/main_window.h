#pragma once

#include <QMainWindow>

namespace attnlab::ui {

// The main window: exact attention P beside its approximation P^ for the default example.
class MainWindow : public QMainWindow {
    Q_OBJECT

public:
    explicit MainWindow(QWidget* parent = nullptr);
};

}  // namespace attnlab::ui
