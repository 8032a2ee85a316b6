// The main window under random user actions, seeded: clicks on buttons and check boxes, values
// in number boxes (and text typed into their fields, bad text included), items of lists, tabs,
// menu actions, texts, keys and window sizes, with the dialogs and menus they open closed again.
// Whatever the order, the window must not crash, must answer again within a bound after every
// action (no freeze), and must never show "nan" or "inf" in a label or a table cell. Random
// actions found a crash that no written test had: the Method list's separator reached the engine
// as exact attention (test_methods anExactMethodIsNoApproximation). Each action is printed as it
// is taken, so a failing run's output (ctest shows it) says which actions led there; the same
// seed takes the same choices, though what is on screen at each step can differ with timing.

#include "ui/window/main_window.h"
#include "window_support.h"

#include <QAbstractButton>
#include <QAction>
#include <QApplication>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QElapsedTimer>
#include <QKeySequence>
#include <QLabel>
#include <QLineEdit>
#include <QMenu>
#include <QPlainTextEdit>
#include <QRegularExpression>
#include <QSpinBox>
#include <QStandardItemModel>
#include <QTabBar>
#include <QTableWidget>
#include <QTest>
#include <QTimer>

#include <random>

using namespace attnlab;
using namespace attnlab::ui;
using namespace attnlab::test;

namespace {

// An action that keeps the window from answering longer than this is a freeze. Generous: a
// model loads in a second, slower under the sanitizers beside other suites.
constexpr qint64 kLongestActionMs = 30'000;

// Texts typed into a number box's field or a value field: empty, bad and out-of-range ones.
const QStringList kTypedTexts = {QString(),
                                 QStringLiteral("0"),
                                 QStringLiteral("-1"),
                                 QStringLiteral("16,32,64"),
                                 QStringLiteral("abc"),
                                 QStringLiteral("1e300"),
                                 QStringLiteral("nan"),
                                 QStringLiteral("99999999999")};

// Input texts: empty, white space only, one letter, mixed scripts and an emoji, a long word.
const QStringList kInputTexts = {QString(), QStringLiteral(" \n\t"), QStringLiteral("a"),
                                 QStringLiteral("The cat sat. \u00e9\u4e2d\U0001F600 x"),
                                 QString(300, QLatin1Char('w'))};

// The window's widgets a user can act on now: visible and enabled buttons, number boxes, lists,
// tab bars, text fields and text areas.
QList<QWidget*> actionableWidgets(const MainWindow& window)
{
    QList<QWidget*> widgets;
    for (QWidget* widget : window.findChildren<QWidget*>()) {
        if (!widget->isVisible() || !widget->isEnabled())
            continue;
        if (qobject_cast<QAbstractButton*>(widget) || qobject_cast<QAbstractSpinBox*>(widget) ||
            qobject_cast<QComboBox*>(widget) || qobject_cast<QTabBar*>(widget) ||
            qobject_cast<QLineEdit*>(widget) || qobject_cast<QPlainTextEdit*>(widget))
            widgets.push_back(widget);
    }
    return widgets;
}

// The menu actions a user can trigger now, but quitting.
QList<QAction*> triggerableActions(const MainWindow& window)
{
    QList<QAction*> actions;
    for (QAction* action : window.findChildren<QAction*>())
        if (action->isEnabled() && !action->isSeparator() && !action->menu() &&
            !action->text().isEmpty() && !action->text().contains(QStringLiteral("Quit")))
            actions.push_back(action);
    return actions;
}

// Whether `text` shows a value as "nan" or "inf" ("nan", "-inf ms", "1.2, nan"): a text of a
// few words with such a word. Sentences are left out: a warning may say that kernel entries
// "are written as inf".
bool showsNonNumber(QString text)
{
    static const QRegularExpression tags(QStringLiteral("<[^>]*>"));
    static const QRegularExpression nonNumber(QStringLiteral("\\b(nan|inf)\\b"),
                                              QRegularExpression::CaseInsensitiveOption);
    text.remove(tags);
    return text.split(QLatin1Char(' '), Qt::SkipEmptyParts).size() <= 6 &&
           nonNumber.match(text).hasMatch();
}

// The first visible label or table cell of the window that shows a value as "nan" or "inf", or
// empty.
QString shownNonNumber(const MainWindow& window)
{
    for (const QLabel* label : window.findChildren<QLabel*>())
        if (label->isVisible() && showsNonNumber(label->text()))
            return label->objectName() + QStringLiteral(": ") + label->text();
    for (const QTableWidget* table : window.findChildren<QTableWidget*>())
        for (int row = 0; row < table->rowCount(); ++row)
            for (int column = 0; column < table->columnCount(); ++column)
                if (const QTableWidgetItem* item = table->item(row, column);
                    item && showsNonNumber(item->text()))
                    return table->objectName() + QStringLiteral(": ") + item->text();
    return {};
}

// Takes random actions on a window, seeded.
class RandomUser {
public:
    RandomUser(MainWindow& window, unsigned seed) : m_window(window), m_random(seed) {}

