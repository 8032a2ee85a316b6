// libFuzzer target: readSession on arbitrary bytes, then the pages' states in its view. Any input
// is either a whole session, which writes back and reads again as the same spec (a session is
// never half-loaded), or refused with InputError naming the file. The view's Error analysis,
// Timing and Generate states (view.errors, view.timing, view.generate) are each either refused
// with InputError or read; a state read writes back (toJson) as JSON that reads again and writes
// the same. Anything else (a crash, a leak, undefined behaviour, another exception) is a finding.

#include "errors.h"
#include "fuzz_input.h"
#include "sessions/error_page_state.h"
#include "sessions/generation_page_state.h"
#include "sessions/session.h"
#include "sessions/timing_page_state.h"

#include <cstdlib>

namespace {

using namespace attnlab;

// Reads view[key], when it is there, as the page state State, and checks that what is read
// writes back to JSON that State reads again unchanged.
template <typename State>
void readPageState(const QJsonObject& view, const char* key)
{
    const QJsonValue json = view.value(QLatin1String(key));
    if (!json.isObject())
        return;
    QJsonObject written;
    try {
        written = State::fromJson(json.toObject()).toJson();
    } catch (const InputError&) {
        return;  // a malformed state, refused as a whole
    }
    if (State::fromJson(written).toJson() != written)
        std::abort();
}

}  // namespace

// Reads the bytes as a .attnlab file; a session that is read must survive sessionJson and
// ExperimentSpec::fromJson unchanged.
extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    const QString path = fuzz::inputFile(data, size, ".attnlab");
    Session session;
    if (!fuzz::readOrRefused(path, [&] { session = readSession(path); }))
        return 0;
    const QJsonObject spec = session.spec.toJson();
    if (ExperimentSpec::fromJson(spec).toJson() != spec)
        std::abort();
    readPageState<ErrorPageState>(session.view, "errors");
    readPageState<TimingPageState>(session.view, "timing");
    readPageState<GenerationPageState>(session.view, "generate");
    return 0;
}
