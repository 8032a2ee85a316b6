// The file formats Attention Lab reads and writes: .npy (against files written by real numpy and
// against deliberately malformed ones), CSV, and the all-or-nothing writing of output files.

#include "io/atomic_files.h"
#include "io/csv.h"
#include "errors.h"
#include "io/npy.h"
#include "test_support.h"

#include <QBuffer>
#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QSaveFile>
#include <QTemporaryDir>
#include <QTest>
#include <QtEndian>

#include <cmath>
#include <cstring>
#include <functional>
#include <limits>

using namespace attnlab;
using namespace attnlab::test;

namespace {

const QString kFixtures = QStringLiteral(ATTNLAB_TEST_DATA "/npy");

// The values f(0), ..., f(count - 1): element p of an array in C order.
std::vector<double> valuesOf(qint64 count, const std::function<double(qint64)>& f)
{
    std::vector<double> values(static_cast<size_t>(count));
    for (qint64 p = 0; p < count; ++p)
        values[size_t(p)] = f(p);
    return values;
}

qint64 countOf(const std::vector<qint64>& shape)
{
    qint64 count = 1;
    for (qint64 dim : shape)
        count *= dim;
    return count;
}

// "" when the two arrays hold the same bits, else where and how they first differ.
QString firstDifference(const std::vector<double>& actual, const std::vector<double>& expected)
{
    if (actual.size() != expected.size()) {
        return QStringLiteral("%1 values instead of %2").arg(actual.size()).arg(expected.size());
    }
    for (size_t p = 0; p < actual.size(); ++p) {
        if (std::memcmp(&actual[p], &expected[p], sizeof(double)) != 0) {
            return QStringLiteral("value %1 is %2 instead of %3")
                .arg(p)
                .arg(actual[p], 0, 'g', 17)
                .arg(expected[p], 0, 'g', 17);
        }
    }
    return {};
}

// Where the data of a serialised .npy starts: preamble (10 bytes in version 1, 12 in 2 and 3)
// plus the header length it records.
qint64 dataOffset(const QByteArray& npy)
{
    if (npy.at(6) == 1)
        return 10 + qFromLittleEndian<quint16>(npy.constData() + 8);
    return 12 + qFromLittleEndian<quint32>(npy.constData() + 8);
}

// A version-`major` .npy file with the given header dict and data bytes, padded as numpy does.
QByteArray npyBytes(const QByteArray& dict, const QByteArray& data, int major = 1)
{
    const qint64 preamble = major == 1 ? 10 : 12;
    const qint64 unpadded = preamble + dict.size() + 1;
    const qint64 length = (unpadded + 63) / 64 * 64 - preamble;
    QByteArray bytes("\x93NUMPY", 6);
    bytes.append(char(major)).append(char(0));
    char field[4];
    qToLittleEndian<quint32>(quint32(length), field);
    bytes.append(field, preamble - 8);
    bytes.append(dict).append(length - dict.size() - 1, ' ').append('\n');
    return bytes + data;
}

QByteArray f8Dict(const QByteArray& shape)
{
    return "{'descr': '<f8', 'fortran_order': False, 'shape': " + shape + ", }";
}

}  // namespace

class TestIo : public QObject {
    Q_OBJECT

private slots:
    void initTestCase();

    void roundTripIsBitExact_data();
    void roundTripIsBitExact();
    void float32WritingRoundsToNearest();
    void headerPutsDataAtMultipleOf64_data();
    void headerPutsDataAtMultipleOf64();
    void fortranDataIsWrittenColumnMajor();
    void longHeaderIsWrittenAsVersion2();
    void readsNumpyFiles_data();
    void readsNumpyFiles();
    void refusesMalformedFiles_data();
    void refusesMalformedFiles();
    void lyingHeaderIsRefusedWithoutAllocating();
    void nonFiniteValuesAreReadWhenAllowed();
    void arrayOverBudgetIsRefused();
    void failedSaveNpyLeavesNoFile();

    void csvHasHeaderAndQuotedLabels();
    void csvField_data();
    void csvField();
    void csvValuesRoundTrip_data();
    void csvValuesRoundTrip();
    void csvWritesNonFiniteValues();
    void saveCsvCreatesDirectory();

    void atomicSetCommitsAllFiles();
    void atomicSetWithoutCommitLeavesNothing();
    void atomicSetOpenFailureCommitsNothing();
    void atomicSetCommitFailureCommitsNothing();

private:
    // Writes `bytes` to a file `name` in the temporary folder and returns its path.
    QString writeTemp(const QString& name, const QByteArray& bytes);

