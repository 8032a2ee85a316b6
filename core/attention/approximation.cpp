#include "attention/approximation.h"

#include "errors.h"
#include "remedy.h"

#include <type_traits>

namespace attnlab {

double ApproximationSpec::value(const MethodParameter& parameter) const
{
    if (&parameter == &featuresParameter())
        return features;
    const auto found = values.find(parameter.field);
    return found == values.end() ? parameter.defaultValue : found->second;
}

void ApproximationSpec::setValue(const MethodParameter& parameter, double value)
{
    if (&parameter == &featuresParameter())
        features = int(value);
    else
        values[parameter.field] = value;
}

QString ApproximationSpec::titleWithSize() const
{
    const MethodInfo& info = methodInfo(kind);
    if (!info.size)
        return info.title;
    return QStringLiteral("%1, %2 = %3")
        .arg(info.title, info.size->label.section(QLatin1Char(' '), -1),
             info.size->format(value(*info.size)));
}

template <typename T>
std::unique_ptr<Approximation<T>> makeApproximation(const ApproximationSpec& spec, int d,
                                                    Eigen::Index length, double scale,
                                                    HeadSite site)
{
    const MethodInfo& info = methodInfo(spec.kind);
    if constexpr (std::is_same_v<T, float>)
        return info.makeFloat(spec, d, length, scale, site);
    else
        return info.makeDouble(spec, d, length, scale, site);
}

double featuresUsed(const ApproximationSpec& spec, Eigen::Index length)
{
    const MethodInfo& info = methodInfo(spec.kind);
    return info.sizeUsed ? info.sizeUsed(spec.features, double(length)) : spec.features;
}

QString sizePastLengthNote(Method method, const std::vector<int>& sizes, Eigen::Index length)
{
    const MethodInfo& info = methodInfo(method);
    if (!info.sizeUsed)
        return {};
    QStringList past;
    for (const int m : sizes)
        if (info.sizeUsed(m, double(length)) < m && !past.contains(QString::number(m)))
            past.append(QString::number(m));
    if (past.isEmpty())
        return {};
    const QString listed = past.size() == 1
                               ? past.front()
                               : past.mid(0, past.size() - 1).join(QStringLiteral(", ")) +
                                     QStringLiteral(" and ") + past.back();
    return QStringLiteral("%1 takes at most L landmarks: m = %2 %3 as m = L = %4, with the same "
                          "result and cost.")
        .arg(info.title, listed, past.size() == 1 ? QStringLiteral("acts") : QStringLiteral("act"))
        .arg(qint64(length));
}

void requireCausalForm(Method method, bool causal, CausalBecause because)
{
    const MethodInfo& info = methodInfo(method);
    if (!causal || info.hasCausalForm)
        return;
    const QString why = QStringLiteral("%1 has no causal form: every row of its P^ depends on "
                                       "later positions too (its landmarks, projections or "
                                       "fitted parameters use the whole sequence).")
                            .arg(info.name);
    if (because == CausalBecause::LanguageModel)
        throw InputError(why + QStringLiteral(" A language model's attention is causal, as it "
                                              "was trained: choose a method with a causal form "
                                              "for it."));
    throw RemedyInputError(
        why + QStringLiteral(" Turn the causal mask off, or choose a method with one."),
        {Remedy::NoCausalMask});
}

std::vector<Method> skipMethodsWithoutCausalForm(const std::vector<Method>& methods, bool causal,
                                                 QStringList* skipped)
{
    std::vector<Method> kept;
    QStringList left;
    for (const Method method : methods) {
        if (!causal || methodInfo(method).hasCausalForm)
            kept.push_back(method);
        else
            left.append(methodInfo(method).name);
    }
    if (kept.empty())
        return methods;
    *skipped = left;
    return kept;
}

template std::unique_ptr<Approximation<float>> makeApproximation<float>(const ApproximationSpec&,
                                                                        int, Eigen::Index, double,
                                                                        HeadSite);
template std::unique_ptr<Approximation<double>> makeApproximation<double>(const ApproximationSpec&,
                                                                          int, Eigen::Index, double,
                                                                          HeadSite);

}  // namespace attnlab
