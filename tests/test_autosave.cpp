// The autosave that lets the window offer the session back after a crash: when it writes, what
// it writes, that it writes atomically, and that a clean exit leaves nothing to recover.

#include "ui/window/autosave.h"
#include "errors.h"
#include "sessions/session.h"
#include "test_support.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTest>

using namespace attnlab;
using attnlab::test::readBytes;
using attnlab::ui::Autosave;

namespace {

// A session that differs from the default one in its spec and its view.
Session sampleSession(const QString& text)
{
    Session session;
    session.spec.input.text = text;
    session.spec.causal = true;
    session.view[QStringLiteral("page")] = QStringLiteral("matrices");
    return session;
}

}  // namespace

class TestAutosave : public QObject {
    Q_OBJECT

private slots:
    void initTestCase();
    void init();
    void recoveryPathIsInTheAppDataFolder();
    void nothingIsWrittenUntilTheSessionChanges();
    void aChangeIsSavedWithinTheInterval();
    void theSavedSessionReadsBackAsItWas();
    void severalChangesGiveOneSave();
    void aCleanExitLeavesNothingToRecover();
    void aFailedSaveKeepsThePreviousAutosaveAndRetries();
    void writesAreAtomic();

private:
    QString m_text;
};

void TestAutosave::initTestCase()
{
    QStandardPaths::setTestModeEnabled(true);
    QCoreApplication::setApplicationName(QStringLiteral("attention-lab-autosave-test"));
}

// Each test starts without an autosave, with a writable data folder.
void TestAutosave::init()
{
    const QString folder = QFileInfo(Autosave::recoveryPath()).absolutePath();
    QFile::setPermissions(folder,
                          QFileDevice::ReadOwner | QFileDevice::WriteOwner | QFileDevice::ExeOwner);
    QFile::remove(Autosave::recoveryPath());
    QVERIFY(!Autosave::hasRecovery());
    m_text = QStringLiteral("first");
}

// Property: the autosave lives in the application's data folder (the test-mode one here, never
// the user's), as autosave.attnlab.
void TestAutosave::recoveryPathIsInTheAppDataFolder()
{
    const QString path = Autosave::recoveryPath();
    QCOMPARE(QFileInfo(path).fileName(), QStringLiteral("autosave.attnlab"));
    QCOMPARE(QFileInfo(path).absolutePath(),
             QStandardPaths::writableLocation(QStandardPaths::AppDataLocation));
    QVERIFY2(path.contains(QStringLiteral("qttest")), qPrintable(path));
}

// Property: an Autosave that was never told of a change writes nothing, even after its interval
// and an explicit saveNow().
void TestAutosave::nothingIsWrittenUntilTheSessionChanges()
{
    Autosave autosave([&] { return sampleSession(m_text); }, 20);
    QTest::qWait(80);
    QVERIFY(autosave.saveNow());
    QVERIFY(!Autosave::hasRecovery());
    QVERIFY(!autosave.isDirty());
}

// Property: after markDirty() the session is on disk within the interval, and the autosave is
// clean again.
void TestAutosave::aChangeIsSavedWithinTheInterval()
{
    Autosave autosave([&] { return sampleSession(m_text); }, 50);
    autosave.markDirty();
    QVERIFY(autosave.isDirty());
    QVERIFY(!Autosave::hasRecovery());
    QTRY_VERIFY_WITH_TIMEOUT(Autosave::hasRecovery(), 2000);
    QVERIFY(!autosave.isDirty());
    QCOMPARE(autosave.lastError(), QString());
}