    QTemporaryDir m_dir;
};

void TestIo::initTestCase()
{
    QVERIFY(m_dir.isValid());
    QVERIFY2(QFile::exists(kFixtures + "/f8_c_2d.npy"), qPrintable(kFixtures));
}

QString TestIo::writeTemp(const QString& name, const QByteArray& bytes)
{
    const QString path = m_dir.filePath(name);
    writeBytes(path, bytes);
    return path;
}

// Property: saveNpy then readNpy gives back the shape, the dtype and every value bit for bit, for
// each dtype x order x rank. The values differ along every axis, so a transposition shows.
void TestIo::roundTripIsBitExact_data()
{
    QTest::addColumn<NpyDtype>("dtype");
    QTest::addColumn<bool>("fortranOrder");
    QTest::addColumn<std::vector<qint64>>("shape");
    const std::vector<std::vector<qint64>> shapes = {{7}, {3, 5}, {2, 3, 4}};
    for (NpyDtype dtype : {NpyDtype::Float32, NpyDtype::Float64}) {
        for (bool fortranOrder : {false, true}) {
            for (const std::vector<qint64>& shape : shapes) {
                QTest::addRow("%s %s rank %d", dtype == NpyDtype::Float32 ? "f4" : "f8",
                              fortranOrder ? "Fortran" : "C", int(shape.size()))
                    << dtype << fortranOrder << shape;
            }
        }
    }
}

void TestIo::roundTripIsBitExact()
{
    QFETCH(NpyDtype, dtype);
    QFETCH(bool, fortranOrder);
    QFETCH(std::vector<qint64>, shape);
    // Index (i, j, k), padded with zeros on the right for lower ranks.
    std::vector<double> values;
    for (qint64 i = 0; i < shape[0]; ++i) {
        for (qint64 j = 0; j < (shape.size() > 1 ? shape[1] : 1); ++j) {
            for (qint64 k = 0; k < (shape.size() > 2 ? shape[2] : 1); ++k) {
                const double index = double(i * 100 + j * 10 + k);
                // float32: exactly representable; float64: not representable as a float.
                values.push_back(dtype == NpyDtype::Float32 ? index + 0.25 : (index + 1) / 3.0);
            }
        }
    }
    const QString path = m_dir.filePath(QStringLiteral("round_trip.npy"));
    saveNpy(path, values.data(), shape, dtype, fortranOrder);
    const QByteArray bytes = readBytes(path);
    QCOMPARE(dataOffset(bytes) % 64, 0);
    QVERIFY(bytes.contains(fortranOrder ? "'fortran_order': True" : "'fortran_order': False"));

    const NpyArray array = readNpy(path);
    QCOMPARE(array.shape, shape);
    QCOMPARE(array.dtype, dtype);
    QCOMPARE(array.elementCount(), qint64(values.size()));
    const QString difference = firstDifference(array.values, values);
    QVERIFY2(difference.isEmpty(), qPrintable(difference));
}

// Property: values that are not floats are written to '<f4' as the nearest float.
void TestIo::float32WritingRoundsToNearest()
{
    const std::vector<double> values = {1.0 / 3.0, 0.1, -1e-7, 123456.789};
    const QString path = m_dir.filePath(QStringLiteral("rounded.npy"));
    saveNpy(path, values.data(), {4}, NpyDtype::Float32);
    const NpyArray array = readNpy(path);
    const QString difference = firstDifference(
        array.values, valuesOf(4, [&](qint64 p) { return double(float(values[size_t(p)])); }));
    QVERIFY2(difference.isEmpty(), qPrintable(difference));
}

// Property: whatever the header length, version 1.0 is written and the data starts at a
// multiple of 64 bytes, right after a header that ends in '\n'.
void TestIo::headerPutsDataAtMultipleOf64_data()
{
    QTest::addColumn<std::vector<qint64>>("shape");
    QTest::addRow("(1,)") << std::vector<qint64>{1};
    QTest::addRow("(12, 345)") << std::vector<qint64>{12, 345};
    QTest::addRow("(1, 1, 123456)") << std::vector<qint64>{1, 1, 123456};
    QTest::addRow("(1, 1, 1, 1, 1, 1, 1, 1, 1, 1)") << std::vector<qint64>(10, 1);
}

