#include "io/npy.h"

#include "io/atomic_files.h"
#include "errors.h"

#include <QFile>
#include <QFileInfo>
#include <QIODevice>
#include <QRegularExpression>
#include <QtEndian>
#include <QtNumeric>

#include <algorithm>
#include <cmath>
#include <optional>

namespace attnlab {
namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr qint64 kMagicLength = 6;
constexpr qint64 kAlignment = 64;             // numpy's ARRAY_ALIGN: where the data starts
constexpr qint64 kVersion1MaxHeader = 65535;  // the 2-byte header length field of version 1.0
constexpr qint64 kChunkElements = 1 << 16;    // elements converted per read or write
constexpr qsizetype kHeaderQuoteLength = 200;
// Headers longer than this are refused before they are read (numpy's own np.load refuses more
// than 10000 bytes); the header of a rank-3 array needs about 100.
constexpr qint64 kLargestHeader = 1 << 20;
// Tuples, lists and dicts nested deeper than this are refused: the parser recurses once per
// level, and a header of a million '[' would overflow the stack. numpy nests two deep.
constexpr int kDeepestHeaderNesting = 32;

const QString kSupported =
    QStringLiteral("Attention Lab reads float32 ('<f4') and float64 ('<f8')");

qint64 itemSize(NpyDtype dtype)
{
    return dtype == NpyDtype::Float32 ? 4 : 8;
}

QString dtypeName(NpyDtype dtype)
{
    return dtype == NpyDtype::Float32 ? QStringLiteral("float32") : QStringLiteral("float64");
}

// The shape as Python writes a tuple: "()", "(3,)", "(3, 4)".
QString shapeText(const std::vector<qint64>& shape)
{
    QStringList dims;
    for (qint64 dim : shape)
        dims.append(QString::number(dim));
    return QStringLiteral("(%1%2)").arg(dims.join(QStringLiteral(", ")),
                                        shape.size() == 1 ? QStringLiteral(",") : QString());
}

// The product of the dimensions; empty when it does not fit in a qint64.
std::optional<qint64> product(const std::vector<qint64>& shape)
{
    qint64 count = 1;
    for (qint64 dim : shape) {
        if (qMulOverflow(count, dim, &count))
            return std::nullopt;
    }
    return count;
}

// Visits the elements of an array in Fortran order (first index fastest) and gives the position
// of each in C order (last index fastest).
class FortranOrderWalk {
public:
    explicit FortranOrderWalk(const std::vector<qint64>& shape)
        : m_shape(shape), m_index(shape.size(), 0), m_stride(shape.size(), 1)
    {
        for (qsizetype k = qsizetype(shape.size()) - 2; k >= 0; --k)
            m_stride[k] = m_stride[k + 1] * shape[k + 1];
    }

    // The C-order position of the current element.
    qint64 position() const { return m_position; }

    // Moves to the next element in Fortran order (back to the first after the last).
    void advance()
    {
        for (size_t k = 0; k < m_shape.size(); ++k) {
            m_position += m_stride[k];
            if (++m_index[k] < m_shape[k])
                return;
            m_position -= m_stride[k] * m_shape[k];
            m_index[k] = 0;
        }
    }

private:
    std::vector<qint64> m_shape;
    std::vector<qint64> m_index;
    std::vector<qint64> m_stride;  // C-order strides, in elements
    qint64 m_position = 0;
};

// A value of the Python literal subset that .npy headers are written in.
struct PyLiteral {
    enum class Kind { String, Integer, Bool, None, Tuple, List, Dict };
    Kind kind = Kind::None;
    QString text;                   // String
    std::optional<qint64> integer;  // Integer; empty when it does not fit in 64 bits
    bool flag = false;              // Bool
    std::vector<PyLiteral> items;   // Tuple and List elements; Dict values
    QStringList keys;               // Dict keys, one per item

