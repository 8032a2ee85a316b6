#!/usr/bin/env node
// Writes expected_ids.json: for each tokenizer.json here and each text of hard_texts.json, the ids
// (special tokens added, as encode() adds them) and the decoded text (special tokens skipped, no
// clean-up of spaces) that Hugging Face's own JavaScript implementation of tokenizer.json, the npm
// package @huggingface/tokenizers, gives; and, as a second reference, the ids of the vocabulary's
// own encoder: SentencePiece for Llama 2 (llama2_sentencepiece_ids.json, written by
// make_llama2_tokenizer.py; texts holding <s>, </s> or <unk> are left out, as SentencePiece reads
// them as text) and llama3-tokenizer-js for Llama 3. Texts where the two references disagree are
// listed on stderr.
//
// The tokenizers: gpt2 (gpt2_pipeline.json with GPT-2's vocabulary and merges),
// llama2/tokenizer.json, llama3/tokenizer.json.zlib, and three files with another pipeline's
// components put in place of their own: qwen2-style (Llama 3's with Qwen2's NFC, regex and no BOS),
// smollm-style (GPT-2's with SmolLM's Digits before ByteLevel) and llama2-metaspace (Llama 2's
// with the Metaspace pre-tokenizer, prepend_scheme "first", of transformers' non-legacy layout;
// SentencePiece is no reference for it: a text that starts with a space gets no second "▁").
//
// Run by hand from a folder where the packages are installed (never in this repository):
//     cd /tmp/tokref && npm install @huggingface/tokenizers@0.2.0 llama3-tokenizer-js@1.2.0
//     node <this folder>/make_expected_ids.cjs
const fs = require('fs');
const path = require('path');
const zlib = require('zlib');
const { createRequire } = require('module');

const requireHere = createRequire(path.join(process.cwd(), 'package.json'));
const { Tokenizer } = requireHere('@huggingface/tokenizers');
const { llama3Tokenizer } = requireHere(
    'llama3-tokenizer-js/bundle/commonjs-llama3-tokenizer-with-baked-data.cjs');

const here = __dirname;
const readJson = (file) => JSON.parse(fs.readFileSync(path.join(here, file), 'utf8'));

// GPT-2's tokenizer.json (openai-community/gpt2): gpt2_pipeline.json (ByteLevel everywhere,
// <|endoftext|> added) with the vocabulary and merges of tests/data/models/tokenizer.
function gpt2TokenizerJson() {
    const folder = path.join(here, '..', 'models', 'tokenizer');
    const json = readJson('gpt2_pipeline.json');
    json.model.vocab = JSON.parse(fs.readFileSync(path.join(folder, 'vocab.json'), 'utf8'));
    json.model.merges = fs.readFileSync(path.join(folder, 'merges.txt'), 'utf8').split('\n')
        .filter((line) => line.length > 0 && !line.startsWith('#version'));
    return json;
}

function llama3TokenizerJson() {
    const packed = fs.readFileSync(path.join(here, 'llama3', 'tokenizer.json.zlib'));
    return JSON.parse(zlib.inflateSync(packed.subarray(4)).toString('utf8'));
}

// A file with the components of a *_pipeline.json put in place of its own (model fields merged).
function withPipeline(json, pipelineFile) {
    const overlay = readJson(pipelineFile);
    for (const [key, value] of Object.entries(overlay)) {
        json[key] = key === 'model' ? { ...json.model, ...value } : value;
    }
    return json;
}

const texts = readJson('hard_texts.json');
const sentencepiece = readJson('llama2_sentencepiece_ids.json');
const ownEncoders = {
    llama2: (t) => (/<s>|<\/s>|<unk>/.test(t.text) ? undefined : sentencepiece[t.name]),
    llama3: (t) => llama3Tokenizer.encode(t.text, { bos: true, eos: false }),
};
const tokenizers = {
    gpt2: gpt2TokenizerJson(),
    llama2: readJson(path.join('llama2', 'tokenizer.json')),
    llama3: llama3TokenizerJson(),
    'qwen2-style': withPipeline(llama3TokenizerJson(), 'qwen2_style_pipeline.json'),
    'smollm-style': withPipeline(gpt2TokenizerJson(), 'smollm_style_pipeline.json'),
    'llama2-metaspace': withPipeline(readJson(path.join('llama2', 'tokenizer.json')),
                                     'llama2_metaspace_pipeline.json'),
};

const same = (a, b) => a.length === b.length && a.every((x, i) => x === b[i]);
const expected = {};
for (const [name, json] of Object.entries(tokenizers)) {
    const tokenizer = new Tokenizer(json, {});
    expected[name] = texts.map((t) => {
        const ids = tokenizer.encode(t.text).ids;
        const decoded = ids.length === 0 ? '' : tokenizer.decode(ids, {
            skip_special_tokens: true, clean_up_tokenization_spaces: false });
        const entry = { name: t.name, text: t.text, ids, decoded };
        const own = ownEncoders[name] && ownEncoders[name](t);
        if (own !== undefined) {
            entry.own_encoder_ids = own;
            if (!same(own, ids)) {
                console.error(`${name}/${t.name}: @huggingface/tokenizers ${ids} ` +
                              `but the vocabulary's own encoder ${own}`);
            }
        }
        return entry;
    });
}
fs.writeFileSync(path.join(here, 'expected_ids.json'), JSON.stringify(expected, null, 0) + '\n');
console.log(`wrote ${path.join(here, 'expected_ids.json')}`);