    // One action, described.
    QString act()
    {
        if (pick(8) == 0) {
            const QList<QAction*> actions = triggerableActions(m_window);
            if (!actions.isEmpty()) {
                QAction* action = actions[pick(int(actions.size()))];
                action->trigger();
                return QStringLiteral("menu action \"%1\"").arg(action->text());
            }
        }
        if (pick(15) == 0) {
            const QSize size(800 + pick(1121), 600 + pick(481));
            m_window.resize(size);
            return QStringLiteral("window resized to %1 x %2").arg(size.width()).arg(size.height());
        }
        const QList<QWidget*> widgets = actionableWidgets(m_window);
        if (widgets.isEmpty())
            return QStringLiteral("nothing to act on");
        QString done = actOn(widgets[pick(int(widgets.size()))]);
        if (pick(4) == 0) {
            const Qt::Key keys[] = {Qt::Key_Right,  Qt::Key_Left, Qt::Key_Space, Qt::Key_PageDown,
                                    Qt::Key_PageUp, Qt::Key_Home, Qt::Key_End,   Qt::Key_Escape};
            const Qt::Key key = keys[pick(8)];
            QWidget* focused = QApplication::focusWidget();
            QTest::keyClick(focused ? focused : &m_window, key);
            done += QStringLiteral(", then key %1").arg(QKeySequence(key).toString());
        }
        return done;
    }

    // A random whole number from 0 to n - 1.
    int pick(int n) { return std::uniform_int_distribution<int>(0, n - 1)(m_random); }

private:
    QString actOn(QWidget* widget)
    {
        const QString name = QString::fromLatin1(widget->metaObject()->className()) +
                             QLatin1Char(' ') + widget->objectName();
        if (auto* button = qobject_cast<QAbstractButton*>(widget)) {
            button->click();
            return QStringLiteral("%1 \"%2\" clicked").arg(name, button->text());
        }
        if (auto* box = qobject_cast<QSpinBox*>(widget)) {
            const int highest = int(std::min<qint64>(box->maximum(), qint64(box->minimum()) + 600));
            const int value = box->minimum() + pick(highest - box->minimum() + 1);
            box->setValue(value);
            return QStringLiteral("%1 set to %2").arg(name).arg(value);
        }
        if (auto* box = qobject_cast<QDoubleSpinBox*>(widget)) {
            const double highest = std::min(box->maximum(), box->minimum() + 10);
            const double value = box->minimum() + (highest - box->minimum()) * pick(1001) / 1000;
            box->setValue(value);
            return QStringLiteral("%1 set to %2").arg(name).arg(value);
        }
        if (auto* list = qobject_cast<QComboBox*>(widget)) {
            // Only what the list lets a user pick: not its separators.
            const int index = pick(std::max(list->count(), 1));
            const auto* model = qobject_cast<const QStandardItemModel*>(list->model());
            if (list->count() == 0 || (model && !model->item(index)->isEnabled()))
                return QStringLiteral("%1 left as it is").arg(name);
            list->setCurrentIndex(index);
            return QStringLiteral("%1 set to \"%2\"").arg(name, list->itemText(index));
        }
        if (auto* tabs = qobject_cast<QTabBar*>(widget)) {
            const int index = pick(tabs->count());
            tabs->setCurrentIndex(index);
            return QStringLiteral("%1 tab \"%2\"").arg(name, tabs->tabText(index));
        }
        if (auto* field = qobject_cast<QLineEdit*>(widget)) {
            const QString text = kTypedTexts[pick(int(kTypedTexts.size()))];
            field->setFocus();
            field->selectAll();
            QTest::keyClicks(field, text);
            QTest::keyClick(field, Qt::Key_Return);
            return QStringLiteral("%1 typed \"%2\"").arg(name, text);
        }
        auto* area = qobject_cast<QPlainTextEdit*>(widget);
        const QString text = kInputTexts[pick(int(kInputTexts.size()))];
        area->setPlainText(text);
        return QStringLiteral("%1 given %2 characters").arg(name).arg(text.size());
    }

    MainWindow& m_window;
    std::mt19937 m_random;
};

}  // namespace

class TestRandomActions : public QObject {
    Q_OBJECT

private slots:
    void initTestCase() { startAsFirstRun(); }
    void windowSurvivesRandomActions_data();
    void windowSurvivesRandomActions();
};

void TestRandomActions::windowSurvivesRandomActions_data()
{
    QTest::addColumn<unsigned>("seed");
    QTest::addColumn<int>("steps");
    for (const unsigned seed : {1u, 2u, 3u})
        QTest::addRow("seed %u", seed) << seed << 120;
}

void TestRandomActions::windowSurvivesRandomActions()
{
    QFETCH(unsigned, seed);
    QFETCH(int, steps);
    // A dialog or menu that an action opens is closed again, as a user would dismiss it (a file
    // dialog, a message box, About Qt, a button's menu).
    QTimer dismisser;
    connect(&dismisser, &QTimer::timeout, this, [] {
        if (QWidget* popup = QApplication::activePopupWidget())
            popup->close();
        if (QWidget* dialog = QApplication::activeModalWidget())
            dialog->close();
    });
    dismisser.start(50);

    MainWindow window(MainWindow::Start::DefaultExample);
    QVERIFY(showAndWait(window, QSize(1600, 1000)));
    RandomUser user(window, seed);
    for (int step = 0; step < steps; ++step) {
        QElapsedTimer answered;
        answered.start();
        const QString action = user.act();
        qInfo("%d: %s", step, qPrintable(action));
        QTest::qWait(user.pick(3) == 0 ? 300 : 20);
        QVERIFY2(answered.elapsed() < kLongestActionMs,
                 qPrintable(QStringLiteral("the window did not answer for %1 ms after: %2")
                                .arg(answered.elapsed())
                                .arg(action)));
        const QString shown = shownNonNumber(window);
        QVERIFY2(shown.isEmpty(),
                 qPrintable(QStringLiteral("after \"%1\" the window shows %2").arg(action, shown)));
    }
}

QTEST_MAIN(TestRandomActions)
#include "test_random_actions.moc"