    // The value of the Dict entry `key`, or nullptr.
    const PyLiteral* find(const QString& key) const
    {
        const qsizetype i = keys.indexOf(key);
        return i < 0 ? nullptr : &items[size_t(i)];
    }
};

// The header as quoted in error messages: trimmed and cut to a readable length.
QString quoteHeader(const QString& header)
{
    const QString text = header.trimmed();
    return text.size() <= kHeaderQuoteLength ? text : text.left(kHeaderQuoteLength) + "...";
}

// Parses a header with the grammar of the Python literals numpy writes (ast.literal_eval in
// numpy): strings, integers (with Python 2's 'L' suffix, which numpy also accepts), True, False,
// None, tuples, lists and dicts with string keys. Throws InputError naming the file.
class HeaderParser {
public:
    HeaderParser(const QString& path, const QString& text) : m_path(path), m_text(text) {}

    // The one value the whole text holds (surrounding whitespace allowed).
    PyLiteral parse()
    {
        PyLiteral result = value();
        skipSpace();
        if (m_pos != m_text.size())
            fail(QStringLiteral("unexpected text after the value"));
        return result;
    }

private:
    PyLiteral value()
    {
        skipSpace();
        if (m_pos == m_text.size())
            fail(QStringLiteral("the header ends where a value was expected"));
        const QChar c = m_text[m_pos];
        if (c == u'\'' || c == u'"')
            return string();
        if (c.isDigit() || c == u'-' || c == u'+')
            return integer();
        if (c == u'(')
            return sequence(u')', PyLiteral::Kind::Tuple);
        if (c == u'[')
            return sequence(u']', PyLiteral::Kind::List);
        if (c == u'{')
            return dict();
        PyLiteral result;
        if (acceptWord(QStringLiteral("True"))) {
            result.kind = PyLiteral::Kind::Bool;
            result.flag = true;
        } else if (acceptWord(QStringLiteral("False"))) {
            result.kind = PyLiteral::Kind::Bool;
        } else if (!acceptWord(QStringLiteral("None"))) {
            fail(QStringLiteral("unexpected '%1'").arg(c));
        }
        return result;
    }

    PyLiteral string()
    {
        const QChar quote = m_text[m_pos++];
        PyLiteral result;
        result.kind = PyLiteral::Kind::String;
        while (m_pos < m_text.size() && m_text[m_pos] != quote) {
            QChar c = m_text[m_pos++];
            if (c == u'\\' && m_pos < m_text.size()) {
                c = m_text[m_pos++];
                if (c == u'n')
                    c = u'\n';
                else if (c == u't')
                    c = u'\t';
            }
            result.text.append(c);
        }
        if (m_pos == m_text.size())
            fail(QStringLiteral("unterminated string"));
        ++m_pos;
        return result;
    }

    PyLiteral integer()
    {
        PyLiteral result;
        result.kind = PyLiteral::Kind::Integer;
        const bool negative = m_text[m_pos] == u'-';
        if (m_text[m_pos] == u'-' || m_text[m_pos] == u'+')
            ++m_pos;
        if (m_pos == m_text.size() || !m_text[m_pos].isDigit())
            fail(QStringLiteral("a sign without a number"));
        qint64 magnitude = 0;
        bool overflow = false;
        for (; m_pos < m_text.size() && m_text[m_pos].isDigit(); ++m_pos) {
            overflow = overflow || qMulOverflow(magnitude, qint64(10), &magnitude) ||
                       qAddOverflow(magnitude, qint64(m_text[m_pos].digitValue()), &magnitude);
        }
        if (m_pos < m_text.size() && (m_text[m_pos] == u'L' || m_text[m_pos] == u'l'))
            ++m_pos;
        if (!overflow)
            result.integer = negative ? -magnitude : magnitude;
        return result;
    }

    // A tuple or list; "(x)" without a comma is x itself, as in Python.
    PyLiteral sequence(QChar close, PyLiteral::Kind kind)
    {
        enterContainer();
        PyLiteral result;
        result.kind = kind;
        bool comma = false;
        while (!accept(close)) {
            result.items.push_back(value());
            comma = accept(u',');
            if (!comma) {
                expect(close);
                break;
            }
        }
        --m_depth;
        if (kind == PyLiteral::Kind::Tuple && result.items.size() == 1 && !comma)
            return result.items.front();
        return result;
    }

