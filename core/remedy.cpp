#include "remedy.h"

namespace attnlab {

QString withPlaces(const QString& message, const QString& lead, QStringList places,
                   const QString& separator)
{
    places.removeAll(QString());
    if (places.isEmpty())
        return message;
    const QString period = message.endsWith(QLatin1Char('.')) ? QString() : QStringLiteral(".");
    return QStringLiteral("%1%2 %3 %4.").arg(message, period, lead, places.join(separator));
}

}  // namespace attnlab
