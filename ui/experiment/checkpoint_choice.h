#pragma once

#include <QString>
#include <QStringList>
#include <QWidget>

class QComboBox;
class QPushButton;

namespace attnlab::ui {

// The Method dock's choice of a second checkpoint of the model read (a quantized .gguf file
// beside the F16 one or the Hugging Face folder, say), whose exact attention then takes the
// approximation's place: a list of the recent language models other than the first and the
// built-in model, and an Open... button for any other .gguf file or model folder (which joins the
// recent models).
class CheckpointChoice : public QWidget {
    Q_OBJECT

public:
    explicit CheckpointChoice(QWidget* parent = nullptr);

    // Lists the checkpoints the model at firstPath can be compared with, current (the second
    // checkpoint shown; empty for none) selected. Without emitting chosen().
    void setModels(const QString& firstPath, const QString& current);
    // The paths listed, in order (the current one included).
    QStringList candidates() const;

signals:
    // The user chose the checkpoint at path (from the list, or with Open...).
    void chosen(const QString& path);

private:
    void open();

    QComboBox* m_list;
    QPushButton* m_open;
    QString m_listed;  // what the list was filled from, to fill it only when that changes
};

}  // namespace attnlab::ui