    PyLiteral dict()
    {
        enterContainer();
        PyLiteral result;
        result.kind = PyLiteral::Kind::Dict;
        while (!accept(u'}')) {
            const PyLiteral key = value();
            if (key.kind != PyLiteral::Kind::String)
                fail(QStringLiteral("a dict key that is not a string"));
            expect(u':');
            result.keys.append(key.text);
            result.items.push_back(value());
            if (!accept(u',')) {
                expect(u'}');
                break;
            }
        }
        --m_depth;
        return result;
    }

    // Steps over the opening bracket of a tuple, list or dict, one level deeper; refuses nesting
    // beyond kDeepestHeaderNesting.
    void enterContainer()
    {
        if (++m_depth > kDeepestHeaderNesting)
            fail(QStringLiteral("containers nested more than %1 deep").arg(kDeepestHeaderNesting));
        ++m_pos;
    }

    void skipSpace()
    {
        while (m_pos < m_text.size() && m_text[m_pos].isSpace())
            ++m_pos;
    }

    // Skips whitespace, then consumes `c` if it comes next.
    bool accept(QChar c)
    {
        skipSpace();
        if (m_pos < m_text.size() && m_text[m_pos] == c) {
            ++m_pos;
            return true;
        }
        return false;
    }

    bool acceptWord(const QString& word)
    {
        if (!QStringView(m_text).mid(m_pos).startsWith(word))
            return false;
        m_pos += word.size();
        return true;
    }

    void expect(QChar c)
    {
        if (!accept(c))
            fail(QStringLiteral("expected '%1'").arg(c));
    }

    [[noreturn]] void fail(const QString& problem) const
    {
        throw InputError(QStringLiteral("%1: the .npy header is not a valid Python dict (%2 at "
                                        "character %3): %4")
                             .arg(m_path, problem)
                             .arg(m_pos)
                             .arg(quoteHeader(m_text)));
    }

