#include "io/csv.h"

#include "io/atomic_files.h"

#include <QFileInfo>
#include <QIODevice>

#include <charconv>
#include <cmath>
#include <stdexcept>

namespace attnlab {

void appendCsvNumber(QByteArray& line, double value, int digits)
{
    if (std::isnan(value)) {
        line.append("nan");
    } else if (std::isinf(value)) {
        line.append(value > 0 ? "inf" : "-inf");
    } else {
        char text[32];
        const std::to_chars_result end =
            std::to_chars(text, text + sizeof(text), value, std::chars_format::general, digits);
        line.append(text, end.ptr - text);
    }
}

void appendCsvField(QByteArray& line, double value, int digits)
{
    line.append(',');
    if (std::isfinite(value))
        appendCsvNumber(line, value, digits);
}

void writeCsv(QIODevice& device, const MatrixD& matrix, const CsvOptions& options)
{
    if (!options.columnNames.isEmpty() && options.columnNames.size() != matrix.cols()) {
        throw std::invalid_argument("writeCsv: the number of column names differs from the "
                                    "number of columns");
    }
    if (!options.rowLabels.isEmpty() && options.rowLabels.size() != matrix.rows()) {
        throw std::invalid_argument("writeCsv: the number of row labels differs from the number "
                                    "of rows");
    }
    const bool labelled = !options.rowLabels.isEmpty();
    if (!options.columnNames.isEmpty()) {
        QStringList fields;
        if (labelled)
            fields.append(QString());
        for (const QString& name : options.columnNames)
            fields.append(csvField(name));
        writeAll(device, (fields.join(u',') + u'\n').toUtf8());
    }
    const int digits = options.floatPrecision ? 9 : 17;
    QByteArray line;
    for (Eigen::Index i = 0; i < matrix.rows(); ++i) {
        line.clear();
        if (labelled)
            line.append(csvField(options.rowLabels[i]).toUtf8()).append(',');
        for (Eigen::Index j = 0; j < matrix.cols(); ++j) {
            if (j > 0)
                line.append(',');
            appendCsvNumber(line, matrix(i, j), digits);
        }
        line.append('\n');
        writeAll(device, line);
    }
}

void saveCsv(const QString& path, const MatrixD& matrix, const CsvOptions& options)
{
    const QFileInfo info(path);
    AtomicFileSet files(info.absolutePath());
    writeCsv(files.open(info.fileName()), matrix, options);
    files.commit();
}

QString csvField(const QString& text)
{
    if (!text.contains(u',') && !text.contains(u'"') && !text.contains(u'\n') &&
        !text.contains(u'\r')) {
        return text;
    }
    QString quoted = text;
    quoted.replace(QStringLiteral("\""), QStringLiteral("\"\""));
    return u'"' + quoted + u'"';
}

}  // namespace attnlab
