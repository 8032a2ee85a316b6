#pragma once

// The tick labels of a heatmap's cells (private to ui/plotting): which rows and columns get a
// label for the room the map has, and the labels themselves, cut short.

#include <QMap>
#include <QString>
#include <QStringList>

class QCPRange;
class QFont;

namespace attnlab::ui {

// The room to spare (a factor) before a map's axes or colour scale take more labels.
inline constexpr double kLabelHeadroom = 1.15;

// Every how many rows or columns a label goes, for labels `needed` pixels apart at `pitch` pixels
// a row: niceStep(needed / pitch), but coming down from `current` (the step laid out last; 0 at
// first) only as far as leaves kLabelHeadroom of room.
int steadyStep(double needed, double pitch, int current);

// How many ticks (2 to 5) a colour scale with room for `room` of them asks for: int(room), but
// more than `current` (the count laid out last) only as far as leaves kLabelHeadroom of room.
int steadyTickCount(double room, int current);

// Tick labels at the cells 0, step, 2 step, ... inside `range`: labels[i] when labels has one
// per cell, the index i otherwise.
QMap<double, QString> tickLabels(const QCPRange& range, int cells, int step,
                                 const QStringList& labels);

// The tokens as tick labels: white space simplified, each cut to 12 characters (the last an
// ellipsis).
QStringList shortLabels(const QStringList& tokens);

// The width of the widest of `labels` in `font`, in pixels.
double widestLabel(const QStringList& labels, const QFont& font);

}  // namespace attnlab::ui
