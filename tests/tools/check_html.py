#!/usr/bin/env python3
"""Checks that an opscope HTML report is self-contained and inert but for its
own script: it parses; has no iframe, object, embed, link, img, form or base
element, no event handler attribute, no URL in an attribute (an <a> may link
within the page, "#...", or to a file of the report's folder,
"tables/x.csv"); and every <script> is either a data block
(type="application/json", which must parse) or, with --script FILE, exactly
the report script FILE (src/report/report_script.js) -- any other script, a
name from a trace that broke out of its escaping included, fails.
Optional --contains TEXT: the page's text (as a browser shows it) contains TEXT."""
import html.parser
import json
import sys

path = sys.argv[1]
wanted = [sys.argv[i + 1] for i, a in enumerate(sys.argv) if a == "--contains"]
scripts = [sys.argv[i + 1] for i, a in enumerate(sys.argv) if a == "--script"]
allowed_script = open(scripts[0], encoding="utf-8").read().strip() if scripts else None
forbidden_tags = {"iframe", "object", "embed", "link", "img", "form", "base", "meta-refresh"}


class Checker(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.problems, self.text = [], []
        self.script = None  # (type, data parts) while inside a <script>

    def handle_starttag(self, tag, attrs):
        if tag in forbidden_tags:
            self.problems.append(f"<{tag}> element")
        if tag == "script":
            kind = dict(attrs).get("type", "")
            if dict(attrs).get("src") is not None:
                self.problems.append("<script src>")
            self.script = (kind, [])
        for name, value in attrs:
            if name.startswith("on"):
                self.problems.append(f"event handler {name} on <{tag}>")
            # A link within the page or to a file of the report's own folder
            # (relative, no scheme, not above the folder) requests nothing
            # until clicked, and then only the local file.
            local_link = (tag == "a" and name == "href" and value is not None and
                          ":" not in value and not value.startswith(("/", "\\")) and
                          ".." not in value.split("/"))
            if not local_link and (name in ("src", "href", "action", "xlink:href") or
                                   (value and "://" in value and name != "content")):
                self.problems.append(f"resource attribute {name}={value!r} on <{tag}>")

    def handle_endtag(self, tag):
        if tag != "script" or self.script is None:
            return
        kind, parts = self.script
        body = "".join(parts)
        self.script = None
        if kind == "application/json":
            try:
                json.loads(body)
            except ValueError as e:
                self.problems.append(f"a data block that is not JSON ({e})")
        elif allowed_script is None or body.strip() != allowed_script:
            self.problems.append(f"<script> that is not the report's own: {body[:80]!r}")

    def handle_data(self, data):
        if self.script is not None:
            self.script[1].append(data)
        else:
            self.text.append(data)


checker = Checker()
checker.feed(open(path, encoding="utf-8").read())
text = "".join(checker.text)
for w in wanted:
    if w not in text:
        checker.problems.append(f"text {w!r} not shown")
if checker.problems:
    print("check_html:", "; ".join(checker.problems[:5]))
    sys.exit(1)
print("ok")
