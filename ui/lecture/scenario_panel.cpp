#include "ui/lecture/scenario_panel.h"

#include "ui/plotting/plot_style.h"

#include <QHBoxLayout>
#include <QLabel>
#include <QResizeEvent>
#include <QScrollArea>
#include <QScrollBar>
#include <QToolButton>
#include <QVBoxLayout>

#include <algorithm>

namespace attnlab::ui {

namespace {

// Point sizes of the panel's text: larger than the window's, readable from a few metres (and
// presentation mode scales them again).
constexpr double kTitlePoints = 15.0;
constexpr double kTextPoints = 12.5;

// The explanation in an area as tall as its text at its width where the window has the room, and
// that scrolls where it has not: a long explanation in presentation mode on a 720-line projector
// was cut off, its formula unseen.
class ExplanationArea final : public QScrollArea {
public:
    explicit ExplanationArea(QLabel* text)
    {
        setObjectName(QStringLiteral("scenarioExplanationArea"));
        setWidget(text);
        setWidgetResizable(true);
        setFrameShape(QFrame::NoFrame);
        setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
        viewport()->setAutoFillBackground(false);  // the panel's background
        text->setAutoFillBackground(false);
    }

    QSize sizeHint() const override
    {
        const int width = std::max(viewport()->width(), 200);
        return QSize(widget()->sizeHint().width(), widget()->heightForWidth(width));
    }

    // Two lines of the text: the rest scrolls.
    QSize minimumSizeHint() const override
    {
        return QSize(100, 2 * widget()->fontMetrics().lineSpacing());
    }

protected:
    void resizeEvent(QResizeEvent* event) override
    {
        QScrollArea::resizeEvent(event);
        if (event->size().width() != event->oldSize().width())
            updateGeometry();  // the text's height at the new width
    }
};

QToolButton* navigationButton(const QString& text, const QString& tip, const QString& name)
{
    auto* button = new QToolButton;
    button->setText(text);
    button->setToolTip(tip);
    button->setObjectName(name);
    button->setAutoRaise(true);
    button->setFont(sizedFont(button->font(), kTitlePoints, true));
    return button;
}

}  // namespace

ScenarioPanel::ScenarioPanel(QWidget* parent) : QFrame(parent)
{
    setObjectName(QStringLiteral("scenarioPanel"));
    setFrameShape(QFrame::StyledPanel);
    setAutoFillBackground(true);

    m_title = new QLabel;
    m_title->setObjectName(QStringLiteral("scenarioTitle"));
    m_title->setTextFormat(Qt::PlainText);
    m_title->setWordWrap(true);
    m_title->setFont(sizedFont(m_title->font(), kTitlePoints, true));
    m_explanation = new QLabel;
    m_explanation->setObjectName(QStringLiteral("scenarioExplanation"));
    m_explanation->setTextFormat(Qt::RichText);
    m_explanation->setWordWrap(true);
    m_explanation->setOpenExternalLinks(false);
    m_explanation->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_explanation->setFont(sizedFont(m_explanation->font(), kTextPoints));
    m_explanation->setAlignment(Qt::AlignLeft | Qt::AlignTop);

    m_previous = navigationButton(QStringLiteral("\u25C0"), tr("Previous scenario (Page Up)"),
                                  QStringLiteral("previousScenario"));
    m_next = navigationButton(QStringLiteral("\u25B6"), tr("Next scenario (Page Down)"),
                              QStringLiteral("nextScenario"));
    m_position = new QLabel;
    m_position->setObjectName(QStringLiteral("scenarioPosition"));
    m_position->setAlignment(Qt::AlignCenter);
    m_position->setFont(sizedFont(m_position->font(), kTextPoints, true));
    auto* close = navigationButton(QStringLiteral("\u2715"),
                                   tr("Hide the explanation (View > "
                                      "Scenario Explanation)"),
                                   QStringLiteral("closeScenarioPanel"));
    connect(m_previous, &QToolButton::clicked, this, &ScenarioPanel::previousRequested);
    connect(m_next, &QToolButton::clicked, this, &ScenarioPanel::nextRequested);
    connect(close, &QToolButton::clicked, this, &ScenarioPanel::closeRequested);

    auto* navigation = new QVBoxLayout;
    auto* arrows = new QHBoxLayout;
    arrows->addWidget(m_previous);
    arrows->addWidget(m_next);
    navigation->addLayout(arrows);
    navigation->addWidget(m_position);
    navigation->addStretch();

    auto* text = new QVBoxLayout;
    text->setSpacing(4);
    text->addWidget(m_title);
    m_explanationArea = new ExplanationArea(m_explanation);
    text->addWidget(m_explanationArea, 1);

    auto* layout = new QHBoxLayout(this);
    layout->setContentsMargins(10, 6, 6, 8);
    layout->addLayout(navigation);
    layout->addSpacing(8);
    layout->addLayout(text, 1);
    layout->addWidget(close, 0, Qt::AlignTop);
    setDeck(Deck(), -1);
}

void ScenarioPanel::setDeck(const Deck& deck, int index)
{
    m_deck = deck;
    const int count = int(m_deck.scenarios.size());
    m_index = count == 0 ? -1 : std::clamp(index, 0, count - 1);
    const Scenario* shown = scenario();
    m_title->setText(shown ? shown->title : QString());
    m_explanation->setText(shown ? shown->explanation : QString());
    m_explanationArea->setVisible(shown && !shown->explanation.isEmpty());
    m_explanationArea->updateGeometry();
    m_explanationArea->verticalScrollBar()->setValue(0);
    m_position->setText(shown ? QStringLiteral("%1 / %2").arg(m_index + 1).arg(count) : QString());
    m_previous->setEnabled(m_index > 0);
    m_next->setEnabled(m_index >= 0 && m_index + 1 < count);
}

const Scenario* ScenarioPanel::scenario() const
{
    return m_index >= 0 ? &m_deck.scenarios[std::size_t(m_index)] : nullptr;
}

QString ScenarioPanel::titleText() const
{
    return m_title->text();
}

QString ScenarioPanel::explanationText() const
{
    return m_explanation->text();
}

QString ScenarioPanel::positionText() const
{
    return m_position->text();
}

}  // namespace attnlab::ui
