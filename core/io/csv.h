#pragma once

#include "types.h"

#include <QString>
#include <QStringList>

class QIODevice;

namespace attnlab {

struct CsvOptions {
    QStringList columnNames;     // a header line when not empty; one name per column
    QStringList rowLabels;       // a first column of labels when not empty; one per row
    bool floatPrecision = true;  // 9 significant digits (a float round-trips) instead of 17
};

// Writes a matrix as CSV, one row per line ('\n'), its values with enough digits to round-trip
// (%.9g for float precision, %.17g for double, independent of the locale; "nan", "inf", "-inf"
// for non-finite values), after an optional header line of column names (with an empty corner
// field when there are row labels) and with an optional first column of row labels. Names and
// labels are quoted as csvField does. Throws std::invalid_argument when the number of names or
// labels does not match the matrix, OutputError naming the file when a write fails.
void writeCsv(QIODevice& device, const MatrixD& matrix, const CsvOptions& options = {});

// Writes `path` atomically (QSaveFile) with writeCsv, creating its directory as needed. Throws
// OutputError naming the path on failure, leaving no file behind.
void saveCsv(const QString& path, const MatrixD& matrix, const CsvOptions& options = {});

// Appends `value` with `digits` significant digits, like printf's %.<digits>g in the C locale
// ("nan", "inf", "-inf" for non-finite values).
void appendCsvNumber(QByteArray& line, double value, int digits);
// Appends a comma and then `value` as appendCsvNumber does, or nothing after the comma (an empty
// field) when value is not finite.
void appendCsvField(QByteArray& line, double value, int digits);

// One CSV field quoted per RFC 4180: text containing a comma, a double quote, CR or LF is
// enclosed in double quotes, with each double quote doubled; any other text is returned as is.
QString csvField(const QString& text);

}  // namespace attnlab
