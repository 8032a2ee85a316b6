#include "model/text_tokenizer.h"

#include "model/gpt2_tokenizer.h"
#include "model/hf_tokenizer.h"
#include "model/tokenizer_json.h"

#include <QDir>
#include <QFileInfo>

#include <algorithm>

namespace attnlab {

std::shared_ptr<const TextTokenizer> loadTextTokenizer(const QString& folder)
{
    const QDir dir(folder);
    if (!QFileInfo(folder).isDir())
        refuseTokenizer(folder, QStringLiteral("not a folder (looked for the tokenizer files "
                                               "vocab.json and merges.txt, or tokenizer.json)"));
    const QString vocab = dir.filePath(QStringLiteral("vocab.json"));
    const QString merges = dir.filePath(QStringLiteral("merges.txt"));
    if (QFileInfo::exists(vocab) && QFileInfo::exists(merges))
        return std::make_shared<Gpt2Tokenizer>(Gpt2Tokenizer::fromVocabAndMerges(vocab, merges));
    const QString json = dir.filePath(QStringLiteral("tokenizer.json"));
    if (QFileInfo::exists(json))
        return std::make_shared<HfTokenizer>(HfTokenizer::fromFile(json));
    refuseTokenizer(folder, QStringLiteral("no tokenizer: looked for vocab.json and merges.txt, "
                                           "or tokenizer.json"));
}

std::vector<std::vector<int>> sequenceWindows(const TextTokenizer& tokenizer,
                                              const std::vector<int>& ids, int length)
{
    const auto before = std::min(ids.size(), std::size_t(tokenizer.specialIdsBefore()));
    const auto after = std::min(ids.size() - before, std::size_t(tokenizer.specialIdsAfter()));
    const auto text = ids.begin() + std::ptrdiff_t(before);
    const auto end = ids.end() - std::ptrdiff_t(after);
    const std::ptrdiff_t perWindow =
        std::max<std::ptrdiff_t>(1, length - std::ptrdiff_t(before + after));
    std::vector<std::vector<int>> windows;
    for (auto first = text; first < end; first += std::min(perWindow, end - first)) {
        std::vector<int> window(ids.begin(), text);
        window.insert(window.end(), first, first + std::min(perWindow, end - first));
        window.insert(window.end(), end, ids.end());
        windows.push_back(std::move(window));
    }
    return windows;
}

QString tokenLabel(QString text)
{
    const bool onlySpaces =
        !text.isEmpty() && std::all_of(text.begin(), text.end(), [](QChar c) { return c == u' '; });
    if (onlySpaces)
        text.fill(QChar(u'\u2423'));
    else if (text.startsWith(u' '))
        text[0] = QChar(u'\u2423');
    text.replace(u'\n', QStringLiteral("\\n"));
    text.replace(u'\t', QStringLiteral("\\t"));
    text.replace(u'\r', QStringLiteral("\\r"));
    return text;
}

}  // namespace attnlab
