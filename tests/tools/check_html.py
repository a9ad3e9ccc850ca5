#!/usr/bin/env python3
"""Checks that an opscope HTML report is self-contained and inert: it parses,
has no script, iframe, object, embed, link, img or form element, no event
handler attribute, and no URL of any kind in an attribute. Optional
--contains TEXT: the page's text (as a browser shows it) contains TEXT."""
import html.parser
import sys

path = sys.argv[1]
wanted = [sys.argv[i + 1] for i, a in enumerate(sys.argv) if a == "--contains"]
forbidden_tags = {"script", "iframe", "object", "embed", "link", "img", "form", "base", "meta-refresh"}


class Checker(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.problems, self.text = [], []

    def handle_starttag(self, tag, attrs):
        if tag in forbidden_tags:
            self.problems.append(f"<{tag}> element")
        for name, value in attrs:
            if name.startswith("on"):
                self.problems.append(f"event handler {name} on <{tag}>")
            if name in ("src", "href", "action", "xlink:href") or (value and "://" in value and name != "content"):
                self.problems.append(f"resource attribute {name}={value!r} on <{tag}>")

    def handle_data(self, data):
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
