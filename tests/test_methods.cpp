// The method registry: its entries are consistent, and every list of methods in the program (the
// Method dock, the Timing and Error analysis pages, the command line's --method and --methods,
// the session readers) offers exactly the registry's methods.

#include "app_process.h"
#include "attention/approximation.h"
#include "attention/feature_maps.h"
#include "attention/methods.h"
#include "errors.h"
#include "ui/errors/error_analysis_panel.h"
#include "experiment.h"
#include "ui/experiment/method_panel.h"
#include "sweeps/error_sweep.h"
#include "sweeps/timing_sweep.h"
#include "fitting/feature_map_file.h"
#include "fitted_maps_support.h"
#include "inputs/inputs.h"
#include "ui/timing/timing_panel.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDir>
#include <QJsonArray>
#include <QRegularExpression>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTest>

#include <algorithm>
#include <set>

using namespace attnlab;
using namespace attnlab::test;

namespace {

QStringList namesOf(const std::vector<MethodInfo>& methods)
{
    QStringList names;
    for (const MethodInfo& info : methods)
        names.append(info.name);
    return names;
}

// The names after "method-" style object names of the check boxes under `widget`, in order.
QStringList checkBoxNames(const QWidget& widget, const QString& prefix)
{
    QStringList names;
    for (const QCheckBox* box : widget.findChildren<QCheckBox*>())
        if (box->objectName().startsWith(prefix))
            names.append(box->objectName().mid(prefix.size()));
    return names;
}

// The methods a refusal lists: "(choose a, b, c or all ...)" gives {a, b, c}.
QStringList choicesIn(const QByteArray& message)
{
    const QRegularExpression choose(QStringLiteral("choose (.*?)( or all|;|\\))"));
    const QRegularExpressionMatch match = choose.match(QString::fromUtf8(message));
    if (!match.hasMatch())
        return {};
    return match.captured(1).split(QStringLiteral(", "));
}

}  // namespace

class TestMethods : public QObject {
    Q_OBJECT

private slots:
    void initTestCase() { QStandardPaths::setTestModeEnabled(true); }
    void entriesAreConsistent();
    void docksOfferTheRegistry();
    void anExactMethodIsNoApproximation();
    void sessionReadersTakeTheRegistry();
    void commandLineOffersTheRegistry();
};

