#include "ui/experiment/view_bar.h"

#include "ui/common/controls_column.h"
#include "ui/plotting/heatmap_view.h"

#include <QCheckBox>
#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QSpinBox>

namespace attnlab::ui {

namespace {

// The hold box's tooltip: what it does and, while it holds, the range held.
QString holdToolTip(const ViewSettings& settings)
{
    QString tip = ViewBar::tr("Hold the error map's colour scale as it is now while m, the method "
                              "or the input changes, so that a smaller error shows as fainter "
                              "colour; errors beyond it take the end colours. Choosing another "
                              "kind of error lets it go.");
    if (settings.errorScale <= 0)
        return tip;
    const QString a = QString::number(settings.errorScale, 'g', 3);
    return tip + QLatin1Char(' ') +
           (settings.errorKind == ErrorKind::Signed ? ViewBar::tr("Held at \u00b1%1.").arg(a)
                                                    : ViewBar::tr("Held at 0 to %1.").arg(a));
}

}  // namespace

ViewBar::ViewBar(const HeatmapView& errorMap, QWidget* parent)
    : QWidget(parent), m_errorMap(errorMap)
{
    m_head = new QSpinBox;
    m_head->setToolTip(tr("The head shown: each head has its own Wq, Wk, Wv and W."));
    m_head->setRange(0, 0);
    m_errorKind = new QComboBox;
    m_errorKind->addItems({tr("signed  P\u0302 \u2212 P"), tr("absolute  |P\u0302 \u2212 P|"),
                           tr("relative  |P\u0302 \u2212 P| / P")});
    m_errorKind->setToolTip(tr("The error map: signed (blue where the approximation is too "
                               "small, red where too large), absolute, or relative to the "
                               "exact weight."));
    // A short text: the bar fills the page at 1280 pixels (the held range is in the tooltip).
    m_holdErrorScale = new QCheckBox(tr("Hold"));
    m_holdErrorScale->setToolTip(holdToolTip(ViewSettings()));
    m_sharedScale = new QCheckBox(tr("Same scale for P, P\u0302"));
    m_sharedScale->setToolTip(tr("Draw exact and approximate attention with the same colour "
                                 "scale, so equal colours mean equal weights. When P\u0302 has "
                                 "negative weights, both maps turn diverging around 0 (negative "
                                 "blue, positive red)."));
    m_colorMap = new QComboBox;
    m_colorMap->addItems({tr("viridis"), tr("magma")});
    m_colorMap->setToolTip(tr("The colour map of P and P\u0302 (both perceptually uniform)."));
    m_distribution = new QCheckBox(tr("Histograms"));
    m_distribution->setToolTip(tr("Show the distribution of the errors instead of the error map: "
                                  "histograms of |P\u0302 \u2212 P| and of the relative error, "
                                  "split into small and large exact weights."));
    connect(m_head, &QSpinBox::valueChanged, this, &ViewBar::changed);
    connect(m_errorKind, &QComboBox::currentIndexChanged, this, &ViewBar::changed);
    connect(m_distribution, &QCheckBox::toggled, this, &ViewBar::changed);
    connect(m_holdErrorScale, &QCheckBox::toggled, this, &ViewBar::changed);
    connect(m_sharedScale, &QCheckBox::toggled, this, &ViewBar::changed);
    connect(m_colorMap, &QComboBox::currentIndexChanged, this, &ViewBar::changed);

    // The error kinds' long names show in the open list; closed, the box may be narrower.
    m_errorKind->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    m_errorKind->setMinimumContentsLength(10);
    auto* viewBar = new QHBoxLayout(this);
    viewBar->setContentsMargins(4, 2, 4, 2);  // as the image page's bar, inside the page
    viewBar->setSpacing(4);
    viewBar->addWidget(new QLabel(tr("Head")));
    viewBar->addWidget(m_head);
    viewBar->addSpacing(6);
    viewBar->addWidget(new QLabel(tr("Error")));
    viewBar->addWidget(m_errorKind);
    viewBar->addWidget(m_holdErrorScale);
    viewBar->addWidget(m_distribution);
    viewBar->addSpacing(6);
    viewBar->addWidget(m_sharedScale);
    viewBar->addSpacing(6);
    viewBar->addWidget(new QLabel(tr("Colours")));
    viewBar->addWidget(m_colorMap);
    viewBar->addStretch();
    // Object names: for tests and accessibility tools.
    m_head->setObjectName(QStringLiteral("viewHead"));
    m_errorKind->setObjectName(QStringLiteral("errorKind"));
    m_distribution->setObjectName(QStringLiteral("errorDistribution"));
    m_holdErrorScale->setObjectName(QStringLiteral("holdErrorScale"));
    m_sharedScale->setObjectName(QStringLiteral("sharedScale"));
    m_colorMap->setObjectName(QStringLiteral("colorMap"));
}

void ViewBar::setSettings(const ViewSettings& settings, int heads)
{
    const QSignalBlocker blockHead(m_head), blockError(m_errorKind),
        blockDistribution(m_distribution), blockHold(m_holdErrorScale), blockShared(m_sharedScale),
        blockColors(m_colorMap);
    showRange(m_head, 0, heads - 1);  // with every result: only what changed
    showValue(m_head, settings.head);
    m_head->setEnabled(heads > 1);
    m_errorKind->setCurrentIndex(int(settings.errorKind));
    m_distribution->setChecked(settings.errorDistribution);
    m_holdErrorScale->setChecked(settings.errorScale > 0);
    m_holdErrorScale->setToolTip(holdToolTip(settings));
    m_sharedScale->setChecked(settings.sharedScale);
    m_colorMap->setCurrentIndex(int(settings.colorMap));
}

ViewSettings ViewBar::applied(ViewSettings settings) const
{
    settings.head = m_head->value();
    // A scale held for one kind of error says nothing of another's (relative errors run past 1).
    const ErrorKind errorKind = ErrorKind(m_errorKind->currentIndex());
    if (!m_holdErrorScale->isChecked() || errorKind != settings.errorKind)
        settings.errorScale = 0;
    else if (settings.errorScale <= 0)
        settings.errorScale = m_errorMap.colorRange().upper;
    settings.errorKind = errorKind;
    settings.errorDistribution = m_distribution->isChecked();
    settings.sharedScale = m_sharedScale->isChecked();
    settings.colorMap = ColorMap(m_colorMap->currentIndex());
    return settings;
}

}  // namespace attnlab::ui
