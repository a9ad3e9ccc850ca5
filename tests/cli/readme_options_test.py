#!/usr/bin/env python3
"""The README's command line matches the commands: every option that a row of
its command table shows for a command is one that command's --help lists, and
so does every form a page of docs/commands/ shows (its headings and each
`opscope ...` in its text); every command has its page there, and each README
row links to a page that exists; and
the paragraph under the table (which commands take --device, --threads,
--format, --out), restated in `claims` below (edit both together), holds, with
the three commands it says lack an option checked to lack it still.

    readme_options_test.py OPSCOPE README.md

docs/commands/ is read beside README.md.
"""
import glob
import os
import re
import subprocess
import sys


def help_options(opscope, command):
    text = subprocess.run([opscope] + command + ["--help"], stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True).stdout
    return set(re.findall(r"^\s+(?:-\w,\s*)?(--[a-z0-9-]+)", text, re.M)) | set(
        re.findall(r"^\s+(-\w)\b", text, re.M))


def commands(opscope):
    """Every command path: the top-level commands, and those with their own."""
    out = []
    def listed(help_text):
        at = help_text.find("Subcommands:")
        return re.findall(r"^\s+([a-z0-9]+)\s", help_text[at:], re.M) if at >= 0 else []

    top = subprocess.run([opscope, "--help"], stdout=subprocess.PIPE, text=True).stdout
    for name in listed(top):
        sub = subprocess.run([opscope, name, "--help"], stdout=subprocess.PIPE, text=True).stdout
        out += [[name, i] for i in listed(sub)] or [[name]]
    return out


def main():
    opscope, readme = sys.argv[1], sys.argv[2]
    text = open(readme, encoding="utf-8").read()
    known = {" ".join(c): c for c in commands(opscope)}
    failures, checked = [], 0

    def check_form(form, where):
        """Whether `form` names a command, and every option it shows is listed."""
        nonlocal checked
        words = form.split()[1:]
        path = []
        while words and " ".join(path + [words[0]]) in known or (
                words and any(k.startswith(" ".join(path + [words[0]]) + " ")
                              for k in known)):
            path.append(words.pop(0))
        groups = {k.split()[0] for k in known if " " in k}
        if " ".join(path) not in known and not (len(path) == 1 and path[0] in groups):
            failures.append("%s: %r names no command" % (where, form))
            return
        options = help_options(opscope, path)
        program = form.split(" -- ")[0]
        for option in re.findall(r"(?<![\w-])(--[a-z0-9-]+|-[a-z])\b", program):
            checked += 1
            if option not in options:
                failures.append("%s: %r shows %s, which '%s --help' does not list" %
                                (where, form, option, " ".join(["opscope"] + path)))

    table = text[text.find("## Command line"):]
    table = table[:table.find("\n\n", table.find("|---|"))]
    pages = os.path.join(os.path.dirname(os.path.abspath(readme)), "docs", "commands")
    for row in table.splitlines():
        if not row.startswith("| `opscope"):
            continue
        cell = row.split("` |")[0]
        for form in re.findall(r"`(opscope [^`]*)`", cell + "`"):
            check_form(form, "README")
        for link in re.findall(r"\]\((docs/commands/[^)]+)\)", row):
            if not os.path.isfile(os.path.join(os.path.dirname(os.path.abspath(readme)), link)):
                failures.append("README links %s, which does not exist" % link)
    # docs/commands/: one page per top-level command (merge lives on analyze's).
    documented = set()
    for page in sorted(glob.glob(os.path.join(pages, "*.md"))):
        if os.path.basename(page) == "README.md":  # the index and the exit codes
            continue
        where = os.path.relpath(page, os.path.dirname(os.path.abspath(readme)))
        body = open(page, encoding="utf-8").read()
        headings = re.findall(r"^## `(opscope [^`]*)`", body, re.M)
        if not headings:
            failures.append("%s has no '## `opscope ...`' heading" % where)
        for form in headings:
            documented.add(form.split()[1])
        for form in re.findall(r"`(opscope [a-z][^`]*)`", body):
            check_form(form, where)
    for name in {c[0] for c in known.values()} - documented:
        failures.append("docs/commands/ has no heading for 'opscope %s'" % name)
    # The paragraph under the table: which commands take which common options.
    claims = {
        ("info", "bench matmul", "bench conv2d", "bench resnet50", "bench roofline", "bw",
         "monitor", "demo"): ("--device", "--threads", "--format", "--out"),
        ("smi",): ("--device", "--format", "--out"),
        ("analyze",): ("--format", "--out", "--threads"),
        ("diff",): ("--format", "--out"),
        ("run",): ("--device", "--out"),
        ("trace",): ("--out", "-o"),
    }
    for names, options in claims.items():
        for name in names:
            if name not in known:
                failures.append("the paragraph names %r, which is no command" % name)
                continue
            have = help_options(opscope, known[name])
            for option in options:
                checked += 1
                if option not in have:
                    failures.append("README says '%s' takes %s; its --help does not list it" %
                                    (name, option))
    para = text[text.find("The measuring commands"):text.find("--help`).")]
    for name, options in (("diff", "--threads"), ("run", "--format"), ("trace", "--device")):
        if options in help_options(opscope, known[name]):
            failures.append("'%s' now takes %s: say so in the README's paragraph" % (name, options))
    if not para:
        failures.append("the README's paragraph on common options is gone")
    if failures:
        print("\n".join(failures))
        return 1
    print("README and docs/commands: %d options checked against --help" % checked)
    return 0


if __name__ == "__main__":
    sys.exit(main())