void TestMethods::entriesAreConsistent()
{
    // Names, titles, colours and markers tell methods apart, so each is used once.
    std::set<QString> names, titles;
    std::set<std::uint32_t> colors;
    std::set<MarkerShape> markers;
    for (const MethodInfo& info : methodRegistry()) {
        QVERIFY2(names.insert(info.name).second, qPrintable(info.name));
        QVERIFY2(titles.insert(info.title).second, qPrintable(info.title));
        QVERIFY2(colors.insert(info.color).second, qPrintable(info.name));
        QVERIFY2(markers.insert(info.marker).second, qPrintable(info.name));
        QVERIFY(!info.summary.isEmpty());
        QCOMPARE(&methodInfo(info.method), &info);
        Method parsed;
        QVERIFY(parseMethod(info.name, &parsed) && parsed == info.method);
        const bool exact = info.role == MethodRole::Exact;
        QCOMPARE(isApproximation(info.method), !exact);
        QCOMPARE(parseApproximation(info.name, &parsed), !exact);
        // Every method has a cost model; an approximation has its factories; only the feature
        // maps have features; a recurrent form needs a causal form, and has its factory.
        QVERIFY(info.flops && info.workingSetFloats);
        QCOMPARE(info.makeFloat == nullptr, exact);
        QCOMPARE(info.makeDouble == nullptr, exact);
        QCOMPARE(info.makeMapFloat == nullptr, !info.hasFeatures());
        QCOMPARE(info.makeMapDouble == nullptr, !info.hasFeatures());
        QVERIFY(!info.hasRecurrentForm || info.hasCausalForm);
        QCOMPARE(info.makeRecurrence != nullptr, info.hasRecurrentForm);
        QVERIFY(!info.drawsProjection || info.isRandom);
        // Its parameters are the registry's, and its size is one of them.
        for (const MethodParameter* parameter : info.parameters)
            QVERIFY(std::find(methodParameters().begin(), methodParameters().end(), parameter) !=
                    methodParameters().end());
        QVERIFY(!info.size || info.takes(*info.size));
        // A method that draws W takes m.
        QVERIFY(!info.drawsProjection || info.takes(featuresParameter()));
        if (exact)
            continue;
        for (const int d : {3, 8}) {
            ApproximationSpec spec;
            spec.kind = info.method;
            spec.features = 5;
            spec = withFittedMaps(spec, d);
            const auto approximation = makeApproximation<float>(spec, d, 7, 0.5);
            QCOMPARE(approximation->projection().rows(), info.drawsProjection ? 5 : 0);
            QCOMPARE(approximation->featureMap() != nullptr, info.hasFeatures());
            if (!info.hasFeatures())
                continue;
            // The cost model's C is the length of the map the factories make, in both
            // precisions.
            const auto mapFloat = makeFeatureMap<float>(spec, d, 0.5);
            const auto mapDouble = makeFeatureMap<double>(spec, d, 0.5);
            QCOMPARE(mapFloat->featureCount(), info.featureCount(d, 5));
            QCOMPARE(mapDouble->featureCount(), info.featureCount(d, 5));
            QCOMPARE(mapFloat->projection().rows(), info.drawsProjection ? 5 : 0);
        }
    }
    Method unknown;
    QVERIFY(!parseMethod(QStringLiteral("favor"), &unknown));
    QCOMPARE(namesOf(approximationMethods()).size() + 2, namesOf(methodRegistry()).size());
    // Parameters are told apart by their options and fields.
    std::set<QString> options, fields;
    for (const MethodParameter* parameter : methodParameters()) {
        QVERIFY2(options.insert(parameter->option).second, qPrintable(parameter->option));
        QVERIFY2(fields.insert(parameter->field).second, qPrintable(parameter->field));
        QVERIFY(parameter->defaultValue >= parameter->minimum &&
                parameter->defaultValue <= parameter->maximum);
    }
}

void TestMethods::docksOfferTheRegistry()
{
    ui::MethodPanel methodPanel;
    const auto* map = methodPanel.findChild<QComboBox*>(QStringLiteral("approximation"));
    QVERIFY(map);
    // The registry's methods, then a separator and the second checkpoint of a model (data -1).
    QStringList offered;
    for (int i = 0; i < map->count() - 2; ++i)
        offered.append(methodInfo(Method(map->itemData(i).toInt())).name);
    QCOMPARE(offered, namesOf(approximationMethods()));
    QVERIFY(!map->itemData(map->count() - 2).isValid());
    QCOMPARE(map->itemData(map->count() - 1).toInt(), -1);
    QCOMPARE(map->itemText(map->count() - 1), QStringLiteral("Second checkpoint of the model"));

    // A control for every parameter besides m, named after its field, enabled exactly for the
    // methods that take it.
    for (const MethodInfo& info : approximationMethods()) {
        ExperimentSpec spec;
        spec.approximation.kind = info.method;
        methodPanel.setSpec(spec);
        for (const MethodParameter* parameter : methodParameters()) {
            if (parameter == &featuresParameter())
                continue;
            QString name = parameter->field;
            for (qsizetype i = name.indexOf(QLatin1Char('_')); i >= 0;
                 i = name.indexOf(QLatin1Char('_')))
                name = name.left(i) + name.mid(i + 1, 1).toUpper() + name.mid(i + 2);
            const auto* control = methodPanel.findChild<QWidget*>(name);
            QVERIFY2(control, qPrintable(name));
            QCOMPARE(control->isEnabled(), info.takes(*parameter));
        }
    }

    ui::TimingPanel timingPanel;
    QCOMPARE(checkBoxNames(timingPanel, QStringLiteral("method-")), namesOf(methodRegistry()));

    ui::ErrorAnalysisPanel errorPanel;
    QCOMPARE(checkBoxNames(errorPanel, QStringLiteral("errorsMethod-")),
             namesOf(approximationMethods()));

    // Every coupling of W's rows too: the Method dock's projection list and the Error analysis
    // page's projection check boxes ("errorsOrthogonal", ...).
    const auto* projection = methodPanel.findChild<QComboBox*>(QStringLiteral("projection"));
    QVERIFY(projection);
    QStringList projections, offeredProjections;
    for (const ProjectionKind kind : projectionKinds()) {
        const QString name = projectionKindName(kind);
        projections.append(name);
        QVERIFY2(errorPanel.findChild<QCheckBox*>(QStringLiteral("errors") +
                                                  name.front().toUpper() + name.mid(1)),
                 qPrintable(name));
    }
    for (int i = 0; i < projection->count(); ++i)
        offeredProjections.append(
            projectionKindName(ProjectionKind(projection->itemData(i).toInt())));
    QCOMPARE(offeredProjections, projections);
}