void TestIo::headerPutsDataAtMultipleOf64()
{
    QFETCH(std::vector<qint64>, shape);
    const std::vector<double> values(size_t(countOf(shape)), 1.5);
    QBuffer buffer;
    buffer.open(QIODevice::WriteOnly);
    writeNpy(buffer, values.data(), shape, NpyDtype::Float64);
    const QByteArray bytes = buffer.data();
    QCOMPARE(bytes.left(8), QByteArray("\x93NUMPY\x01\x00", 8));
    const qint64 offset = dataOffset(bytes);
    QCOMPARE(offset % 64, 0);
    QCOMPARE(bytes.at(offset - 1), '\n');
    QCOMPARE(bytes.size() - offset, qint64(values.size() * sizeof(double)));
}

// Property: in Fortran order the first index varies fastest in the file: element (i, j, k) of a
// 2 x 3 x 4 array is at file position i + 2 j + 6 k.
void TestIo::fortranDataIsWrittenColumnMajor()
{
    const std::vector<double> values = valuesOf(24, [](qint64 p) { return double(p); });
    QBuffer buffer;
    buffer.open(QIODevice::WriteOnly);
    writeNpy(buffer, values.data(), {2, 3, 4}, NpyDtype::Float64, true);
    const QByteArray bytes = buffer.data();
    const char* data = bytes.constData() + dataOffset(bytes);
    for (int i = 0; i < 2; ++i) {
        for (int j = 0; j < 3; ++j) {
            for (int k = 0; k < 4; ++k) {
                const double stored = qFromLittleEndian<double>(data + 8 * (i + 2 * j + 6 * k));
                QCOMPARE(stored, double(i * 12 + j * 4 + k));
            }
        }
    }
}

// Property: a header over 65535 bytes is written as version 2.0 (4-byte length field), still
// aligned to 64. Only a shape of very high rank needs that much, which writeNpy accepts although
// readNpy refuses it.
void TestIo::longHeaderIsWrittenAsVersion2()
{
    const std::vector<qint64> shape(22000, 1);
    const double value = 0.5;
    QBuffer buffer;
    buffer.open(QIODevice::WriteOnly);
    writeNpy(buffer, &value, shape, NpyDtype::Float64);
    const QByteArray bytes = buffer.data();
    QCOMPARE(bytes.left(8), QByteArray("\x93NUMPY\x02\x00", 8));
    const qint64 offset = dataOffset(bytes);
    QVERIFY(offset > 65535 + 12);
    QCOMPARE(offset % 64, 0);
    QCOMPARE(bytes.at(offset - 1), '\n');
    QCOMPARE(bytes.size(), offset + 8);
    QCOMPARE(qFromLittleEndian<double>(bytes.constData() + offset), value);
}

// Property: files written by numpy 1.24 (make_fixtures.py) are read with their shape, dtype and
// values, computed here from the formulas of make_fixtures.py; element p in C order is f(p).
void TestIo::readsNumpyFiles_data()
{
    QTest::addColumn<QString>("file");
    QTest::addColumn<std::vector<qint64>>("shape");
    QTest::addColumn<NpyDtype>("dtype");
    QTest::addColumn<std::vector<double>>("values");
    const auto f32 = [](double x) { return double(float(x)); };
    QTest::newRow("v1 f8 C rank 1") << "f8_c_1d.npy" << std::vector<qint64>{7} << NpyDtype::Float64
                                    << valuesOf(7, [](qint64 p) { return p * 0.5 - 1; });
    QTest::newRow("v1 f8 C rank 2")
        << "f8_c_2d.npy" << std::vector<qint64>{3, 4} << NpyDtype::Float64
        << valuesOf(12, [](qint64 p) { return p * 0.5; });
    QTest::newRow("v1 f4 C rank 3")
        << "f4_c_3d.npy" << std::vector<qint64>{2, 3, 4} << NpyDtype::Float32
        << valuesOf(24, [&](qint64 p) { return f32(p * 0.25 - 1); });
    QTest::newRow("v1 f8 Fortran rank 2")
        << "f8_fortran_2d.npy" << std::vector<qint64>{3, 5} << NpyDtype::Float64
        << valuesOf(15, [](qint64 p) { return double(p + 1) / 3.0; });
    QTest::newRow("v1 f4 Fortran rank 3")
        << "f4_fortran_3d.npy" << std::vector<qint64>{2, 3, 4} << NpyDtype::Float32
        << valuesOf(24, [&](qint64 p) { return f32(p * 0.5); });
    QTest::newRow("v2 f8 C rank 2")
        << "f8_c_2d_v2.npy" << std::vector<qint64>{2, 3} << NpyDtype::Float64
        << valuesOf(6, [](qint64 p) { return double(p + 1) / 7.0; });
    QTest::newRow("v3 f4 Fortran rank 2")
        << "f4_fortran_2d_v3.npy" << std::vector<qint64>{3, 2} << NpyDtype::Float32
        << valuesOf(6, [&](qint64 p) { return f32(p - 2.5); });
}

