#!/bin/sh
# README.md's Commands table and `run` options table against the binary's --help: every command
# is in `fabricbench --help`; every option a row names is in that command's --help, and every
# option a --help lists is in its row (both ways), with the same values (a|b|c); the Exit codes
# table gives each command exactly the codes of its --help exit line, and no Commands row gives
# exit codes of its own (one place for them); each
# default of the run options table (its numbers, its `quoted` values, the choice it names) is
# in the option's own --help text; the Files table names every bench/*.c and harness folder; and
# every link of docs/README.md, the index by question, names a page and heading that exist; and
# every message README.md and the docs pages quote in bold code (**`...`**; docs/testing.md, a
# dated log, aside) is one the code prints, 200 quotes at least (10 on troubleshooting.md).
# One line per mismatch, naming the command, option, or page and line.
. "$(dirname "$0")/lib.sh"
readme=$1 bin=$2
[ -r "$readme" ] || { echo "usage: docs_match_help.sh README.md FABRICBENCH" >&2; exit 2; }
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
"$bin" --help >"$out/main.txt" || fail "fabricbench --help exited $?"
for c in run sweep report list doctor expect nccl-log densenet compare trend accept locate soak mix health; do
    "$bin" "$c" --help >"$out/$c.txt" 2>&1 || fail "fabricbench $c --help exited $?"
done
python3 - "$readme" "$out" <<'PY' >"$out/mismatch.txt" || fail "the docs checker itself failed"
import os, re, sys

readme, helps = sys.argv[1], sys.argv[2]
text = open(readme).read()
def help_of(cmd):
    p = os.path.join(helps, cmd + ".txt")
    return open(p).read() if os.path.exists(p) else ""

def cells(line):
    # split a Markdown table row on '|' outside backslash escapes, then unescape
    parts = re.split(r"(?<!\\)\|", line.strip())[1:-1]
    return [p.strip().replace("\\|", "|") for p in parts]

def section(title):
    m = re.search(r"^" + re.escape(title) + r".*?$(.*?)(?=^[^|\s]|\Z)", text, re.M | re.S)
    return m.group(1) if m else ""

def opts(s):
    return set(re.findall(r"--[a-z0-9][a-z0-9-]*", s))

def listed(helptext):
    # options a --help lists: those that start a line (indented), --help aside
    return set(re.findall(r"^ {1,4}(--[a-z0-9][a-z0-9-]*)", helptext, re.M)) - {"--help"}

def exit_codes(s, helptext):
    if helptext:
        ms = list(re.finditer(r"[Ee]xit(?: status| code)?:", s))
        if not ms:
            return None
        s = s[ms[-1].end():]
    else:
        i = s.rfind("exit ")
        if i < 0:
            return None
        s = s[i + 5:]
    s = " ".join(s.split())
    return set(re.findall(r"(?:^|, )\s*([0-9])\b", s))

def values_of(s):
    # --opt a|b|c: the values an option takes, by option
    found = {}
    for o, c in re.findall(r"(--[a-z0-9][a-z0-9-]*)[ =]([a-z0-9-]+(?:\|[a-z0-9-]+)+)", s):
        found.setdefault(o, set()).update(c.split("|"))
    return found

def same_choices(where, mine, theirs):
    for o, vals in sorted(mine.items()):
        if o in theirs and vals != theirs[o]:
            bad.append(f"README: {where} {o} takes {'|'.join(sorted(vals))}, its --help "
                       f"{'|'.join(sorted(theirs[o]))}")

bad = []
main = help_of("main")
commands = section("## Commands")
rows = [cells(l) for l in commands.splitlines() if l.startswith("| `fabricbench ")]
if not rows:
    bad.append("README: no Commands table rows found")
for row in rows:
    synopsis = row[0].strip("`")
    words = synopsis.split()
    cmd = words[1]
    if cmd.startswith("<") or cmd in ("--version",):
        if cmd == "--version" and not re.search(r"^\s+--version\b", main, re.M):
            bad.append("README: --version is not in fabricbench --help")
        continue
    if not re.search(r"^\s+" + re.escape(cmd) + r"\b", main, re.M):
        bad.append(f"README: command '{cmd}' is not in fabricbench --help")
    h = help_of(cmd)
    if cmd == "run":
        continue  # its options have their own table, checked below
    for o in sorted(opts(synopsis) - opts(h)):
        bad.append(f"README: '{cmd} {o}' is not in fabricbench {cmd} --help")
    same_choices(cmd, values_of(synopsis), values_of(h))
    for o in sorted(listed(h) - opts(synopsis)):
        bad.append(f"README: fabricbench {cmd} --help lists {o}, README's {cmd} row does not")
    if re.search(r"\bexit (code )?[0-9]", row[1]):
        bad.append(f"README: the Commands row of '{cmd}' gives exit codes; they belong in the "
                   "Exit codes table")

