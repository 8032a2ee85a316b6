#pragma once

#include <QFile>
#include <QString>

#include <cstdint>

namespace attnlab {

// A file mapped into memory whole and read-only, for the readers that check a large file's bytes
// in place (safetensors, GGUF). The mapping lasts as long as the object.
class MappedFile {
public:
    // Opens and maps path; an empty file has no data and size 0. Throws InputError "path: no such
    // file", "path: cannot be read (why)" or "path: cannot be mapped into memory (why)".
    explicit MappedFile(const QString& path);

    // The file's first byte (nullptr when it is empty) and its size in bytes.
    const uchar* data() const { return m_data; }
    std::uint64_t size() const { return m_size; }

private:
    QFile m_file;  // unmaps on close
    const uchar* m_data = nullptr;
    std::uint64_t m_size = 0;
};

}  // namespace attnlab