void TestIo::readsNumpyFiles()
{
    QFETCH(QString, file);
    QFETCH(std::vector<qint64>, shape);
    QFETCH(NpyDtype, dtype);
    QFETCH(std::vector<double>, values);
    const NpyArray array = readNpy(kFixtures + "/" + file);
    QCOMPARE(array.shape, shape);
    QCOMPARE(array.dtype, dtype);
    const QString difference = firstDifference(array.values, values);
    QVERIFY2(difference.isEmpty(), qPrintable(difference));
}

// Property: a malformed or unsupported file is refused with InputError whose message starts with
// the file's path and says what is wrong.
void TestIo::refusesMalformedFiles_data()
{
    QTest::addColumn<QString>("path");
    QTest::addColumn<QString>("problem");
    const QByteArray valid = readBytes(kFixtures + "/f8_c_2d.npy");
    const QByteArray twelve(12 * 8, '\0');
    // A row of a file `name` of `header` and twelve float64 zeros, and a part of the message.
    const auto headerRow = [&](const char* row, const char* name, const QByteArray& header,
                               const char* problem) {
        QTest::newRow(row) << writeTemp(name, npyBytes(header, twelve)) << problem;
    };
    // A row of the file `name` of tests/data/npy, and a part of the message.
    const auto fixtureRow = [](const char* row, const char* name, const char* problem) {
        QTest::newRow(row) << kFixtures + "/" + name << problem;
    };

    QTest::newRow("nonexistent file") << m_dir.filePath("missing.npy") << "no such file";
    QTest::newRow("directory") << m_dir.path() << "is a directory";
    QTest::newRow("empty file") << writeTemp("empty.npy", {}) << "the file is empty";
    QTest::newRow("bad magic") << writeTemp("magic.npy", "PK\x03\x04" + valid.mid(4))
                               << "not a .npy file";
    QTest::newRow("unsupported version")
        << writeTemp("version.npy", valid.left(6) + "\x04" + valid.mid(7))
        << "unsupported .npy format version 4.0";
    QTest::newRow("truncated preamble")
        << writeTemp("preamble.npy", valid.left(9)) << "truncated header";
    QTest::newRow("truncated header")
        << writeTemp("header.npy", valid.left(50)) << "truncated header";
    QTest::newRow("truncated data")
        << writeTemp("data.npy", valid.left(valid.size() - 8))
        << "truncated: header says shape (3, 4) of float64 = 96 bytes, file holds 88";
    headerRow("shape larger than data", "larger.npy", f8Dict("(4, 4)"),
              "truncated: header says shape (4, 4) of float64 = 128 bytes, file holds 96");
    QTest::newRow("trailing data")
        << writeTemp("trailing.npy", valid + QByteArray(16, '\0'))
        << "the header says shape (3, 4) of float64 = 96 bytes but the file holds 16 more bytes";
    headerRow("not a dict", "list.npy", "['<f8', False, (3, 4)]", "the .npy header is not a dict");
    headerRow("not a literal", "syntax.npy", "{'descr': '<f8', 'shape': (3, 4}",
              "the .npy header is not a valid Python dict");
    headerRow("missing shape", "noshape.npy", "{'descr': '<f8', 'fortran_order': False, }",
              "the .npy header has no 'shape' key");
    headerRow("shape not a tuple", "shapeint.npy", f8Dict("(12)"),
              "'shape' is not a tuple of integers");
    headerRow("negative dimension", "negative.npy", f8Dict("(-3, 4)"),
              "the .npy header's shape has a dimension that is negative");
    headerRow("dimension over 64 bits", "digits.npy", f8Dict("(99999999999999999999, 4)"),
              "has a dimension that is too large for 64 bits");
    headerRow("byte size overflows", "overflow.npy", f8Dict("(4000000000, 4000000000)"),
              "its byte size does not fit in 64 bits");
    fixtureRow("dtype <i4", "int32.npy",
               "dtype '<i4' (int32) is not supported: Attention Lab reads "
               "float32 ('<f4') and float64 ('<f8')");
    fixtureRow("dtype <f2", "float16.npy", "dtype '<f2' (float16) is not supported");
    fixtureRow("object array", "object.npy", "dtype '|O' (object) is an object array");
    fixtureRow("big-endian >f8", "big_endian_f8.npy", "dtype '>f8' (float64) is big-endian");
    headerRow("native byte order =f8", "native.npy",
              "{'descr': '=f8', 'fortran_order': False, "
              "'shape': (3, 4), }",
              "dtype '=f8' (float64) does not say little-endian");
    fixtureRow("rank 4", "rank4.npy", "4-D arrays are not supported");
    fixtureRow("rank 0", "rank0.npy", "0-D arrays (scalars) are not supported");
    fixtureRow("zero-sized dimension", "zero_dim.npy", "shape (3, 0) has a zero-sized dimension");
    fixtureRow("NaN", "nan.npy", "element [2, 5] is NaN");
    fixtureRow("+Inf", "posinf.npy", "element [1, 2] is +Inf");
}

