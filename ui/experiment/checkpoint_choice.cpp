#include "ui/experiment/checkpoint_choice.h"

#include "inputs/model_input.h"
#include "ui/experiment/model_files.h"

#include <QComboBox>
#include <QDir>
#include <QHBoxLayout>
#include <QPushButton>
#include <QSignalBlocker>

namespace attnlab::ui {

CheckpointChoice::CheckpointChoice(QWidget* parent) : QWidget(parent)
{
    m_list = new QComboBox;
    m_list->setObjectName(QStringLiteral("checkpointList"));
    m_list->setToolTip(tr("The second checkpoint: a recent language model or the built-in one. "
                          "It must be a checkpoint of the same model (the same architecture, "
                          "layers, heads, head dimension, vocabulary and tokens for the text)."));
    m_open = new QPushButton(tr("Open..."));
    m_open->setObjectName(QStringLiteral("openCheckpoint"));
    m_open->setToolTip(tr("Open another checkpoint: a .gguf file (quantized or not), or the "
                          "config.json of a Hugging Face model folder."));
    auto* layout = new QHBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(m_list, 1);
    layout->addWidget(m_open);
    connect(m_list, &QComboBox::activated, this,
            [this](int index) { emit chosen(m_list->itemData(index).toString()); });
    connect(m_open, &QPushButton::clicked, this, &CheckpointChoice::open);
}

void CheckpointChoice::setModels(const QString& firstPath, const QString& current)
{
    // The list reads every recent model's header: only when something it shows changed (the
    // spec changes at every step of a slider).
    QStringList recent = recentModels();
    const QString listed =
        QStringList{firstPath, current, recent.join(QLatin1Char('\n'))}.join(QLatin1Char('\t'));
    if (listed == m_listed)
        return;
    m_listed = listed;
    // The recent models, newest first, then the built-in ones; the current checkpoint first when
    // it is none of them (a session's).
    QStringList paths;
    recent.append(builtinTextModels());
    const QString first = explicitModelId(firstPath);
    for (const QString& path : std::as_const(recent))
        if (explicitModelId(path) != first && !paths.contains(path) && isLanguageModel(path))
            paths.append(path);
    if (!current.isEmpty() && !paths.contains(current))
        paths.prepend(current);
    const QSignalBlocker blocker(m_list);
    m_list->clear();
    for (const QString& path : std::as_const(paths)) {
        m_list->addItem(modelDisplayName(path), path);
        m_list->setItemData(m_list->count() - 1, QDir::toNativeSeparators(path), Qt::ToolTipRole);
    }
    m_list->setCurrentIndex(current.isEmpty() ? -1 : int(paths.indexOf(current)));
}

QStringList CheckpointChoice::candidates() const
{
    QStringList paths;
    for (int i = 0; i < m_list->count(); ++i)
        paths.append(m_list->itemData(i).toString());
    return paths;
}

void CheckpointChoice::open()
{
    const QString path = openLanguageModel(this, tr("Open a second checkpoint of the model"));
    if (!path.isEmpty())
        emit chosen(path);
}

}  // namespace attnlab::ui
