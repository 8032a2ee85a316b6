#!/usr/bin/env python3
"""Writes hard_texts.json: the texts every tokenizer.json test encodes (name -> text), written
with escapes here so that combining marks, NFD letters, zero-width joiners and odd white space
are visible in review. Run by hand: python3 make_hard_texts.py"""
import json
import os

TEXTS = [
    ("empty", ""),
    ("space", " "),
    ("newline", "\n"),
    ("english", "Hello world! The quick brown fox jumps over the lazy dog."),
    ("accents", "Café naïve façade — résumé, Ångström, jalapeño"),
    ("nfd", "Cafe\u0301 nai\u0308ve re\u0301sume\u0301 A\u030angstro\u0308m"),
    ("combining", "Z\u0351\u036ba\u0310l\u0367g\u030co\u0352 e\u0301\u0301 q\u0323\u0307"),
    ("cjk", "日本語のテキスト、中文文本，한국어 텍스트。"),
    ("scripts", "Ελληνικά русский עברית العربية हिन्दी ไทย"),
    ("rare", "𝔘𝔫𝔦𝔠𝔬𝔡𝔢 ꙮ 𓂀 \u00ad soft"),
    ("fullwidth", "Ａｂｃ１２３ ＡＢＣ"),
    ("digits", "1234567890 3.14159 2024-11-25 1,000,000 $42.50 7%"),
    ("long_number", "123456789012345678901234567890"),
    ("spaces", "a  b   c    d     e"),
    ("edge_spaces", "   leading and trailing   "),
    ("newlines", "line1\nline2\n\n\nline3\r\nend\n"),
    ("tabs", "\tindented\t\tcode\t \t"),
    ("code", "def f(x):\n    return x**2  # square\n\nif f(3) != 9:\n\traise ValueError('no')\n"),
    ("contractions", "It's don't I'LL we've they'RE she'd 'S 'T you'Ve"),
    ("emoji", "I \u2764\ufe0f \U0001f917! \U0001f44d\U0001f3fd family \U0001f468\u200d\U0001f469\u200d\U0001f467\u200d\U0001f466 flag \U0001f1eb\U0001f1f7"),
    ("unicode_spaces", "a\u00a0b\u3000c\u2003d\u200be\u2028f"),
    ("punctuation", "!!! ??? ... ---- ((())) \"quoted\" «guillemets» ¿qué?"),
    ("special_tokens", "<s>Hello</s> <unk> and <|begin_of_text|>Hi<|eot_id|> <|start_header_id|>user<|end_header_id|>\n\nx"),
    ("special_at_start", "<|begin_of_text|><s> text"),
    ("vocabulary_words", "Tôi làm việc ở Việt Nam, nhiều điều hợp lý; jeho ektedir ایران"),
    ("mongolian_vowel_separator", "a\u180e b\u180ec \u180e  d \u180e!! \u180e\u3042"),
    ("mixed", "GPT-2's vocab: 50,257 tokens; Llama 3's: 128,256 (≈2.5×)."),
]

here = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(here, "hard_texts.json"), "w", encoding="utf-8") as out:
    json.dump([{"name": n, "text": t} for n, t in TEXTS], out, ensure_ascii=False, indent=1)
    out.write("\n")