// Property: what the autosave holds is the source's session at the time of the save, readable by
// readSession with the same spec and view (what the window reopens after a crash).
void TestAutosave::theSavedSessionReadsBackAsItWas()
{
    Autosave autosave([&] { return sampleSession(m_text); }, 60'000);
    autosave.markDirty();
    m_text = QStringLiteral("the text at the time of the save");
    QVERIFY(autosave.saveNow());
    const Session read = readSession(Autosave::recoveryPath());
    const Session expected = sampleSession(m_text);
    QCOMPARE(read.spec.toJson(), expected.spec.toJson());
    QCOMPARE(read.view, expected.view);
}

// Property: changes within one interval are written once: the source is asked once per save.
void TestAutosave::severalChangesGiveOneSave()
{
    int calls = 0;
    Autosave autosave(
        [&] {
            ++calls;
            return sampleSession(m_text);
        },
        100);
    for (int i = 0; i < 5; ++i) {
        autosave.markDirty();
        QTest::qWait(10);
    }
    QTRY_VERIFY_WITH_TIMEOUT(Autosave::hasRecovery(), 2000);
    QTest::qWait(250);
    QCOMPARE(calls, 1);
}

// Property: discard() (a clean exit) removes the autosave and cancels a pending save, so the next
// start finds nothing to recover.
void TestAutosave::aCleanExitLeavesNothingToRecover()
{
    Autosave autosave([&] { return sampleSession(m_text); }, 50);
    autosave.markDirty();
    QVERIFY(autosave.saveNow());
    QVERIFY(Autosave::hasRecovery());
    autosave.markDirty();
    autosave.discard();
    QVERIFY(!Autosave::hasRecovery());
    QTest::qWait(150);
    QVERIFY(!Autosave::hasRecovery());
}

// Property: a save that cannot be written (the data folder made read-only) returns false, emits
// saveFailed naming the file, keeps the previous autosave byte for byte and stays dirty; once the
// folder is writable again the next interval saves.
void TestAutosave::aFailedSaveKeepsThePreviousAutosaveAndRetries()
{
    Autosave autosave([&] { return sampleSession(m_text); }, 100);
    autosave.markDirty();
    QVERIFY(autosave.saveNow());
    const QByteArray previous = readBytes(Autosave::recoveryPath());

    const QString folder = QFileInfo(Autosave::recoveryPath()).absolutePath();
    QVERIFY(QFile::setPermissions(folder, QFileDevice::ReadOwner | QFileDevice::ExeOwner));
    QFile probe(QDir(folder).filePath(QStringLiteral("probe")));
    if (probe.open(QIODevice::WriteOnly)) {
        probe.remove();
        QSKIP("permissions do not stop this user from writing (root?)");
    }
    QSignalSpy failed(&autosave, &Autosave::saveFailed);
    m_text = QStringLiteral("second");
    autosave.markDirty();
    QVERIFY(!autosave.saveNow());
    QCOMPARE(failed.count(), 1);
    QVERIFY2(failed.first().first().toString().contains(Autosave::recoveryPath()),
             qPrintable(failed.first().first().toString()));
    QVERIFY(autosave.isDirty());
    QCOMPARE(readBytes(Autosave::recoveryPath()), previous);

    QVERIFY(QFile::setPermissions(
        folder, QFileDevice::ReadOwner | QFileDevice::WriteOwner | QFileDevice::ExeOwner));
    QTRY_VERIFY_WITH_TIMEOUT(!autosave.isDirty(), 2000);
    QCOMPARE(readSession(Autosave::recoveryPath()).spec.input.text, QStringLiteral("second"));
}

// Property: each save replaces the autosave as a whole (QSaveFile): it reads back complete, and no
// temporary file is left beside it.
void TestAutosave::writesAreAtomic()
{
    Autosave autosave([&] { return sampleSession(m_text); }, 60'000);
    for (int i = 0; i < 20; ++i) {
        m_text = QStringLiteral("version %1 ").arg(i).repeated(200);
        autosave.markDirty();
        QVERIFY(autosave.saveNow());
        QCOMPARE(readSession(Autosave::recoveryPath()).spec.input.text, m_text);
    }
    const QString folder = QFileInfo(Autosave::recoveryPath()).absolutePath();
    QCOMPARE(QDir(folder).entryList(QDir::Files | QDir::Hidden),
             QStringList{QStringLiteral("autosave.attnlab")});
}

QTEST_GUILESS_MAIN(TestAutosave)
#include "test_autosave.moc"