# the Exit codes table: each command's codes (the columns whose cell is not empty) are exactly
# those of its --help exit line, and every command whose --help has one has a row
exits = {}
m = re.search(r"^## Exit codes$(.*?)(?=^## |\Z)", text, re.M | re.S)
for line in (m.group(1) if m else "").splitlines():
    c = cells(line) if line.startswith("| `") else []
    if len(c) == 6:
        exits[c[0].strip("`")] = {str(i) for i in range(5) if c[1 + i]}
if not exits:
    bad.append("README: no Exit codes table rows found")
for row in rows:
    cmd = row[0].strip("`").split()[1]
    if cmd.startswith("<") or cmd == "--version":
        continue
    rc_help = exit_codes(help_of(cmd), True)
    if cmd not in exits:
        if rc_help is not None:
            bad.append(f"README: fabricbench {cmd} --help gives exit codes, the Exit codes table "
                       "has no row for it")
    elif rc_help is None:
        bad.append(f"README: the Exit codes table gives '{cmd}' codes, fabricbench {cmd} --help none")
    else:
        for c in sorted(exits[cmd] - rc_help):
            bad.append(f"README: '{cmd}' exit {c} is not in fabricbench {cmd} --help")
        for c in sorted(rc_help - exits[cmd]):
            bad.append(f"README: fabricbench {cmd} --help gives exit {c}, the Exit codes table "
                       "does not")

# run's options table: the rows after "`run` options"
# each option's help text: its line and the more-indented lines under it
def help_blocks(h):
    b, cur = {}, None
    for line in h.splitlines():
        m = re.match(r"^ {1,4}(--[a-z0-9][a-z0-9-]*)(.*)$", line)
        if m:
            cur = m.group(1)
            b[cur] = m.group(2)
        elif cur and line.startswith("    "):
            b[cur] += " " + line.strip()
        else:
            cur = None
    return b
run_help = help_of("run")
blocks = help_blocks(run_help)
m = re.search(r"^`run` options.*?\n\n(.*?)(?:\n\n|\Z)", text, re.M | re.S)
table = m.group(1) if m else ""
seen = set()
run_rows = [cells(l) for l in table.splitlines() if l.startswith("| `--")]
if not run_rows:
    bad.append("README: no run options table found")
for row in run_rows:
    names = opts(row[0])
    seen |= names
    for o in sorted(names):
        if o not in blocks:
            bad.append(f"README: run option {o} is not in fabricbench run --help")
    same_choices("run", values_of(row[0]), values_of(run_help))
    own = " ".join(blocks.get(o, "") for o in names)
    dflt = row[1]
    quoted = re.findall(r"`([^`]+)`", dflt)
    plain = re.sub(r"`[^`]*`", " ", dflt)
    for q in quoted:
        if not q.startswith("--") and q not in own:
            bad.append(f"README: run {'/'.join(sorted(names))}: default '{q}' "
                       "is not in its --help text")
    for n in re.findall(r"(?<![\w.-])([0-9]+(?::[0-9]+)?[KMG]?)(?![\w.])", plain):
        if not re.search(r"(?<![\w.])" + re.escape(n) + r"(?![\w.])", own):
            bad.append(f"README: run {'/'.join(sorted(names))}: default {n} "
                       "is not in its --help text")
    choices = set()
    for c in re.findall(r"--[a-z0-9-]+ ([a-z0-9]+(?:\|[a-z0-9]+)+)", row[0]):
        choices |= set(c.split("|"))
    for w in re.findall(r"[a-z0-9]+", plain):
        named = " ".join(re.findall(r"default[^)]*", own))
        if w in choices and not (re.search(r"\b" + w + r"\b", named)
                                 or re.search(r"\(" + w + r"[:,]", own)):
            bad.append(f"README: run {'/'.join(sorted(names))}: default '{w}' "
                       "is not the default its --help names")
for o in sorted(set(blocks) - seen - {"--help"}):
    bad.append(f"README: fabricbench run --help lists {o}, README's run options table does not")
# The Files table names every benchmark source and every harness folder.
top = os.path.dirname(os.path.abspath(readme))
files = section("## Files")
for f in sorted(os.listdir(os.path.join(top, "bench"))):
    if f.endswith(".c") and f"`{f}`" not in files:
        bad.append(f"README: the Files table does not name bench/{f}")
