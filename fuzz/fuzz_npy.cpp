// libFuzzer target: readNpy on arbitrary bytes. Any input is either read (finite values of a
// supported dtype and rank, matching the shape) or refused with InputError or ResourceError
// naming the file; anything else (a crash, a leak, undefined behaviour, another exception) is a
// finding.

#include "errors.h"
#include "fuzz_input.h"
#include "io/npy.h"

#include <cstdlib>

// Reads the bytes as a .npy file, within a 64 MiB budget; checks that what is read matches its
// shape.
extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    using namespace attnlab;
    const QString path = fuzz::inputFile(data, size, ".npy");
    try {
        NpyReadOptions options;
        options.budget = MemoryBudget(qint64(64) << 20);
        const NpyArray array = readNpy(path, options);
        if (array.shape.empty() || array.shape.size() > 3 ||
            qint64(array.values.size()) != array.elementCount())
            std::abort();
    } catch (const InputError& error) {
        if (!error.message().startsWith(path))
            std::abort();
    } catch (const ResourceError& error) {
        if (!error.message().startsWith(path))
            std::abort();
    }
    return 0;
}
