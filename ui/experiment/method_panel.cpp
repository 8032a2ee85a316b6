#include "ui/experiment/method_panel.h"

#include "attention/fitted_feature_maps.h"
#include "inputs/model_input.h"
#include "ui/common/controls_column.h"
#include "ui/experiment/checkpoint_choice.h"
#include "ui/experiment/model_files.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFileInfo>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QStandardItemModel>
#include <QPushButton>
#include <QSlider>
#include <QSpinBox>
#include <QVBoxLayout>

#include <cmath>
#include <limits>
#include <optional>

namespace attnlab::ui {

namespace {

// The features slider moves m in quarter powers of two, 1 to 4096: m = round(2^(position / 4)).
constexpr int kFeatureSteps = 4;
constexpr int kFeatureSliderMax = 12 * kFeatureSteps;
// The norm slider moves the multiplier logarithmically from 0.1 to 10: 10^(position / 40).
constexpr int kNormSteps = 40;
// The method list's data for "Second checkpoint of the model" (the methods' are their Method).
constexpr int kCheckpointItem = -1;

int featuresFromSlider(int position)
{
    return int(std::lround(std::pow(2.0, double(position) / kFeatureSteps)));
}

int sliderFromFeatures(int m)
{
    return std::clamp(int(std::lround(std::log2(double(std::max(m, 1))) * kFeatureSteps)), 0,
                      kFeatureSliderMax);
}

double normFromSlider(int position)
{
    return std::pow(10.0, double(position) / kNormSteps);
}

int sliderFromNorm(double norm)
{
    return std::clamp(int(std::lround(std::log10(norm) * kNormSteps)), -kNormSteps, kNormSteps);
}

}  // namespace

MethodPanel::MethodPanel(QWidget* parent) : QWidget(parent)
{
    buildMethodControls();
    QPushButton* redraw = buildDrawControls();
    buildInputControls();
    // Every other parameter of the registry's methods: a control each, enabled for the methods
    // that take it.
    for (const MethodParameter* parameter : methodParameters())
        if (parameter != &featuresParameter())
            m_parameters.push_back({parameter, parameterControl(*parameter)});

    m_role = new QLabel;
    m_role->setWordWrap(true);
    m_role->setObjectName(QStringLiteral("methodRole"));
    m_checkpoint = new CheckpointChoice;
    m_checkpoint->setObjectName(QStringLiteral("checkpoint"));
    connect(m_checkpoint, &CheckpointChoice::chosen, this, [this](const QString& path) {
        edit(tr("Compare with %1").arg(modelDisplayName(path)), [path](ExperimentSpec& spec) {
            spec.exactMethod = false;
            spec.input.comparisonModelPath = path;
        });
    });
    m_fittedMaps = new QLabel;
    m_fittedMaps->setWordWrap(true);
    m_fittedMaps->setObjectName(QStringLiteral("fittedMaps"));
    auto* fit = new QPushButton(tr("Fit to This Model..."));
    fit->setObjectName(QStringLiteral("fitToModel"));
    fit->setToolTip(tr("Fit the query and key maps of each head to the model on show, so that "
                       "linear attention's rows match its softmax rows (Hedgehog)."));
    connect(fit, &QPushButton::clicked, this, &MethodPanel::fitRequested);
    m_fitted = new QWidget;
    auto* fitted = new QVBoxLayout(m_fitted);
    fitted->setContentsMargins(0, 0, 0, 0);
    fitted->addWidget(m_fittedMaps);
    fitted->addWidget(fit, 0, Qt::AlignLeft);

    // Object names: for tests and accessibility tools.
    m_map->setObjectName(QStringLiteral("approximation"));
    m_featuresSlider->setObjectName(QStringLiteral("featuresSlider"));
    m_features->setObjectName(QStringLiteral("features"));
    m_projection->setObjectName(QStringLiteral("projection"));
    m_rowNorm->setObjectName(QStringLiteral("rowNorm"));
    m_seed->setObjectName(QStringLiteral("seed"));
    m_scale->setObjectName(QStringLiteral("scale"));
    m_normSlider->setObjectName(QStringLiteral("normMultiplierSlider"));
    m_norm->setObjectName(QStringLiteral("normMultiplier"));
    m_causal->setObjectName(QStringLiteral("causal"));
    m_heads->setObjectName(QStringLiteral("heads"));
    m_precision->setObjectName(QStringLiteral("precision"));
    redraw->setObjectName(QStringLiteral("redraw"));

    auto* features = new QHBoxLayout;
    features->addWidget(m_featuresSlider, 1);
    features->addWidget(m_features);
    auto* seed = new QHBoxLayout;
    seed->addWidget(m_seed, 1);
    seed->addWidget(redraw);
    auto* norm = new QHBoxLayout;
    norm->addWidget(m_normSlider, 1);
    norm->addWidget(m_norm);

    auto* layout = m_form = new QFormLayout(this);
    // The method's name across the whole dock (the dock's title says "Method"): the longest,
    // "Trigonometric (random Fourier)", did not fit beside a label.
    layout->addRow(m_map);
    layout->addRow(m_role);
    // Under "Second checkpoint of the model", across the dock: the list and Open... beside a
    // label would widen the dock past a 1280-pixel window.
    layout->addRow(m_checkpoint);
    layout->addRow(m_fitted);
    layout->addRow(tr("Features m"), features);
    // The method's own parameters right under it, where a user choosing the method looks (a
    // parameter the method does not take is hidden).
    for (const auto& [parameter, control] : m_parameters) {
        if (parameter->kind == MethodParameter::Kind::Switch)
            layout->addRow(control);
        else
            layout->addRow(parameter->label, control);
    }
    layout->addRow(tr("Projection"), m_projection);
    layout->addRow(tr("Row norms"), m_rowNorm);
    layout->addRow(tr("Seed"), seed);
    layout->addRow(tr("Scale s"), m_scale);
    layout->addRow(tr("Norm multiplier"), norm);
    layout->addRow(m_causal);
    layout->addRow(tr("Heads"), m_heads);
    layout->addRow(tr("Precision"), m_precision);
    setSpec(ExperimentSpec());
}

void MethodPanel::buildMethodControls()
{
    m_map = new QComboBox;
    QString mapTip = tr("The approximation; with a feature map phi, approximate attention is "
                        "A^ = phi(Q) phi(K)^T, computed in linear time as phi(Q) (phi(K)^T V).");
    for (const MethodInfo& info : approximationMethods()) {
        m_map->addItem(info.title, int(info.method));
        m_map->setItemData(m_map->count() - 1,
                           QStringLiteral("%1 (%2)").arg(info.summary, methodRoleText(info.role)),
                           Qt::ToolTipRole);
        mapTip += QStringLiteral("\n%1 (%2): %3")
                      .arg(info.title, methodRoleText(info.role), info.summary);
    }
    // Beside the methods, the exact attention of another checkpoint of the same model.
    const QString checkpointTip =
        tr("The exact attention of a second checkpoint of the same model (a quantized .gguf "
           "file beside the F16 one or the Hugging Face folder, say) in the approximation's "
           "place: the error maps, the metrics and Inside the model show how far it strays from "
           "the first, as they show an approximation's error. For a language model's input.");
    m_map->insertSeparator(m_map->count());
    m_map->addItem(tr("Second checkpoint of the model"), kCheckpointItem);
    m_map->setItemData(m_map->count() - 1, checkpointTip, Qt::ToolTipRole);
    mapTip += QStringLiteral("\n") + checkpointTip;
    m_map->setToolTip(mapTip);
    connect(m_map, &QComboBox::currentIndexChanged, this, [this](int index) {
        if (!m_map->itemData(index).isValid()) {
            // The separator, which the list does not let a user pick: the method shown again.
            if (!m_updating)
                setSpec(m_spec);
            return;
        }
        if (m_map->itemData(index).toInt() == kCheckpointItem) {
            chooseCheckpoint();
            return;
        }
        edit(tr("Use %1").arg(m_map->itemText(index)), [this, index](ExperimentSpec& spec) {
            spec.exactMethod = false;
            spec.approximation.kind = Method(m_map->itemData(index).toInt());
            spec.input.comparisonModelPath.clear();
        });
    });

    const QString featuresTip =
        tr("m, the number of random projections w_1..w_m: phi has m features (2m for the "
           "hyperbolic and trigonometric maps). The estimator's error falls like 1/sqrt(m); "
           "its cost grows like L m d. For Nystrom, the landmarks; for Linformer, the length "
           "keys and values are projected to; for Scatterbrain, its low-rank features.");
    m_featuresSlider = new QSlider(Qt::Horizontal);
    m_featuresSlider->setRange(0, kFeatureSliderMax);
    m_featuresSlider->setToolTip(featuresTip);
    m_features = dockSpinBox(int(featuresParameter().minimum), int(featuresParameter().maximum),
                             featuresTip);
    connectSlider(
        m_featuresSlider, m_features, featuresFromSlider,
        [](int m) { return tr("Set m to %1").arg(m); },
        [](ExperimentSpec& spec, int m) { spec.approximation.features = m; });
}

void MethodPanel::chooseCheckpoint()
{
    if (m_updating)
        return;
    QString path = m_spec.input.comparisonModelPath;
    if (path.isEmpty()) {
        m_checkpoint->setModels(m_spec.input.modelPath, QString());
        path = m_checkpoint->candidates().value(0);
    }
    if (path.isEmpty())
        path = openLanguageModel(this, tr("Open a second checkpoint of the model"));
    if (path.isEmpty()) {
        setSpec(m_spec);  // the method shown again
        return;
    }
    edit(tr("Compare with %1").arg(modelDisplayName(path)), [path](ExperimentSpec& spec) {
        spec.exactMethod = false;
        spec.input.comparisonModelPath = path;
    });
}

QPushButton* MethodPanel::buildDrawControls()
{
    m_projection = new QComboBox;
    for (const ProjectionKind kind : projectionKinds())
        m_projection->addItem(projectionKindName(kind), int(kind));
    m_projection->setToolTip(
        tr("The rows of W: orthogonal blocks of d rows (the Q factor of the QR decomposition of "
           "a Gaussian matrix, sign-corrected), which lowers the variance; independent Gaussian "
           "rows; or simplex blocks (SimRFs: d directions along the vertices of a randomly "
           "rotated regular simplex, pairwise dot products -1/(d - 1), lower variance still)."));
    connect(m_projection, &QComboBox::currentIndexChanged, this, [this](int index) {
        const auto kind = ProjectionKind(m_projection->itemData(index).toInt());
        edit(tr("Use %1 rows").arg(m_projection->itemText(index)),
             [kind](ExperimentSpec& spec) { spec.approximation.projection = kind; });
    });
    m_rowNorm = new QComboBox;
    m_rowNorm->addItems({tr("chi"), tr("sqrt(d)")});
    m_rowNorm->setToolTip(tr("The lengths of the rows of W: chi (as long as a Gaussian "
                             "d-vector, so each row is marginally N(0, I)) or all sqrt(d) (the "
                             "regularised variant)."));
    connect(m_rowNorm, &QComboBox::currentIndexChanged, this, [this](int index) {
        edit(tr("Use %1 row norms").arg(m_rowNorm->itemText(index)),
             [index](ExperimentSpec& spec) { spec.approximation.rowNorm = RowNorm(index); });
    });

    m_seed = dockSpinBox(0, std::numeric_limits<int>::max(),
                         tr("The seed of W: the same seed gives the same W, bit for bit."));
    // Room for seven digits rather than the ten of the largest seed, so that the seed and the
    // Redraw button do not set the dock's width (a longer seed scrolls in its box).
    m_seed->setMinimumWidth(m_seed->minimumSizeHint().width() -
                            m_seed->fontMetrics().horizontalAdvance(QStringLiteral("000")));
    connect(m_seed, &QSpinBox::valueChanged, this, [this](int seed) {
        edit(tr("Set the seed to %1").arg(seed),
             [seed](ExperimentSpec& spec) { spec.approximation.seed = std::uint64_t(seed); });
    });
    auto* redraw = new QPushButton(tr("Redraw"));
    redraw->setToolTip(tr("Draw a new W (the next seed): see how much the approximation "
                          "depends on the random features."));
    connect(redraw, &QPushButton::clicked, m_seed, &QSpinBox::stepUp);
    return redraw;
}

void MethodPanel::buildInputControls()
{
    m_scale = dockDoubleSpinBox(0, 100, 4, 0.01,
                                tr("s, the scale (inverse temperature) in exp(s q\u00b7k); x\u2032 "
                                   "= \u221as x. Larger s makes attention sharper and the "
                                   "approximation harder."));
    m_scale->setSpecialValueText(tr("auto: 1/sqrt(d)"));
    connect(m_scale, &QDoubleSpinBox::valueChanged, this, [this](double s) {
        edit(s > 0 ? tr("Set the scale to %1").arg(s) : tr("Use the default scale"),
             [s](ExperimentSpec& spec) {
                 spec.scale = s > 0 ? std::optional<double>(s) : std::nullopt;
             });
    });

    const QString normTip = tr("Multiplies every query and key: |x'| grows, attention gets "
                               "sharper, and the error of random features grows like "
                               "exp(|x' + y'|^2) (trigonometric features explode first).");
    m_normSlider = new QSlider(Qt::Horizontal);
    m_normSlider->setRange(-kNormSteps, kNormSteps);
    m_normSlider->setToolTip(normTip);
    m_norm = dockDoubleSpinBox(0.01, 100, 3, 0.1, normTip);
    connectSlider(
        m_normSlider, m_norm, normFromSlider,
        [](double norm) { return tr("Set the norm multiplier to %1").arg(norm, 0, 'g', 3); },
        [](ExperimentSpec& spec, double norm) { spec.input.normMultiplier = norm; });

    m_causal = new QCheckBox(tr("Causal mask"));
    m_causal->setToolTip(tr("Query i sees only keys j <= i. Linear attention then runs as "
                            "prefix sums S_i = sum_{j<=i} phi(k_j) v_j^T, z_i = sum_{j<=i} "
                            "phi(k_j): an RNN."));
    connect(m_causal, &QCheckBox::toggled, this, [this](bool on) {
        edit(on ? tr("Turn the causal mask on") : tr("Turn the causal mask off"),
             [on](ExperimentSpec& spec) { spec.causal = on; });
    });
    m_heads = dockSpinBox(1, 64,
                          tr("H, the number of heads: each head has its own Wq, Wk, Wv (and W), "
                             "and token vectors have H d entries."));
    connect(m_heads, &QSpinBox::valueChanged, this, [this](int heads) {
        edit(tr("Use %1 heads").arg(heads),
             [heads](ExperimentSpec& spec) { spec.input.heads = heads; });
    });
    m_precision = new QComboBox;
    m_precision->addItems({tr("float"), tr("double")});
    m_precision->setToolTip(tr("The arithmetic of the engine: float (32-bit, as models run) or "
                               "double (64-bit)."));
    connect(m_precision, &QComboBox::currentIndexChanged, this, [this](int index) {
        edit(tr("Compute in %1").arg(m_precision->itemText(index)),
             [index](ExperimentSpec& spec) { spec.precision = Precision(index); });
    });
}

QWidget* MethodPanel::parameterControl(const MethodParameter& parameter)
{
    const auto set = [this, &parameter](double value) {
        edit(tr("Set %1 to %2").arg(parameter.label, parameter.format(value)),
             [&parameter, value](ExperimentSpec& spec) {
                 spec.approximation.setValue(parameter, value);
             });
    };
    QWidget* control = nullptr;
    switch (parameter.kind) {
        case MethodParameter::Kind::Switch: {
            auto* box = new QCheckBox(parameter.label);
            connect(box, &QCheckBox::toggled, this, [set](bool on) { set(on ? 1 : 0); });
            control = box;
            break;
        }
        case MethodParameter::Kind::Choice: {
            auto* choice = new QComboBox;
            choice->addItems(parameter.choices);
            connect(choice, &QComboBox::currentIndexChanged, this,
                    [set](int index) { set(index); });
            control = choice;
            break;
        }
        case MethodParameter::Kind::Integer: {
            QSpinBox* integer = dockSpinBox(
                int(parameter.minimum),
                int(std::min<double>(parameter.maximum, std::numeric_limits<int>::max())));
            connect(integer, &QSpinBox::valueChanged, this, [set](int value) { set(value); });
            control = integer;
            break;
        }
        case MethodParameter::Kind::Real: {
            QDoubleSpinBox* real =
                dockDoubleSpinBox(parameter.minimum, parameter.maximum, 5,
                                  parameter.maximum - parameter.minimum <= 1.5 ? 0.0005 : 0.01);
            connect(real, &QDoubleSpinBox::valueChanged, this, [set](double value) { set(value); });
            control = real;
            break;
        }
    }
    control->setToolTip(parameter.description);
    // The field in camel case: "relu_epsilon" -> "reluEpsilon".
    QString name;
    bool upper = false;
    for (const QChar c : parameter.field) {
        if (c == QLatin1Char('_')) {
            upper = true;
            continue;
        }
        name += upper ? c.toUpper() : c;
        upper = false;
    }
    control->setObjectName(name);
    return control;
}

template <typename Change>
void MethodPanel::edit(const QString& description, Change change, int mergeKey)
{
    if (m_updating)
        return;
    ExperimentSpec spec = m_spec;
    change(spec);
    setSpec(spec);  // the slider and the spin box of one value follow each other
    emit edited(spec, description, mergeKey);
}

template <typename Box, typename FromSlider, typename Describe, typename Apply>
void MethodPanel::connectSlider(QSlider* slider, Box* box, FromSlider fromSlider, Describe describe,
                                Apply apply)
{
    using Value = decltype(box->value());
    connect(slider, &QSlider::sliderPressed, this, [this] { ++m_dragSerial; });
    connect(slider, &QSlider::valueChanged, this, [=, this](int position) {
        const Value value = fromSlider(position);
        // One undo step a drag: the changes of one drag share its merge key.
        edit(
            describe(value), [&](ExperimentSpec& spec) { apply(spec, value); },
            slider->isSliderDown() ? m_dragSerial : -1);
    });
    connect(box, &Box::valueChanged, this, [=, this](Value value) {
        edit(describe(value), [&](ExperimentSpec& spec) { apply(spec, value); });
    });
}

void MethodPanel::setSpec(const ExperimentSpec& spec)
{
    m_spec = spec;
    m_updating = true;
    const ApproximationSpec& map = spec.approximation;
    const bool comparing = !spec.input.comparisonModelPath.isEmpty();
    m_map->setCurrentIndex(m_map->findData(comparing ? kCheckpointItem : int(map.kind)));
    // Whether the input is a language model's, which a second checkpoint can be compared with
    // (its config or header read once per model).
    const QString model = spec.input.kind == InputKind::Model ? spec.input.modelPath : QString();
    if (model != m_checkedModel) {
        m_checkedModel = model;
        m_readsText = !model.isEmpty() && isLanguageModel(model);
        m_modelHeads = model.isEmpty() ? 0 : modelShapeOf(model).heads;
    }
    if (comparing)
        m_checkpoint->setModels(spec.input.modelPath, spec.input.comparisonModelPath);
    if (featuresFromSlider(m_featuresSlider->value()) != map.features)
        m_featuresSlider->setValue(sliderFromFeatures(map.features));
    showValue(m_features, map.features);
    m_projection->setCurrentIndex(m_projection->findData(int(map.projection)));
    m_rowNorm->setCurrentIndex(int(map.rowNorm));
    showValue(m_seed, int(std::min<std::uint64_t>(map.seed, std::numeric_limits<int>::max())));
    showValue(m_scale, spec.scale.value_or(0));
    if (std::abs(normFromSlider(m_normSlider->value()) - spec.input.normMultiplier) >
        1e-9 * spec.input.normMultiplier)
        m_normSlider->setValue(sliderFromNorm(spec.input.normMultiplier));
    showValue(m_norm, spec.input.normMultiplier);
    m_causal->setChecked(spec.causal);
    // A model has its own heads, which the box shows; Q, K, V files theirs, known once read.
    const InputKind kind = spec.input.kind;
    std::optional<int> heads = spec.input.heads;
    if (kind == InputKind::Files || (kind == InputKind::Model && m_modelHeads <= 0))
        heads.reset();
    else if (kind == InputKind::Model)
        heads = m_modelHeads;
    showValueInForce(m_heads, kind != InputKind::Files && kind != InputKind::Model, heads);
    m_precision->setCurrentIndex(int(spec.precision));
    for (const auto& [parameter, control] : m_parameters) {
        const double value = map.value(*parameter);
        if (auto* box = qobject_cast<QCheckBox*>(control))
            box->setChecked(value != 0);
        else if (auto* choice = qobject_cast<QComboBox*>(control))
            choice->setCurrentIndex(int(value));
        else if (auto* integer = qobject_cast<QSpinBox*>(control))
            showValue(integer, int(value));
        else if (auto* real = qobject_cast<QDoubleSpinBox*>(control))
            showValue(real, value);
    }
    updateEnabled();
    m_updating = false;
}

void MethodPanel::updateEnabled()
{
    const MethodInfo& info = methodInfo(m_spec.approximation.kind);
    // A second checkpoint takes none of the method's parameters: it has its own row instead.
    const bool method = m_spec.input.comparisonModelPath.isEmpty();
    for (QWidget* w : std::initializer_list<QWidget*>{m_featuresSlider, m_features})
        w->setEnabled(method && info.takes(featuresParameter()));
    for (QWidget* w : std::initializer_list<QWidget*>{m_projection, m_rowNorm})
        w->setEnabled(method && info.drawsProjection);
    m_seed->setEnabled(method && info.isRandom);
    // A parameter the method does not take is hidden (and disabled), so the dock shows only
    // what changes the result.
    for (const auto& [parameter, control] : m_parameters) {
        control->setEnabled(method && info.takes(*parameter));
        m_form->setRowVisible(control, method && info.takes(*parameter));
    }
    m_form->setRowVisible(m_checkpoint, !method);
    QStringList traits{methodRoleText(info.role)};
    if (info.role == MethodRole::Replacement)
        traits.last() += tr(" (another kernel: its error is not an estimator's)");
    if (!info.hasFeatures())
        traits.append(tr("no features"));
    if (!info.hasCausalForm)
        traits.append(tr("no causal form"));
    else if (!info.hasRecurrentForm)
        traits.append(tr("no recurrent form"));
    if (!method)
        traits = QStringList{tr("exact attention of another checkpoint"),
                             tr("its error is the checkpoint's (its quantization's, say), not an "
                                "estimator's")};
    m_role->setText(traits.join(QStringLiteral(" \u00b7 ")));
    m_form->setRowVisible(m_fitted, info.needsFittedMaps);
    if (const FittedFeatureMaps* maps = m_spec.approximation.fittedMaps.get())
        m_fittedMaps->setText(
            tr("Maps: %1; %2")
                .arg(maps->description(), maps->file.isEmpty()
                                              ? tr("fitted in the window, kept in the session")
                                              : QFileInfo(maps->file).fileName()));
    else
        m_fittedMaps->setText(tr("No maps fitted yet: fit them to the model on show."));
    // Without a causal form a method cannot serve causal attention: its entry is greyed out
    // while the mask is on. A second checkpoint needs a language model's input.
    auto* items = qobject_cast<QStandardItemModel*>(m_map->model());
    for (int i = 0; i < m_map->count(); ++i) {
        const QVariant data = m_map->itemData(i);
        if (!data.isValid())
            continue;  // the separator
        if (data.toInt() == kCheckpointItem) {
            items->item(i)->setEnabled(m_readsText || !method);
            continue;
        }
        const MethodInfo& entry = methodInfo(Method(data.toInt()));
        items->item(i)->setEnabled(entry.hasCausalForm || !m_spec.causal);
    }
    // A model's attention is causal, as it was trained.
    m_causal->setEnabled(m_spec.input.kind != InputKind::Model);
}

}  // namespace attnlab::ui