// The Method dock's separator is no method: chosen (as only a program can), the dock edits
// nothing and shows the method again. Its empty data once reached the engine as Method 0, exact
// attention, whose factory compute() called though it has none (a crash): compute() refuses an
// exact method as the approximation, naming it.
void TestMethods::anExactMethodIsNoApproximation()
{
    ui::MethodPanel methodPanel;
    auto* map = methodPanel.findChild<QComboBox*>(QStringLiteral("approximation"));
    QVERIFY(map);
    ExperimentSpec spec;
    spec.approximation.kind = Method::FavorTrig;
    methodPanel.setSpec(spec);
    const int shown = map->currentIndex();
    QSignalSpy edited(&methodPanel, &ui::MethodPanel::edited);
    map->setCurrentIndex(map->count() - 2);
    QCOMPARE(edited.count(), 0);
    QCOMPARE(map->currentIndex(), shown);

    int refused = 0;
    for (const MethodInfo& info : methodRegistry()) {
        if (isApproximation(info.method))
            continue;
        ExperimentSpec exact;
        exact.input.kind = InputKind::Random;
        exact.input.length = 8;
        exact.input.headDim = 4;
        exact.exactMethod = false;
        exact.approximation.kind = info.method;
        try {
            compute(exact, buildInput(exact.input));
            QFAIL(qPrintable(info.name + QStringLiteral(" was taken as an approximation")));
        } catch (const InputError& e) {
            QVERIFY2(e.message().contains(info.name), qPrintable(e.message()));
            ++refused;
        }
    }
    QCOMPARE(refused, 2);
}

void TestMethods::sessionReadersTakeTheRegistry()
{
    // The experiment: every approximation and "exact"; a name outside the registry is refused.
    for (const QString& name : namesOf(approximationMethods()) + QStringList{"exact"}) {
        ExperimentSpec spec;
        QJsonObject json = spec.toJson();
        json[QStringLiteral("method")] = name;
        QCOMPARE(ExperimentSpec::fromJson(json).methodName(), name);
    }
    for (const QString& name : {QStringLiteral("exact-streaming"), QStringLiteral("favor")}) {
        QJsonObject json = ExperimentSpec().toJson();
        json[QStringLiteral("method")] = name;
        QVERIFY_THROWS_EXCEPTION(InputError, ExperimentSpec::fromJson(json));
    }

    // Every parameter of the registry round-trips through a session, at a value other than its
    // default.
    ExperimentSpec changed;
    for (const MethodParameter* parameter : methodParameters())
        changed.approximation.setValue(*parameter, parameter->defaultValue == parameter->maximum
                                                       ? parameter->minimum
                                                       : parameter->maximum);
    const ExperimentSpec read = ExperimentSpec::fromJson(changed.toJson());
    for (const MethodParameter* parameter : methodParameters())
        QCOMPARE(read.approximation.value(*parameter), changed.approximation.value(*parameter));

    // The timing sweep: every method of the registry.
    SweepSpec timing;
    for (const MethodInfo& info : methodRegistry())
        timing.methods.push_back({info.method, false});
    timing.lengths = {64};
    QVERIFY(SweepSpec::fromJson(timing.toJson()).methods == timing.methods);

    // The error sweep: every approximation, and no exact method.
    ErrorSweepSpec errors;
    for (const MethodInfo& info : approximationMethods())
        errors.methods.push_back(info.method);
    errors.values = {4};
    QVERIFY(ErrorSweepSpec::fromJson(errors.toJson()).methods == errors.methods);
    QJsonObject exact = errors.toJson();
    exact[QStringLiteral("methods")] = QJsonArray{QStringLiteral("exact-streaming")};
    QVERIFY_THROWS_EXCEPTION(InputError, ErrorSweepSpec::fromJson(exact));
}

