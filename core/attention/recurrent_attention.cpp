#include "attention/recurrent_attention.h"

#include "errors.h"

namespace attnlab {

void requireRecurrentForm(Method method, const QString& prefix)
{
    const MethodInfo& info = methodInfo(method);
    if (info.hasRecurrentForm)
        return;
    std::vector<MethodInfo> recurrent;
    for (const MethodInfo& other : approximationMethods())
        if (other.hasRecurrentForm)
            recurrent.push_back(other);
    const QString why =
        info.role == MethodRole::Exact
            ? QStringLiteral("the method \"%1\" is exact attention, not an approximation")
            : QStringLiteral("the method \"%1\" has no recurrent form: it cannot run a token at "
                             "a time on a state of fixed size");
    throw InputError(prefix + why.arg(info.name) +
                     QStringLiteral("; choose one that has (%1)")
                         .arg(methodNames(recurrent, QStringLiteral(", "))));
}

std::unique_ptr<RecurrentAttention> makeRecurrentAttention(const ApproximationSpec& spec, int d,
                                                           double scale, HeadSite site)
{
    requireRecurrentForm(spec.kind);
    return methodInfo(spec.kind).makeRecurrence(spec, d, scale, site);
}

}  // namespace attnlab
