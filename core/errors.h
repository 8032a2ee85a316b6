#pragma once

#include <QString>

#include <stdexcept>

namespace attnlab {

// Bad usage or bad input: a file that cannot be read, an argument out of range. The message
// names the file or argument and says what is wrong. The command line exits with status 2.
class InputError : public std::runtime_error {
public:
    explicit InputError(const QString& message) : std::runtime_error(message.toStdString()) {}
    QString message() const { return QString::fromStdString(what()); }
};

// A request refused for its resources (an L x L matrix over the memory budget). The message says
// how much was asked for and how to get around it. The command line exits with status 3.
class ResourceError : public std::runtime_error {
public:
    explicit ResourceError(const QString& message) : std::runtime_error(message.toStdString()) {}
    QString message() const { return QString::fromStdString(what()); }
};

// Writing an output failed (disk full, no permission). Nothing partial is left behind.
// The command line exits with status 1.
class OutputError : public std::runtime_error {
public:
    explicit OutputError(const QString& message) : std::runtime_error(message.toStdString()) {}
    QString message() const { return QString::fromStdString(what()); }
};

// Throws InputError(message) unless condition holds: how the readers and the engine refuse a
// request.
inline void require(bool condition, const QString& message)
{
    if (!condition)
        throw InputError(message);
}

// Throws InputError("<where>: <problem>"): a reader refusing the file or field `where`.
[[noreturn]] inline void refuse(const QString& where, const QString& problem)
{
    throw InputError(QStringLiteral("%1: %2").arg(where, problem));
}

// Thrown by a computation that was asked to stop (ComputeOptions::cancelled) before it finished.
class Cancelled : public std::runtime_error {
public:
    Cancelled() : std::runtime_error("cancelled") {}
};

}  // namespace attnlab
