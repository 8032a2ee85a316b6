#!/usr/bin/env node
// Builds a tokenizer.json of Llama 3's layout (meta-llama/Meta-Llama-3-8B) from the vocabulary and
// merges of the npm package llama3-tokenizer-js (MIT): no normalizer; pre-tokenizer
// Sequence[Split by Llama 3's regex (Isolated), ByteLevel without its regex]; a BPE model with
// ignore_merges, merges written as [left, right] pairs; the 256 special tokens as added tokens;
// post-processor Sequence[ByteLevel, TemplateProcessing putting <|begin_of_text|> first]; the
// ByteLevel decoder. The file is written as llama3/tokenizer.json.zlib: its size as 4 bytes big
// endian, then a zlib stream (the format of Qt's qUncompress), since the plain file is 9 MB.
//
// Run by hand from a folder where the package is installed (never in this repository):
//     cd /tmp/tokref && npm install llama3-tokenizer-js@1.2.0 && node <this file>
const fs = require('fs');
const path = require('path');
const zlib = require('zlib');
const { createRequire } = require('module');

const requireHere = createRequire(path.join(process.cwd(), 'package.json'));
const { llama3Tokenizer } = requireHere(
    'llama3-tokenizer-js/bundle/commonjs-llama3-tokenizer-with-baked-data.cjs');

const LLAMA3_PATTERN = "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
const FIRST_SPECIAL = 128000;

const vocab = {};
const added = [];
llama3Tokenizer.vocabById.forEach((symbol, id) => {
    if (id < FIRST_SPECIAL) {
        vocab[symbol] = id;
    } else {
        added.push({ id, content: symbol, single_word: false, lstrip: false, rstrip: false,
                     normalized: false, special: true });
    }
});
// The package keeps merges as "left right" -> priority, in rank order.
const merges = [...llama3Tokenizer.merges.entries()]
    .sort((a, b) => a[1] - b[1])
    .map(([pair]) => pair.split(' '));
for (const pair of merges) {
    if (pair.length !== 2 || !(pair[0] in vocab) || !(pair[1] in vocab)) {
        throw new Error(`bad merge ${pair}`);
    }
}

const byteLevel = { type: 'ByteLevel', add_prefix_space: false, trim_offsets: true, use_regex: false };
const bos = { SpecialToken: { id: '<|begin_of_text|>', type_id: 0 } };
const tokenizer = {
    version: '1.0',
    truncation: null,
    padding: null,
    added_tokens: added,
    normalizer: null,
    pre_tokenizer: { type: 'Sequence', pretokenizers: [
        { type: 'Split', pattern: { Regex: LLAMA3_PATTERN }, behavior: 'Isolated', invert: false },
        byteLevel] },
    post_processor: { type: 'Sequence', processors: [
        { type: 'ByteLevel', add_prefix_space: true, trim_offsets: false, use_regex: true },
        { type: 'TemplateProcessing',
          single: [bos, { Sequence: { id: 'A', type_id: 0 } }],
          pair: [bos, { Sequence: { id: 'A', type_id: 0 } },
                 { SpecialToken: { id: '<|begin_of_text|>', type_id: 1 } },
                 { Sequence: { id: 'B', type_id: 1 } }],
          special_tokens: { '<|begin_of_text|>': { id: '<|begin_of_text|>', ids: [FIRST_SPECIAL],
                                                   tokens: ['<|begin_of_text|>'] } } }] },
    decoder: { type: 'ByteLevel', add_prefix_space: true, trim_offsets: true, use_regex: true },
    model: { type: 'BPE', dropout: null, unk_token: null, continuing_subword_prefix: null,
             end_of_word_suffix: null, fuse_unk: false, byte_fallback: false, ignore_merges: true,
             vocab, merges },
};
const json = Buffer.from(JSON.stringify(tokenizer), 'utf8');
const size = Buffer.alloc(4);
size.writeUInt32BE(json.length);
const out = path.join(__dirname, 'llama3', 'tokenizer.json.zlib');
fs.mkdirSync(path.dirname(out), { recursive: true });
fs.writeFileSync(out, Buffer.concat([size, zlib.deflateSync(json, { level: 9 })]));
console.log(`${Object.keys(vocab).length} symbols, ${added.length} special tokens, ` +
            `${merges.length} merges; ${json.length} bytes, written compressed to ${out}`);