    QString m_path;
    QString m_text;
    qsizetype m_pos = 0;
    int m_depth = 0;  // tuples, lists and dicts open at m_pos
};

// The numpy name of a simple dtype string: '<i8' -> "int64", '|O' -> "object"; empty when the
// string is not one.
QString numpyTypeName(const QString& descr)
{
    static const QRegularExpression pattern(
        QStringLiteral("^[<>|=]?([a-zA-Z])([0-9]*)(\\[[a-z]+\\])?$"));
    const QRegularExpressionMatch match = pattern.match(descr);
    if (!match.hasMatch())
        return {};
    const QString bits = QString::number(match.captured(2).toInt() * 8);
    switch (match.captured(1).front().unicode()) {
        case 'b': return QStringLiteral("bool");
        case 'i': return QStringLiteral("int") + bits;
        case 'u': return QStringLiteral("uint") + bits;
        case 'f': return QStringLiteral("float") + bits;
        case 'c': return QStringLiteral("complex") + bits;
        case 'O': return QStringLiteral("object");
        case 'U': return QStringLiteral("unicode string");
        case 'S':
        case 'a': return QStringLiteral("bytes");
        case 'V': return QStringLiteral("raw bytes");
        case 'M': return QStringLiteral("datetime64");
        case 'm': return QStringLiteral("timedelta64");
        default: return {};
    }
}

// The dtype of a header's descr, which must be '<f4' or '<f8'. Throws InputError naming the file
// and the refused dtype.
NpyDtype parseDtype(const QString& path, const QString& descr)
{
    if (descr == QLatin1String("<f4"))
        return NpyDtype::Float32;
    if (descr == QLatin1String("<f8"))
        return NpyDtype::Float64;
    const QString name = numpyTypeName(descr);
    const QString quoted = name.isEmpty() ? QStringLiteral("dtype '%1'").arg(descr)
                                          : QStringLiteral("dtype '%1' (%2)").arg(descr, name);
    QString problem;
    if (name == QLatin1String("object")) {
        problem = QStringLiteral("%1 is an object array (Python objects, saved with pickle), not "
                                 "numbers: %2; convert it with arr.astype(np.float64)")
                      .arg(quoted, kSupported);
    } else if ((name == QLatin1String("float32") || name == QLatin1String("float64")) &&
               descr.startsWith(u'>')) {
        problem = QStringLiteral("%1 is big-endian: %2, little-endian; convert it with "
                                 "arr.astype('<f%3')")
                      .arg(quoted, kSupported, descr.back());
    } else if (name == QLatin1String("float32") || name == QLatin1String("float64")) {
        problem = QStringLiteral("%1 does not say little-endian ('<'): %2").arg(quoted, kSupported);
    } else if (name.startsWith(QLatin1String("int")) || name.startsWith(QLatin1String("uint")) ||
               name.startsWith(QLatin1String("float")) || name == QLatin1String("bool")) {
        problem = QStringLiteral("%1 is not supported: %2; convert it with arr.astype(np.float32)")
                      .arg(quoted, kSupported);
    } else {
        problem = QStringLiteral("%1 is not supported: %2").arg(quoted, kSupported);
    }
    throw InputError(QStringLiteral("%1: %2").arg(path, problem));
}

// "[2, 5]": the multi-index of the element at C-order position `position`.
QString indexText(qint64 position, const std::vector<qint64>& shape)
{
    QStringList index;
    for (auto dim = shape.rbegin(); dim != shape.rend(); ++dim) {
        index.prepend(QString::number(position % *dim));
        position /= *dim;
    }
    return QStringLiteral("[%1]").arg(index.join(QStringLiteral(", ")));
}

// Converts `count` little-endian values of type T to double, storing them at values[first + i]
// or, when walk is given, at the C-order positions it visits.
template <typename T>
void decodeChunk(const char* bytes, qint64 count, double* values, qint64 first,
                 FortranOrderWalk* walk)
{
    for (qint64 i = 0; i < count; ++i) {
        const double value = double(qFromLittleEndian<T>(bytes + i * qint64(sizeof(T))));
        if (walk) {
            values[walk->position()] = value;
            walk->advance();
        } else {
            values[first + i] = value;
        }
    }
}

// Writes `count` values as little-endian T, in chunks: values[i] in order or, when walk is given,
// the values at the C-order positions it visits.
template <typename T>
void encodeValues(QIODevice& device, const double* values, qint64 count, FortranOrderWalk* walk)
{
    QByteArray chunk(qsizetype(std::min(count, kChunkElements) * qint64(sizeof(T))),
                     Qt::Uninitialized);
    for (qint64 done = 0; done < count;) {
        const qint64 n = std::min(kChunkElements, count - done);
        char* out = chunk.data();
        for (qint64 i = 0; i < n; ++i) {
            qint64 position = done + i;
            if (walk) {
                position = walk->position();
                walk->advance();
            }
            qToLittleEndian<T>(T(values[position]), out + i * qint64(sizeof(T)));
        }
        writeAll(device, QByteArrayView(chunk.constData(), n * qint64(sizeof(T))));
        done += n;
    }
}

}  // namespace

qint64 NpyArray::elementCount() const
{
    return product(shape).value_or(0);
}

