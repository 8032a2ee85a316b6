#pragma once

#include "sessions/session.h"

#include <QString>
#include <QStringList>

#include <vector>

namespace attnlab {

// A lecture scenario: a session (the spec and the view, so the state it opens is live and
// editable) with a title and a short explanation. Stored as a session file (.attnlab, read by
// readSession, so a scenario is validated exactly as a session is, and File > Open opens it as a
// plain session) with two more top-level fields:
//   { "format": "attention-lab-session", "version": 1,
//     "title": "Random features: FAVOR+",
//     "explanation": "Qt rich text: a few sentences and the key formula, e.g. softmax(QKᵀ/√d)V",
//     "explained_warnings": ["nonpositive-denominator"],
//     "spec": { ... }, "view": { ... } }
// All three are optional: a plain session reads as a scenario titled by its file name, without an
// explanation, so any folder of sessions is a deck. "explained_warnings" lists the codes of the
// result warnings (ResultWarning::code) that the scenario shows on purpose and its explanation
// talks about; any other warning of its result is a fault of the scenario.
struct Scenario {
    QString path;         // the file it was read from
    QString title;        // plain text, one line
    QString explanation;  // Qt rich text (the HTML subset QLabel shows)
    QStringList explainedWarnings;
    Session session;
};

// A deck: the scenarios of a folder, in file-name order (the bundled deck names its files
// 01-..., 02-..., so the order is the lesson's).
struct Deck {
    QString folder;
    std::vector<Scenario> scenarios;
    // One message per file of the folder that could not be read as a scenario, each starting with
    // the file's path; the deck holds the others.
    QStringList problems;
};

// The folder of the scenarios bundled with Attention Lab, as Qt resources (linked into the
// programs that link attnlab_ui).
inline constexpr char kBundledScenarioFolder[] = ":/scenarios";
// Longest title and explanation a scenario may hold, in characters: an explanation is a short
// panel under a live view, not a lecture script.
inline constexpr int kLongestScenarioTitle = 200;
inline constexpr int kLongestScenarioExplanation = 4000;

// Reads the scenario file at path. Throws InputError, its message starting with path, for
// anything readSession refuses, when "explained_warnings" is present but not an array of
// strings, and when "title" or "explanation" is present but not a string,
// or longer than kLongestScenarioTitle / kLongestScenarioExplanation characters, or when the
// title spans more than one line. A missing or empty title reads as the file's base name
// ("03-favor" for 03-favor.attnlab).
Scenario readScenario(const QString& path);

// Writes scenario (its session, title, explanation and explained warnings; scenario.path is
// ignored) to path, as
// writeSession writes a session (spec paths in the file's folder written relative to it, the
// folder created as needed, the file replaced atomically), with "title", "explanation" and (when
// there are any) "explained_warnings" added. Throws OutputError naming path, leaving no file behind
// (an existing file unchanged), when the file cannot be written or the session would not read back
// as it is, and InputError when the title or explanation would be refused by readScenario (empty
// title included).
void writeScenario(const QString& path, const Scenario& scenario);

// The scenario files of folder (every *.attnlab), in file-name order.
QStringList scenarioFiles(const QString& folder);

// Reads every scenario file of folder, in file-name order; files that cannot be read go to
// Deck::problems. Throws InputError naming the folder when it does not exist, is not a folder,
// holds no .attnlab file, or holds none that can be read (the first problem follows).
Deck readDeck(const QString& folder);

}  // namespace attnlab
