#pragma once

#include <QStringList>

namespace attnlab {

// `attention-lab render [input] [method] --out DIR [--format png,svg,pdf] [--size WxH]
// [--query N]`: computes like the window and writes the figures it shows, drawn by the same code:
// attention_exact, attention_approx and attention_error, and query_row (with --query) and
// image_overlay (image input) in each format. arguments[0] is "render". Returns the exit status;
// throws InputError, ResourceError, OutputError.
int runRenderCommand(const QStringList& arguments);

}  // namespace attnlab