namespace {

// What the header of a .npy file says.
struct NpyHeader {
    NpyDtype dtype = NpyDtype::Float64;
    bool fortranOrder = false;
    std::vector<qint64> shape;
    qint64 dataOffset = 0;  // where the data starts
};

// The preamble (magic string, version, header length) and the header's text; file is read up to
// the data. Refuses (InputError naming path) what is not a .npy file of version 1.0 to 3.0.
QString readHeaderText(const QString& path, QFile& file, qint64 fileSize, qint64* dataOffset)
{
    // Preamble: magic string, version major.minor, header length (2 bytes in 1.0, else 4).
    const QByteArray preamble = file.read(kMagicLength + 2);
    if (!preamble.startsWith(QByteArrayView(kMagic, kMagicLength))) {
        refuse(path, QStringLiteral("not a .npy file: it does not start with the .npy magic "
                                    "string \"\\x93NUMPY\""));
    }
    if (preamble.size() < kMagicLength + 2)
        refuse(path,
               QStringLiteral("truncated header: the file ends after %1 bytes").arg(fileSize));
    const int major = quint8(preamble[kMagicLength]);
    const int minor = quint8(preamble[kMagicLength + 1]);
    if (major < 1 || major > 3 || minor != 0) {
        refuse(path, QStringLiteral("unsupported .npy format version %1.%2 (Attention Lab reads "
                                    "1.0, 2.0 and 3.0)")
                         .arg(major)
                         .arg(minor));
    }
    const qint64 lengthBytes = major == 1 ? 2 : 4;
    const QByteArray lengthField = file.read(lengthBytes);
    if (lengthField.size() < lengthBytes)
        refuse(path,
               QStringLiteral("truncated header: the file ends after %1 bytes").arg(fileSize));
    const qint64 headerLength = major == 1 ? qint64(qFromLittleEndian<quint16>(lengthField.data()))
                                           : qint64(qFromLittleEndian<quint32>(lengthField.data()));
    if (headerLength > kLargestHeader) {
        refuse(path, QStringLiteral("the header length field says %1 MiB, more than a .npy header "
                                    "needs (Attention Lab reads headers up to %2 MiB)")
                         .arg(double(headerLength) / (1 << 20), 0, 'f', 1)
                         .arg(kLargestHeader >> 20));
    }
    *dataOffset = kMagicLength + 2 + lengthBytes + headerLength;
    if (*dataOffset > fileSize) {
        refuse(path, QStringLiteral("truncated header: the header length field says %1 bytes, the "
                                    "file holds %2 after it")
                         .arg(headerLength)
                         .arg(fileSize - (kMagicLength + 2 + lengthBytes)));
    }
    const QByteArray headerBytes = file.read(headerLength);
    if (headerBytes.size() < headerLength)
        refuse(path, QStringLiteral("read error: %1").arg(file.errorString()));
    // Version 3.0 differs from 2.0 only in the header's encoding.
    return major == 3 ? QString::fromUtf8(headerBytes) : QString::fromLatin1(headerBytes);
}

// The header dict: exactly the keys 'descr' (a dtype this reader takes), 'fortran_order' and
// 'shape' (rank 1 to 3, no zero-sized dimension), as numpy writes them.
NpyHeader parseHeader(const QString& path, const QString& header)
{
    NpyHeader parsed;
    // The header dict: exactly the keys 'descr', 'fortran_order' and 'shape', as numpy requires.
    const PyLiteral dict = HeaderParser(path, header).parse();
    if (dict.kind != PyLiteral::Kind::Dict) {
        refuse(path, QStringLiteral("the .npy header is not a dict: %1").arg(quoteHeader(header)));
    }
    static const QStringList keys = {QStringLiteral("descr"), QStringLiteral("fortran_order"),
                                     QStringLiteral("shape")};
    for (const QString& key : keys) {
        if (!dict.find(key)) {
            refuse(path, QStringLiteral("the .npy header has no '%1' key: %2")
                             .arg(key, quoteHeader(header)));
        }
    }
    for (const QString& key : dict.keys) {
        if (!keys.contains(key)) {
            refuse(path, QStringLiteral("the .npy header has an unexpected key '%1': %2")
                             .arg(key, quoteHeader(header)));
        }
    }

    const PyLiteral& descr = *dict.find(QStringLiteral("descr"));
    if (descr.kind == PyLiteral::Kind::List) {
        refuse(path, QStringLiteral("a structured dtype (record array with named fields) is not "
                                    "supported: %1")
                         .arg(kSupported));
    }
    if (descr.kind != PyLiteral::Kind::String) {
        refuse(path, QStringLiteral("the .npy header's 'descr' is not a dtype string: %1")
                         .arg(quoteHeader(header)));
    }
    parsed.dtype = parseDtype(path, descr.text);

    const PyLiteral& fortranOrder = *dict.find(QStringLiteral("fortran_order"));
    if (fortranOrder.kind != PyLiteral::Kind::Bool) {
        refuse(path, QStringLiteral("the .npy header's 'fortran_order' is not True or False: %1")
                         .arg(quoteHeader(header)));
    }

    const PyLiteral& shapeValue = *dict.find(QStringLiteral("shape"));
    const bool shapeIsIntegers =
        shapeValue.kind == PyLiteral::Kind::Tuple &&
        std::all_of(shapeValue.items.begin(), shapeValue.items.end(),
                    [](const PyLiteral& item) { return item.kind == PyLiteral::Kind::Integer; });
    if (!shapeIsIntegers) {
        refuse(path, QStringLiteral("the .npy header's 'shape' is not a tuple of integers: %1")
                         .arg(quoteHeader(header)));
    }
    std::vector<qint64>& shape = parsed.shape;
    for (const PyLiteral& item : shapeValue.items) {
        if (!item.integer || *item.integer < 0) {
            refuse(path, QStringLiteral("the .npy header's shape has a dimension that is %1: %2")
                             .arg(item.integer ? QStringLiteral("negative")
                                               : QStringLiteral("too large for 64 bits"),
                                  quoteHeader(header)));
        }
        shape.push_back(*item.integer);
    }
    const QString shapeName = shapeText(shape);
    if (shape.empty()) {
        refuse(path, QStringLiteral("0-D arrays (scalars) are not supported: Attention Lab reads "
                                    "arrays of rank 1, 2 or 3"));
    }
    if (shape.size() > 3) {
        refuse(path, QStringLiteral("%1-D arrays are not supported (shape %2): Attention Lab reads "
                                    "arrays of rank 1, 2 or 3")
                         .arg(shape.size())
                         .arg(shapeName));
    }
    if (std::find(shape.begin(), shape.end(), 0) != shape.end()) {
        refuse(path, QStringLiteral("shape %1 has a zero-sized dimension: the array is empty")
                         .arg(shapeName));
    }
    parsed.fortranOrder = fortranOrder.flag;
    return parsed;
}

// The data must be exactly what the shape says, checked against the file size before anything
// is allocated (a lying header is refused here), and its doubles must fit the memory budget.
// The element count.
qint64 checkDataSize(const QString& path, const NpyHeader& header, qint64 fileSize,
                     const MemoryBudget& budget)
{
    const std::vector<qint64>& shape = header.shape;
    const NpyDtype dtype = header.dtype;
    const QString shapeName = shapeText(shape);
    const std::optional<qint64> count = product(shape);
    qint64 dataBytes = 0;
    if (!count || qMulOverflow(*count, itemSize(dtype), &dataBytes)) {
        refuse(path, QStringLiteral("shape %1 of %2 is too large: its byte size does not fit in 64 "
                                    "bits")
                         .arg(shapeName, dtypeName(dtype)));
    }
    const qint64 available = fileSize - header.dataOffset;
    if (available < dataBytes) {
        refuse(path, QStringLiteral("truncated: header says shape %1 of %2 = %3 bytes, file holds "
                                    "%4")
                         .arg(shapeName, dtypeName(dtype))
                         .arg(dataBytes)
                         .arg(available));
    }
    if (available > dataBytes) {
        refuse(path, QStringLiteral("the header says shape %1 of %2 = %3 bytes but the file holds "
                                    "%4 more bytes: the header does not match the data")
                         .arg(shapeName, dtypeName(dtype))
                         .arg(dataBytes)
                         .arg(available - dataBytes));
    }
    budget.require(double(*count) * double(sizeof(double)),
                   QStringLiteral("%1: the array of shape %2").arg(path, shapeName),
                   QStringLiteral("Raise the memory budget to load it."));
    return *count;
}

// Refuses an array with an element that is not finite, naming its index.
void requireFinite(const QString& path, const NpyArray& array)
{
    const auto bad = std::find_if(array.values.begin(), array.values.end(),
                                  [](double value) { return !std::isfinite(value); });
    if (bad != array.values.end()) {
        const QString kind = std::isnan(*bad) ? QStringLiteral("NaN")
                             : *bad > 0       ? QStringLiteral("+Inf")
                                              : QStringLiteral("-Inf");
        refuse(path, QStringLiteral("element %1 is %2: Attention Lab needs finite values")
                         .arg(indexText(bad - array.values.begin(), array.shape), kind));
    }
}

}  // namespace

