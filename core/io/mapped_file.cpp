#include "io/mapped_file.h"

#include "errors.h"

#include <QFileInfo>

namespace attnlab {

MappedFile::MappedFile(const QString& path) : m_file(path)
{
    if (!QFileInfo(path).isFile())
        refuse(path, QStringLiteral("no such file"));
    if (!m_file.open(QIODevice::ReadOnly))
        refuse(path, QStringLiteral("cannot be read (%1)").arg(m_file.errorString()));
    m_size = std::uint64_t(m_file.size());
    if (m_size > 0) {
        m_data = m_file.map(0, qint64(m_size));
        if (!m_data)
            refuse(path,
                   QStringLiteral("cannot be mapped into memory (%1)").arg(m_file.errorString()));
    }
}

}  // namespace attnlab