void TestIo::refusesMalformedFiles()
{
    QFETCH(QString, path);
    QFETCH(QString, problem);
    const QString message = thrownMessage<InputError>([&] { readNpy(path); });
    QVERIFY2(blames(message, path + ": ", problem), qPrintable(message));
}

// Property: a tiny file whose header claims 30000 x 30000 x 30000 float64 (216 TB) is refused as
// inconsistent with the file size, promptly, before anything that size is allocated.
void TestIo::lyingHeaderIsRefusedWithoutAllocating()
{
    const QString path =
        writeTemp("lying.npy", npyBytes(f8Dict("(30000, 30000, 30000)"), QByteArray(16, '\0')));
    NpyReadOptions options;
    options.budget = MemoryBudget(std::numeric_limits<qint64>::max());
    QElapsedTimer timer;
    timer.start();
    const QString message = thrownMessage<InputError>([&] { readNpy(path, options); });
    QVERIFY(timer.elapsed() < 1000);
    QVERIFY2(blames(message, path,
                    "truncated: header says shape (30000, 30000, 30000) of float64 = "
                    "216000000000000 bytes, file holds 16"),
             qPrintable(message));
}

// Property: without requireFinite, NaN and infinities are read as they are.
void TestIo::nonFiniteValuesAreReadWhenAllowed()
{
    NpyReadOptions options;
    options.requireFinite = false;
    const NpyArray nan = readNpy(kFixtures + "/nan.npy", options);
    QVERIFY(std::isnan(nan.values[2 * 6 + 5]));
    const NpyArray inf = readNpy(kFixtures + "/posinf.npy", options);
    QCOMPARE(inf.values[1 * 6 + 2], std::numeric_limits<double>::infinity());
}

// Property: a valid file whose decoded values (8 bytes each) exceed the memory budget is refused
// with ResourceError naming the file and the way around it.
void TestIo::arrayOverBudgetIsRefused()
{
    const QString path = kFixtures + "/f8_c_2d.npy";
    NpyReadOptions options;
    options.budget = MemoryBudget(64);  // the 3 x 4 array needs 96 bytes
    const QString message = thrownMessage<ResourceError>([&] { readNpy(path, options); });
    QVERIFY2(blames(message, path, "96 bytes") && message.contains("Raise the memory budget"),
             qPrintable(message));
    options.budget = MemoryBudget(96);
    QCOMPARE(readNpy(path, options).elementCount(), 12);
}

// Property: saveNpy onto a path it cannot write throws OutputError naming the path and leaves no
// file, temporary or final, behind.
void TestIo::failedSaveNpyLeavesNoFile()
{
    QDir dir(m_dir.filePath("save_npy"));
    QVERIFY(dir.mkpath("target.npy"));  // a directory where the file should go
    const double value = 1.0;
    const QString path = dir.filePath("target.npy");
    const QString message =
        thrownMessage<OutputError>([&] { saveNpy(path, &value, {1}, NpyDtype::Float64); });
    QVERIFY2(message.contains(path), qPrintable(message));
    QCOMPARE(dir.entryList(QDir::AllEntries | QDir::NoDotAndDotDot | QDir::Hidden),
             QStringList{"target.npy"});
}

