// libFuzzer target: readSession on arbitrary bytes. Any input is either a whole session, which
// writes back and reads again as the same spec (a session is never half-loaded), or refused with
// InputError naming the file; anything else (a crash, a leak, undefined behaviour, another
// exception) is a finding.

#include "errors.h"
#include "fuzz_input.h"
#include "sessions/session.h"

#include <cstdlib>

// Reads the bytes as a .attnlab file; a session that is read must survive sessionJson and
// ExperimentSpec::fromJson unchanged.
extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    using namespace attnlab;
    const QString path = fuzz::inputFile(data, size, ".attnlab");
    try {
        const Session session = readSession(path);
        const QJsonObject spec = session.spec.toJson();
        if (ExperimentSpec::fromJson(spec).toJson() != spec)
            std::abort();
    } catch (const InputError& error) {
        if (!error.message().startsWith(path))
            std::abort();
    }
    return 0;
}
