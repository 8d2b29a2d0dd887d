#!/usr/bin/env python3
"""Builds tests/extraction/pages/ from two registry packages (see README.md).

Usage: build_set.py READABILITYRS_CRATE_DIR NEWSPAPER4K_SDIST_DIR OUT_DIR

- readabilityrs 0.1.4 (crates.io, Apache-2.0) ships Mozilla Readability's test pages:
  tests/test-pages/NAME/{source.html, expected.html}. The synthetic cases (small hand-written
  documents, under 10 kB, and the few named for a feature rather than a site) are left out.
- newspaper4k 0.9.6 (PyPI sdist, MIT) ships tests/data/html/NAME.html with tests/data/txt/NAME.txt.

Each page becomes NAME.html.gz (the source, unchanged) and NAME.txt (the expected main text,
one block per line). Expected HTML is turned into text by block elements, like the extractor.
"""
import gzip
import html.parser
import os
import sys

BLOCKS = {"p", "div", "li", "ul", "ol", "h1", "h2", "h3", "h4", "h5", "h6", "td", "th", "tr",
          "table", "section", "article", "main", "blockquote", "pre", "dd", "dt", "dl", "br",
          "hr", "figure", "figcaption", "header", "footer", "body", "address"}
SKIP = {"script", "style", "noscript", "template", "svg"}
SYNTHETIC = {"001", "002", "table-style-attributes", "dev418"}


class Text(html.parser.HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.lines, self.cur, self.skip = [], [], 0

    def flush(self):
        line = " ".join("".join(self.cur).split())
        if line:
            self.lines.append(line)
        self.cur = []

    def handle_starttag(self, tag, attrs):
        if tag in SKIP:
            self.skip += 1
        elif tag in BLOCKS:
            self.flush()

    def handle_endtag(self, tag):
        if tag in SKIP:
            self.skip = max(0, self.skip - 1)
        elif tag in BLOCKS:
            self.flush()

    def handle_data(self, data):
        if not self.skip:
            self.cur.append(data)


def html_text(src):
    p = Text()
    p.feed(src)
    p.close()
    p.flush()
    return "\n".join(p.lines)


def write(out, name, source_bytes, expected):
    with gzip.GzipFile(os.path.join(out, name + ".html.gz"), "wb", mtime=0) as f:
        f.write(source_bytes)
    with open(os.path.join(out, name + ".txt"), "w", encoding="utf-8") as f:
        f.write(expected.strip() + "\n")


def main():
    crate, sdist, out = sys.argv[1:4]
    os.makedirs(out, exist_ok=True)
    n = 0
    pages = os.path.join(crate, "tests", "test-pages")
    for name in sorted(os.listdir(pages)):
        src = os.path.join(pages, name, "source.html")
        if name in SYNTHETIC or os.path.getsize(src) < 10_000:
            continue
        expected = html_text(open(os.path.join(pages, name, "expected.html"), encoding="utf-8").read())
        if len(expected.split()) < 30:
            continue
        write(out, "mozilla-" + name, open(src, "rb").read(), expected)
        n += 1
    data = os.path.join(sdist, "tests", "data")
    for txt in sorted(os.listdir(os.path.join(data, "txt"))):
        name = txt[:-4]
        src = os.path.join(data, "html", name + ".html")
        if not os.path.exists(src):
            continue
        expected = open(os.path.join(data, "txt", txt), encoding="utf-8").read()
        if len(expected.split()) < 30:
            continue
        write(out, "newspaper-" + name, open(src, "rb").read(), expected)
        n += 1
    print(n, "pages (newspaper-cnn_002 and newspaper-cnn_test_nlp, 1.6 MB of one site, were then removed by hand)")


if __name__ == "__main__":
    main()