// Property: the header line has an empty corner field then the column names, each row starts with
// its label, and fields with a comma or a quote are quoted per RFC 4180.
void TestIo::csvHasHeaderAndQuotedLabels()
{
    MatrixD matrix(2, 3);
    matrix << 0.5, 1, -2.25, 0.001, 3, 4;
    CsvOptions options;
    options.columnNames = QStringList{"a", "b,c", "d"};
    options.rowLabels = QStringList{"first", "say \"hi\", then"};
    QBuffer buffer;
    buffer.open(QIODevice::WriteOnly);
    writeCsv(buffer, matrix, options);
    QCOMPARE(QString::fromUtf8(buffer.data()),
             QStringLiteral(",a,\"b,c\",d\n"
                            "first,0.5,1,-2.25\n"
                            "\"say \"\"hi\"\", then\",0.001,3,4\n"));
}

// Property: csvField quotes exactly the fields RFC 4180 requires and doubles quotes inside.
void TestIo::csvField_data()
{
    QTest::addColumn<QString>("text");
    QTest::addColumn<QString>("field");
    QTest::newRow("plain") << "token"
                           << "token";
    QTest::newRow("empty") << ""
                           << "";
    QTest::newRow("spaces") << "two words"
                            << "two words";
    QTest::newRow("comma") << "a,b"
                           << "\"a,b\"";
    QTest::newRow("quote") << "say \"hi\""
                           << "\"say \"\"hi\"\"\"";
    QTest::newRow("newline") << "line\nbreak"
                             << "\"line\nbreak\"";
    QTest::newRow("carriage return") << "line\rbreak"
                                     << "\"line\rbreak\"";
}

void TestIo::csvField()
{
    QFETCH(QString, text);
    QFETCH(QString, field);
    QCOMPARE(attnlab::csvField(text), field);
}

// Property: a value is written with 9 significant digits for float precision (parsing it back
// gives the same float) and 17 for double (parsing it back gives the same double).
void TestIo::csvValuesRoundTrip_data()
{
    QTest::addColumn<double>("value");
    QTest::addColumn<bool>("floatPrecision");
    QTest::addColumn<QString>("text");
    // The texts are Python's '%.9g' % float(np.float32(value)) and '%.17g' % value.
    const auto f32 = [](double x) { return double(float(x)); };
    QTest::newRow("float 1/3") << f32(1.0 / 3.0) << true << "0.333333343";
    QTest::newRow("float 0.1") << f32(0.1) << true << "0.100000001";
    QTest::newRow("float 2/3e-20") << f32(2.0 / 3.0 * 1e-20) << true << "6.66666659e-21";
    QTest::newRow("float pi") << f32(3.141592653589793) << true << "3.14159274";
    QTest::newRow("float -1e-7") << f32(-1e-7) << true << "-1.00000001e-07";
    QTest::newRow("double 1/3") << 1.0 / 3.0 << false << "0.33333333333333331";
    QTest::newRow("double 0.1") << 0.1 << false << "0.10000000000000001";
    QTest::newRow("double 2/3e-20") << 2.0 / 3.0 * 1e-20 << false << "6.6666666666666658e-21";
    QTest::newRow("double pi") << 3.141592653589793 << false << "3.1415926535897931";
    QTest::newRow("double -1e-7") << -1e-7 << false << "-9.9999999999999995e-08";
}

void TestIo::csvValuesRoundTrip()
{
    QFETCH(double, value);
    QFETCH(bool, floatPrecision);
    QFETCH(QString, text);
    MatrixD matrix(1, 1);
    matrix(0, 0) = value;
    CsvOptions options;
    options.floatPrecision = floatPrecision;
    QBuffer buffer;
    buffer.open(QIODevice::WriteOnly);
    writeCsv(buffer, matrix, options);
    const QString written = QString::fromUtf8(buffer.data()).trimmed();
    QCOMPARE(written, text);
    bool ok = false;
    const double parsed = written.toDouble(&ok);
    QVERIFY(ok);
    if (floatPrecision)
        QCOMPARE(float(parsed), float(value));
    else
        QCOMPARE(parsed, value);
}