NpyArray readNpy(const QString& path, const NpyReadOptions& options)
{
    const QFileInfo info(path);
    if (!info.exists())
        refuse(path, QStringLiteral("no such file"));
    if (info.isDir())
        refuse(path, QStringLiteral("is a directory, not a .npy file"));
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly))
        refuse(path, QStringLiteral("cannot open: %1").arg(file.errorString()));
    const qint64 fileSize = file.size();
    if (fileSize == 0)
        refuse(path, QStringLiteral("the file is empty, not a .npy file"));

    qint64 dataOffset = 0;
    const QString text = readHeaderText(path, file, fileSize, &dataOffset);
    NpyHeader header = parseHeader(path, text);
    header.dataOffset = dataOffset;
    const qint64 count = checkDataSize(path, header, fileSize, options.budget);

    NpyArray array;
    array.shape = header.shape;
    array.dtype = header.dtype;
    array.values.resize(size_t(count));
    std::optional<FortranOrderWalk> walk;
    if (header.fortranOrder)
        walk.emplace(header.shape);
    const qint64 size = itemSize(header.dtype);
    QByteArray chunk(qsizetype(std::min(count, kChunkElements) * size), Qt::Uninitialized);
    for (qint64 done = 0; done < count;) {
        const qint64 n = std::min(kChunkElements, count - done);
        if (file.read(chunk.data(), n * size) != n * size)
            refuse(path, QStringLiteral("read error: %1").arg(file.errorString()));
        FortranOrderWalk* order = walk ? &*walk : nullptr;
        if (header.dtype == NpyDtype::Float32)
            decodeChunk<float>(chunk.constData(), n, array.values.data(), done, order);
        else
            decodeChunk<double>(chunk.constData(), n, array.values.data(), done, order);
        done += n;
    }

    if (options.requireFinite)
        requireFinite(path, array);
    return array;
}