void TestMethods::commandLineOffersTheRegistry()
{
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString out = dir.filePath(QStringLiteral("out"));

    // compute, render and steps name the approximations and "exact" when --method is unknown.
    AppRun run = runAttentionLab({"compute", "--method", "bogus", "--out", out}, {}, 60000);
    QVERIFY2(run.finished && run.exitCode != 0, qPrintable(run.describe()));
    QCOMPARE(choicesIn(run.err), QStringList{"exact"} + namesOf(approximationMethods()));

    // compute's help lists the same.
    run = runAttentionLab({"compute", "--help"}, {}, 60000);
    QVERIFY2(run.finished && run.exitCode == 0, qPrintable(run.describe()));
    const QRegularExpressionMatch help =
        QRegularExpression(QStringLiteral("--method <NAME> [^:]*one of: ([^.]*)\\."))
            .match(QString::fromUtf8(run.out).simplified());
    QVERIFY2(help.hasMatch(), run.out.constData());
    QCOMPARE(help.captured(1).split(QStringLiteral(", ")),
             QStringList{"exact"} + namesOf(approximationMethods()));

    // ... and every parameter of the registry's methods.
    for (const MethodParameter* parameter : methodParameters())
        QVERIFY2(run.out.contains(("--" + parameter->option).toUtf8()),
                 qPrintable(parameter->option));

    // bench measures every method; errors every approximation.
    run = runAttentionLab({"bench", "--methods", "bogus", "--out", out}, {}, 60000);
    QVERIFY2(run.finished && run.exitCode != 0, qPrintable(run.describe()));
    QCOMPARE(choicesIn(run.err), namesOf(methodRegistry()));
    run = runAttentionLab({"errors", "--methods", "bogus", "--out", out}, {}, 60000);
    QVERIFY2(run.finished && run.exitCode != 0, qPrintable(run.describe()));
    QCOMPARE(choicesIn(run.err), namesOf(approximationMethods()));

    // Every approximation runs through compute and writes P^ and O^; the features only where
    // the method has them, E and F only for Linformer.
    // The methods fitted to a model take the maps of --feature-map (for heads of d = 4).
    const QString maps = dir.filePath(QStringLiteral("maps.safetensors"));
    writeFeatureMaps(*randomFittedMaps(4, 1, 1), maps);
    for (const MethodInfo& info : approximationMethods()) {
        QStringList arguments{"compute", "--random", "8",       "--d",   "4", "--features",
                              "4",       "--method", info.name, "--out", out};
        if (info.needsFittedMaps)
            arguments << "--feature-map" << maps;
        run = runAttentionLab(arguments, {}, 60000);
        QVERIFY2(run.finished && run.exitCode == 0, qPrintable(run.describe()));
        const QDir written(out);
        QVERIFY(written.exists(QStringLiteral("attention_approx.npy")));
        QVERIFY(written.exists(QStringLiteral("output_approx.npy")));
        QCOMPARE(written.exists(QStringLiteral("features_q.npy")), info.hasFeatures());
        QCOMPARE(written.exists(QStringLiteral("features_k.npy")), info.hasFeatures());
        QCOMPARE(written.exists(QStringLiteral("kernel_approx.npy")), info.hasKernel);
        QCOMPARE(written.exists(QStringLiteral("projection_keys.npy")),
                 info.method == Method::Linformer);
        QCOMPARE(written.exists(QStringLiteral("projection_values.npy")),
                 info.method == Method::Linformer);
    }
}

QTEST_MAIN(TestMethods)
#include "test_methods.moc"
