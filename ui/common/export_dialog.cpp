#include "ui/common/export_dialog.h"

#include "errors.h"

#include <QCoreApplication>
#include <QFileDialog>
#include <QFileInfo>
#include <QMessageBox>

namespace attnlab::ui {

QString askSavePath(QWidget* parent, const QString& title, const QString& baseName,
                    const QString& suffix)
{
    QString path = QFileDialog::getSaveFileName(
        parent, title, baseName + QLatin1Char('.') + suffix,
        QCoreApplication::translate("attnlab", "%1 files (*.%2)").arg(suffix.toUpper(), suffix));
    if (!path.isEmpty() && QFileInfo(path).suffix().compare(suffix, Qt::CaseInsensitive) != 0)
        path += QLatin1Char('.') + suffix;
    return path;
}

bool writeOrWarn(QWidget* parent, const QString& title, const std::function<void()>& write)
{
    try {
        write();
        return true;
    } catch (const OutputError& e) {
        QMessageBox::warning(parent, title, e.message());
        return false;
    }
}

QString runExportDialog(QWidget* parent, const QString& title, const QString& baseName,
                        const QString& suffix, const std::function<void(const QString&)>& write)
{
    const QString path = askSavePath(parent, title, baseName, suffix);
    if (path.isEmpty() || !writeOrWarn(parent, title, [&] { write(path); }))
        return QString();
    return path;
}

}  // namespace attnlab::ui