void writeNpy(QIODevice& device, const double* values, const std::vector<qint64>& shape,
              NpyDtype dtype, bool fortranOrder)
{
    const QByteArray dict =
        QStringLiteral("{'descr': '%1', 'fortran_order': %2, 'shape': %3, }")
            .arg(dtype == NpyDtype::Float32 ? QStringLiteral("<f4") : QStringLiteral("<f8"),
                 fortranOrder ? QStringLiteral("True") : QStringLiteral("False"), shapeText(shape))
            .toLatin1();
    // Preamble + dict + spaces + '\n' fills a whole number of 64-byte blocks.
    const auto headerLength = [&dict](qint64 preambleLength) {
        const qint64 unpadded = preambleLength + dict.size() + 1;
        return (unpadded + kAlignment - 1) / kAlignment * kAlignment - preambleLength;
    };
    int major = 1;
    qint64 lengthBytes = 2;
    qint64 length = headerLength(kMagicLength + 2 + lengthBytes);
    if (length > kVersion1MaxHeader) {
        major = 2;
        lengthBytes = 4;
        length = headerLength(kMagicLength + 2 + lengthBytes);
    }
    QByteArray header(kMagic, kMagicLength);
    header.append(char(major)).append(char(0));
    char lengthField[4];
    if (major == 1)
        qToLittleEndian<quint16>(quint16(length), lengthField);
    else
        qToLittleEndian<quint32>(quint32(length), lengthField);
    header.append(lengthField, lengthBytes);
    header.append(dict);
    header.append(length - dict.size() - 1, ' ');
    header.append('\n');
    writeAll(device, header);

    std::optional<FortranOrderWalk> walk;
    if (fortranOrder)
        walk.emplace(shape);
    FortranOrderWalk* order = walk ? &*walk : nullptr;
    const qint64 count = product(shape).value_or(0);
    if (dtype == NpyDtype::Float32)
        encodeValues<float>(device, values, count, order);
    else
        encodeValues<double>(device, values, count, order);
}

void saveNpy(const QString& path, const double* values, const std::vector<qint64>& shape,
             NpyDtype dtype, bool fortranOrder)
{
    const QFileInfo info(path);
    AtomicFileSet files(info.absolutePath());
    writeNpy(files.open(info.fileName()), values, shape, dtype, fortranOrder);
    files.commit();
}

}  // namespace attnlab