for d in sorted(os.listdir(os.path.join(top, "harness"))):
    if os.path.isdir(os.path.join(top, "harness", d)) and d != "scripts" and f"`{d}/`" not in files:
        bad.append(f"README: the Files table does not name harness/{d}/")
# The option tables of the docs pages, against their command's --help: every option a row names
# is in it; a command's own page (report, soak, sweep) lists every option its --help does; and
# each default of a command's page (numbers, `quoted` values) is in the option's own --help
# text, as for README's run table. The run options a benchmark page describes are checked
# against run --help (their defaults' cells explain at length: not compared).
option_pages = {"report.md": "report", "soak.md": "soak", "sweep.md": "sweep",
                "telemetry.md": "run", "benchmarks/pipeline.md": "run", "benchmarks/step.md": "run"}
for page, cmd in option_pages.items():
    path = os.path.join(top, "docs", page)
    if not os.path.exists(path):
        bad.append(f"docs/{page} is missing")
        continue
    b = help_blocks(help_of(cmd))
    lines = open(path).read().splitlines()
    header, named = None, set()
    for line in lines:
        if line.startswith("| option"):
            header = cells(line)
            continue
        if not line.startswith("| `--"):
            continue
        row = cells(line)
        names = opts(row[0])
        named |= names
        for o in sorted(names):
            if o not in b:
                bad.append(f"docs/{page}: {o} is not in fabricbench {cmd} --help")
        # (a benchmark page's defaults explain themselves at length: options only)
        if header and len(header) > 2 and header[1] == "default" and len(row) > 1 and \
                not page.startswith("benchmarks/"):
            own = " ".join(b.get(o, "") for o in names)
            dflt = row[1]
            for q in re.findall(r"`([^`]+)`", dflt):
                if not q.startswith("--") and q not in own:
                    bad.append(f"docs/{page}: {'/'.join(sorted(names))}: default '{q}' is not in its --help text")
            plain = re.sub(r"`[^`]*`", " ", dflt)
            for n in re.findall(r"(?<![\w.-])([0-9]+(?:\.[0-9]+)?[KMG]?)(?![\w.])", plain):
                if not re.search(r"(?<![\w.])" + re.escape(n) + r"(?![\w.])", own):
                    bad.append(f"docs/{page}: {'/'.join(sorted(names))}: default {n} is not in its --help text")
    if cmd != "run":
        for o in sorted(set(b) - named - {"--help"}):
            bad.append(f"docs/{page}: fabricbench {cmd} --help lists {o}, the page's option table does not")

# docs/README.md, the index by question: every link names a page that exists and, with #, a
# heading of it (GitHub's anchor: lower case, spaces as '-', punctuation dropped).
def anchors(path):
    out = set()
    for line in open(path):
        m = re.match(r"#+ (.*)", line)
        if m:
            t = re.sub(r"[^\w\- ]", "", m.group(1).strip().lower())
            out.add(t.replace(" ", "-"))
    return out
index = os.path.join(top, "docs", "README.md")
if not os.path.exists(index):
    bad.append("docs/README.md (the index by question) is missing")
else:
    for target in re.findall(r"\]\(([^)]+)\)", open(index).read()):
        page, _, anchor = target.partition("#")
        path = os.path.normpath(os.path.join(top, "docs", page))
        if not os.path.exists(path):
            bad.append(f"docs/README.md: the link {target} names no file")
        elif anchor and anchor not in anchors(path):
            bad.append(f"docs/README.md: the link {target}: no such heading")
# The strings a C file prints: adjacent literals joined, each printf conversion as a gap (\0),
# %% as %. docs/doctor.md and the bold-code quotes of the docs pages quote them.
gap = "\x00"
def c_strings(path):
    out = []
    for m in re.finditer(r'"(?:[^"\\\n]|\\.)*"(?:\s*"(?:[^"\\\n]|\\.)*")*', open(path).read()):
        joined = "".join(re.findall(r'"((?:[^"\\\n]|\\.)*)"', m.group(0)))
        # %% first: "%% of" is a percent sign and a word, not the conversion "% o"
        joined = joined.replace("%%", "\x01")
        joined = re.sub(r"%[-+ #0]*[0-9*]*(?:\.[0-9*]+)?(?:z|l|ll|h)?[a-zA-Z]", gap, joined)
        out.append(joined.replace("\x01", "%"))
    return out
# docs/doctor.md quotes each check's fix: every quoted fix is a string doctor.c prints (a
# conversion stands for one word of the quote).
doctor_md = os.path.join(top, "docs", "doctor.md")
lits = [re.compile(re.escape(t).replace(gap, r"\S+") + r"$")
        for t in c_strings(os.path.join(top, "harness", "doctor", "doctor.c"))]