// Property: NaN and infinities are written as nan, inf and -inf.
void TestIo::csvWritesNonFiniteValues()
{
    MatrixD matrix(1, 4);
    matrix << std::numeric_limits<double>::quiet_NaN(), -std::numeric_limits<double>::quiet_NaN(),
        std::numeric_limits<double>::infinity(), -std::numeric_limits<double>::infinity();
    QBuffer buffer;
    buffer.open(QIODevice::WriteOnly);
    writeCsv(buffer, matrix);
    QCOMPARE(buffer.data(), QByteArray("nan,nan,inf,-inf\n"));
}

// Property: saveCsv creates missing folders and writes what writeCsv writes.
void TestIo::saveCsvCreatesDirectory()
{
    MatrixD matrix(2, 2);
    matrix << 1, 2, 3, 4;
    const QString path = m_dir.filePath("csv/nested/matrix.csv");
    saveCsv(path, matrix);
    QCOMPARE(readBytes(path), QByteArray("1,2\n3,4\n"));
}

// Property: after commit every file of the set exists with its content; before commit none does.
void TestIo::atomicSetCommitsAllFiles()
{
    const QString directory = m_dir.filePath("commit/out");
    AtomicFileSet files(directory);
    files.open("a.txt").write("alpha");
    files.open("b.txt").write("beta");
    QVERIFY(!QFile::exists(directory + "/a.txt"));
    QVERIFY(!QFile::exists(directory + "/b.txt"));
    files.commit();
    QCOMPARE(readBytes(directory + "/a.txt"), QByteArray("alpha"));
    QCOMPARE(readBytes(directory + "/b.txt"), QByteArray("beta"));
    QCOMPARE(files.filePaths(), (QStringList{directory + "/a.txt", directory + "/b.txt"}));
}

// Property: a set destroyed without commit creates no file, leaves a pre-existing target as it
// was, and leaves no temporary file behind.
void TestIo::atomicSetWithoutCommitLeavesNothing()
{
    const QString directory = m_dir.filePath("no_commit");
    QVERIFY(QDir().mkpath(directory));
    writeTemp("no_commit/b.txt", "old");
    {
        AtomicFileSet files(directory);
        files.open("a.txt").write("alpha");
        files.open("b.txt").write("new");
    }
    QVERIFY(!QFile::exists(directory + "/a.txt"));
    QCOMPARE(readBytes(directory + "/b.txt"), QByteArray("old"));
    QCOMPARE(QDir(directory).entryList(QDir::AllEntries | QDir::NoDotAndDotDot | QDir::Hidden),
             QStringList{"b.txt"});
}

// Property: when a file of the set cannot be opened (its folder would have to be made inside a
// regular file; a directory is where the file should be), open throws OutputError naming it,
// commit then throws too, and no file of the set is created.
void TestIo::atomicSetOpenFailureCommitsNothing()
{
    const QString directory = m_dir.filePath("open_failure");
    QVERIFY(QDir().mkpath(directory + "/folder"));
    writeTemp("open_failure/blocker", "a regular file");
    for (const QString& name : {QStringLiteral("blocker/b.txt"), QStringLiteral("folder")}) {
        AtomicFileSet files(directory);
        files.open("a.txt").write("alpha");
        const QString opened = thrownMessage<OutputError>([&] { files.open(name); });
        QVERIFY2(opened.contains(name.section('/', 0, 0)), qPrintable(opened));
        const QString committed = thrownMessage<OutputError>([&] { files.commit(); });
        QCOMPARE(committed, opened);
        QCOMPARE(QDir(directory).entryList(QDir::AllEntries | QDir::NoDotAndDotDot | QDir::Hidden),
                 (QStringList{"blocker", "folder"}));
    }
}

// Property: when a file of the set can no longer replace its target at commit (a directory has
// appeared there), commit throws OutputError naming it and no file of the set is created, not even
// those before it.
void TestIo::atomicSetCommitFailureCommitsNothing()
{
    const QString directory = m_dir.filePath("commit_failure");
    AtomicFileSet files(directory);
    files.open("a.txt").write("alpha");
    files.open("b.txt").write("beta");
    QVERIFY(QDir().mkpath(directory + "/b.txt"));
    const QString message = thrownMessage<OutputError>([&] { files.commit(); });
    QVERIFY2(message.startsWith(directory + "/b.txt"), qPrintable(message));
    QVERIFY(!QFile::exists(directory + "/a.txt"));
    QCOMPARE(QDir(directory).entryList(QDir::AllEntries | QDir::NoDotAndDotDot | QDir::Hidden),
             QStringList{"b.txt"});
}

QTEST_GUILESS_MAIN(TestIo)
#include "test_io.moc"