if not os.path.exists(doctor_md):
    bad.append("docs/doctor.md is missing")
else:
    quoted = 0
    for line in open(doctor_md):
        row = cells(line) if line.startswith("| `") else []
        if len(row) != 5 or row[0] == "check":
            continue
        for fix in re.findall(r"`([^`]+)`", row[4]):
            quoted += 1
            if not any(l.match(fix) for l in lits):
                bad.append(f"docs/doctor.md: {row[0]}: the fix '{fix}' is not what doctor.c prints")
    if quoted < 7:
        bad.append(f"docs/doctor.md: {quoted} fixes quoted, expected every check's (7 or more)")
# Every page (README.md, docs/*.md, docs/*/*.md; not docs/testing.md, a dated log of past
# output) quotes what the tool prints in bold code, **`message`**, with <...> or "..." for what
# varies: each quote's fixed parts of 12 characters or more are, in order, in one string the
# code prints (c_strings of harness/ and bench/, headers included; <...>, "..." and runs of
# digits, the figures, as gaps; a part is matched without the spaces and colons at its ends,
# which the code may print beside a varying part, as in "<file>:<line>: ").
printed = []
for base in ("harness", "bench"):
    for root, _, names in os.walk(os.path.join(top, base)):
        printed += [re.sub(r"\\(.)", lambda m: {"n": "\n", "t": "\t"}.get(m.group(1), m.group(1)), t)
                    for n in names if n.endswith((".c", ".h"))
                    for t in c_strings(os.path.join(root, n))]
def said(quote):
    parts = [p.strip(" :") for p in re.split(r"<[^>]*>|\.\.\.|[0-9]+", quote) if len(p) >= 12]
    for text in printed:
        at = 0
        for p in parts:
            at = text.find(p, at)
            if at < 0:
                break
            at += len(p)
        else:
            return bool(parts)
    return False
def bold_quotes(path):
    # (line, text) of each **`...`** outside fenced blocks: a code span (a run of backticks to
    # the next run as long, inside one paragraph) with ** right before and after it; its line
    # breaks read as spaces, and in a table row \| as |
    lines = open(path).read().split("\n")
    fenced = False
    for i, line in enumerate(lines):
        if line.lstrip().startswith(("```", "~~~")):
            fenced, lines[i] = not fenced, ""
        elif fenced:
            lines[i] = ""
    text, at, out = "\n".join(lines), 0, []
    while True:
        m = re.compile(r"`+").search(text, at)
        if not m:
            return out
        end = re.compile(r"(?<!`)" + m.group(0) + r"(?!`)").search(text, m.end())
        blank = re.compile(r"\n[ \t]*\n").search(text, m.end())
        if not end or (blank and blank.start() < end.start()):
            at = m.end()
            continue
        if text[m.start() - 2:m.start()] == "**" and text[end.end():end.end() + 2] == "**":
            q = re.sub(r"\s*\n\s*", " ", text[m.end():end.start()])
            if len(m.group(0)) > 1:
                q = q.strip()
            line = text.count("\n", 0, m.start()) + 1
            if lines[line - 1].lstrip().startswith("|"):
                q = q.replace("\\|", "|")
            out.append((line, q))
        at = end.end()
pages = [os.path.join(top, "README.md")]
for d in ("docs",) + tuple(os.path.join("docs", e) for e in sorted(os.listdir(os.path.join(top, "docs")))):
    if os.path.isdir(os.path.join(top, d)):
        pages += sorted(os.path.join(top, d, f) for f in os.listdir(os.path.join(top, d))
                        if f.endswith(".md") and os.path.join(d, f) != os.path.join("docs", "testing.md"))
counts = {}
for path in pages:
    page = os.path.relpath(path, top)
    for line, q in bold_quotes(path):
        counts[page] = counts.get(page, 0) + 1
        if not said(q):
            bad.append(f"{page}:{line}: '{q}' is not a message the code prints")
tsmd = os.path.join("docs", "troubleshooting.md")
if not os.path.exists(os.path.join(top, tsmd)):
    bad.append("docs/troubleshooting.md is missing")
elif counts.get(tsmd, 0) < 10:
    bad.append(f"docs/troubleshooting.md: {counts.get(tsmd, 0)} messages quoted, expected 10 or more")
if sum(counts.values()) < 200:
    bad.append(f"README.md and docs: {sum(counts.values())} messages quoted in bold code, expected "
               "200 or more")
print("\n".join(bad))
PY
while IFS= read -r line; do
    [ -n "$line" ] && fail "$line"
done <"$out/mismatch.txt"
finish
